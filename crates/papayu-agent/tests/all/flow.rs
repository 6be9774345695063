//! plan → apply, context rounds, repair, NO_CHANGES, update-without-base, deletes, chat.

use papayu_agent::{AgentError, ChatTurn, Mode, Stage, no_progress};
use papayu_llm::REPAIR_INSTRUCTION;
use papayu_protocol::ErrorCode;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn plan_then_apply_in_a_later_process() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("Diagnosis: answer returns 41.\n1) return 42\nCheck: cargo test"),
        patch_answer(&sha(LIB_RS.as_bytes())),
    ])
    .await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    let plan = agent
        .plan("make answer() return 42", &no_progress)
        .await
        .unwrap();
    assert_eq!(plan.context_rounds, 1);
    assert_eq!(plan.context.sent_files, vec!["src/lib.rs".to_owned()]);
    assert!(plan.context.dropped.is_empty());
    // The base context already carried the file (`answer()` names its definition); the model
    // asked again and got it from the cache: two FILE blocks over the rounds.
    assert_eq!(plan.context.stats.context_files_count, 2);
    let first = messages(&model.requests().await[0]);
    assert!(first[1].1.contains("FILE[src/lib.rs] (sha256="));
    assert!(plan.summary.as_deref().unwrap().starts_with("Diagnosis"));
    assert!(!plan.repaired);
    drop(agent);
    assert!(project.root().join(".papa-yu/state.json").is_file());

    // A later process: a fresh agent finds the saved plan.
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    let saved = agent.saved_plan().unwrap().unwrap();
    assert_eq!(
        saved.sent_files.get("src/lib.rs").unwrap(),
        &sha(LIB_RS.as_bytes())
    );
    let preview = agent.prepare_apply(None, &no_progress).await.unwrap();
    assert_eq!(project.read("src/lib.rs"), LIB_RS, "preview writes nothing");
    assert_eq!(preview.actions.len(), 1);
    assert_eq!(preview.preview.summary.patch, 1);
    assert!(preview.preview.files[0].diff.contains("+    42"));
    let out = agent.apply(&preview, None, false, &no_progress).unwrap();
    assert!(out.applied);
    assert_eq!(project.read("src/lib.rs"), LIB_RS_42);
    assert!(
        agent.saved_plan().unwrap().is_none(),
        "an applied plan is cleared"
    );

    // The APPLY request re-sent the plan and its context, with the FILE header.
    let reqs = model.requests().await;
    assert_eq!(reqs.len(), 3);
    let apply_msgs = messages(&reqs[2]);
    assert!(apply_msgs[0].1.contains("CURRENT MODE: APPLY"));
    assert!(apply_msgs[0].1.contains("LLM_PLAN_SCHEMA_VERSION=2"));
    assert!(apply_msgs[1].1.contains("THE APPROVED PLAN"));
    assert!(apply_msgs[1].1.contains(&format!(
        "FILE[src/lib.rs] (sha256={})",
        sha(LIB_RS.as_bytes())
    )));

    let traces = project.traces();
    assert_eq!(traces.len(), 2);
    assert_eq!(traces[0].mode, "PLAN");
    assert_eq!(traces[1].mode, "APPLY");
    assert_eq!(traces[1].apply.as_ref().unwrap().outcome, "applied");
    assert_eq!(
        traces[1].apply.as_ref().unwrap().files_after["src/lib.rs"].as_deref(),
        Some(sha(LIB_RS_42.as_bytes()).as_str())
    );
    // Undo goes through papayu-patch.
    agent.undo(false).unwrap();
    assert_eq!(project.read("src/lib.rs"), LIB_RS);
    assert_eq!(agent.history().unwrap().redo.len(), 1);
}

#[tokio::test]
async fn context_rounds_stop_at_two() {
    let project = Project::new(&[("a.txt", b"a\n"), ("b.txt", b"b\n"), ("c.txt", b"c\n")]);
    let model = Model::start(&[
        read_request("a.txt"),
        read_request("b.txt"),
        read_request("c.txt"),
    ])
    .await;
    // Not sent whole in the base context: the rounds are what this test is about.
    let mut agent = project.agent(&model, &[("PAPAYU_CONTEXT_SMALL_PROJECT_BYTES", "0")]);
    let plan = agent.plan("look around", &no_progress).await.unwrap();
    assert_eq!(plan.context_rounds, 2);
    assert_eq!(
        plan.unanswered_context_requests.len(),
        1,
        "the third request is not fulfilled"
    );
    let reqs = model.requests().await;
    assert_eq!(reqs.len(), 3);
    let last = messages(&reqs[2]);
    assert!(last.last().unwrap().1.contains("last context round"));
    assert!(last.last().unwrap().1.contains("FILE[b.txt]"));
    assert!(!last.iter().any(|(_, c)| c.contains("FILE[c.txt]")));
}

#[tokio::test]
async fn repair_success() {
    let project = Project::new(&[]);
    let model = Model::start(&[json!("Sure! {not json"), plan_answer("1) add README")]).await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    let plan = agent.plan("add a README", &no_progress).await.unwrap();
    assert!(plan.repaired);
    let reqs = model.requests().await;
    assert_eq!(reqs.len(), 2);
    let repair = messages(&reqs[1]);
    assert_eq!(
        repair[repair.len() - 2],
        ("assistant".into(), "Sure! {not json".into())
    );
    assert!(repair.last().unwrap().1.starts_with(REPAIR_INSTRUCTION));
    assert!(repair.last().unwrap().1.contains("ERR_JSON_PARSE"));
    let t = &project.traces()[0];
    assert_eq!(
        (t.protocol_repair_attempt, t.repair_success),
        (1, Some(true))
    );
}

#[tokio::test]
async fn repair_failure_leaves_the_project_alone() {
    let project = Project::new(&[("keep.txt", b"keep\n")]);
    let bad = json!({"actions": [{"kind": "CREATE_FILE", "path": "../escape.txt", "content": "x"}], "summary": "s"});
    let model = Model::start(&[bad.clone(), bad]).await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    let err = agent
        .prepare_apply(Some("create escape"), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidPath);
    assert!(matches!(
        err,
        AgentError::Rejected {
            stage: Stage::Validate,
            ..
        }
    ));
    assert_eq!(
        model.requests().await.len(),
        2,
        "one repair, then the error stands"
    );
    assert!(
        !project
            .dir
            .path()
            .parent()
            .unwrap()
            .join("escape.txt")
            .exists()
    );
    let t = &project.traces()[0];
    assert_eq!(t.event, "LLM_PLAN_ERR");
    assert_eq!(t.error_code, Some(ErrorCode::InvalidPath));
    assert_eq!(t.repair_success, Some(false));
    assert_eq!(t.apply.as_ref().unwrap().outcome, "rejected");
}

#[tokio::test]
async fn no_changes() {
    let project = Project::new(&[]);
    let model =
        Model::start(&[json!({"actions": [], "summary": "NO_CHANGES: already done"})]).await;
    let mut agent = project.agent(&model, &[]);
    let preview = agent
        .prepare_apply(Some("create nothing"), &no_progress)
        .await
        .unwrap();
    assert!(preview.no_changes);
    assert!(preview.actions.is_empty());
    let out = agent.apply(&preview, None, false, &no_progress).unwrap();
    assert!(!out.applied && out.no_changes);
}

#[tokio::test]
async fn empty_apply_without_marker_is_rejected() {
    let project = Project::new(&[]);
    let empty = json!({"actions": [], "summary": "nothing"});
    let model = Model::start(&[empty.clone(), empty]).await;
    let mut agent = project.agent(&model, &[]);
    let err = agent
        .prepare_apply(Some("create x"), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ApplyEmptyActions);
}

#[tokio::test]
async fn update_without_base() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let ans = patch_answer(&sha(LIB_RS.as_bytes()));
    let model = Model::start(&[ans.clone(), ans]).await;
    let mut agent = project.agent(&model, &[("PAPAYU_CONTEXT_SMALL_PROJECT_BYTES", "0")]);
    // A direct APPLY: the goal points at no file, so it was never sent and the edit has no base.
    let err = agent
        .prepare_apply(Some("create the change"), &no_progress)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UpdateWithoutBase);
    assert_eq!(project.read("src/lib.rs"), LIB_RS);
}

#[tokio::test]
async fn base_sha256_injected_on_mismatch() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let wrong = "0".repeat(64);
    let good = sha(LIB_RS.as_bytes());
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) 41 -> 42"),
        patch_answer(&wrong),
        patch_answer(&good),
    ])
    .await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    agent.plan("make it 42", &no_progress).await.unwrap();
    let preview = agent.prepare_apply(None, &no_progress).await.unwrap();
    assert!(preview.repaired);
    assert!(
        preview.fallback.is_none(),
        "a base mismatch is repaired, not a fallback"
    );
    let reqs = model.requests().await;
    let repair = messages(&reqs[3]);
    let last = &repair.last().unwrap().1;
    assert!(last.contains("ERR_BASE_MISMATCH"), "{last}");
    assert!(
        last.contains(&format!(
            "The correct base_sha256 of `src/lib.rs` (from its FILE header) is {good}"
        )),
        "{last}"
    );
    agent.apply(&preview, None, false, &no_progress).unwrap();
    assert_eq!(project.read("src/lib.rs"), LIB_RS_42);
    let t = project
        .traces()
        .into_iter()
        .find(|t| t.mode == "APPLY")
        .unwrap();
    assert_eq!(t.repair_injected_paths, vec!["src/lib.rs".to_owned()]);
    assert_eq!(t.attempts[0].stage, Some(Stage::Preview));
}

#[tokio::test]
async fn deletes_need_confirmation_and_selection_works() {
    let project = Project::new(&[("old.txt", b"old\n")]);
    let ans = json!({"actions": [
        {"kind": "CREATE_FILE", "path": "new.txt", "content": "new\n"},
        {"kind": "DELETE_FILE", "path": "old.txt"}
    ], "summary": "replace old with new"});
    let model = Model::start(&[ans.clone(), ans]).await;
    let mut agent = project.agent(&model, &[]);
    let preview = agent
        .prepare_apply(Some("create new.txt, drop old"), &no_progress)
        .await
        .unwrap();
    assert_eq!(preview.deletes, vec!["old.txt".to_owned()]);
    let err = agent
        .apply(&preview, None, false, &no_progress)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled);
    assert!(project.root().join("old.txt").exists() && !project.root().join("new.txt").exists());
    // Only the CREATE: no confirmation needed.
    let out = agent
        .apply(&preview, Some(&[0]), false, &no_progress)
        .unwrap();
    assert_eq!(out.selected, vec![0]);
    assert!(project.root().join("old.txt").exists() && project.root().join("new.txt").exists());
    assert_eq!(
        agent
            .apply(&preview, Some(&[7]), true, &no_progress)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidConfig
    );

    let mut agent = project.agent(&model, &[]);
    std::fs::remove_file(project.root().join("new.txt")).unwrap();
    let preview = agent
        .prepare_apply(Some("create new.txt, drop old"), &no_progress)
        .await
        .unwrap();
    agent.apply(&preview, None, true, &no_progress).unwrap();
    assert!(!project.root().join("old.txt").exists());
}

#[tokio::test]
async fn chat_plan_then_ok_applies_the_saved_plan() {
    let project = Project::new(&[]);
    let model = Model::start(&[
        plan_answer("1) create hello.txt"),
        json!({"actions": [{"kind": "CREATE_FILE", "path": "hello.txt", "content": "hi\n"}], "summary": "created"}),
    ])
    .await;
    let mut agent = project.agent(&model, &[]);
    let turn = agent
        .handle_message("plan: add hello.txt", &no_progress)
        .await
        .unwrap();
    let ChatTurn::Plan { decision, .. } = turn else {
        panic!("expected a plan")
    };
    assert_eq!(
        (decision.mode, decision.text.as_str()),
        (Mode::Plan, "add hello.txt")
    );
    let turn = agent.handle_message("да", &no_progress).await.unwrap();
    let ChatTurn::Preview { decision, preview } = turn else {
        panic!("expected a preview")
    };
    assert!(decision.apply_saved_plan);
    assert_eq!(preview.goal, "add hello.txt");
    agent.apply(&preview, None, false, &no_progress).unwrap();
    assert_eq!(project.read("hello.txt"), "hi\n");
    // No saved plan any more: "ok" is an ordinary PLAN message now.
    assert_eq!(agent.resolve("ok").unwrap().mode, Mode::Plan);
}

#[tokio::test]
async fn apply_without_saved_plan() {
    let project = Project::new(&[]);
    let model = Model::start(&[]).await;
    let mut agent = project.agent(&model, &[]);
    let err = agent.prepare_apply(None, &no_progress).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NoSavedPlan);
    assert!(model.requests().await.is_empty());
}

#[tokio::test]
async fn plan_context_names_what_the_diet_dropped() {
    let project = Project::new(&[("a.txt", b"a\n"), ("b.txt", b"b\n")]);
    let model = Model::start(&[
        json!({"actions": [], "context_requests": [{"type": "read_file", "path": "a.txt"}, {"type": "read_file", "path": "b.txt"}]}),
        plan_answer("done"),
    ])
    .await;
    let mut agent = project.agent(
        &model,
        &[
            ("PAPAYU_CONTEXT_MAX_FILES", "1"),
            ("PAPAYU_CONTEXT_SMALL_PROJECT_BYTES", "0"),
        ],
    );
    let plan = agent.plan("look", &no_progress).await.unwrap();
    assert_eq!(plan.context.sent_files.len(), 1);
    assert_eq!(plan.context.dropped.len(), 1);
    let d = &plan.context.dropped[0];
    assert_eq!(d.kind, "file");
    assert!(d.path.is_some() && d.reason.starts_with("dropped"));
    assert_ne!(d.path, Some(plan.context.sent_files[0].clone()));
    assert_eq!(plan.context.stats.context_files_dropped_count, 1);
}

#[tokio::test]
async fn preview_document_keeps_blocked_actions_and_applies_the_rest() {
    let project = Project::new(&[("exists.txt", b"x\n")]);
    let model = Model::start(&[]).await;
    let agent = project.agent(&model, &[]);
    let doc = json!({"actions": [
        {"kind": "CREATE_FILE", "path": "new.txt", "content": "new\n"},
        {"kind": "CREATE_FILE", "path": "exists.txt", "content": "again\n"}
    ], "summary": "two files"})
    .to_string();
    let preview = agent.preview_document(&doc, &no_progress).unwrap();
    assert_eq!(preview.actions.len(), 2);
    assert_eq!(preview.summary.as_deref(), Some("two files"));
    let blocked: Vec<_> = preview
        .preview
        .files
        .iter()
        .filter(|f| f.error.is_some())
        .collect();
    assert_eq!(blocked.len(), 1);
    assert_eq!(
        blocked[0].error.as_ref().unwrap().code,
        ErrorCode::FileExists
    );
    let out = agent
        .apply(&preview, Some(&[0]), false, &no_progress)
        .unwrap();
    assert!(out.applied);
    assert_eq!(project.read("new.txt"), "new\n");
    assert_eq!(project.read("exists.txt"), "x\n");
    assert!(model.requests().await.is_empty(), "no model call");

    let err = agent
        .preview_document("not json", &no_progress)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::JsonParse);
}

#[tokio::test]
async fn apply_with_cancel_kills_the_check_rolls_back_and_reports_progress() {
    let project = Project::new(&[
        ("src/lib.rs", LIB_RS.as_bytes()),
        (
            ".papa-yu/project.json",
            br#"{"default_test_command":"echo checking-now; sleep 30"}"#,
        ),
    ]);
    let ans = json!({"actions": [
        {"kind": "CREATE_FILE", "path": "src/new.rs", "content": "pub fn new() {}\n"}
    ], "summary": "add new.rs"});
    let model = Model::start(&[ans]).await;
    let mut agent = project.agent(&model, &[]);
    let preview = agent
        .prepare_apply(Some("create src/new.rs"), &no_progress)
        .await
        .unwrap();
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = cancel.clone();
    let events = std::sync::Mutex::new(Vec::new());
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let err = agent
        .apply_with_cancel(
            &preview,
            None,
            false,
            &|p| events.lock().unwrap().push(p.clone()),
            cancel,
        )
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(err.code(), ErrorCode::Cancelled, "{err}");
    assert!(!project.root().join("src/new.rs").exists(), "rolled back");
    let events = events.into_inner().unwrap();
    assert!(
        events.iter().any(
            |e| matches!(e, papayu_agent::Progress::Applying { item, .. } if item == "src/new.rs")
        ),
        "{events:?}"
    );
    let checked = events
        .iter()
        .find_map(|e| match e {
            papayu_agent::Progress::Checked {
                success, output, ..
            } => Some((*success, output.clone())),
            _ => None,
        })
        .expect("a Checked event");
    assert!(!checked.0);
    assert!(checked.1.contains("checking-now"), "{checked:?}");
}

#[tokio::test]
async fn r_mode_prefix_never_reaches_the_model_and_a_missing_summary_is_built() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let no_summary =
        json!({"actions": [], "plan": [{"step": "return 42", "details": "in answer()"}]});
    let model = Model::start(&[no_summary]).await;
    let mut agent = project.agent(&model, &[]);
    let plan = agent
        .plan("plan: make answer() return 42", &no_progress)
        .await
        .unwrap();
    let reqs = model.requests().await;
    let user = &messages(&reqs[0])[1].1;
    assert!(user.starts_with("GOAL:\nmake answer() return 42"), "{user}");
    assert!(!user.contains("plan:"), "{user}");
    assert_eq!(plan.summary.as_deref(), Some("1. return 42: in answer()"));
    assert_eq!(
        agent
            .saved_plan()
            .unwrap()
            .unwrap()
            .response
            .summary
            .as_deref(),
        Some("1. return 42: in answer()")
    );
}

#[tokio::test]
async fn r_apply_of_a_saved_plan_records_the_context_it_sends_again() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let model = Model::start(&[
        plan_answer("1) return 42"),
        json!({"actions": [{"kind": "PATCH_FILE", "path": "src/lib.rs", "base_sha256": sha(LIB_RS.as_bytes()), "patch": LIB_PATCH}]}),
    ])
    .await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    agent
        .plan("make answer() return 42", &no_progress)
        .await
        .unwrap();
    let preview = agent.prepare_apply(None, &no_progress).await.unwrap();
    // No summary from the model: one is built from the actions.
    assert_eq!(
        preview.summary.as_deref(),
        Some("Changes: PATCH_FILE src/lib.rs")
    );
    let traces = project.traces();
    let apply = traces.iter().find(|t| t.mode == "APPLY").unwrap();
    let plan = traces.iter().find(|t| t.mode == "PLAN").unwrap();
    assert!(
        apply.context_stats.context_files_count >= 1,
        "{:?}",
        apply.context_stats
    );
    assert_eq!(apply.context_stats, plan.context_stats);
}

#[tokio::test]
async fn r_an_edit_of_text_the_file_lacks_is_repaired_with_the_files_closest_lines() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let base = sha(LIB_RS.as_bytes());
    // The model misremembers the body (`41u32`), then copies the shown lines.
    let wrong = json!({"actions": [{"kind": "EDIT_FILE", "path": "src/lib.rs", "base_sha256": base,
        "edits": [{"op": "replace", "anchor": "pub fn answer() -> u32 {\n    41u32", "before": "    41u32", "after": "    42"}]}]});
    let right = json!({"actions": [{"kind": "EDIT_FILE", "path": "src/lib.rs", "base_sha256": base,
        "edits": [{"op": "replace", "anchor": "pub fn answer() -> u32 {", "before": "    41", "after": "    42"}]}]});
    let model = Model::start(&[wrong, right]).await;
    let mut agent = project.agent(&model, &[("PAPAYU_PROTOCOL_VERSION", "3")]);
    let preview = agent
        .prepare_apply(Some("make answer() return 42"), &no_progress)
        .await
        .unwrap();
    assert!(preview.repaired);
    let reqs = model.requests().await;
    let repair = messages(&reqs[1]).last().unwrap().1.clone();
    assert!(repair.contains("Its closest lines"), "{repair}");
    assert!(
        repair.contains("pub fn answer() -> u32 {\n    41\n}"),
        "{repair}"
    );
}

/// An edit aimed at a neighbour of the right file (its text is not there) is moved to the one
/// sent file it fits, without a repair round; the move is reported and traced.
#[tokio::test]
async fn an_edit_aimed_at_the_wrong_file_goes_to_the_one_sent_file_it_fits() {
    const UTIL_RS: &str = "pub fn half(x: u32) -> u32 {\n    x / 2\n}\n";
    let project = Project::new(&[
        ("src/lib.rs", LIB_RS.as_bytes()),
        ("src/util.rs", UTIL_RS.as_bytes()),
    ]);
    let wrong_file = json!({"actions": [{"kind": "EDIT_FILE", "path": "src/util.rs",
        "base_sha256": sha(UTIL_RS.as_bytes()),
        "edits": [{"op": "replace", "anchor": "pub fn answer() -> u32 {", "before": "    41", "after": "    42"}]}]});
    let model = Model::start(&[wrong_file]).await;
    let mut agent = project.agent(
        &model,
        &[("PAPAYU_PROTOCOL_VERSION", "3"), ("PAPAYU_TRACE", "1")],
    );
    let seen = std::sync::Mutex::new(Vec::new());
    let progress = |p: &papayu_agent::Progress| seen.lock().unwrap().push(p.clone());
    let preview = agent
        .prepare_apply(Some("make answer() return 42"), &progress)
        .await
        .unwrap();
    let reqs = model.requests().await;
    assert_eq!(reqs.len(), 1, "no repair round");
    assert!(messages(&reqs[0])[1].1.contains("FILE[src/util.rs]"));
    assert!(!preview.repaired);
    assert_eq!(preview.preview.files.len(), 1);
    assert_eq!(preview.preview.files[0].path, "src/lib.rs");
    assert!(preview.preview.files[0].diff.contains("+    42"));
    assert!(
        seen.lock()
            .unwrap()
            .contains(&papayu_agent::Progress::Retargeted {
                from: "src/util.rs".into(),
                to: "src/lib.rs".into()
            })
    );
    let out = agent.apply(&preview, None, false, &no_progress).unwrap();
    assert!(out.applied);
    assert_eq!(project.read("src/lib.rs"), LIB_RS_42);
    assert_eq!(project.read("src/util.rs"), UTIL_RS);
    let traces = project.traces();
    let apply = traces.iter().find(|t| t.mode == "APPLY").unwrap();
    assert_eq!(apply.retargeted_edits, vec!["src/util.rs -> src/lib.rs"]);
}

/// A whole-file answer holding only the function it changed replaces that function, not the
/// file: the rest is kept, and the reading is reported and traced.
#[tokio::test]
async fn a_whole_file_answer_with_only_the_changed_function_keeps_the_rest_of_the_file() {
    const CALC: &str = "\"\"\"Calc.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a - b\n\n\ndef mean(values):\n    return sum(values) / len(values)\n";
    let project = Project::new(&[("calc.py", CALC.as_bytes())]);
    let fragment = json!({"actions": [{"kind": "UPDATE_FILE", "path": "calc.py",
        "content": "```python\ndef add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n```"}]});
    let model = Model::start(&[fragment]).await;
    let mut agent = project.agent(
        &model,
        &[("PAPAYU_PROTOCOL_VERSION", "3"), ("PAPAYU_TRACE", "1")],
    );
    let seen = std::sync::Mutex::new(Vec::new());
    let progress = |p: &papayu_agent::Progress| seen.lock().unwrap().push(p.clone());
    let preview = agent
        .prepare_apply(Some("add() subtracts; make it add"), &progress)
        .await
        .unwrap();
    assert_eq!(model.requests().await.len(), 1, "no repair round");
    assert!(
        seen.lock()
            .unwrap()
            .contains(&papayu_agent::Progress::Widened {
                path: "calc.py".into(),
                first: 4,
                last: 6,
                kept: 7,
                fenced: true,
                numbered: false,
                as_patch: false,
                added: false,
            })
    );
    let diff = &preview.preview.files[0].diff;
    assert!(
        diff.contains("+    return a + b") && !diff.contains("-def mean"),
        "{diff}"
    );
    let out = agent.apply(&preview, None, false, &no_progress).unwrap();
    assert!(out.applied);
    assert_eq!(project.read("calc.py"), CALC.replace("a - b", "a + b"));
    let traces = project.traces();
    let apply = traces.iter().find(|t| t.mode == "APPLY").unwrap();
    assert_eq!(apply.widened_updates, vec!["calc.py: lines 4-6, 7 kept"]);
}

/// With `whole_file` answers (narrowed: a strict model server on this machine), a call that sent
/// a file too long to copy asks for search/replace edits instead, its lines numbered; a short
/// one asks for the whole file and shows the file's text as it is.
#[tokio::test]
async fn a_call_with_a_long_file_asks_for_search_replace_edits_instead_of_whole_files() {
    let long: String = (0..1500).map(|i| format!("x_{i} = {i}\n")).collect();
    assert!(long.len() as u64 > papayu_agent::WHOLE_FILE_MAX_BYTES);
    for (text, whole) in [("x = 1\n".to_owned(), true), (long, false)] {
        let project = Project::new(&[("calc.py", text.as_bytes())]);
        let model = Model::start(&[json!({"summary": "NO_CHANGES: fine", "actions": []})]).await;
        let mut agent = project.agent(
            &model,
            &[
                ("PAPAYU_LLM_STRICT_JSON", "1"),
                ("PAPAYU_PROTOCOL_VERSION", "3"),
                ("PAPAYU_LOCAL_EDIT_STYLE", "whole_file"),
            ],
        );
        agent
            .prepare_apply(Some("look at calc.py"), &no_progress)
            .await
            .unwrap();
        let reqs = model.requests().await;
        let system = &messages(&reqs[0])[0].1;
        assert!(messages(&reqs[0])[1].1.contains("FILE[calc.py]"));
        assert_eq!(
            system.contains("\"kind\": \"UPDATE_FILE\""),
            whole,
            "{system}"
        );
        assert_eq!(
            system.contains("\"kind\": \"EDIT_FILE\""),
            !whole,
            "{system}"
        );
        // Whole-file answers copy the file's text: its lines are shown without `N|` numbers.
        let user = &messages(&reqs[0])[1].1;
        assert_eq!(user.contains("\n1|"), !whole, "{user}");
        assert!(
            user.contains(if whole { "\nx = 1\n" } else { "\n1|x_0 = 0\n" }),
            "{user}"
        );
    }
}

/// Issue 18 item 5: a declined preview is kept with its base hashes; `apply` judges it again
/// without a second model call while the files are unchanged, and asks anew once they change.
#[tokio::test]
async fn a_declined_preview_is_reused_while_its_files_are_unchanged() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let model = Model::start(&[
        plan_answer("1) return 42"),
        patch_answer(&sha(LIB_RS.as_bytes())),
        patch_answer(&sha(b"pub fn answer() -> u32 {\n    41\n}\n// edited\n")),
    ])
    .await;
    let mut agent = project.agent(&model, &[]);
    agent
        .plan("make answer() return 42", &no_progress)
        .await
        .unwrap();
    let first = agent.prepare_apply(None, &no_progress).await.unwrap();
    assert_eq!(model.requests().await.len(), 2);
    drop(agent);

    // Declined, then asked again in a later process: the same preview, no model call.
    let mut agent = project.agent(&model, &[]);
    let again = agent.prepare_apply(None, &no_progress).await.unwrap();
    assert_eq!(model.requests().await.len(), 2, "no second model call");
    assert_eq!(again.preview.files[0].diff, first.preview.files[0].diff);
    assert_eq!(again.actions.len(), 1);

    // The file changed: the kept answer no longer fits, the model is asked.
    std::fs::write(
        project.root().join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    41\n}\n// edited\n",
    )
    .unwrap();
    let fresh = agent.prepare_apply(None, &no_progress).await.unwrap();
    assert_eq!(model.requests().await.len(), 3);
    let out = agent.apply(&fresh, None, false, &no_progress).unwrap();
    assert!(out.applied);
    assert!(
        papayu_agent::load_previewed(project.root())
            .unwrap()
            .is_none(),
        "applying clears the saved plan and its preview"
    );
}
