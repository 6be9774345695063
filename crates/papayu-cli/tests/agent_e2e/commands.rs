//! `papayu ask`, `papayu context`, and multi-provider fan-out through `papayu run`.

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn ask_prints_the_raw_and_the_parsed_answer() {
    let project = Project::new(&[]);
    let model = Model::start(&[plan_answer("NO_CHANGES: nothing to do")]);
    let ok = project.papayu(&model, &[], &["ask", "--json", "is", "anything", "broken?"]);
    ok.expect_code(0);
    let doc = ok.json();
    assert_eq!(
        doc["parsed"]["summary"],
        json!("NO_CHANGES: nothing to do"),
        "{doc:#}"
    );
    assert!(
        doc["completion"]["text"]
            .as_str()
            .unwrap()
            .contains("NO_CHANGES"),
        "{doc:#}"
    );

    // An answer that is JSON but not a plan: exit 3 with the violations listed.
    let bad_model = Model::start(&[json!("just a string")]);
    let bad = project.papayu(&bad_model, &[], &["ask", "--json", "hello"]);
    bad.expect_code(3);
    let doc = bad.json();
    assert!(doc["parsed"].is_null(), "{doc:#}");
    assert!(!doc["violations"].as_array().unwrap().is_empty(), "{doc:#}");
}

#[test]
fn context_gathers_from_a_stack_trace_and_refuses_escapes() {
    let app = "import json\n\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n";
    let project = Project::new(&[
        ("src/app.py", app),
        (
            "trace.txt",
            "Traceback (most recent call last):\n  File \"src/app.py\", line 5, in load\n    with open(path) as f:\nFileNotFoundError: [Errno 2] No such file or directory: 'x.json'\n",
        ),
    ]);
    let model = Model::start(&[]);
    let run = project.papayu(
        &model,
        &[],
        &["context", "--json", "--from-text", "trace.txt"],
    );
    run.expect_code(0);
    let doc = run.json();
    let text = doc["text"].as_str().unwrap();
    assert!(text.contains("FILE[src/app.py] (sha256="), "{text}");
    assert!(
        text.contains("5|        with open(path) as f:")
            || text.contains("5|    with open(path) as f:"),
        "{text}"
    );
    assert_eq!(
        doc["sent_files"]["src/app.py"],
        json!(sha(app.as_bytes())),
        "{doc:#}"
    );

    let escape = project.papayu(
        &model,
        &[],
        &[
            "context",
            "--json",
            "--request",
            r#"{"type":"read_file","path":"../../../../etc/passwd"}"#,
        ],
    );
    escape.expect_code(0);
    let doc = escape.json();
    let text = doc["text"].as_str().unwrap();
    assert!(text.to_lowercase().contains("refused"), "{text}");
    assert!(
        !text.contains("root:"),
        "the content of a file outside the project was sent: {text}"
    );
    assert_eq!(doc["sent_files"], json!({}), "{doc:#}");

    let bad = project.papayu(&model, &[], &["context", "--request", "{not json"]);
    bad.expect_code(2);
}

#[test]
fn run_fans_out_over_several_providers_and_merges() {
    let project = Project::new(&[("README.md", "# demo\n")]);
    let a = Model::start(&[
        json!({"actions": [{"kind": "CREATE_FILE", "path": "docs/A.md", "content": "a\n"}], "summary": "a"}),
    ]);
    let b = Model::start(&[json!({"actions": [
        {"kind": "CREATE_FILE", "path": "docs/A.md", "content": "conflicting a\n"},
        {"kind": "CREATE_FILE", "path": "docs/B.md", "content": "b\n"}
    ], "summary": "b"})]);
    let providers = json!([
        {"kind": "openai-compatible", "url": a.url(), "model": "first"},
        {"kind": "openai-compatible", "url": b.url(), "model": "second"}
    ])
    .to_string();
    let run = project.papayu(
        &a,
        &[("PAPAYU_LLM_PROVIDERS", providers.as_str())],
        &["--json", "run", "--yes", "write docs"],
    );
    run.expect_code(0);
    // First valid plan by provider order, plus the non-conflicting extra action of the second.
    let tree = project.tree();
    assert_eq!(
        tree.get("docs/A.md").map(Vec::as_slice),
        Some(&b"a\n"[..]),
        "{tree:?}"
    );
    assert_eq!(
        tree.get("docs/B.md").map(Vec::as_slice),
        Some(&b"b\n"[..]),
        "{tree:?}"
    );
    assert_eq!(a.received().len(), 1);
    assert_eq!(b.received().len(), 1);
    let doc: Value = run.json();
    assert_eq!(doc["applied"]["applied"], json!(true), "{doc:#}");
}
