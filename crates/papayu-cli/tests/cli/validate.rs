use papayu_protocol::ErrorCode;
use serde_json::Value;

use crate::{papayu, repo_root};

fn codes(json: &str) -> Vec<(Option<u64>, String)> {
    let doc: Value = serde_json::from_str(json).expect("one JSON document");
    doc["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["action_index"].as_u64(),
                v["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The acceptance plan of issue 2: every problem listed with its code, exit 3.
#[test]
fn lists_every_problem_of_a_bad_plan() {
    let run = papayu(
        &repo_root(),
        &[
            "validate",
            "--json",
            "examples/plans/rejected_everything.json",
        ],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    let got = codes(&run.stdout);
    let want: Vec<(Option<u64>, String)> = [
        (None, ErrorCode::TooManyActions),
        (Some(0), ErrorCode::InvalidPath),     // ../x
        (Some(1), ErrorCode::InvalidPath),     // /etc/passwd
        (Some(2), ErrorCode::InvalidPath),     // C:\x
        (Some(3), ErrorCode::InvalidPath),     // \\srv\share\x
        (Some(4), ErrorCode::ProtectedPath),   // .env
        (Some(5), ErrorCode::InvalidPath),     // con.txt
        (Some(6), ErrorCode::ProtectedPath),   // id_rsa
        (Some(7), ErrorCode::PseudoBinary),    // NUL in content
        (Some(8), ErrorCode::UnknownKind),     // MOVE_FILE
        (Some(10), ErrorCode::ActionConflict), // CREATE + DELETE of src/dup.rs
    ]
    .into_iter()
    .map(|(i, c)| (i, c.as_str().to_owned()))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn human_output_snapshot() {
    let run = papayu(
        &repo_root(),
        &["validate", "examples/plans/rejected_everything.json"],
    );
    assert_eq!(run.code, 3);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn russian_markdown_passes() {
    let run = papayu(
        &repo_root(),
        &["validate", "examples/plans/create_docs_ru.json"],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("valid"));
}

#[test]
fn prose_and_fence_parse() {
    let run = papayu(
        &repo_root(),
        &["validate", "examples/plans/prose_fenced.txt"],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn edit_file_is_valid_in_v3_and_rejected_in_v2_with_a_pointer() {
    let v3 = papayu(
        &repo_root(),
        &["validate", "--protocol", "3", "examples/plans/edit_v3.json"],
    );
    assert_eq!(v3.code, 0, "{}", v3.stdout);
    let v2 = papayu(
        &repo_root(),
        &[
            "validate",
            "--protocol",
            "2",
            "--json",
            "examples/plans/edit_v3.json",
        ],
    );
    assert_eq!(v2.code, 3);
    let doc: Value = serde_json::from_str(&v2.stdout).unwrap();
    assert_eq!(doc["violations"][0]["code"], "ERR_UNKNOWN_KIND");
    assert_eq!(doc["violations"][0]["pointer"], "/actions/0/kind");
}

#[test]
fn io_errors_exit_2_and_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = papayu(dir.path(), &["validate", "missing-plan.json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("missing-plan.json"), "{}", run.stderr);
    let json = papayu(dir.path(), &["validate", "--json", "missing-plan.json"]);
    assert_eq!(json.code, 2);
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["ok"], false);
}

#[test]
fn invalid_json_is_rejected_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.json"), "{\n \"actions\": [}\n").unwrap();
    let run = papayu(dir.path(), &["validate", "--json", "p.json"]);
    assert_eq!(run.code, 3);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["violations"][0]["code"], "ERR_JSON_PARSE");
    assert!(
        doc["violations"][0]["message"]
            .as_str()
            .unwrap()
            .contains("line 2"),
        "{}",
        run.stdout
    );
}

#[test]
fn mode_rules_apply_when_asked() {
    let plan = papayu(
        &repo_root(),
        &[
            "validate",
            "--mode",
            "plan",
            "--json",
            "examples/plans/create_docs_ru.json",
        ],
    );
    assert_eq!(plan.code, 3);
    assert_eq!(
        codes(&plan.stdout),
        [(None, "ERR_PLAN_HAS_ACTIONS".to_owned())]
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("empty.json"),
        r#"{"actions":[],"summary":"nothing"}"#,
    )
    .unwrap();
    let apply = papayu(
        dir.path(),
        &["validate", "--mode", "apply", "--json", "empty.json"],
    );
    assert_eq!(apply.code, 3);
    assert_eq!(codes(&apply.stdout)[0].1, "ERR_APPLY_EMPTY_ACTIONS");
}

#[test]
fn project_policy_file_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".papa-yu")).unwrap();
    std::fs::write(
        dir.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.rs","content":"x"}]}"#,
    )
    .unwrap();
    assert_eq!(papayu(dir.path(), &["validate", "plan.json"]).code, 0);
    std::fs::write(
        dir.path().join(".papa-yu/policy.json"),
        "{ \"not_a_field\": 1 }",
    )
    .unwrap();
    let bad = papayu(dir.path(), &["validate", "plan.json"]);
    assert_eq!(bad.code, 2, "{}{}", bad.stdout, bad.stderr);
    assert!(bad.stderr.contains("policy.json"), "{}", bad.stderr);
}

#[test]
fn r_a_fifo_at_the_project_policy_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".papa-yu")).unwrap();
    std::fs::write(
        dir.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.rs","content":"x"}]}"#,
    )
    .unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join(".papa-yu/policy.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_papayu"))
        .args(["validate", "plan.json"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("papayu validate blocked on a FIFO policy.json");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
}
