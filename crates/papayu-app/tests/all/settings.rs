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
