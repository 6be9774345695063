//! Settings: validation naming the field, persistence, keys by variable name only.

use papayu_app::api::*;
use papayu_app::{SETTINGS_FILE, codes};
use serde_json::json;

use crate::support::*;

fn settings(v: serde_json::Value) -> Settings {
    serde_json::from_value(v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_settings_name_the_field() {
    let f = Fixture::new(&[], None, &[]).await;
    for (bad, field) in [
        (json!({"provider": "skynet"}), "provider"),
        (json!({"protocol_version": 4}), "protocol_version"),
        (json!({"temperature": 3.5}), "temperature"),
        (json!({"api_key_env": "sk-live-abc def"}), "api_key_env"),
        (json!({"api_url": "ftp://x"}), "api_url"),
        (json!({"max_tokens": 0}), "max_tokens"),
    ] {
        let e = f
            .app
            .save_settings(SaveSettingsArgs {
                settings: settings(bad),
            })
            .await
            .unwrap_err();
        assert_eq!(e.code, codes::BAD_REQUEST);
        assert!(e.message.starts_with(field), "{field}: {}", e.message);
    }
    assert!(
        serde_json::from_value::<Settings>(json!({"api_key": "sk-1"})).is_err(),
        "no field holds a key"
    );
    assert_eq!(
        f.app.get_settings(NoArgs {}).await.unwrap(),
        Settings::default()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_persist_and_override_the_environment() {
    let model = Model::start(&[plan_answer("from the settings' model")]).await;
    // The environment names no provider; the settings do.
    let f = Fixture::new(&[], None, &[]).await;
    let s = settings(
        json!({"provider": "openai-compatible", "api_url": model.url(), "model": "m-from-settings",
        "api_key_env": "TEST_KEY", "protocol_version": 1, "strict_json": false, "theme": "dark"}),
    );
    let saved = f
        .app
        .save_settings(SaveSettingsArgs {
            settings: s.clone(),
        })
        .await
        .unwrap();
    assert_eq!(saved, s);
    assert_eq!(f.app.get_settings(NoArgs {}).await.unwrap(), s);
    let file = std::fs::read_to_string(f.dir.path().join("config").join(SETTINGS_FILE)).unwrap();
    assert!(
        file.contains("TEST_KEY") && !file.contains("sk-test-key"),
        "the key itself is never stored"
    );
    let plan = f.plan("x").await.unwrap();
    assert_eq!(plan["protocol"], 1);
    let reqs = model.server.received_requests().await.unwrap();
    assert_eq!(
        reqs[0].headers.get("authorization").unwrap(),
        "Bearer sk-test-key"
    );
    let body: serde_json::Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(body["model"], "m-from-settings");
    let info = f.app.app_info(NoArgs {}).await.unwrap();
    assert_eq!(info.transport, Transport::Http);
    assert_eq!(
        info.env.model, None,
        "app_info shows the environment, not the settings"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_variable_that_is_not_set_is_reported_at_the_model_call() {
    let model = Model::start(&[]).await;
    let f = Fixture::new(&[], Some(&model), &[]).await;
    f.app
        .save_settings(SaveSettingsArgs {
            settings: settings(json!({"api_key_env": "UNSET_KEY_VAR"})),
        })
        .await
        .unwrap();
    let e = f.plan("x").await.unwrap_err();
    assert_eq!(e.code, "ERR_INVALID_CONFIG");
    assert!(e.message.contains("UNSET_KEY_VAR"), "{}", e.message);
    assert_eq!(model.calls().await, 0);
}

fn env(vars: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    vars.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn keys(name: &str) -> Option<String> {
    (name == "TEST_KEY").then(|| "  sk-test-key\n".to_owned())
}

#[test]
fn every_setting_overrides_its_variable_and_unset_ones_leave_the_environment() {
    let environment = env(&[
        ("PAPAYU_LLM_PROVIDER", "ollama"),
        ("PAPAYU_LLM_API_URL", "http://127.0.0.1:11434"),
        ("PAPAYU_LLM_MODEL", "env-model"),
        ("PAPAYU_LLM_API_KEY", "env-key"),
        ("PAPAYU_LLM_TEMPERATURE", "1"),
        ("PAPAYU_LLM_TIMEOUT_SEC", "30"),
        ("PAPAYU_TRACE", "1"),
    ]);
    let s = settings(json!({
        "provider": " anthropic ", "api_url": "https://api.example/v1", "model": "m-from-settings",
        "api_key_env": "TEST_KEY", "protocol_version": 3, "strict_json": true,
        "temperature": 0.25, "max_tokens": 99, "timeout_sec": 86400
    }));
    let c = s.agent_config(&environment, &keys).unwrap();
    assert_eq!(c.provider, Some(papayu_llm::ProviderKind::Anthropic));
    assert_eq!(c.api_url.as_deref(), Some("https://api.example/v1"));
    assert_eq!(c.model.as_deref(), Some("m-from-settings"));
    assert_eq!(
        c.api_key.as_deref(),
        Some("sk-test-key"),
        "trimmed, as a variable is"
    );
    assert_eq!(
        c.protocol_version,
        Some(papayu_protocol::ProtocolVersion::V3)
    );
    assert!(c.strict_json);
    assert_eq!(c.temperature, 0.25);
    assert_eq!(c.max_tokens, Some(99));
    assert_eq!(c.timeout, std::time::Duration::from_secs(86_400));
    assert!(c.trace, "what no setting names stays the environment's");
    assert!(c.stream, "the UI streams");

    // Blank and unset settings leave every variable as the environment gave it.
    let blank = settings(json!({"provider": " ", "api_url": "", "model": "  ", "api_key_env": ""}));
    let c = blank.agent_config(&environment, &keys).unwrap();
    let plain = papayu_agent::AgentConfig::from_env_map(&environment).unwrap();
    assert_eq!(c.provider, plain.provider);
    assert_eq!(c.api_url, plain.api_url);
    assert_eq!(c.model, plain.model);
    assert_eq!(c.api_key.as_deref(), Some("env-key"));
    assert_eq!(c.temperature, 1.0);
    assert_eq!(c.timeout, std::time::Duration::from_secs(30));
}

#[test]
fn a_key_variable_that_is_not_set_or_blank_is_invalid_config() {
    let lookup = |name: &str| (name == "BLANK_KEY").then(|| "  ".to_owned());
    for name in ["UNSET_KEY_VAR", "BLANK_KEY"] {
        let s = settings(json!({ "api_key_env": name }));
        let e = s.agent_config(&env(&[]), &lookup).unwrap_err();
        assert_eq!(e.code, "ERR_INVALID_CONFIG");
        assert!(
            e.message
                .starts_with(&format!("api_key_env names {name}, which is not set")),
            "{}",
            e.message
        );
    }
}

/// A settings file edited by hand is not validated on load: its values are checked as the
/// variables they replace, and the error names that variable.
#[test]
fn a_hand_edited_setting_is_checked_as_its_variable() {
    for (bad, variable) in [
        (json!({"provider": "skynet"}), "PAPAYU_LLM_PROVIDER"),
        (json!({"api_url": "ftp://x"}), "PAPAYU_LLM_API_URL"),
        (json!({"protocol_version": 9}), "PAPAYU_PROTOCOL_VERSION"),
        (json!({"temperature": 7.5}), "PAPAYU_LLM_TEMPERATURE"),
        (json!({"max_tokens": 0}), "PAPAYU_LLM_MAX_TOKENS"),
        (json!({"timeout_sec": 0}), "PAPAYU_LLM_TIMEOUT_SEC"),
    ] {
        let e = settings(bad).agent_config(&env(&[]), &keys).unwrap_err();
        assert_eq!(e.code, "ERR_INVALID_CONFIG", "{variable}");
        assert!(e.message.starts_with(variable), "{variable}: {}", e.message);
    }
    // The environment's own errors come first, as without settings.
    let e = Settings::default()
        .agent_config(&env(&[("PAPAYU_TRACE", "maybe")]), &keys)
        .unwrap_err();
    assert!(e.message.starts_with("PAPAYU_TRACE="), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_a_setting_the_configuration_refuses_names_the_variable() {
    let f = Fixture::new(&[], None, &[]).await;
    // validate() takes any timeout of at least a second; the configuration's limit is a day.
    let e = f
        .app
        .save_settings(SaveSettingsArgs {
            settings: settings(json!({"timeout_sec": 86401})),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::BAD_REQUEST);
    assert_eq!(
        e.message,
        "ERR_INVALID_CONFIG: PAPAYU_LLM_TIMEOUT_SEC=\"86401\": expected a whole number of seconds in 1..=86400 (the settings override this variable)"
    );
    assert_eq!(
        f.app.get_settings(NoArgs {}).await.unwrap(),
        Settings::default(),
        "nothing was saved"
    );
    // A key variable that is not set does not stop a save: it is reported at the model call.
    f.app
        .save_settings(SaveSettingsArgs {
            settings: settings(json!({"api_key_env": "UNSET_KEY_VAR", "timeout_sec": 86400})),
        })
        .await
        .unwrap();
}

/// The UI and `papayu config` share the user's config file: what one writes the other reads,
/// other keys and comments survive a save, and the legacy JSON file is migrated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_live_in_the_users_config_file() {
    let f = Fixture::new(&[], None, &[]).await;
    let config = f.dir.path().join("config");
    std::fs::create_dir_all(config.join("papayu")).unwrap();
    std::fs::write(
        config.join(papayu_app::LEGACY_SETTINGS_FILE),
        r#"{"model": "m-legacy", "temperature": 0.5}"#,
    )
    .unwrap();
    std::fs::write(
        config.join(SETTINGS_FILE),
        "# mine\n[llm]\nmodel = \"m-cli\"\n\n[context]\nmax_files = 7\n",
    )
    .unwrap();
    let read = f.app.get_settings(NoArgs {}).await.unwrap();
    assert_eq!(read.model.as_deref(), Some("m-cli"), "the config file wins");
    assert_eq!(
        read.temperature,
        Some(0.5),
        "the legacy file fills the rest"
    );

    let mut s = read.clone();
    s.model = Some("m-ui".into());
    s.theme = Theme::Dark;
    s.strict_json = Some(true);
    f.app
        .save_settings(SaveSettingsArgs {
            settings: s.clone(),
        })
        .await
        .unwrap();
    let file = std::fs::read_to_string(config.join(SETTINGS_FILE)).unwrap();
    for expected in [
        "# mine",
        "model = \"m-ui\"",
        "max_files = 7",
        "temperature = 0.5",
        "strict_json = true",
        "theme = \"dark\"",
    ] {
        assert!(file.contains(expected), "{expected} in:\n{file}");
    }
    assert!(!config.join(papayu_app::LEGACY_SETTINGS_FILE).exists());
    assert_eq!(f.app.get_settings(NoArgs {}).await.unwrap(), s);

    s.model = None;
    f.app
        .save_settings(SaveSettingsArgs { settings: s })
        .await
        .unwrap();
    let file = std::fs::read_to_string(config.join(SETTINGS_FILE)).unwrap();
    assert!(
        !file.contains("m-ui"),
        "a cleared field leaves the file:\n{file}"
    );
}
