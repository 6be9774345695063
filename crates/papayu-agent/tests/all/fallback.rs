//! The protocol fallback of SPEC §9: v3→v2, v2→v1, non-UTF-8 at once, once only.

use papayu_agent::{Stage, no_progress};
use papayu_protocol::ErrorCode;
use serde_json::json;

use crate::support::*;

fn edit_answer(base: &str) -> serde_json::Value {
    json!({"actions": [{"kind": "EDIT_FILE", "path": "src/lib.rs", "base_sha256": base,
        "edits": [{"op": "replace", "anchor": "fn missing()", "before": "41", "after": "42"}]}], "summary": "edit"})
}

fn update_answer(content: &str) -> serde_json::Value {
    json!({"actions": [{"kind": "UPDATE_FILE", "path": "src/lib.rs", "content": content}], "summary": "rewrite"})
}

#[tokio::test]
async fn v3_to_v2_after_a_failed_repair() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let base = sha(LIB_RS.as_bytes());
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) 42"),
        edit_answer(&base),
        edit_answer(&base),
        patch_answer(&base),
    ])
    .await;
    let env = [("PAPAYU_PROTOCOL_VERSION", "3"), ("PAPAYU_TRACE", "1")];
    let mut agent = project.agent(&model, &env);
    agent.plan("make it 42", &no_progress).await.unwrap();
    let preview = agent.prepare_apply(None, &no_progress).await.unwrap();
    let fb = preview.fallback.clone().unwrap();
    assert_eq!(
        (fb.from, fb.to, fb.reason, fb.stage),
        (3, 2, ErrorCode::EditAnchorNotFound, Stage::Preview)
    );
    assert_eq!(preview.protocol, 2);
    let reqs = model.requests().await;
    assert_eq!(reqs.len(), 5, "edit, repair, then the fallback request");
    assert!(
        messages(&reqs[2])[0]
            .1
            .contains("LLM_PLAN_SCHEMA_VERSION=3")
    );
    assert!(messages(&reqs[2])[0].1.contains("EDIT_FILE"));
    let fallback_req = messages(&reqs[4]);
    assert_eq!(
        fallback_req.len(),
        2,
        "a fresh conversation under the new version"
    );
    assert!(fallback_req[0].1.contains("LLM_PLAN_SCHEMA_VERSION=2"));
    assert!(!fallback_req[0].1.contains("EDIT_FILE"));
    assert!(fallback_req[1].1.contains("FILE[src/lib.rs]"));
    agent.apply(&preview, None, false, &no_progress).unwrap();
    assert_eq!(project.read("src/lib.rs"), LIB_RS_42);
    let t = project
        .traces()
        .into_iter()
        .find(|t| t.mode == "APPLY")
        .unwrap();
    assert!(t.protocol_fallback_attempted);
    assert_eq!(t.protocol_attempts, vec![3, 2]);
    assert_eq!(
        t.protocol_fallback_reason,
        Some(ErrorCode::EditAnchorNotFound)
    );
    assert_eq!(t.protocol_fallback_stage, Some(Stage::Preview));
    assert_eq!(
        (t.protocol_repair_attempt, t.repair_success),
        (1, Some(false))
    );
    assert_eq!(t.schema_version, 2);
    assert_eq!(
        t.schema_hash,
        papayu_protocol::schema_hash(papayu_protocol::ProtocolVersion::V2)
    );
}

#[tokio::test]
async fn v2_to_v1_on_update_existing() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) 42"),
        update_answer(LIB_RS_42),
        update_answer(LIB_RS_42),
        update_answer(LIB_RS_42),
    ])
    .await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    agent.plan("make it 42", &no_progress).await.unwrap();
    let preview = agent.prepare_apply(None, &no_progress).await.unwrap();
    let fb = preview.fallback.clone().unwrap();
    assert_eq!(
        (fb.from, fb.to, fb.reason, fb.stage),
        (2, 1, ErrorCode::V2UpdateExistingForbidden, Stage::Validate)
    );
    let reqs = model.requests().await;
    assert!(
        messages(&reqs[4])[0]
            .1
            .contains("LLM_PLAN_SCHEMA_VERSION=1")
    );
    agent.apply(&preview, None, false, &no_progress).unwrap();
    assert_eq!(project.read("src/lib.rs"), LIB_RS_42);
}

#[tokio::test]
async fn v2_to_v1_is_off_when_disabled() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) 42"),
        update_answer(LIB_RS_42),
        update_answer(LIB_RS_42),
    ])
    .await;
    let mut agent = project.agent(&model, &[("PAPAYU_PROTOCOL_FALLBACK_TO_V1", "0")]);
    agent.plan("make it 42", &no_progress).await.unwrap();
    let err = agent.prepare_apply(None, &no_progress).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::V2UpdateExistingForbidden);
    assert_eq!(model.requests().await.len(), 4);
    assert_eq!(project.read("src/lib.rs"), LIB_RS);
}

#[tokio::test]
async fn non_utf8_falls_back_at_once() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let latin1: &[u8] = b"pub fn answer() -> u32 {\n    41 // caf\xe9\n}\n";
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) 42"),
        patch_answer(&sha(latin1)),
        update_answer(LIB_RS_42),
    ])
    .await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    agent.plan("make it 42", &no_progress).await.unwrap();
    // The file changed to non-UTF-8 bytes after the plan.
    std::fs::write(project.root().join("src/lib.rs"), latin1).unwrap();
    let preview = agent.prepare_apply(None, &no_progress).await.unwrap();
    let fb = preview.fallback.clone().unwrap();
    assert_eq!((fb.from, fb.to, fb.reason), (2, 1, ErrorCode::NonUtf8File));
    assert!(!preview.repaired);
    assert_eq!(
        model.requests().await.len(),
        4,
        "no repair round before a non-UTF-8 fallback"
    );
    let t = project
        .traces()
        .into_iter()
        .find(|t| t.mode == "APPLY")
        .unwrap();
    assert_eq!(t.protocol_repair_attempt, 0);
}

#[tokio::test]
async fn fallback_happens_only_once() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let base = sha(LIB_RS.as_bytes());
    let bad_patch = json!({"actions": [{"kind": "PATCH_FILE", "path": "src/lib.rs", "base_sha256": base,
        "patch": "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,2 @@\n fn other() {\n-    7\n+    8\n"}], "summary": "p"});
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) 42"),
        edit_answer(&base),
        edit_answer(&base),
        bad_patch,
        json!({"actions": [], "summary": "never asked"}),
    ])
    .await;
    let mut agent = project.agent(&model, &[("PAPAYU_PROTOCOL_VERSION", "3")]);
    agent.plan("make it 42", &no_progress).await.unwrap();
    let err = agent.prepare_apply(None, &no_progress).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::PatchApplyFailed, "{err}");
    assert_eq!(
        model.requests().await.len(),
        5,
        "v3, repair, v2 - no second fallback, no second repair"
    );
    assert_eq!(project.read("src/lib.rs"), LIB_RS);
}

#[test]
fn fallback_table() {
    use papayu_agent::fallback_target;
    use papayu_protocol::ProtocolVersion::{V1, V2, V3};
    assert_eq!(
        fallback_target(V3, ErrorCode::EditAmbiguous, true),
        Some(V2)
    );
    assert_eq!(fallback_target(V3, ErrorCode::NonUtf8File, false), Some(V2));
    assert_eq!(fallback_target(V3, ErrorCode::PatchApplyFailed, true), None);
    assert_eq!(
        fallback_target(V2, ErrorCode::PatchApplyFailed, true),
        Some(V1)
    );
    assert_eq!(
        fallback_target(V2, ErrorCode::PatchApplyFailed, false),
        None
    );
    assert_eq!(fallback_target(V2, ErrorCode::EditAmbiguous, true), None);
    assert_eq!(fallback_target(V1, ErrorCode::NonUtf8File, true), None);
}

/// `Round` and `Stage` are enums in Rust but keep their strings on every wire: progress
/// events, the preview a UI receives, and the trace file.
#[tokio::test]
async fn rounds_and_stages_keep_their_strings_in_progress_previews_and_traces() {
    let project = Project::new(&[("src/lib.rs", LIB_RS.as_bytes())]);
    let base = sha(LIB_RS.as_bytes());
    let model = Model::start(&[
        read_request("src/lib.rs"),
        edit_answer(&base),
        edit_answer(&base),
        patch_answer(&base),
    ])
    .await;
    let env = [("PAPAYU_PROTOCOL_VERSION", "3"), ("PAPAYU_TRACE", "1")];
    let mut agent = project.agent(&model, &env);
    let events = std::sync::Mutex::new(Vec::new());
    let preview = agent
        .prepare_apply(Some("make it 42"), &|p| {
            events
                .lock()
                .unwrap()
                .push(serde_json::to_value(p).unwrap());
        })
        .await
        .unwrap();
    let requesting: Vec<_> = events
        .into_inner()
        .unwrap()
        .into_iter()
        .filter(|e| e["stage"] == "requesting")
        .collect();
    assert_eq!(
        requesting,
        vec![
            json!({"stage": "requesting", "attempt": "initial", "protocol": 3}),
            json!({"stage": "requesting", "attempt": "context", "protocol": 3}),
            json!({"stage": "requesting", "attempt": "repair", "protocol": 3}),
            json!({"stage": "requesting", "attempt": "fallback", "protocol": 2}),
        ]
    );
    assert_eq!(
        serde_json::to_value(&preview).unwrap()["fallback"],
        json!({"from": 3, "to": 2, "reason": "ERR_EDIT_ANCHOR_NOT_FOUND", "stage": "preview"})
    );
    let file = preview.trace_file.clone().unwrap();
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let attempts: Vec<_> = trace["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["kind"].clone(), a.get("stage").cloned()))
        .collect();
    assert_eq!(
        attempts,
        vec![
            (json!("initial"), None),
            (json!("context"), Some(json!("preview"))),
            (json!("repair"), Some(json!("preview"))),
            (json!("fallback"), None),
        ]
    );
    assert_eq!(trace["protocol_fallback_stage"], "preview");
}

#[test]
fn a_rejection_names_its_stage_in_words() {
    let err = papayu_agent::AgentError::Rejected {
        stage: Stage::Schema,
        violations: vec![papayu_protocol::Violation::new(
            ErrorCode::JsonParse,
            "not JSON",
        )],
    };
    assert!(
        err.to_string()
            .starts_with("the plan was rejected at the schema stage: "),
        "{err}"
    );
}
