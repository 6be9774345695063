//! SPEC §3.3: extraction, JSON errors with line/column, schema validation of the effective version.

use papayu_protocol::{
    ActionKind, ErrorCode, ParseError, ProtocolVersion, extract_json, parse_document,
    parse_response,
};
use serde_json::json;

use ProtocolVersion::{V1, V2, V3};

/// Parse `text` under `version` and compare with `expect`: `Ok(n)` = n effective actions,
/// `Err((code, pointer))` = that error.
#[track_caller]
fn check(text: &str, version: ProtocolVersion, expect: Result<usize, (ErrorCode, Option<&str>)>) {
    let got = parse_response(text, version).map(|r| r.effective_actions().len());
    match (got, expect) {
        (Ok(n), Ok(m)) => assert_eq!(n, m, "action count for {text:?}"),
        (Err(e), Err((code, pointer))) => {
            assert_eq!(e.code(), code, "code for {text:?}: {e}");
            if pointer.is_some() {
                assert_eq!(e.pointer(), pointer, "pointer for {text:?}: {e}");
            }
        }
        (got, expect) => panic!("{text:?} under {version}: got {got:?}, expected {expect:?}"),
    }
}

const ONE: &str = r#"{"actions":[{"kind":"CREATE_DIR","path":"src"}],"summary":"mkdir"}"#;

#[test]
fn pure_json() {
    check(ONE, V2, Ok(1));
    check(&format!("  \n{ONE}\n\n"), V2, Ok(1));
}

#[test]
fn fenced_json_with_and_without_language_tag() {
    check(
        &format!("Here you go:\n```json\n{ONE}\n```\nDone."),
        V2,
        Ok(1),
    );
    check(&format!("```\n{ONE}\n```"), V2, Ok(1));
    check(&format!("```JSON\r\n{ONE}\r\n```"), V2, Ok(1));
}

#[test]
fn first_fenced_block_wins() {
    let two = r#"{"actions":[],"summary":"second"}"#;
    let text = format!("```json\n{ONE}\n```\nor maybe\n```json\n{two}\n```");
    check(&text, V2, Ok(1));
}

#[test]
fn json_embedded_in_prose() {
    check(
        &format!("Sure! The plan is {ONE} — let me know."),
        V2,
        Ok(1),
    );
    // A bracketed aside before the JSON is skipped, not parsed as the answer.
    check(&format!("Plan [draft] follows: {ONE}"), V2, Ok(1));
}

#[test]
fn fence_inside_json_content_does_not_truncate_pure_json() {
    let text = json!({"actions": [{"kind": "CREATE_FILE", "path": "README.md",
        "content": "# Demo\n\n```json\n{\"a\": 1}\n```\n"}], "summary": "readme"})
    .to_string();
    let r = parse_response(&text, V2).unwrap();
    assert!(
        r.effective_actions()[0]
            .content
            .as_deref()
            .unwrap()
            .contains("```json")
    );
}

#[test]
fn json_errors_carry_line_and_column() {
    let err = parse_response("{\n  \"actions\": [,]\n}", V2).unwrap_err();
    match &err {
        ParseError::Json { line, column, .. } => assert_eq!((*line, *column), (2, 15)),
        other => panic!("expected a JSON error, got {other:?}"),
    }
    assert_eq!(err.code(), ErrorCode::JsonParse);
    assert!(err.to_string().contains("line 2, column 15"), "{err}");
}

#[test]
fn no_json_at_all() {
    check("", V2, Err((ErrorCode::JsonParse, None)));
    check(
        "I cannot help with that.",
        V2,
        Err((ErrorCode::JsonParse, None)),
    );
    check(
        "```json\n{\"actions\": [\n```",
        V2,
        Err((ErrorCode::JsonParse, None)),
    );
}

#[test]
fn root_shapes_per_version() {
    let array = r#"[{"kind":"CREATE_DIR","path":"a"},{"kind":"DELETE_FILE","path":"b.txt"}]"#;
    check(array, V1, Ok(2));
    check(array, V3, Ok(2));
    check(array, V2, Err((ErrorCode::SchemaValidation, Some(""))));
    check("42", V1, Err((ErrorCode::SchemaValidation, Some(""))));
}

#[test]
fn unknown_root_fields_rejected_in_v2_only() {
    let text = r#"{"actions":[],"summary":"x","confidence":0.9}"#;
    check(text, V1, Ok(0));
    check(text, V3, Ok(0));
    check(text, V2, Err((ErrorCode::SchemaValidation, Some(""))));
    let err = parse_response(text, V2).unwrap_err();
    assert!(err.to_string().contains("confidence"), "{err}");
    let kept = parse_response(text, V1).unwrap();
    assert_eq!(kept.extra.get("confidence"), Some(&json!(0.9)));
}

#[test]
fn edit_file_is_v3_only_with_a_pointer() {
    let text = r#"{"actions":[{"kind":"CREATE_DIR","path":"a"},{"kind":"EDIT_FILE","path":"src/a.rs",
        "base_sha256":"00","edits":[{"op":"replace","anchor":"fn a","before":"1","after":"2"}]}]}"#;
    check(text, V3, Ok(2));
    check(
        text,
        V2,
        Err((ErrorCode::UnknownKind, Some("/actions/1/kind"))),
    );
    check(
        text,
        V1,
        Err((ErrorCode::UnknownKind, Some("/actions/1/kind"))),
    );
    let err = parse_response(text, V2).unwrap_err();
    assert!(
        err.to_string().contains("EDIT_FILE") && err.to_string().contains("v2"),
        "{err}"
    );
}

#[test]
fn replace_range_is_v2_and_v3_with_its_own_fields() {
    // Seed 001 §B: REPLACE_RANGE is part of protocol v2.
    let text = r#"{"actions":[{"kind":"REPLACE_RANGE","path":"src/a.rs","start_line":2,"end_line":3,
        "content":"x\n","base_sha256":"00"}],"summary":"range"}"#;
    check(text, V2, Ok(1));
    check(text, V3, Ok(1));
    check(
        text,
        V1,
        Err((ErrorCode::UnknownKind, Some("/actions/0/kind"))),
    );
    let err = parse_response(text, V1).unwrap_err();
    assert!(err.to_string().contains("needs protocol v2 or v3"), "{err}");
    let r = parse_response(text, V2).unwrap();
    let a = &r.effective_actions()[0];
    assert_eq!(a.kind, ActionKind::ReplaceRange);
    assert_eq!((a.start_line, a.end_line), (Some(2), Some(3)));
}

#[test]
fn unknown_and_missing_kinds() {
    check(
        r#"{"actions":[{"kind":"MOVE_FILE","path":"a"}]}"#,
        V2,
        Err((ErrorCode::UnknownKind, Some("/actions/0/kind"))),
    );
    check(
        r#"{"actions":[{"path":"a.txt","content":"x"}]}"#,
        V2,
        Err((ErrorCode::SchemaValidation, None)),
    );
}

#[test]
fn foreign_action_fields_are_named() {
    let text = r#"{"actions":[{"kind":"CREATE_DIR","path":"a","mode":"0755"}]}"#;
    check(text, V1, Ok(1));
    check(
        text,
        V2,
        Err((ErrorCode::FieldNotAllowed, Some("/actions/0"))),
    );
}

#[test]
fn edit_shape_errors_point_inside_the_edit() {
    let text = r#"{"actions":[{"kind":"EDIT_FILE","path":"a.rs","base_sha256":"00",
        "edits":[{"op":"replace","anchor":"a","before":"b"}]}]}"#;
    check(
        text,
        V3,
        Err((ErrorCode::SchemaValidation, Some("/actions/0/edits/0"))),
    );
    let err = parse_response(text, V3).unwrap_err();
    assert!(err.to_string().contains("after"), "{err}");
}

#[test]
fn proposed_changes_actions_win_over_root_actions() {
    let text = r#"{"mode":"fix-plan","actions":[{"kind":"CREATE_DIR","path":"root"}],
        "proposed_changes":{"actions":[{"kind":"CREATE_DIR","path":"p1"},{"kind":"CREATE_DIR","path":"p2"}]}}"#;
    let r = parse_response(text, V3).unwrap();
    assert_eq!(r.effective_actions().len(), 2);
    assert_eq!(r.effective_actions()[0].path, "p1");
    assert_eq!(r.effective_actions_pointer(), "/proposed_changes/actions");
    // v2 knows actions only at the root.
    check(
        text,
        V2,
        Err((ErrorCode::SchemaValidation, Some("/proposed_changes"))),
    );
}

#[test]
fn nulls_mean_absent() {
    let text = r#"{"actions":[{"kind":"CREATE_DIR","path":"a","content":null,"patch":null,"base_sha256":null}],
        "summary":"x","memory_patch":null,"mode":null,"questions":null}"#;
    let r = parse_response(text, V2).unwrap();
    assert_eq!(r.effective_actions()[0].content, None);
}

#[test]
fn context_requests_need_their_fields() {
    check(
        r#"{"actions":[],"context_requests":[{"type":"read_file"}]}"#,
        V2,
        Err((ErrorCode::SchemaValidation, Some("/context_requests/0"))),
    );
    let r = parse_response(
        r#"{"actions":[],"context_requests":[{"type":"search","query":"fn main","glob":"*.rs"},{"type":"env"}]}"#,
        V2,
    )
    .unwrap();
    assert_eq!(r.context_requests.len(), 2);
}

#[test]
fn no_changes_summary() {
    let r = parse_response(
        r#"{"actions":[],"summary":"NO_CHANGES: already fixed"}"#,
        V2,
    )
    .unwrap();
    assert!(r.is_no_changes());
}

#[test]
fn lenient_document_collects_every_problem() {
    let text = r#"{"actions":[
        {"kind":"CREATE_FILE","path":"a.txt","content":"x"},
        {"kind":"CREATE_FILE","path":5},
        "not an action",
        {"kind":"TELEPORT","path":"b"}
      ], "summary": 7, "bogus": true}"#;
    let doc = parse_document(text, V2).unwrap();
    let codes: Vec<(ErrorCode, Option<usize>)> = doc
        .violations
        .iter()
        .map(|v| (v.code, v.action_index))
        .collect();
    assert!(
        codes.contains(&(ErrorCode::SchemaValidation, Some(1))),
        "{codes:?}"
    );
    assert!(
        codes.contains(&(ErrorCode::SchemaValidation, Some(2))),
        "{codes:?}"
    );
    // The envelope: summary has the wrong type, and `bogus` is not a v2 root field.
    assert!(
        doc.violations
            .iter()
            .any(|v| v.pointer.as_deref() == Some("/summary")),
        "{:?}",
        doc.violations
    );
    assert!(
        doc.violations.iter().any(|v| v.message.contains("bogus")),
        "{:?}",
        doc.violations
    );
    // The readable actions are kept, with their original indices; unknown kinds are preserved.
    let kinds: Vec<_> = doc
        .response
        .effective_actions()
        .iter()
        .map(|a| a.kind.clone())
        .collect();
    assert_eq!(
        kinds,
        [
            ActionKind::CreateFile,
            ActionKind::Unknown("TELEPORT".into())
        ]
    );
    assert_eq!(doc.action_indices, [0, 3]);
}

#[test]
fn extract_prefers_whole_text() {
    assert_eq!(extract_json("[1, 2]").unwrap(), json!([1, 2]));
    assert_eq!(extract_json("\u{feff}{\"a\":1}").unwrap(), json!({"a": 1}));
}

#[test]
fn russian_content_is_ordinary_text() {
    let text = json!({"actions":[{"kind":"CREATE_FILE","path":"docs/README.ru.md",
        "content":"# Привет, мир\n\nЭто документация. 中文 ✓\n"}], "summary": "docs"})
    .to_string();
    check(&text, V2, Ok(1));
}

#[test]
fn truncated_answer_reports_the_json_error_not_an_inner_value() {
    // Cut off at max_tokens: the inner `[]` must not be taken for the answer.
    let err = parse_response(r#"{"actions":[],"summary":"Fix the add fun"#, V2).unwrap_err();
    assert_eq!(err.code(), ErrorCode::JsonParse, "{err}");
    assert!(matches!(err, ParseError::Json { line: 1, .. }), "{err:?}");
    let err =
        parse_response("[{\"kind\":\"CREATE_DIR\",\"path\":\"a\"}, {\"kind\"", V1).unwrap_err();
    assert_eq!(err.code(), ErrorCode::JsonParse, "{err}");
    // A bracketed aside that does close is still prose around the real object.
    check(&format!("[note] {ONE}"), V2, Ok(1));
}

/// What llama-cpp-python 0.3's server answered under the compact PLAN schema (issue #22): its
/// grammar lets raw newlines into a string, so the text is not JSON, and the search for a value
/// inside it took `"actions" : [ ]` for a bare-array answer.
#[test]
fn r_raw_newlines_in_a_string_are_not_read_as_the_actions_array() {
    let text = "{ \"summary\":\"This is a list of README files. Each file must have the following structure:\n<pre>\n  <code>\n    #[doc]\n    #[type(\",\"actions\" : [ ] } ";
    let value = extract_json(text).unwrap();
    assert_eq!(value["actions"], json!([]));
    assert!(
        value["summary"]
            .as_str()
            .unwrap()
            .ends_with("structure:\n<pre>\n  <code>\n    #[doc]\n    #[type(")
    );
    check(text, V2, Ok(0));
    // In a fenced block too, and a tab or another control character has its escape.
    let fenced = "Here:\n```json\n{\"summary\":\"a\tb\u{1}c\",\"actions\":[]}\n```";
    assert_eq!(extract_json(fenced).unwrap()["summary"], "a\tb\u{1}c");
    // Outside strings nothing is changed: text that is not JSON stays an error.
    assert_eq!(
        parse_response("{\"summary\":\"a\nb\",\"actions\":[}", V2)
            .unwrap_err()
            .code(),
        ErrorCode::JsonParse
    );
}
