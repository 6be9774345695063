//! Snapshots of rendered reports for representative bad plans (the text a repair prompt and
//! `papayu validate` show).

use std::collections::BTreeSet;

use papayu_protocol::ProtocolVersion;
use papayu_validate::{Context, Mode, Policy, RelPath, check_text};

fn render(text: &str, ctx: &Context<'_>) -> String {
    check_text(text, ctx, &Policy::default()).to_string()
}

#[test]
fn snapshot_escapes_and_secrets() {
    let text = r#"{"actions": [
        {"kind": "CREATE_FILE", "path": "../../etc/cron.d/x", "content": "* * * * * root sh"},
        {"kind": "UPDATE_FILE", "path": "C:\\Windows\\win.ini", "content": "x"},
        {"kind": "CREATE_FILE", "path": ".env.local", "content": "TOKEN=1"},
        {"kind": "DELETE_DIR", "path": ".git"},
        {"kind": "CREATE_FILE", "path": "Con.TXT", "content": "x"},
        {"kind": "CREATE_FILE", "path": "bin/tool.exe", "content": "MZ"}
    ], "summary": "s"}"#;
    insta::assert_snapshot!(render(text, &Context::new(ProtocolVersion::V2)));
}

#[test]
fn snapshot_shapes_under_v3_apply() {
    let sent = BTreeSet::from([RelPath::parse("src/lib.rs").unwrap()]);
    let ctx = Context::new(ProtocolVersion::V3)
        .with_mode(Mode::Apply)
        .with_sent_files(&sent);
    let text = r#"{"actions": [
        {"kind": "PATCH_FILE", "path": "src/lib.rs", "patch": "change foo to bar", "base_sha256": "ABC"},
        {"kind": "EDIT_FILE", "path": "src/lib.rs", "base_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
         "edits": [{"op": "replace", "anchor": "", "before": "", "after": "x", "occurrence": 0}]},
        {"kind": "REPLACE_RANGE", "path": "src/main.rs", "start_line": 9, "end_line": 3, "content": "",
         "base_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"kind": "UPDATE_FILE", "path": "src/util.rs", "content": "fn a() {}\n// ... rest of the code unchanged ...\n", "patch": "x"}
    ], "summary": "s"}"#;
    insta::assert_snapshot!(render(text, &ctx));
}

#[test]
fn snapshot_edit_file_under_v2() {
    let text = r#"{"actions": [
        {"kind": "EDIT_FILE", "path": "src/lib.rs", "base_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
         "edits": [{"op": "replace", "anchor": "fn a", "before": "1", "after": "2"}]},
        {"path": "src/x.rs", "content": "x"}
    ], "summary": "s"}"#;
    insta::assert_snapshot!(render(text, &Context::new(ProtocolVersion::V2)));
}

#[test]
fn snapshot_conflicts_and_mode() {
    let text = r#"{"actions": [
        {"kind": "CREATE_FILE", "path": "README.md", "content": "a"},
        {"kind": "DELETE_FILE", "path": "readme.md"},
        {"kind": "DELETE_DIR", "path": "old"},
        {"kind": "CREATE_FILE", "path": "old/new.rs", "content": "x"},
        {"kind": "CREATE_FILE", "path": "notes.md", "content": "x"},
        {"kind": "CREATE_FILE", "path": "notes.md/inner.md", "content": "x"}
    ], "summary": "s"}"#;
    insta::assert_snapshot!(render(
        text,
        &Context::new(ProtocolVersion::V2).with_mode(Mode::Plan)
    ));
}

#[test]
fn snapshot_valid_plan() {
    let text = "```json\n{\"actions\": [{\"kind\": \"CREATE_FILE\", \"path\": \"docs/руководство.md\", \"content\": \"# Руководство\\n\"}], \"summary\": \"docs\"}\n```";
    insta::assert_snapshot!(render(
        text,
        &Context::new(ProtocolVersion::V2).with_mode(Mode::Apply)
    ));
}
