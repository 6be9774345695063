//! Golden traces: recording from scripted models, conversion, replay of the committed set.

use camino::{Utf8Path, Utf8PathBuf};
use papayu_agent::golden::{golden_from_trace_file, load_golden, replay, replay_dir};
use papayu_agent::no_progress;
use papayu_protocol::ErrorCode;
use serde_json::{Value, json};

use crate::support::*;

fn golden_root() -> Utf8PathBuf {
    Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../../golden_traces")
}

struct Scenario {
    name: &'static str,
    version: &'static str,
    files: Vec<(&'static str, &'static [u8])>,
    plan_first: bool,
    answers: Vec<Value>,
}

/// Run the scenario with tracing (raw) on and return the APPLY trace file.
async fn record(s: &Scenario) -> (Project, Utf8PathBuf) {
    let project = Project::new(&s.files);
    let model = Model::start(&s.answers).await;
    let env = [
        ("PAPAYU_TRACE", "1"),
        ("PAPAYU_TRACE_RAW", "1"),
        ("PAPAYU_PROTOCOL_VERSION", s.version),
    ];
    let mut agent = project.agent(&model, &env);
    let goal = if s.plan_first {
        agent
            .plan("make answer() return 42", &no_progress)
            .await
            .unwrap();
        None
    } else {
        Some("create the change")
    };
    if let Ok(preview) = agent.prepare_apply(goal, &no_progress).await {
        agent.apply(&preview, None, true, &no_progress).unwrap();
    }
    let file = papayu_agent::trace::list_traces(project.root())
        .unwrap()
        .into_iter()
        .rfind(|t| t.mode == "APPLY")
        .unwrap()
        .path;
    (project, file)
}

fn scenarios() -> Vec<Scenario> {
    let lib: &'static [u8] = LIB_RS.as_bytes();
    let base = sha(lib);
    let update = json!({"actions": [{"kind": "UPDATE_FILE", "path": "src/lib.rs", "content": LIB_RS_42}], "summary": "rewrite"});
    let bad_edit = json!({"actions": [{"kind": "EDIT_FILE", "path": "src/lib.rs", "base_sha256": base,
        "edits": [{"op": "replace", "anchor": "fn missing()", "before": "41", "after": "42"}]}], "summary": "edit"});
    let good_edit = json!({"actions": [{"kind": "EDIT_FILE", "path": "src/lib.rs", "base_sha256": base,
        "edits": [{"op": "replace", "anchor": "pub fn answer", "before": "41", "after": "42"}]}], "summary": "edit"});
    let env_file = json!({"actions": [{"kind": "CREATE_FILE", "path": ".env", "content": "KEY=1\n"}], "summary": "env"});
    let move_file =
        json!({"actions": [{"kind": "MOVE_FILE", "path": "src/lib.rs"}], "summary": "move"});
    let range = json!({"actions": [{"kind": "REPLACE_RANGE", "path": "src/lib.rs", "base_sha256": base,
        "start_line": 2, "end_line": 2, "content": "    42\n"}], "summary": "line 2 returns 42"});
    let plan = |s: &str| vec![read_request("src/lib.rs"), plan_answer(s)];
    let with = |mut head: Vec<Value>, tail: Vec<Value>| {
        head.extend(tail);
        head
    };
    vec![
        Scenario {
            name: "create_file_applied",
            version: "1",
            files: vec![],
            plan_first: false,
            answers: vec![json!([{"kind": "CREATE_FILE", "path": "hello.txt", "content": "hi\n"}])],
        },
        Scenario {
            name: "update_without_base_rejected",
            version: "1",
            files: vec![("src/lib.rs", lib)],
            plan_first: false,
            answers: vec![update.clone(), update.clone()],
        },
        Scenario {
            name: "repair_invalid_json_then_update",
            version: "1",
            files: vec![("src/lib.rs", lib)],
            plan_first: true,
            answers: with(
                plan("1) 42"),
                vec![json!("Here you go: {\"actions\": [}"), update.clone()],
            ),
        },
        Scenario {
            name: "patch_applied",
            version: "2",
            files: vec![("src/lib.rs", lib)],
            plan_first: true,
            answers: with(plan("1) 42"), vec![patch_answer(&base)]),
        },
        Scenario {
            name: "protected_path_rejected",
            version: "2",
            files: vec![],
            plan_first: false,
            answers: vec![env_file.clone(), env_file],
        },
        Scenario {
            name: "fallback_v2_to_v1_update_existing",
            version: "2",
            files: vec![("src/lib.rs", lib)],
            plan_first: true,
            answers: with(
                plan("1) 42"),
                vec![update.clone(), update.clone(), update.clone()],
            ),
        },
        Scenario {
            name: "base_mismatch_repaired",
            version: "2",
            files: vec![("src/lib.rs", lib)],
            plan_first: true,
            answers: with(
                plan("1) 42"),
                vec![patch_answer(&"0".repeat(64)), patch_answer(&base)],
            ),
        },
        Scenario {
            name: "replace_range_applied",
            version: "2",
            files: vec![("src/lib.rs", lib)],
            plan_first: true,
            answers: with(plan("1) 42"), vec![range]),
        },
        Scenario {
            name: "edit_applied",
            version: "3",
            files: vec![("src/lib.rs", lib)],
            plan_first: true,
            answers: with(plan("1) 42"), vec![good_edit]),
        },
        Scenario {
            name: "unknown_kind_rejected",
            version: "3",
            files: vec![("src/lib.rs", lib)],
            plan_first: false,
            answers: vec![move_file.clone(), move_file],
        },
        Scenario {
            name: "fallback_v3_to_v2_anchor_not_found",
            version: "3",
            files: vec![("src/lib.rs", lib)],
            plan_first: true,
            answers: with(
                plan("1) 42"),
                vec![bad_edit.clone(), bad_edit, patch_answer(&base)],
            ),
        },
    ]
}

/// Regenerates `golden_traces/` by recording every scenario against scripted models.
#[tokio::test]
#[ignore = "rewrites golden_traces/ in the repository; run with --ignored to regenerate"]
async fn record_golden_traces() {
    let root = golden_root();
    for v in ["v1", "v2", "v3"] {
        let dir = root.join(v);
        if dir.exists() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "json") {
                    std::fs::remove_file(p).unwrap();
                }
            }
        }
    }
    for s in scenarios() {
        let (_project, trace) = record(&s).await;
        let written = golden_from_trace_file(&trace, &root, s.name).unwrap();
        assert!(
            written.starts_with(root.join(format!("v{}", s.version))),
            "{written}"
        );
    }
}

#[tokio::test]
async fn recording_converts_and_replays() {
    // One fallback scenario end to end, in a temp golden root (the committed set is
    // checked by golden_traces_replay).
    let s = scenarios()
        .into_iter()
        .find(|s| s.name == "fallback_v3_to_v2_anchor_not_found")
        .unwrap();
    let (_project, trace) = record(&s).await;
    let out = tempfile::tempdir().unwrap();
    let out_root = Utf8Path::from_path(out.path()).unwrap();
    let written = golden_from_trace_file(&trace, out_root, s.name).unwrap();
    assert!(
        written
            .as_str()
            .ends_with("v3/001_fallback_v3_to_v2_anchor_not_found.json")
    );
    let g = load_golden(&written).unwrap();
    assert_eq!(g.result.outcome, "applied");
    let fb = g.result.protocol_fallback.clone().unwrap();
    assert_eq!(
        (fb.from, fb.to, fb.reason),
        (3, 2, ErrorCode::EditAnchorNotFound)
    );
    assert_eq!(
        g.attempts.iter().map(|a| a.protocol).collect::<Vec<_>>(),
        vec![3, 3, 2]
    );
    replay(&g).unwrap();

    // A tampered recording does not replay.
    let mut bad = g.clone();
    bad.attempts[0].expect_codes = vec![ErrorCode::EditAmbiguous];
    assert!(replay(&bad).is_err());
    let mut bad = g.clone();
    bad.result
        .files_after
        .insert("src/lib.rs".into(), Some("0".repeat(64)));
    assert!(replay(&bad).is_err());
    let mut bad = g;
    bad.context.fixture.clear();
    assert!(replay(&bad).is_err());
}

#[test]
fn golden_traces_replay() {
    let reports = replay_dir(&golden_root()).unwrap();
    assert!(reports.len() >= 9, "{reports:?}");
    for v in ["v1", "v2", "v3"] {
        let dir = golden_root().join(v);
        let goldens: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| load_golden(Utf8Path::from_path(&e.unwrap().path()).unwrap()).unwrap())
            .collect();
        assert!(goldens.len() >= 3, "{v}");
        assert!(
            goldens.iter().any(|g| g.result.outcome == "applied"),
            "{v}: a success"
        );
        assert!(
            goldens
                .iter()
                .any(|g| g.result.outcome == "rejected" && g.result.error_code.is_some()),
            "{v}: a rejection"
        );
        assert!(
            goldens
                .iter()
                .any(|g| g.result.repair_attempted || g.result.protocol_fallback.is_some()),
            "{v}: a repair or fallback"
        );
    }
}

/// Golden-trace policy (README): a golden trace records the schema hash of its protocol
/// version; when a schema changes, that version's golden traces are re-recorded.
#[test]
fn golden_traces_carry_the_current_schema_hash() {
    for v in papayu_protocol::ProtocolVersion::ALL {
        let dir = golden_root().join(format!("v{}", v.number()));
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = Utf8PathBuf::from_path_buf(e.unwrap().path()).unwrap();
            let g = load_golden(&path).unwrap();
            assert_eq!(
                g.protocol.schema_hash,
                papayu_protocol::schema_hash(v),
                "{path} was recorded against another schema: re-record the golden traces \
                 (cargo nextest run -p papayu-agent --run-ignored only -E 'test(record_golden_traces)'; \
                 real-model ones with `cargo xtask golden <trace>`)"
            );
        }
    }
}

#[test]
fn replay_dir_fails_when_empty_or_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(tmp.path()).unwrap();
    assert!(replay_dir(root).is_err(), "missing directories");
    for v in ["v1", "v2", "v3"] {
        std::fs::create_dir(root.join(v)).unwrap();
    }
    assert!(replay_dir(root).is_err(), "empty directories");
    let src = golden_root().join("v1");
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(
            &p,
            root.join("v1").as_std_path().join(p.file_name().unwrap()),
        )
        .unwrap();
    }
    let err = replay_dir(root).unwrap_err();
    assert!(err.to_string().contains("v2"), "{err}");
}
