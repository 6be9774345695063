//! Finding and reading the JSON value in a model's answer.

use serde_json::Value;

use super::{ParseError, extract};

/// Find the JSON text in a model answer (SPEC §3.3 step 1).
///
/// Order: the whole trimmed text when it is JSON; else the first fenced block
/// (```` ```json ```` or ```` ``` ````); else the first balanced JSON value in the prose.
/// Returns the candidate that parses, or the error of the most likely candidate.
///
/// Linear in the length of `text` whatever it holds. An answer over
/// [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES), or whose JSON holds more than
/// [`MAX_ACTIONS`](super::MAX_ACTIONS) actions, is refused (`ERR_CONTENT_TOO_LARGE`,
/// `ERR_TOO_MANY_ACTIONS`) before a JSON value is built.
pub fn extract_json(text: &str) -> Result<Value, ParseError> {
    extract::check_size(text)?;
    let trimmed = text.trim().trim_start_matches('\u{feff}');
    if trimmed.is_empty() {
        return Err(ParseError::NoJson {
            array_allowed: true,
        });
    }
    let whole = parse_json_text(trimmed);
    match whole {
        Ok(v) => return Ok(v),
        Err(e @ ParseError::TooManyActions { .. }) => return Err(e),
        Err(_) => {}
    }
    if let Some(block) = first_fenced_block(trimmed) {
        return parse_json_text(block.trim());
    }
    let spans = extract::Spans::new(trimmed);
    // An answer that opens a JSON value and never closes it is truncated JSON (e.g. cut off at
    // max_tokens): report where it breaks, not some balanced value nested inside it.
    if trimmed.starts_with(['{', '[']) && spans.end_at_start().is_none() {
        return parse_json_text(trimmed);
    }
    let mut first_error = None;
    // Nested candidates can each be almost the whole text (`[[[…[1,1,…,x]…]]]`): past this
    // many bytes tried, no later candidate is worth the time. Ordinary answers stay far below.
    let mut budget = trimmed.len().saturating_mul(8).saturating_add(64 * 1024);
    for candidate in spans.candidates(trimmed) {
        if candidate.len() > budget {
            break;
        }
        budget -= candidate.len();
        // Only the first failure's message is kept, so later ones are checked without
        // building a value.
        if first_error.is_some() && !is_json_syntax(candidate) {
            continue;
        }
        match parse_json_text(candidate) {
            Ok(v) if v.is_object() || v.is_array() => return Ok(v),
            Ok(_) => {}
            Err(e @ ParseError::TooManyActions { .. }) => return Err(e),
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

/// Whether `text` is one JSON value, checked without building it (serde_json accepts no more
/// here than when it builds a `Value`).
fn is_json_syntax(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

fn parse_json_text(text: &str) -> Result<Value, ParseError> {
    extract::check_action_count(text)?;
    serde_json::from_str(text).map_err(|e| ParseError::Json {
        line: e.line(),
        column: e.column(),
        message: strip_serde_position(&e.to_string()),
    })
}

fn strip_serde_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// The body of the first fenced code block. The closing fence must start a line: a JSON string
/// cannot hold a raw newline, so a fence inside JSON content is never taken for the end.
fn first_fenced_block(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after_ticks = &text[start + 3..];
    let body_start = after_ticks.find('\n')? + 1;
    let info = after_ticks[..body_start].trim();
    // Only a language tag may follow the opening fence.
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

/// Remove object members whose value is `null`, recursively: strict-mode providers must send
/// every field, so `null` means "absent".
pub fn strip_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}
