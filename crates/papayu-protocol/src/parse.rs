//! Turning a model's answer into typed data (SPEC §3.3).

mod extract;

use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error_code::ErrorCode;
use crate::schema::{SchemaVariant, schema_value};
use crate::types::{Action, ActionKind, ProtocolVersion, Response};

pub use extract::{MAX_ACTIONS, MAX_ANSWER_BYTES};

/// Why an answer could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The answer holds no JSON at all (empty, or prose only).
    #[error("the answer contains no JSON value (expected one JSON object{})", if *.array_allowed { " or array" } else { "" })]
    NoJson {
        /// Whether the version would also accept an array.
        array_allowed: bool,
    },
    /// The extracted text is not valid JSON.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line within the extracted JSON text.
        line: usize,
        /// 1-based column within that line.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// The JSON does not match the schema of the effective protocol version.
    #[error("{code} at {}: {message} (protocol {version})", display_pointer(.pointer))]
    Schema {
        /// `ERR_SCHEMA_VALIDATION`, or a more precise code (`ERR_UNKNOWN_KIND`,
        /// `ERR_FIELD_NOT_ALLOWED`).
        code: ErrorCode,
        /// JSON pointer of the failing field (`""` for the root).
        pointer: String,
        /// What is wrong, in words a model can act on.
        message: String,
        /// The effective protocol version.
        version: ProtocolVersion,
    },
    /// The answer is larger than [`MAX_ANSWER_BYTES`]; it was not parsed.
    #[error("the answer is {bytes} bytes; papayu reads at most {limit}. Send a smaller plan")]
    TooLarge {
        /// Size of the answer.
        bytes: usize,
        /// [`MAX_ANSWER_BYTES`].
        limit: usize,
    },
    /// The answer holds more than [`MAX_ACTIONS`] actions; it was not parsed in full.
    #[error("the answer holds more than {limit} actions. Split the change into smaller plans")]
    TooManyActions {
        /// [`MAX_ACTIONS`].
        limit: usize,
    },
}

impl ParseError {
    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NoJson { .. } | Self::Json { .. } => ErrorCode::JsonParse,
            Self::Schema { code, .. } => *code,
            Self::TooLarge { .. } => ErrorCode::ContentTooLarge,
            Self::TooManyActions { .. } => ErrorCode::TooManyActions,
        }
    }

    /// What is wrong, without the code and pointer (those are separate fields of a [`Violation`]).
    pub fn message(&self) -> String {
        match self {
            Self::Schema { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    /// The JSON pointer of the failing field, for schema errors.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            Self::Schema { pointer, .. } => Some(pointer),
            _ => None,
        }
    }
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}

/// One problem found in an answer: what `papayu validate` and repair prompts list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Violation {
    /// The stable code.
    pub code: ErrorCode,
    /// Index of the offending action in the effective action list, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_index: Option<usize>,
    /// The offending action's path as written by the model, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// JSON pointer of the offending field, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Violation {
    /// A violation not tied to an action.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            action_index: None,
            path: None,
            pointer: None,
            message: message.into(),
        }
    }

    /// Attach the action index and path.
    pub fn at_action(mut self, index: usize, path: impl Into<String>) -> Self {
        self.action_index = Some(index);
        self.path = Some(path.into());
        self
    }

    /// Attach a JSON pointer.
    pub fn with_pointer(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }
}

/// Violations rendered on one line, `; `-separated (for error messages).
pub fn join_violations(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.code)?;
        if let Some(i) = self.action_index {
            write!(f, " [action {i}")?;
            if let Some(p) = self.path.as_deref().filter(|p| !p.is_empty()) {
                write!(f, " {p:?}")?;
            }
            write!(f, "]")?;
        }
        if let Some(p) = &self.pointer {
            write!(f, " at {}", display_pointer(p))?;
        }
        write!(f, ": {}", self.message)
    }
}

impl From<&ParseError> for Violation {
    fn from(e: &ParseError) -> Self {
        let v = Violation::new(e.code(), e.message());
        match e.pointer() {
            Some(p) => v.with_pointer(p),
            None => v,
        }
    }
}

/// Find the JSON text in a model answer (SPEC §3.3 step 1).
///
/// Order: the whole trimmed text when it is JSON; else the first fenced block
/// (```` ```json ```` or ```` ``` ````); else the first balanced JSON value in the prose.
/// Returns the candidate that parses, or the error of the most likely candidate.
///
/// Linear in the length of `text` whatever it holds. An answer over [`MAX_ANSWER_BYTES`], or
/// whose JSON holds more than [`MAX_ACTIONS`] actions, is refused (`ERR_CONTENT_TOO_LARGE`,
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

fn code_for_schema_error(pointer: &str, keyword_is_additional: bool) -> ErrorCode {
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

fn schema_errors(
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

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn typed<T: DeserializeOwned>(
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
