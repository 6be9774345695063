//! The resources: the transaction history and the last traces, read-only JSON documents.

use papayu_agent::trace::{is_trace_id_prefix, list_traces, show_trace};
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::json;

use crate::served::Served;

/// The undo and redo stacks.
pub(crate) const HISTORY: &str = "papayu://history";
/// The newest traces, one summary each.
pub(crate) const TRACES: &str = "papayu://traces";
/// One trace in full.
const TRACE_PREFIX: &str = "papayu://trace/";
/// How many traces `papayu://traces` lists.
const LAST_TRACES: usize = 20;

const JSON: &str = "application/json";

/// `resources/list`.
pub(crate) fn list() -> Vec<Resource> {
    vec![
        Resource::new(HISTORY, "history")
            .with_title("Transaction history")
            .with_description("The undo and redo stacks: each transaction's id, kind, time, actions and paths, most recent first.")
            .with_mime_type(JSON),
        Resource::new(TRACES, "traces")
            .with_title("Last traces")
            .with_description("The newest traces of papayu's model calls (written with PAPAYU_TRACE=1), newest first: id, mode, protocol, outcome, error code.")
            .with_mime_type(JSON),
    ]
}

/// `resources/templates/list`.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("papayu://trace/{trace_id}", "trace")
            .with_title("One trace")
            .with_description("A trace in full (redacted), by its id or a unique prefix of it.")
            .with_mime_type(JSON),
    ]
}

/// `resources/read` of `uri`.
pub(crate) fn read(served: &Served, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let value = match uri {
        HISTORY => served
            .patch
            .history()
            .map(|h| json!(h))
            .map_err(|e| coded_error(e.code(), e.to_string()))?,
        TRACES => {
            let mut list =
                list_traces(&served.root).map_err(|e| coded_error(e.code(), e.to_string()))?;
            list.reverse();
            list.truncate(LAST_TRACES);
            json!({ "traces": list })
        }
        _ => match uri.strip_prefix(TRACE_PREFIX) {
            Some(id) if is_trace_id_prefix(id) => show_trace(&served.root, id)
                .map(|t| json!(t))
                .map_err(|e| {
                    ErrorData::resource_not_found(
                        format!("{uri}: {e}"),
                        Some(json!({"uri": uri, "code": e.code()})),
                    )
                })?,
            _ => {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no resource {uri}; papayu offers {HISTORY}, {TRACES} and {TRACE_PREFIX}{{trace_id}}"
                    ),
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    };
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type(JSON),
    ]))
}

/// A resource that exists but cannot be read now, with papayu's code in `data`.
fn coded_error(code: papayu_protocol::ErrorCode, message: String) -> ErrorData {
    ErrorData::internal_error(message, Some(json!({ "code": code })))
}
