//! What outlives the app (seed 000, issue #21): the pending plan and its mode, shown as stale
//! when its files changed; the language the frontend chose; the report's verdict and proposals.

use camino::Utf8Path;
use papayu_app::api::*;
use papayu_app::{App, AppOptions, Transport};
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_the_pending_plan_survives_a_restart_of_the_app_and_shows_when_stale() {
    let model = Model::start(&[read_request("src/lib.rs"), plan_answer("1) return 42")]).await;
    let f = Fixture::new(&[("src/lib.rs", LIB_RS)], Some(&model), &[]).await;
    f.plan("make answer() return 42").await.unwrap();

    // A restart: a new app on the same configuration opens the project again.
    let config = Utf8Path::from_path(f.dir.path()).unwrap().join("config");
    let restarted = App::new(AppOptions::new(config, Transport::Http));
    let open = || {
        restarted.open_project(OpenProjectArgs {
            path: f.project.clone(),
        })
    };
    let saved = open()
        .await
        .unwrap()
        .saved_plan
        .expect("the plan is pending");
    assert_eq!(saved.goal, "make answer() return 42");
    assert_eq!(saved.summary.as_deref(), Some("1) return 42"));
    assert!(!saved.llm_mode.is_empty());
    assert!(saved.changed_files.is_empty(), "{:?}", saved.changed_files);

    std::fs::write(
        f.root().join("src/lib.rs"),
        "pub fn answer() -> u32 { 7 }\n",
    )
    .unwrap();
    let saved = open().await.unwrap().saved_plan.unwrap();
    assert_eq!(saved.changed_files, ["src/lib.rs"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_info_hands_the_frontends_language_to_the_ui() {
    let dir = tempfile::tempdir().unwrap();
    let config = Utf8Path::from_path(dir.path()).unwrap().join("config");
    let plain = App::new(AppOptions::new(config.clone(), Transport::Http));
    assert_eq!(plain.app_info(NoArgs::default()).await.unwrap().lang, None);
    let ru = App::new(AppOptions::new(config, Transport::Http).lang("ru"));
    assert_eq!(
        ru.app_info(NoArgs::default())
            .await
            .unwrap()
            .lang
            .as_deref(),
        Some("ru")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_carries_the_verdict_and_asks_for_proposals_only_when_told() {
    let model = Model::start(&[json!({
        "summary": "quiet week",
        "proposals": [{
            "kind": "limit_tuning",
            "title": "raise the file budget",
            "rationale": "12 files dropped"
        }]
    })])
    .await;
    let f = Fixture::new(&[], Some(&model), &[]).await;
    let args = |proposals| ReportArgs {
        project: f.project.clone(),
        since: None,
        proposals,
    };
    let plain = f.app.report(args(false)).await.unwrap();
    assert!(plain.proposals.is_none());
    assert_eq!(model.calls().await, 0, "no model call unless asked");
    let doc = serde_json::to_value(&plain).unwrap();
    assert_eq!(doc["report"]["graduation"]["verdict"], "not_enough_data");
    assert!(
        doc["report"]["graduation"]["criteria"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    assert!(doc.get("proposals").is_none());

    let asked = f.app.report(args(true)).await.unwrap();
    let p = asked.proposals.expect("proposals");
    assert_eq!(p.proposals.summary, "quiet week");
    assert_eq!(p.proposals.proposals[0].title, "raise the file budget");
    assert_eq!(model.calls().await, 1);
}

/// Seed 000's original app's preferences fill what papayu's own leave unset (DECISIONS D42):
/// the value reaches the model's prompt, and the file is never written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_original_apps_preferences_reach_the_prompt() {
    let model = Model::start(&[plan_answer("1) nothing")]).await;
    let data = tempfile::tempdir().unwrap();
    let original = Utf8Path::from_path(data.path())
        .unwrap()
        .join("papa-yu/preferences.json");
    std::fs::create_dir_all(original.parent().unwrap()).unwrap();
    let text = r#"{"default_language":"kotlin-from-papa-yu","theme":"dark"}"#;
    std::fs::write(&original, text).unwrap();

    let f = Fixture::new(&[("src/lib.rs", LIB_RS)], Some(&model), &[]).await;
    let config = Utf8Path::from_path(f.dir.path()).unwrap().join("config");
    let mut env = std::collections::BTreeMap::new();
    env.insert("PAPAYU_LLM_API_URL".to_owned(), model.url());
    env.insert("PAPAYU_LLM_MODEL".to_owned(), "scripted".to_owned());
    let app = App::new(
        AppOptions::new(config, Transport::Http)
            .env(env)
            .original_user_prefs(original.clone()),
    );
    app.open_project(OpenProjectArgs {
        path: f.project.clone(),
    })
    .await
    .unwrap();
    let job = app
        .start_plan(PlanArgs {
            project: f.project.clone(),
            goal: "anything".into(),
        })
        .await
        .unwrap();
    for _ in 0..400 {
        let s = app
            .job_status(JobStatusArgs {
                job_id: job.job_id.clone(),
                since: 0,
            })
            .await
            .unwrap();
        if s.state != JobState::Running {
            assert_eq!(s.state, JobState::Done, "{:?}", s.error);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let requests = model.server.received_requests().await.unwrap();
    let body = String::from_utf8_lossy(&requests[0].body).into_owned();
    assert!(body.contains("kotlin-from-papa-yu"), "{body}");
    assert_eq!(
        std::fs::read_to_string(&original).unwrap(),
        text,
        "never written"
    );
}
