//! Why an answer was refused: the first problem (`ParseError`) or each one (`Violation`).

use crate::error_code::ErrorCode;
use crate::types::ProtocolVersion;

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
    /// The answer is larger than [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES); it was not
    /// parsed.
    #[error("the answer is {bytes} bytes; papayu reads at most {limit}. Send a smaller plan")]
    TooLarge {
        /// Size of the answer.
        bytes: usize,
        /// [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES).
        limit: usize,
    },
    /// The answer holds more than [`MAX_ACTIONS`](super::MAX_ACTIONS) actions; it was not parsed
    /// in full.
    #[error("the answer holds more than {limit} actions. Split the change into smaller plans")]
    TooManyActions {
        /// [`MAX_ACTIONS`](super::MAX_ACTIONS).
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
