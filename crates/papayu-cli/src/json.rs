//! Machine output: one shape for every command under `--json` — one compact JSON document on
//! stdout, `{"ok": bool, "code": "ERR_…" | null, …}` — and, under `--json-stream`, the same
//! document as the `result` event that ends the transcript.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use papayu_protocol::ErrorCode;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::events::{self, Event};

static STREAMING: AtomicBool = AtomicBool::new(false);

/// Turn `--json-stream` on for this process: progress becomes events and the final document
/// the `result` event.
pub fn set_streaming() {
    STREAMING.store(true, Ordering::Relaxed);
}

/// Whether this process writes a `--json-stream` transcript.
pub fn streaming() -> bool {
    STREAMING.load(Ordering::Relaxed)
}

/// The document: `ok` and `code` first, then the fields of `body` (an object; anything else
/// goes under `value`). A `body` field named `ok` or `code` gives way to the arguments.
pub fn document(ok: bool, code: Option<ErrorCode>, body: Value) -> Value {
    let mut doc = Map::new();
    doc.insert("ok".into(), Value::Bool(ok));
    doc.insert(
        "code".into(),
        code.map_or(Value::Null, |c| Value::String(c.as_str().to_owned())),
    );
    match body {
        Value::Object(fields) => {
            for (k, v) in fields {
                if k != "ok" && k != "code" {
                    doc.insert(k, v);
                }
            }
        }
        Value::Null => {}
        other => {
            doc.insert("value".into(), other);
        }
    }
    Value::Object(doc)
}

/// Print a finished document: one compact line, or the `result` event when streaming.
pub fn print(doc: &Value) {
    if streaming() {
        events::emit(&Event::Result(doc));
    } else {
        #[allow(
            clippy::print_stdout,
            reason = "the one place machine documents are printed"
        )]
        {
            println!("{doc}");
        }
    }
}

/// Print a success: `{"ok": true, "code": null, …body}`.
pub fn print_ok<T: Serialize + ?Sized>(body: &T) -> Result<()> {
    print(&document(true, None, serde_json::to_value(body)?));
    Ok(())
}

/// Print a failure with its code and message: `{"ok": false, "code": code, "error": message,
/// …body}`.
pub fn print_failure<T: Serialize + ?Sized>(
    code: ErrorCode,
    message: &str,
    body: &T,
) -> Result<()> {
    let mut doc = document(false, Some(code), serde_json::to_value(body)?);
    doc["error"] = Value::String(message.to_owned());
    print(&doc);
    Ok(())
}

/// Whether the raw command line asks for machine output (`--json` or `--json-stream` before
/// any `--`): what a command line clap could not parse is answered with.
pub fn requested_in(args: &[std::ffi::OsString]) -> Option<bool> {
    let mut wanted = None;
    for a in args.iter().skip(1) {
        match a.to_str() {
            Some("--") => break,
            Some("--json") => wanted = Some(wanted.unwrap_or(false)),
            Some("--json-stream") => wanted = Some(true),
            _ => {}
        }
    }
    wanted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_and_code_come_first_and_win() {
        let doc = document(
            false,
            Some(ErrorCode::Usage),
            serde_json::json!({"tx": "1", "ok": true, "code": "ERR_X"}),
        );
        assert_eq!(
            doc.to_string(),
            r#"{"ok":false,"code":"ERR_USAGE","tx":"1"}"#
        );
        assert_eq!(
            document(true, None, Value::Null).to_string(),
            r#"{"ok":true,"code":null}"#
        );
        assert_eq!(
            document(true, None, serde_json::json!([1])).to_string(),
            r#"{"ok":true,"code":null,"value":[1]}"#
        );
    }

    #[test]
    fn machine_output_is_found_before_the_separator_only() {
        let args = |v: &[&str]| {
            v.iter()
                .map(Into::into)
                .collect::<Vec<std::ffi::OsString>>()
        };
        assert_eq!(
            requested_in(&args(&["papayu", "plan", "--json", "x"])),
            Some(false)
        );
        assert_eq!(
            requested_in(&args(&["papayu", "--json-stream", "plan"])),
            Some(true)
        );
        assert_eq!(
            requested_in(&args(&["papayu", "plan", "--", "--json"])),
            None
        );
        assert_eq!(requested_in(&args(&["papayu", "--json"])), Some(false));
    }
}
