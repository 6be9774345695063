//! The project a frontend starts on, the provider the UI shows, and Settings' "test
//! connection" against a scripted model, a server that is down and invalid settings.

use camino::Utf8Path;
use papayu_app::api::*;
use papayu_app::{App, AppOptions, Transport, codes};
use serde_json::json;

use crate::support::*;

fn settings(v: serde_json::Value) -> Settings {
    serde_json::from_value(v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_info_names_the_project_the_frontend_was_started_for() {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    let options = || AppOptions::new(root.join("config"), Transport::Http);
    let none = App::new(options()).app_info(NoArgs {}).await.unwrap();
    assert_eq!(none.project, None);
    let given = App::new(options().project(root.join("project")))
        .app_info(NoArgs {})
        .await
        .unwrap();
    assert_eq!(given.project, Some(root.join("project").to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_info_shows_the_provider_and_model_the_next_call_uses() {
    let model = Model::start(&[]).await;
    let f = Fixture::new(&[], Some(&model), &[]).await;
    let status = f.app.provider_info(NoArgs {}).await.unwrap();
    assert!(status.problem.is_none(), "{status:?}");
    let p = status.provider.unwrap();
    assert_eq!(p.kind, "openai-compatible");
    assert_eq!(p.model, "scripted");
    assert!(p.endpoint.starts_with(&model.url()), "{}", p.endpoint);
    // A saved model does not hide the environment's (the layered configuration, as in the
    // CLI); the saved provider, which the environment does not name, is in effect.
    f.app
        .save_settings(SaveSettingsArgs {
            settings: settings(json!({"model": "m-from-settings", "provider": "ollama"})),
        })
        .await
        .unwrap();
    let p = f
        .app
        .provider_info(NoArgs {})
        .await
        .unwrap()
        .provider
        .unwrap();
    assert_eq!(p.model, "scripted");
    assert_eq!(p.kind, "ollama");
    assert_eq!(model.calls().await, 0, "showing the provider calls nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_info_says_why_there_is_no_provider() {
    let f = Fixture::new(&[], None, &[]).await;
    f.app
        .save_settings(SaveSettingsArgs {
            settings: settings(json!({"api_key_env": "UNSET_KEY_VAR"})),
        })
        .await
        .unwrap();
    let status = f.app.provider_info(NoArgs {}).await.unwrap();
    assert!(status.provider.is_none());
    let problem = status.problem.unwrap();
    assert_eq!(problem.code, "ERR_INVALID_CONFIG");
    assert!(
        problem.message.contains("UNSET_KEY_VAR"),
        "{}",
        problem.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_connection_probes_the_provider_once() {
    let model = Model::start(&[json!({"actions": [], "summary": "ok"})]).await;
    let f = Fixture::new(&[], Some(&model), &[]).await;
    let t = f
        .app
        .test_connection(TestConnectionArgs::default())
        .await
        .unwrap();
    assert!(t.ok, "{t:?}");
    assert!(t.error.is_none());
    assert_eq!(t.provider.unwrap().model, "scripted");
    assert!(t.latency_ms.is_some());
    assert_eq!(t.checks.len(), 1);
    assert_eq!(model.calls().await, 1, "one probe request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_connection_reports_a_server_that_is_down_without_saving_anything() {
    let f = Fixture::new(&[], None, &[]).await;
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let unsaved = settings(json!({
        "provider": "openai-compatible",
        "api_url": format!("http://127.0.0.1:{port}/v1"),
        "model": "m",
        "timeout_sec": 5
    }));
    let t = f
        .app
        .test_connection(TestConnectionArgs {
            settings: Some(unsaved),
        })
        .await
        .unwrap();
    assert!(!t.ok);
    assert_eq!(
        t.provider.unwrap().model,
        "m",
        "the unsaved settings were tested"
    );
    let e = t.error.unwrap();
    assert!(e.code.starts_with("ERR_"), "{e:?}");
    assert_eq!(
        f.app.get_settings(NoArgs {}).await.unwrap(),
        Settings::default(),
        "testing saves nothing"
    );
    // Invalid settings are refused as a save would refuse them.
    let e = f
        .app
        .test_connection(TestConnectionArgs {
            settings: Some(settings(json!({"temperature": 3.5}))),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::BAD_REQUEST);
}
