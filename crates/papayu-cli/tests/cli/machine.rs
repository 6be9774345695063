//! `--json` without a model: one compact document `{"ok","code",…}` for every outcome, a
//! command line clap rejects included.

use serde_json::{Value, json};

use crate::papayu;

fn doc(stdout: &str) -> Value {
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout}");
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn a_command_line_clap_rejects_is_a_usage_document_under_json() {
    let dir = tempfile::tempdir().unwrap();
    let run = papayu(dir.path(), &["--json", "undo", "--no-such-flag"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let d = doc(&run.stdout);
    assert_eq!(d["ok"], json!(false));
    assert_eq!(d["code"], json!("ERR_USAGE"));
    assert!(
        d["error"].as_str().unwrap().contains("--no-such-flag"),
        "{d}"
    );
    assert!(run.stderr.is_empty(), "{}", run.stderr);

    let missing = papayu(dir.path(), &["plan", "--json-stream"]);
    assert_eq!(missing.code, 2);
    let d = doc(&missing.stdout);
    assert_eq!(d["event"], json!("result"), "{d}");
    assert_eq!(d["code"], json!("ERR_USAGE"), "{d}");

    // Without --json clap speaks for itself on stderr.
    let human = papayu(dir.path(), &["undo", "--no-such-flag"]);
    assert_eq!(human.code, 2);
    assert!(human.stdout.is_empty());
    assert!(human.stderr.contains("--no-such-flag"), "{}", human.stderr);
}

#[test]
fn apply_plan_under_json_asks_for_yes_instead_of_prompting() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"new\n"}],"summary":"s"}"#,
    )
    .unwrap();
    let run = papayu(dir.path(), &["apply-plan", "--json", "plan.json"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let d = doc(&run.stdout);
    assert_eq!(d["code"], json!("ERR_CONFIRMATION_REQUIRED"), "{d}");
    assert!(!dir.path().join("b.txt").exists());

    let yes = papayu(
        dir.path(),
        &["apply-plan", "--json", "--yes", "--no-check", "plan.json"],
    );
    assert_eq!(yes.code, 0, "{}{}", yes.stdout, yes.stderr);
    let d = doc(&yes.stdout);
    assert_eq!(
        (d["ok"].clone(), d["code"].clone()),
        (json!(true), Value::Null)
    );
    assert!(d["report"]["tx_id"].is_string(), "{d}");
}

#[test]
fn shapes_of_validate_and_preview_documents() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    std::fs::write(
        dir.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"new\n"}],"summary":"s"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"actions":[{"kind":"NOPE"}]}"#,
    )
    .unwrap();
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let preview = doc(&papayu(dir.path(), &["preview", "--json", "plan.json"]).stdout);
    let valid = doc(&papayu(dir.path(), &["validate", "--json", "plan.json"]).stdout);
    let invalid = doc(&papayu(dir.path(), &["validate", "--json", "bad.json"]).stdout);
    insta::assert_json_snapshot!(json!({
        "preview_blocked": {"ok": preview["ok"], "code": preview["code"], "keys": keys(&preview)},
        "validate_ok": {"ok": valid["ok"], "code": valid["code"], "keys": keys(&valid)},
        "validate_rejected": {"ok": invalid["ok"], "code": invalid["code"], "keys": keys(&invalid)},
    }));
}

#[test]
fn schema_under_json_is_wrapped_in_the_one_shape() {
    let dir = tempfile::tempdir().unwrap();
    let run = papayu(dir.path(), &["schema", "--json", "--protocol", "3"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let d = doc(&run.stdout);
    assert_eq!(
        (d["ok"].clone(), d["code"].clone()),
        (json!(true), Value::Null)
    );
    assert_eq!(d["protocol"], json!(3));
    assert!(d["schema"].is_object(), "{d}");
}
