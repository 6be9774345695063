//! The two ways a tool call ends: a [`Reply`] (the tool ran: a result, or a rejection carrying
//! papayu's stable code) or an [`ArgError`] (the call itself is malformed: a JSON-RPC error).

use papayu_protocol::ErrorCode;
use rmcp::ErrorData;
use rmcp::model::CallToolResult;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// What a tool answers: a structured result with `"ok": true`, or a rejection with
/// `"ok": false`, `"code"` and `"error"` (a tool error the client shows the model).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// The tool did its job.
    Done(Map<String, Value>),
    /// The tool refused or failed; nothing was written.
    Rejected {
        /// The stable code.
        code: ErrorCode,
        /// Why, for the model.
        message: String,
        /// More fields (violations, the path, the preview, …).
        extra: Map<String, Value>,
    },
}

impl Reply {
    /// A result from a serialisable value (an object; anything else lands under `result`).
    pub(crate) fn done(value: impl Serialize) -> Reply {
        Reply::Done(object(value))
    }

    /// A rejection with `code` and `message`.
    pub(crate) fn rejected(code: ErrorCode, message: impl Into<String>) -> Reply {
        Reply::Rejected {
            code,
            message: message.into(),
            extra: Map::new(),
        }
    }

    /// Add `key` to the result or the rejection.
    pub(crate) fn with(mut self, key: &str, value: impl Serialize) -> Reply {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        match &mut self {
            Reply::Done(map) | Reply::Rejected { extra: map, .. } => {
                map.insert(key.to_owned(), value);
            }
        }
        self
    }

    /// The code of a rejection.
    pub(crate) fn code(&self) -> Option<ErrorCode> {
        match self {
            Reply::Done(_) => None,
            Reply::Rejected { code, .. } => Some(*code),
        }
    }

    /// The MCP result: `structuredContent` is the object, its JSON text the one content block
    /// (for clients that read only text); a rejection is a tool error (`isError: true`).
    pub(crate) fn into_result(self) -> CallToolResult {
        match self {
            Reply::Done(mut map) => {
                map.insert("ok".into(), Value::Bool(true));
                CallToolResult::structured(Value::Object(map))
            }
            Reply::Rejected {
                code,
                message,
                extra,
            } => {
                let mut map = Map::new();
                map.insert("ok".into(), Value::Bool(false));
                map.insert("code".into(), json!(code));
                map.insert("error".into(), Value::String(message));
                map.extend(extra);
                CallToolResult::structured_error(Value::Object(map))
            }
        }
    }
}

/// `value` as a JSON object; a value that is not one is kept under `result`.
fn object(value: impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            let mut map = Map::new();
            map.insert("result".into(), other);
            map
        }
        Err(e) => {
            let mut map = Map::new();
            map.insert("result".into(), Value::String(e.to_string()));
            map
        }
    }
}

/// A malformed call: an unknown tool, arguments that do not fit the tool's schema, or values
/// out of range. Answered with JSON-RPC `-32602 Invalid params`; nothing ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct ArgError {
    /// The tool, when known.
    pub tool: Option<String>,
    /// What is wrong, for a person reading the client's log or the model.
    pub message: String,
}

impl ArgError {
    /// A malformed call of `tool`.
    pub(crate) fn new(tool: &str, message: impl Into<String>) -> Self {
        Self {
            tool: Some(tool.to_owned()),
            message: message.into(),
        }
    }

    /// The JSON-RPC error; its `data` names the tool.
    pub(crate) fn into_error_data(self) -> ErrorData {
        let data = self.tool.map(|t| json!({ "tool": t }));
        ErrorData::invalid_params(self.message, data)
    }
}
