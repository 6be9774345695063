//! Checking a JSON value against the schema of a protocol version and reading it as a type.

use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ParseError;
use crate::error_code::ErrorCode;
use crate::schema::{SchemaVariant, schema_value};
use crate::types::{ActionKind, ProtocolVersion};

struct Validators {
    response: jsonschema::Validator,
    action_list: Option<jsonschema::Validator>,
}

fn validators(version: ProtocolVersion) -> Result<&'static Validators, ParseError> {
    static CACHE: [OnceLock<Result<Validators, String>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = &CACHE[usize::from(version.number() - 1)];
    let built = slot.get_or_init(|| {
        let schema = schema_value(version, SchemaVariant::Normal);
        let branch = |name: &str| {
            let mut s = Map::new();
            s.insert("$schema".into(), schema["$schema"].clone());
            s.insert(
                "$ref".into(),
                Value::String(format!("#/definitions/{name}")),
            );
            s.insert("definitions".into(), schema["definitions"].clone());
            jsonschema::draft7::new(&Value::Object(s)).map_err(|e| e.to_string())
        };
        Ok(Validators {
            response: branch("response")?,
            action_list: if version.allows_array_root() {
                Some(branch("action_list")?)
            } else {
                None
            },
        })
    });
    built.as_ref().map_err(|e| ParseError::Schema {
        code: ErrorCode::SchemaValidation,
        pointer: String::new(),
        message: format!("internal error: the embedded schema does not compile: {e}"),
        version,
    })
}

pub(super) fn code_for_schema_error(pointer: &str, keyword_is_additional: bool) -> ErrorCode {
    let action_field = action_relative(pointer);
    match action_field {
        Some((_, "/kind")) => ErrorCode::UnknownKind,
        Some((_, "")) if keyword_is_additional => ErrorCode::FieldNotAllowed,
        _ => ErrorCode::SchemaValidation,
    }
}

/// Split `/actions/3/kind` (or `/proposed_changes/actions/3/kind`, or `/3/kind` for an array
/// root) into the action index and the rest of the pointer.
fn action_relative(pointer: &str) -> Option<(usize, &str)> {
    let rest = pointer
        .strip_prefix("/proposed_changes/actions/")
        .or_else(|| pointer.strip_prefix("/actions/"))
        .or_else(|| pointer.strip_prefix('/'))?;
    let end = rest.find('/').unwrap_or(rest.len());
    let index = rest[..end].parse().ok()?;
    Some((index, &rest[end..]))
}

pub(super) fn schema_errors(
    version: ProtocolVersion,
    value: &Value,
) -> Result<Vec<(String, String, bool)>, ParseError> {
    let v = validators(version)?;
    let validator = match (value, &v.action_list) {
        (Value::Array(_), Some(list)) => list,
        (Value::Array(_), None) => {
            return Ok(vec![(
                String::new(),
                format!(
                    "protocol {version} needs a JSON object at the root, e.g. {{\"actions\": [...], \"summary\": \"...\"}}, not a bare array"
                ),
                false,
            )]);
        }
        (Value::Object(_), _) => &v.response,
        _ => {
            return Ok(vec![(
                String::new(),
                format!(
                    "expected a JSON object at the root, found {}",
                    json_type(value)
                ),
                false,
            )]);
        }
    };
    Ok(validator
        .iter_errors(value)
        .map(|e| {
            let pointer = e.instance_path().to_string();
            let additional = matches!(
                e.kind(),
                jsonschema::error::ValidationErrorKind::AdditionalProperties { .. }
            );
            let message = match (action_relative(&pointer), e.instance().as_ref()) {
                (Some((_, "/kind")), kind) => unknown_kind_message(kind, version),
                _ => e.to_string(),
            };
            (pointer, message, additional)
        })
        .collect())
}

fn unknown_kind_message(kind: &Value, version: ProtocolVersion) -> String {
    let allowed: Vec<&str> = version.kinds().iter().map(ActionKind::as_str).collect();
    let needs = match kind.as_str().map(ActionKind::parse) {
        Some(k @ ActionKind::EditFile) => format!(" ({k} needs protocol v3)"),
        Some(k @ (ActionKind::PatchFile | ActionKind::ReplaceRange)) => {
            format!(" ({k} needs protocol v2 or v3)")
        }
        _ => String::new(),
    };
    format!(
        "unknown kind {kind} for protocol {version}; use one of {}{needs}",
        allowed.join(", ")
    )
}

pub(super) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(super) fn typed<T: DeserializeOwned>(
    value: Value,
    prefix: &str,
    version: ProtocolVersion,
) -> Result<T, ParseError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let pointer = if path == "." {
            prefix.to_owned()
        } else {
            format!(
                "{prefix}/{}",
                path.replace('.', "/")
                    .replace(['[', ']'], "/")
                    .replace("//", "/")
                    .trim_end_matches('/')
            )
        };
        ParseError::Schema {
            code: ErrorCode::SchemaValidation,
            pointer,
            message: e.into_inner().to_string(),
            version,
        }
    })
}
