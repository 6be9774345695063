//! Hostile answers: extraction stays linear on every shape, and the size and action ceilings
//! refuse a huge answer before a JSON value is built.

use std::time::{Duration, Instant};

use papayu_protocol::{
    ErrorCode, MAX_ACTIONS, MAX_ANSWER_BYTES, ParseError, ProtocolVersion, extract_json,
    parse_document, parse_response,
};
use proptest::prelude::*;
use serde_json::Value;

/// Far above what the linear code needs for 1 MB in a debug build on a loaded machine, and
/// orders of magnitude below the old quadratic scan (400 000 `[` took 103 s; 1 MB ≈ 10 min).
const GENEROUS: Duration = Duration::from_secs(20);

fn adversarial_shapes(n: usize) -> Vec<(&'static str, String)> {
    vec![
        ("unclosed [", format!("Here: {}", "[".repeat(n))),
        ("unclosed {", format!("Here: {}", "{".repeat(n))),
        ("unclosed [ at start", "[".repeat(n)),
        ("unclosed values", format!("ok {}", "[1,".repeat(n / 3))),
        (
            "unclosed members",
            format!("ok {}", "{\"a\":".repeat(n / 5)),
        ),
        // Each start sees the others inside strings, then all resynchronise through the
        // escapes and scan the same long tail: quadratic for a scan per start.
        (
            "string phases",
            format!("x {}\"{}", "[\\\"".repeat(n / 6), " ".repeat(n / 2)),
        ),
        ("quotes and brackets", format!("x {}", "[\"".repeat(n / 2))),
        ("escapes", format!("x [\"{}", "\\\\\\\"[".repeat(n / 5))),
        (
            "many failing candidates",
            format!("x {}", "[a]".repeat(n / 3)),
        ),
        (
            "one unclosed then failing candidates",
            format!("x [{}", "{a}".repeat(n / 3)),
        ),
        (
            "nested failing candidates",
            format!(
                "x {}{}a{}",
                "[".repeat(64),
                "1,".repeat(n / 2),
                "]".repeat(64)
            ),
        ),
        ("many fences", "```\n[\n".repeat(n / 6)),
        (
            "fence with an info string",
            format!("``` a b\n{}", "[".repeat(n)),
        ),
        ("many empty arrays", format!("x {}", "[] ".repeat(n / 3))),
    ]
}

#[test]
fn r_json_extract_unclosed_brackets_is_linear() {
    for (name, text) in adversarial_shapes(1 << 20) {
        let started = Instant::now();
        let result = extract_json(&text);
        let took = started.elapsed();
        assert!(took < GENEROUS, "{name}: {took:?}");
        if name == "many empty arrays" {
            assert_eq!(result.unwrap(), Value::Array(Vec::new()), "{name}");
        } else {
            assert!(result.is_err(), "{name}");
        }
    }
}

#[test]
fn r_huge_answer_with_millions_of_actions_is_refused_before_parsing() {
    // The red-team answer: 200 MB, 4.88 M actions.
    let action = r#"{"kind":"CREATE_DIR","path":"a/b/c/d/e/f/g/h/i/j"},"#;
    let n = 200_000_000 / action.len();
    let huge = format!(
        "{{\"actions\":[{}{{}}],\"summary\":\"x\"}}",
        action.repeat(n)
    );
    assert!(huge.len() > MAX_ANSWER_BYTES);
    let started = Instant::now();
    let err = parse_response(&huge, ProtocolVersion::V2).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ContentTooLarge, "{err}");
    assert!(matches!(err, ParseError::TooLarge { limit, .. } if limit == MAX_ANSWER_BYTES));
    let err = parse_document(&huge, ProtocolVersion::V3).unwrap_err();
    assert_eq!(err.code(), ErrorCode::ContentTooLarge, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn r_many_actions_under_the_size_cap_are_refused_by_the_pre_scan() {
    let action = r#"{"kind":"CREATE_DIR","path":"a"},"#;
    let n = (MAX_ANSWER_BYTES - 1024) / action.len();
    let body = action.repeat(n);
    let body = body.trim_end_matches(',');
    for text in [
        format!("{{\"summary\":\"x\",\"actions\":[{body}]}}"),
        format!("[{body}]"),
        format!("Sure:\n```json\n{{\"actions\":[{body}]}}\n```"),
        format!("Here it is: {{\"proposed_changes\":{{\"actions\":[{body}]}}}} done"),
    ] {
        assert!(text.len() <= MAX_ANSWER_BYTES);
        let started = Instant::now();
        for version in ProtocolVersion::ALL {
            let err = parse_response(&text, version).unwrap_err();
            assert_eq!(err.code(), ErrorCode::TooManyActions, "{err}");
            let err = parse_document(&text, version).unwrap_err();
            assert_eq!(err.code(), ErrorCode::TooManyActions, "{err}");
        }
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
}

#[test]
fn the_action_ceiling_is_exact() {
    let action = r#"{"kind":"CREATE_DIR","path":"a"}"#;
    let list = |n: usize| vec![action; n].join(",");
    let at = format!("{{\"actions\":[{}]}}", list(MAX_ACTIONS));
    assert!(extract_json(&at).is_ok());
    let over = format!("{{\"actions\":[{}]}}", list(MAX_ACTIONS + 1));
    assert_eq!(
        extract_json(&over).unwrap_err(),
        ParseError::TooManyActions { limit: MAX_ACTIONS }
    );
    let value: Value = serde_json::from_str(&over).unwrap();
    assert_eq!(
        papayu_protocol::parse_value(value.clone(), ProtocolVersion::V2)
            .unwrap_err()
            .code(),
        ErrorCode::TooManyActions
    );
    let doc = papayu_protocol::document_from_value(value, ProtocolVersion::V2);
    assert_eq!(doc.violations.len(), 1, "{:?}", doc.violations);
    assert_eq!(doc.violations[0].code, ErrorCode::TooManyActions);
    assert!(doc.response.actions.is_empty());
}

/// The extraction before it was made linear: a scan from every bracket to its balanced end.
/// Kept to check that the linear version answers the same on ordinary inputs.
mod old {
    use papayu_protocol::ParseError;
    use serde_json::Value;

    pub fn extract_json(text: &str) -> Result<Value, ParseError> {
        let trimmed = text.trim().trim_start_matches('\u{feff}');
        if trimmed.is_empty() {
            return Err(ParseError::NoJson {
                array_allowed: true,
            });
        }
        if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
            return Ok(v);
        }
        // Issue #22 added this reading: raw control characters inside strings as their escapes.
        if let Some(v) = with_raw_controls_escaped(trimmed) {
            return Ok(v);
        }
        if let Some(block) = first_fenced_block(trimmed) {
            return with_raw_controls_escaped(block.trim())
                .map_or_else(|| parse_json_text(block.trim()), Ok);
        }
        if trimmed.starts_with(['{', '[']) && balanced_end(trimmed.as_bytes(), 0).is_none() {
            return parse_json_text(trimmed);
        }
        let mut first_error = None;
        for candidate in balanced_candidates(trimmed).take(64) {
            match parse_json_text(candidate) {
                Ok(v) if v.is_object() || v.is_array() => return Ok(v),
                Ok(_) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if trimmed.starts_with(['{', '[']) {
            return parse_json_text(trimmed);
        }
        Err(first_error.unwrap_or(ParseError::NoJson {
            array_allowed: true,
        }))
    }

    /// `text` read as JSON with each control character inside a string replaced by `\u00XX`.
    fn with_raw_controls_escaped(text: &str) -> Option<Value> {
        let mut out = String::new();
        let mut quote_open = false;
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if quote_open && c == '\\' {
                out.push(c);
                out.extend(chars.next());
                continue;
            }
            if c == '"' {
                quote_open = !quote_open;
            }
            if quote_open && u32::from(c) < 0x20 {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            } else {
                out.push(c);
            }
        }
        serde_json::from_str(&out).ok()
    }

    fn parse_json_text(text: &str) -> Result<Value, ParseError> {
        serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            let message = match message.rfind(" at line ") {
                Some(i) => message[..i].to_owned(),
                None => message,
            };
            ParseError::Json {
                line: e.line(),
                column: e.column(),
                message,
            }
        })
    }

    fn first_fenced_block(text: &str) -> Option<&str> {
        let start = text.find("```")?;
        let after_ticks = &text[start + 3..];
        let body_start = after_ticks.find('\n')? + 1;
        let info = after_ticks[..body_start].trim();
        if info
            .chars()
            .any(|c| c.is_whitespace() || c == '{' || c == '[')
        {
            return None;
        }
        let body = &after_ticks[body_start..];
        let mut offset = 0;
        for line in body.split_inclusive('\n') {
            if line.trim_start().starts_with("```") {
                return Some(&body[..offset]);
            }
            offset += line.len();
        }
        Some(body)
    }

    fn balanced_candidates(text: &str) -> impl Iterator<Item = &str> {
        let bytes = text.as_bytes();
        bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b, b'{' | b'['))
            .filter_map(move |(start, _)| balanced_end(bytes, start).map(|end| &text[start..end]))
    }

    fn balanced_end(bytes: &[u8], start: usize) -> Option<usize> {
        let mut stack: Vec<u8> = Vec::new();
        let mut in_string = false;
        let mut escaped = false;
        for (i, &b) in bytes.iter().enumerate().skip(start) {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' => stack.push(b'}'),
                b'[' => stack.push(b']'),
                b'}' | b']' => {
                    if stack.pop() != Some(b) {
                        return None;
                    }
                    if stack.is_empty() {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// Prose, code-ish asides and JSON fragments, the way model answers mix them.
fn ordinary_answer() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[A-Za-z ,.!?']{0,30}",
        Just("\n".to_owned()),
        Just("```json\n".to_owned()),
        Just("```\n".to_owned()),
        Just("\n```".to_owned()),
        Just(r#"{"actions":[{"kind":"CREATE_DIR","path":"src"}],"summary":"mkdir"}"#.to_owned()),
        Just(r#"{"actions":[],"summary":"a \"quoted\" [x] {y}"}"#.to_owned()),
        Just(r#"[{"kind":"DELETE_FILE","path":"a.txt"}]"#.to_owned()),
        Just(r#"{"a": [1, 2, {"b": "c\\d"}]}"#.to_owned()),
        Just("[note]".to_owned()),
        Just("{x}".to_owned()),
        Just("\"quoted prose\"".to_owned()),
        Just("fn main() { let v = [1, 2]; }".to_owned()),
        Just("{\"cut\": [1, 2".to_owned()),
        Just("]".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("{".to_owned()),
        Just("\\".to_owned()),
        Just("\"".to_owned()),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn extraction_agrees_with_the_old_scan_on_ordinary_answers(text in ordinary_answer()) {
        prop_assert_eq!(extract_json(&text), old::extract_json(&text), "{:?}", text);
    }

    #[test]
    fn extraction_agrees_with_the_old_scan_on_bracket_soup(
        text in r#"[\[\]{}",:a1 \\`\n]{0,60}"#
    ) {
        prop_assert_eq!(extract_json(&text), old::extract_json(&text), "{:?}", text);
    }
}
