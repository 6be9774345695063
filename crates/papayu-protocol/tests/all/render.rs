//! Snapshots of the error messages a user or a repair prompt sees.

use papayu_protocol::{ProtocolVersion, Violation, parse_document, parse_response};

fn render(cases: &[(&str, ProtocolVersion)]) -> String {
    let mut out = String::new();
    for (text, version) in cases {
        let line = match parse_response(text, *version) {
            Ok(r) => format!("ok: {} actions", r.effective_actions().len()),
            Err(e) => e.to_string(),
        };
        out.push_str(&format!("{version} {text}\n  => {line}\n"));
    }
    out
}

#[test]
fn parse_errors() {
    use ProtocolVersion::*;
    insta::assert_snapshot!(render(&[
        ("{\"actions\": [1,]}", V2),
        ("no json here", V2),
        ("[{\"kind\":\"CREATE_DIR\",\"path\":\"a\"}]", V2),
        (
            "{\"actions\":[{\"kind\":\"EDIT_FILE\",\"path\":\"a.rs\",\"edits\":[]}]}",
            V2
        ),
        (
            "{\"actions\":[{\"kind\":\"CREATE_DIR\",\"path\":\"a\",\"content\":7}]}",
            V2
        ),
        ("{\"actions\":[],\"summary\":\"x\",\"why\":\"because\"}", V2),
        (
            "{\"actions\":[{\"kind\":\"PATCH_FILE\",\"path\":\"a\",\"patch\":\"p\",\"oops\":1}]}",
            V3
        ),
    ]));
}

#[test]
fn document_violations() {
    let doc = parse_document(
        r#"{"actions":[{"kind":"CREATE_FILE","path":1},{"kind":"X","path":"a"}],"summary":[],"extra":1}"#,
        ProtocolVersion::V2,
    )
    .unwrap();
    let rendered: Vec<String> = doc.violations.iter().map(Violation::to_string).collect();
    insta::assert_snapshot!(rendered.join("\n"));
}
