//! Turning a model's answer into typed data (SPEC §3.3): strict and lenient readings of a plan.
//! Touches only the answer's text and the protocol's schemas and types, in memory.

mod check;
mod error;
mod extract;
mod json;

use serde_json::Value;

use crate::error_code::ErrorCode;
use crate::types::{Action, ProtocolVersion, Response};

use check::{code_for_schema_error, json_type, schema_errors, typed};
pub use error::{ParseError, Violation, join_violations};
pub use extract::{MAX_ACTIONS, MAX_ANSWER_BYTES};
pub use json::{extract_json, strip_nulls};

/// Parse a model answer strictly (SPEC §3.3): extract, parse, validate against the schema of
/// `version`, and convert to a [`Response`]. Stops at the first problem.
///
/// ```
/// use papayu_protocol::{parse_response, ProtocolVersion, ActionKind};
/// let answer = "Sure! ```json\n{\"actions\":[{\"kind\":\"CREATE_DIR\",\"path\":\"src\"}]}\n```";
/// let response = parse_response(answer, ProtocolVersion::V2).unwrap();
/// assert_eq!(response.effective_actions()[0].kind, ActionKind::CreateDir);
/// ```
pub fn parse_response(text: &str, version: ProtocolVersion) -> Result<Response, ParseError> {
    let mut value = extract_json(text).map_err(|e| with_array_hint(e, version))?;
    strip_nulls(&mut value);
    parse_value(value, version)
}

/// [`parse_response`] for an already-parsed JSON value (nulls are treated as absent).
pub fn parse_value(mut value: Value, version: ProtocolVersion) -> Result<Response, ParseError> {
    if action_count(&value) > MAX_ACTIONS {
        return Err(ParseError::TooManyActions { limit: MAX_ACTIONS });
    }
    strip_nulls(&mut value);
    if let Some((pointer, message, additional)) = schema_errors(version, &value)?.into_iter().next()
    {
        return Err(ParseError::Schema {
            code: code_for_schema_error(&pointer, additional),
            pointer,
            message,
            version,
        });
    }
    match value {
        Value::Array(_) => Ok(Response::from_actions(typed(value, "", version)?)),
        _ => typed(value, "", version),
    }
}

fn with_array_hint(e: ParseError, version: ProtocolVersion) -> ParseError {
    match e {
        ParseError::NoJson { .. } => ParseError::NoJson {
            array_allowed: version.allows_array_root(),
        },
        other => other,
    }
}

/// Read the envelope into a [`Response`], dropping each root field serde cannot read (and
/// reporting it unless the schema already did), so one bad field does not hide the rest.
fn typed_envelope(
    mut envelope: Value,
    version: ProtocolVersion,
    violations: &mut Vec<Violation>,
) -> Response {
    for _ in 0..crate::types::ROOT_FIELDS.len() + 8 {
        match typed::<Response>(envelope.clone(), "", version) {
            Ok(r) => return r,
            Err(e) => {
                let pointer = e.pointer().unwrap_or_default().to_owned();
                let field = pointer
                    .trim_start_matches('/')
                    .split('/')
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let already = violations.iter().any(|v| {
                    v.pointer
                        .as_deref()
                        .is_some_and(|p| p == pointer || p == format!("/{field}"))
                });
                if !already {
                    violations.push(Violation::from(&e));
                }
                match envelope.as_object_mut().and_then(|m| m.remove(&field)) {
                    Some(_) => {}
                    None => return Response::default(),
                }
            }
        }
    }
    Response::default()
}

/// A leniently parsed answer: everything that could be read, plus every problem found on the
/// way. This is what papayu-validate checks when it must report **all** violations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Document {
    /// The response; actions that could not be read at all are left out of its action list.
    pub response: Response,
    /// Index in the answer's effective action list of each action in
    /// `response.effective_actions()` (they differ only when some action was unreadable).
    pub action_indices: Vec<usize>,
    /// Envelope schema problems and unreadable actions.
    pub violations: Vec<Violation>,
}

impl Document {
    /// The original index of the `i`-th readable action.
    pub fn original_index(&self, i: usize) -> usize {
        self.action_indices.get(i).copied().unwrap_or(i)
    }
}

/// Parse leniently, collecting every envelope problem instead of stopping at the first.
///
/// Actions are read one by one with kinds and extra fields preserved, so papayu-validate can
/// give each problem its precise code (`ERR_UNKNOWN_KIND`, `ERR_FIELD_NOT_ALLOWED`, …). Only a
/// missing or unparsable JSON value is a hard error.
pub fn parse_document(text: &str, version: ProtocolVersion) -> Result<Document, ParseError> {
    let mut value = extract_json(text).map_err(|e| with_array_hint(e, version))?;
    strip_nulls(&mut value);
    Ok(document_from_value(value, version))
}

/// The most actions any action list of `value` holds (the root array, `actions`,
/// `proposed_changes.actions`).
fn action_count(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.len(),
        Value::Object(map) => {
            let len = |v: Option<&Value>| v.and_then(Value::as_array).map_or(0, Vec::len);
            len(map.get("actions")).max(len(map
                .get("proposed_changes")
                .and_then(|p| p.get("actions"))))
        }
        _ => 0,
    }
}

/// [`parse_document`] for an already-parsed JSON value.
///
/// A value with more than [`MAX_ACTIONS`] actions gets one `ERR_TOO_MANY_ACTIONS` violation
/// and none of its actions are read.
pub fn document_from_value(mut value: Value, version: ProtocolVersion) -> Document {
    let mut doc = Document::default();
    if action_count(&value) > MAX_ACTIONS {
        doc.violations
            .push(Violation::from(&ParseError::TooManyActions {
                limit: MAX_ACTIONS,
            }));
        return doc;
    }
    strip_nulls(&mut value);
    let (raw_actions, list_pointer, envelope) = match value {
        Value::Array(items) => {
            if !version.allows_array_root() {
                doc.violations.push(
                    Violation::new(
                        ErrorCode::SchemaValidation,
                        format!("protocol {version} needs a JSON object at the root, e.g. {{\"actions\": [...]}}, not a bare array"),
                    )
                    .with_pointer(""),
                );
            }
            (items, "", None)
        }
        Value::Object(mut map) => {
            let proposed = map
                .get_mut("proposed_changes")
                .and_then(Value::as_object_mut)
                .and_then(|p| match p.get("actions") {
                    Some(Value::Array(_)) if version.allows_proposed_actions() => {
                        p.remove("actions")
                    }
                    _ => None,
                });
            let root = match map.get("actions") {
                Some(Value::Array(_)) => map.remove("actions"),
                _ => None,
            };
            let (items, pointer) = match (proposed, root) {
                (Some(Value::Array(p)), _) => (p, "/proposed_changes/actions"),
                (None, Some(Value::Array(r))) => (r, "/actions"),
                _ => (Vec::new(), "/actions"),
            };
            (items, pointer, Some(Value::Object(map)))
        }
        other => {
            doc.violations.push(
                Violation::new(
                    ErrorCode::SchemaValidation,
                    format!(
                        "expected a JSON object at the root, found {}",
                        json_type(&other)
                    ),
                )
                .with_pointer(""),
            );
            (Vec::new(), "", None)
        }
    };

    if let Some(envelope) = envelope {
        match schema_errors(version, &envelope) {
            Ok(errors) => {
                doc.violations
                    .extend(errors.into_iter().map(|(pointer, message, additional)| {
                        Violation::new(code_for_schema_error(&pointer, additional), message)
                            .with_pointer(pointer)
                    }))
            }
            Err(e) => doc.violations.push(Violation::from(&e)),
        }
        doc.response = typed_envelope(envelope, version, &mut doc.violations);
    }

    let mut actions = Vec::with_capacity(raw_actions.len());
    for (index, raw) in raw_actions.into_iter().enumerate() {
        let pointer = format!("{list_pointer}/{index}");
        let path = raw
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if !raw.is_object() {
            doc.violations.push(
                Violation::new(
                    ErrorCode::SchemaValidation,
                    format!("an action must be a JSON object, found {}", json_type(&raw)),
                )
                .at_action(index, path)
                .with_pointer(pointer),
            );
            continue;
        }
        match typed::<Action>(raw, &pointer, version) {
            Ok(action) => {
                actions.push(action);
                doc.action_indices.push(index);
            }
            Err(e) => doc
                .violations
                .push(Violation::from(&e).at_action(index, path)),
        }
    }
    if list_pointer == "/proposed_changes/actions" {
        doc.response
            .proposed_changes
            .get_or_insert_with(Default::default)
            .actions = Some(actions);
    } else {
        doc.response.actions = actions;
    }
    doc
}
