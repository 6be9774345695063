//! Finding and reading the JSON value in a model's answer.

use std::fmt::Write as _;

use serde_json::Value;

use super::{ParseError, extract};

/// Find the JSON text in a model answer (SPEC §3.3 step 1).
///
/// Order: the whole trimmed text when it is JSON; else the first fenced block
/// (```` ```json ```` or ```` ``` ````); else the first balanced JSON value in the prose.
/// Returns the candidate that parses, or the error of the most likely candidate.
///
/// The whole text and a fenced block are also read with raw control characters (a newline, a
/// tab) inside their strings taken for their escapes: JSON forbids them, but some servers'
/// decoding grammars let them through (llama-cpp-python 0.3's, issue #22).
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
    let whole = parse_whole(trimmed);
    match whole {
        Ok(v) => return Ok(v),
        Err(e @ ParseError::TooManyActions { .. }) => return Err(e),
        Err(_) => {}
    }
    if let Some(block) = first_fenced_block(trimmed) {
        return parse_whole(block.trim());
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

/// `text` as one JSON value; when it is not, the same text with the raw control characters
/// inside its strings escaped, if that is one JSON value (else the first error stands).
///
/// A server that turns a schema into a decoding grammar can let a raw newline into a string:
/// llama-cpp-python 0.3's converter writes `char ::= [^"\\] | "\\" …`, which admits U+0000–U+001F.
/// Such an answer is the object the model meant, but not JSON, and the search for a value
/// inside the prose would then take a nested array (`"actions": []`) for the answer (issue
/// #22). A raw control character in a string has one reading, its escape.
fn parse_whole(text: &str) -> Result<Value, ParseError> {
    let strict = parse_json_text(text);
    if !matches!(strict, Err(ParseError::Json { .. })) {
        return strict;
    }
    match escape_raw_controls(text) {
        Some(escaped) => parse_json_text(&escaped).or(strict),
        None => strict,
    }
}

/// `text` with every control character (U+0000–U+001F) inside a JSON string literal replaced
/// by its escape, or `None` when there is none. Outside strings nothing changes, so text that
/// is not JSON stays not JSON.
fn escape_raw_controls(text: &str) -> Option<String> {
    let mut out: Option<String> = None;
    let (mut in_string, mut escaped) = (false, false);
    for (i, c) in text.char_indices() {
        let raw_control = in_string && !escaped && c < ' ';
        if raw_control && out.is_none() {
            out = Some(text[..i].to_owned());
        }
        if let Some(out) = out.as_mut() {
            match c {
                '\n' if raw_control => out.push_str("\\n"),
                '\r' if raw_control => out.push_str("\\r"),
                '\t' if raw_control => out.push_str("\\t"),
                c if raw_control => {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "\\u{:04x}", u32::from(c));
                }
                c => out.push(c),
            }
        }
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ => {}
        }
    }
    out
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
