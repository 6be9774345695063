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
async fn settings_persist_and_configure_what_the_environment_does_not() {
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

/// The request the scripted model received last, as JSON.
async fn last_request(model: &Model) -> serde_json::Value {
    let reqs = model.server.received_requests().await.unwrap();
    serde_json::from_slice(&reqs.last().unwrap().body).unwrap()
}

/// The layered configuration of the CLI (issue #18 item 3): defaults < the user's config file,
/// where the UI saves < the project's file < the environment. A saved setting never hides a
/// variable, and a variable the settings do not name stays in effect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environment_beats_a_saved_setting_and_a_saved_setting_beats_the_default() {
    let model = Model::start(&[plan_answer("one")]).await;
    // The environment names the scripted model ("scripted") and a token budget.
    let f = Fixture::new(&[], Some(&model), &[("PAPAYU_LLM_MAX_TOKENS", "77")]).await;
    let s = settings(json!({
        "model": "m-saved", "max_tokens": 99, "temperature": 0.25,
        "api_key_env": "TEST_KEY", "protocol_version": 1
    }));
    f.app
        .save_settings(SaveSettingsArgs {
            settings: s.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        f.app.get_settings(NoArgs {}).await.unwrap(),
        s,
        "the settings show what was saved"
    );
    let status = f.app.provider_info(NoArgs {}).await.unwrap();
    assert_eq!(status.provider.unwrap().model, "scripted", "env wins");

    let plan = f.plan("x").await.unwrap();
    assert_eq!(plan["protocol"], 1, "the saved protocol: over the default");
    let body = last_request(&model).await;
    assert_eq!(body["model"], "scripted", "the environment's model wins");
    assert_eq!(body["max_tokens"], 77, "the environment's budget wins");
    assert_eq!(
        body["temperature"], 0.25,
        "the saved temperature: over the default"
    );
    let reqs = model.server.received_requests().await.unwrap();
    assert_eq!(
        reqs[0].headers.get("authorization").unwrap(),
        "Bearer sk-test-key",
        "the key from the variable the saved api_key_env names"
    );
}

/// The project's config file ranks over the user's (the UI's settings) and under the
/// environment, as `papayu config show` says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_file_beats_a_saved_setting() {
    let model = Model::start(&[plan_answer("one")]).await;
    let f = Fixture::new(&[], Some(&model), &[]).await;
    std::fs::create_dir_all(f.root().join(".papa-yu")).unwrap();
    std::fs::write(
        f.root().join(".papa-yu/config.toml"),
        "[llm]\ntemperature = 0.5\n",
    )
    .unwrap();
    f.app
        .save_settings(SaveSettingsArgs {
            settings: settings(json!({"temperature": 0.25, "max_tokens": 99})),
        })
        .await
        .unwrap();
    f.plan("x").await.unwrap();
    let body = last_request(&model).await;
    assert_eq!(body["temperature"], 0.5, "the project's file wins");
    assert_eq!(
        body["max_tokens"], 99,
        "the saved setting where nothing else says"
    );
}

/// A key variable that is not set (or blank) is invalid configuration at the model call,
/// naming the variable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_variable_that_is_not_set_or_blank_is_invalid_config() {
    let model = Model::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let root = camino::Utf8Path::from_path(dir.path()).unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let app = papayu_app::App::new(
        papayu_app::AppOptions::new(root.join("config"), Transport::Http)
            .env(std::collections::BTreeMap::from([(
                "PAPAYU_LLM_API_URL".to_owned(),
                model.url(),
            )]))
            .key_lookup(|name| (name == "BLANK_KEY").then(|| "  ".to_owned())),
    );
    for name in ["UNSET_KEY_VAR", "BLANK_KEY"] {
        app.save_settings(SaveSettingsArgs {
            settings: settings(json!({ "api_key_env": name })),
        })
        .await
        .unwrap();
        let status = app.provider_info(NoArgs {}).await.unwrap();
        let e = status.problem.unwrap();
        assert_eq!(e.code, "ERR_INVALID_CONFIG");
        assert!(
            e.message.contains(&format!("{name} is not set")),
            "{}",
            e.message
        );
    }
    assert_eq!(model.calls().await, 0);
}

/// A config file edited by hand is not validated on load: its values are checked at the model
/// call as the variables they stand for, and the error names the file and the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_edited_setting_is_checked_as_its_variable() {
    for (bad, key) in [
        ("[llm]\nprovider = \"skynet\"\n", "llm.provider"),
        ("[llm]\napi_url = \"ftp://x\"\n", "llm.api_url"),
        ("[protocol]\nversion = 9\n", "protocol.version"),
        ("[llm]\ntemperature = 7.5\n", "llm.temperature"),
        ("[llm]\nmax_tokens = 0\n", "llm.max_tokens"),
        ("[llm]\ntimeout_sec = 0\n", "llm.timeout_sec"),
    ] {
        // A blank variable is unset (the fixture's timeout would hide the file's).
        let f = Fixture::new(&[], None, &[("PAPAYU_LLM_TIMEOUT_SEC", "")]).await;
        let file = f.dir.path().join("config").join(SETTINGS_FILE);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, bad).unwrap();
        let e = f.plan("x").await.unwrap_err();
        assert_eq!(e.code, "ERR_INVALID_CONFIG", "{key}");
        assert!(
            e.message.contains(&format!("{}: {key} = ", file.display())),
            "{key}: {}",
            e.message
        );
    }
    // The environment's own errors name the variable.
    let f = Fixture::new(&[], None, &[("PAPAYU_TRACE", "maybe")]).await;
    let e = f.plan("x").await.unwrap_err();
    assert!(e.message.contains("PAPAYU_TRACE="), "{}", e.message);
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
        "ERR_INVALID_CONFIG: PAPAYU_LLM_TIMEOUT_SEC=\"86401\": expected a whole number of seconds in 1..=86400 (the setting is checked as this variable)"
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
