//! Error paths: rejected plans carry their codes, failing checks roll back, cancellation,
//! unknown ids, one job per project.

use std::time::Duration;

use papayu_app::api::*;
use papayu_app::codes;
use serde_json::json;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_plan_shows_every_violation_code() {
    let bad = json!({"actions": [
        {"kind": "CREATE_FILE", "path": "/etc/passwd", "content": "x\n"},
        {"kind": "CREATE_FILE", "path": ".env", "content": "KEY=1\n"}
    ]});
    let model = Model::start(&[bad.clone(), bad]).await;
    let f = Fixture::new(&[], Some(&model), &[]).await;
    let err = f.prepare(Some("create files")).await.unwrap_err();
    let mut codes: Vec<&str> = err.violations.iter().map(|v| v.code.as_str()).collect();
    codes.sort_unstable();
    assert_eq!(codes, ["ERR_INVALID_PATH", "ERR_PROTECTED_PATH"], "{err:?}");
    assert_eq!(err.code, err.violations[0].code);
    assert!(
        !err.message.starts_with("ERR_"),
        "the code is not repeated in the message: {}",
        err.message
    );
    assert_eq!(err.http_status(), 422);
    assert_eq!(model.calls().await, 2, "one repair round");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_check_rolls_back_and_shows_its_output() {
    let (_model, f, job) = apply_with_check("echo broken-build; exit 3").await;
    let err = f.wait(Ok(job.clone())).await.unwrap_err();
    assert_eq!(err.code, "ERR_CHECK_FAILED");
    assert!(
        err.message.contains("broken-build") && err.message.contains("rolled back"),
        "{}",
        err.message
    );
    assert!(f.read("a.txt").is_none(), "rolled back");
    let status = f.status(&job).await;
    assert_eq!(status.state, JobState::Failed);
    let check = status
        .events
        .iter()
        .find(|e| e["stage"] == "check_output")
        .unwrap();
    assert_eq!(check["success"], false);
    assert!(check["output"].as_str().unwrap().contains("broken-build"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_apply_kills_the_check_and_rolls_back() {
    let (_model, f, job) = apply_with_check("sleep 30").await;
    // Wait until the file is written and the check runs.
    for _ in 0..200 {
        if f.read("a.txt").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(f.read("a.txt").is_some(), "the apply got to its check");
    let started = std::time::Instant::now();
    let c = f
        .app
        .cancel_job(CancelJobArgs {
            job_id: job.job_id.clone(),
        })
        .await
        .unwrap();
    assert!(c.cancelled);
    let err = f.wait(Ok(job.clone())).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the check was killed, not waited for"
    );
    assert_eq!(err.code, codes::CANCELLED);
    assert!(f.read("a.txt").is_none(), "rolled back");
    let status = f.status(&job).await;
    assert_eq!(status.state, JobState::Cancelled);
    let again = f
        .app
        .cancel_job(CancelJobArgs { job_id: job.job_id })
        .await
        .unwrap();
    assert!(!again.cancelled, "an ended job cannot be cancelled");
    // The project is free again.
    f.app.history(f.project_args()).await.unwrap();
    assert!(
        f.app
            .history(f.project_args())
            .await
            .unwrap()
            .undo
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_model_call_frees_the_project() {
    let model = Model::start_delayed(&[plan_answer("slow")], Duration::from_secs(20)).await;
    let f = Fixture::new(&[], Some(&model), &[]).await;
    let job = f
        .app
        .start_plan(PlanArgs {
            project: f.project.clone(),
            goal: "x".into(),
        })
        .await
        .unwrap();
    // One job per project.
    let busy = f
        .app
        .start_plan(PlanArgs {
            project: f.project.clone(),
            goal: "y".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(busy.code, codes::BAD_REQUEST);
    assert!(busy.message.contains("already running"));
    let busy = f.app.undo(f.undo_args()).await.unwrap_err();
    assert_eq!(busy.code, codes::BAD_REQUEST);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        f.app
            .cancel_job(CancelJobArgs {
                job_id: job.job_id.clone()
            })
            .await
            .unwrap()
            .cancelled
    );
    let status = f.status(&job).await;
    assert_eq!(status.state, JobState::Cancelled);
    assert_eq!(status.error.unwrap().code, codes::CANCELLED);
    // The aborted task released the project.
    // Polled against a deadline rather than a count: on a loaded machine the aborted task may
    // take a while to be dropped.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let mut freed = false;
    let mut last_error = None;
    while std::time::Instant::now() < deadline {
        match f
            .app
            .start_preview_plan(PreviewPlanArgs {
                project: f.project.clone(),
                plan:
                    json!({"actions": [{"kind": "CREATE_FILE", "path": "a.txt", "content": "a\n"}]})
                        .to_string(),
            })
            .await
        {
            Ok(j) => {
                f.wait(Ok(j)).await.unwrap();
                freed = true;
                break;
            }
            Err(e) => {
                last_error = Some(e);
                tokio::time::sleep(Duration::from_millis(10)).await
            }
        }
    }
    assert!(freed, "the project stayed busy: {last_error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_ids_and_unopened_projects() {
    let f = Fixture::new(&[], None, &[]).await;
    let e = f
        .app
        .job_status(JobStatusArgs {
            job_id: "nope".into(),
            since: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.http_status()),
        (codes::UNKNOWN_JOB, 404)
    );
    let e = f
        .app
        .cancel_job(CancelJobArgs {
            job_id: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::UNKNOWN_JOB);
    let e = f
        .app
        .start_apply(ApplyArgs {
            project: f.project.clone(),
            preview_id: "nope".into(),
            selection: vec![],
            confirmed_deletes: false,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::UNKNOWN_PREVIEW);
    let other = f.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let e = f
        .app
        .history(ProjectArgs {
            project: other.to_str().unwrap().into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::NO_PROJECT);
    let e = f
        .app
        .open_project(OpenProjectArgs {
            path: "/definitely/not/here".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::BAD_REQUEST);
    let e = f.app.undo(f.undo_args()).await.unwrap_err();
    assert_eq!(e.code, "ERR_NOTHING_TO_UNDO");
    let e = f
        .app
        .report(ReportArgs {
            project: f.project.clone(),
            since: Some("7y".into()),
            proposals: false,
        })
        .await
        .unwrap_err();
    assert!(e.message.starts_with("since:"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_call_without_a_provider_names_the_fix() {
    let f = Fixture::new(&[], None, &[]).await;
    let e = f.plan("x").await.unwrap_err();
    assert!(e.code.starts_with("ERR_"), "{e:?}");
    assert!(e.message.contains("Settings"), "{}", e.message);
    let e = f.prepare(None).await.unwrap_err();
    assert_eq!(e.code, "ERR_NO_SAVED_PLAN");
}
