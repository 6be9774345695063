//! The UI's main flow over the real agent: open, plan, "ok", preview, deselect, apply, undo.

use papayu_app::api::*;
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_ok_preview_deselect_apply_undo_redo() {
    let two_actions = json!({"actions": [
        {"kind": "PATCH_FILE", "path": "src/lib.rs", "base_sha256": sha(LIB_RS), "patch": LIB_PATCH},
        {"kind": "CREATE_FILE", "path": "NOTES.md", "content": "# Notes\n"}
    ], "summary": "answer is 42, plus notes"});
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) return 42"),
        two_actions,
    ])
    .await;
    let f = Fixture::new(&[("src/lib.rs", LIB_RS)], Some(&model), &[]).await;

    // Chat: a goal is a PLAN (same mode rules as `papayu chat`).
    let turn = f
        .wait(
            f.app
                .start_chat(ChatArgs {
                    project: f.project.clone(),
                    message: "make answer() return 42".into(),
                })
                .await,
        )
        .await
        .unwrap();
    assert_eq!(turn["turn"], "plan");
    let plan = &turn["outcome"];
    assert_eq!(plan["summary"], "1) return 42");
    assert_eq!(plan["risks"], json!(["none really"]));
    assert_eq!(plan["context"]["sent_files"], json!(["src/lib.rs"]));
    assert_eq!(plan["context"]["dropped"], json!([]));
    // The base context sent the file (`answer()` names its definition) before the model asked
    // for it again: two FILE blocks over the rounds, one file.
    assert_eq!(plan["context"]["stats"]["context_files_count"], 2);

    // The saved plan shows when the project is opened again.
    let view = f
        .app
        .open_project(OpenProjectArgs {
            path: f.project.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        view.saved_plan.as_ref().unwrap().summary.as_deref(),
        Some("1) return 42")
    );

    // "ok" applies the saved plan: a preview, nothing written.
    let job = f
        .app
        .start_chat(ChatArgs {
            project: f.project.clone(),
            message: "ok".into(),
        })
        .await
        .unwrap();
    let turn = f.wait(Ok(job.clone())).await.unwrap();
    assert_eq!(turn["turn"], "preview");
    let preview = &turn["preview"];
    assert_eq!(preview["actions"].as_array().unwrap().len(), 2);
    assert!(
        file(preview, "src/lib.rs")["diff"]
            .as_str()
            .unwrap()
            .contains("+    42")
    );
    assert_eq!(
        f.read("src/lib.rs").unwrap(),
        LIB_RS,
        "a preview writes nothing"
    );
    let status = f.status(&job).await;
    assert_eq!(status.state, JobState::Done);
    let stages: Vec<&str> = status
        .events
        .iter()
        .filter_map(|e| e["stage"].as_str())
        .collect();
    assert!(
        stages.contains(&"requesting") && stages.contains(&"previewing"),
        "{stages:?}"
    );
    let later = f
        .app
        .job_status(JobStatusArgs {
            job_id: job.job_id,
            since: status.next,
        })
        .await
        .unwrap();
    assert!(later.events.is_empty());

    // Deselect the second action and apply.
    let outcome = f.apply(preview, &[0]).await.unwrap();
    assert_eq!(outcome["applied"], true);
    assert_eq!(outcome["selected"], json!([0]));
    assert_eq!(f.read("src/lib.rs").unwrap(), LIB_RS_42);
    assert!(
        f.read("NOTES.md").is_none(),
        "the deselected action is not applied"
    );

    let history = f.app.history(f.project_args()).await.unwrap();
    assert_eq!(history.undo.len(), 1);
    f.app.undo(f.undo_args()).await.unwrap();
    assert_eq!(f.read("src/lib.rs").unwrap(), LIB_RS);
    f.app.redo(f.undo_args()).await.unwrap();
    assert_eq!(f.read("src/lib.rs").unwrap(), LIB_RS_42);

    // Traces and the report (PAPAYU_TRACE=1): two calls (PLAN, APPLY), newest first.
    let traces = f.app.traces(f.project_args()).await.unwrap();
    assert_eq!(traces.len(), 2);
    assert_eq!(traces[0].mode, "APPLY");
    assert_eq!(traces[0].outcome, "applied");
    assert_eq!(traces[1].mode, "PLAN");
    assert_eq!(
        (traces[1].provider.as_str(), traces[1].model.as_str()),
        ("openai-compatible", "scripted")
    );
    let full = f
        .app
        .trace(TraceArgs {
            project: f.project.clone(),
            trace_id: traces[1].trace_id[..13].into(),
        })
        .await
        .unwrap();
    assert_eq!(full["mode"], "PLAN");
    let report = f
        .app
        .report(ReportArgs {
            project: f.project.clone(),
            since: Some("7d".into()),
            proposals: false,
        })
        .await
        .unwrap();
    assert_eq!(
        (report.report.plan_count, report.report.applied_count),
        (1, 1)
    );
    assert_eq!(report.timeline.len(), 1);
    assert_eq!(report.timeline[0].calls, 2);
    assert_eq!(model.calls().await, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_document_previews_blocked_actions_without_a_model() {
    // No provider configured at all: previewing a document and applying still work.
    let f = Fixture::new(&[("exists.txt", "x\n")], None, &[]).await;
    let doc = json!({"actions": [
        {"kind": "CREATE_FILE", "path": "new.txt", "content": "new\n"},
        {"kind": "CREATE_FILE", "path": "exists.txt", "content": "again\n"}
    ]});
    let preview = f
        .wait(
            f.app
                .start_preview_plan(PreviewPlanArgs {
                    project: f.project.clone(),
                    plan: doc.to_string(),
                })
                .await,
        )
        .await
        .unwrap();
    assert!(file(&preview, "new.txt")["error"].is_null());
    assert_eq!(
        file(&preview, "exists.txt")["error"]["code"],
        "ERR_FILE_EXISTS"
    );
    f.apply(&preview, &[0]).await.unwrap();
    assert_eq!(f.read("new.txt").unwrap(), "new\n");
    assert_eq!(f.read("exists.txt").unwrap(), "x\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_reports_each_check_as_a_check_output_event() {
    let (_model, f, job) = apply_with_check("echo all-good").await;
    let outcome = f.wait(Ok(job.clone())).await.unwrap();
    assert_eq!(
        outcome["report"]["checks"][0]["output"]
            .as_str()
            .unwrap()
            .trim(),
        "all-good"
    );
    let status = f.status(&job).await;
    let check = status
        .events
        .iter()
        .find(|e| e["stage"] == "check_output")
        .expect("a check_output event");
    assert_eq!(check["command"], "echo all-good");
    assert_eq!(check["success"], true);
    assert!(
        status
            .events
            .iter()
            .any(|e| e["stage"] == "applying" && e["item"] == "a.txt")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_of_recent_projects_and_directories() {
    let f = Fixture::new(&[("src/lib.rs", LIB_RS)], None, &[]).await;
    std::fs::create_dir_all(f.root().join(".git")).unwrap();
    let recent = f.app.recent_projects(NoArgs {}).await.unwrap();
    assert_eq!(recent.len(), 1);
    assert_eq!(recent[0].path, f.project);
    assert_eq!(recent[0].name, "project");
    let parent = f.root().parent().unwrap().to_string();
    let listing = f
        .app
        .list_dir(ListDirArgs {
            path: Some(parent.clone()),
        })
        .await
        .unwrap();
    let names: Vec<_> = listing
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.is_dir, e.is_project))
        .collect();
    assert!(names.contains(&("project", true, true)), "{names:?}");
    let home = f.app.list_dir(ListDirArgs { path: None }).await.unwrap();
    assert_eq!(home.path, parent, "the default is the home directory");
    let inner = f
        .app
        .list_dir(ListDirArgs {
            path: Some(f.project.clone()),
        })
        .await
        .unwrap();
    assert_eq!(inner.parent.as_deref(), Some(parent.as_str()));
    assert_eq!(inner.entries[0].name, "src", "hidden entries are left out");
}
