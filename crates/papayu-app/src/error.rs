//! [`ApiError`]: the one error every command returns, as the UI shows it.

use papayu_agent::AgentError;
use papayu_patch::{ApplyError, HistoryError, OpenError, RecoverError, UndoError};
use papayu_protocol::Violation;
use serde::{Deserialize, Serialize};

/// The app's own error codes (everything else is a papayu [`papayu_protocol::ErrorCode`]).
pub mod codes {
    /// Missing or wrong token, foreign Origin or Host (HTTP transport).
    pub const FORBIDDEN: &str = "ERR_UI_FORBIDDEN";
    /// Malformed arguments, an invalid setting, a job already running.
    pub const BAD_REQUEST: &str = "ERR_UI_BAD_REQUEST";
    /// `job_status` / `cancel_job` for an id that does not exist (or expired).
    pub const UNKNOWN_JOB: &str = "ERR_UI_UNKNOWN_JOB";
    /// `start_apply` for a preview that does not exist (or was evicted).
    pub const UNKNOWN_PREVIEW: &str = "ERR_UI_UNKNOWN_PREVIEW";
    /// A command names a project that was not opened with `open_project`.
    pub const NO_PROJECT: &str = "ERR_UI_NO_PROJECT";
    /// The job was cancelled.
    pub const CANCELLED: &str = "ERR_CANCELLED";
    /// A bug: something that should not fail did.
    pub const INTERNAL: &str = "ERR_INTERNAL";
}

/// One problem of a rejected plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViolationView {
    /// The stable code (`ERR_INVALID_PATH`, …).
    pub code: String,
    /// What is wrong and how to fix it.
    pub message: String,
    /// The action's path, when the problem is about one action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The action's index, when the problem is about one action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_index: Option<usize>,
}

impl From<&Violation> for ViolationView {
    fn from(v: &Violation) -> Self {
        Self {
            code: v.code.as_str().to_owned(),
            message: v.message.clone(),
            path: v.path.clone(),
            action_index: v.action_index,
        }
    }
}

/// Why a command failed: a stable code, an actionable message, and for a rejected plan every
/// violation. This is the wire shape of `docs/UI-API.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// `ERR_…`: a papayu error code or one of [`codes`].
    pub code: String,
    /// What happened and what to do.
    pub message: String,
    /// The violations of a rejected plan (empty otherwise).
    #[serde(default)]
    pub violations: Vec<ViolationView>,
}

impl ApiError {
    /// An error with `code` and `message` and no violations.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            violations: Vec::new(),
        }
    }

    /// [`codes::BAD_REQUEST`].
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(codes::BAD_REQUEST, message)
    }

    /// [`codes::INTERNAL`].
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(codes::INTERNAL, message)
    }

    /// [`codes::CANCELLED`].
    pub fn cancelled() -> Self {
        Self::new(
            codes::CANCELLED,
            "cancelled; nothing was written (an apply in progress was rolled back)",
        )
    }

    /// The HTTP status the browser transport answers with.
    pub fn http_status(&self) -> u16 {
        match self.code.as_str() {
            codes::FORBIDDEN => 403,
            codes::BAD_REQUEST => 400,
            codes::UNKNOWN_JOB | codes::UNKNOWN_PREVIEW | codes::NO_PROJECT => 404,
            codes::INTERNAL => 500,
            _ => 422,
        }
    }
}

/// Drop a leading `ERR_X: ` from a message: the code is a field of its own.
fn strip_code(code: &str, message: String) -> String {
    message
        .strip_prefix(code)
        .and_then(|m| m.strip_prefix(": "))
        .map_or(message.clone(), str::to_owned)
}

impl From<AgentError> for ApiError {
    fn from(e: AgentError) -> Self {
        let code = e.code().as_str();
        let violations = match &e {
            AgentError::Rejected { violations, .. } => {
                violations.iter().map(ViolationView::from).collect()
            }
            _ => Vec::new(),
        };
        Self {
            code: code.to_owned(),
            message: strip_code(code, e.to_string()),
            violations,
        }
    }
}

/// papayu-patch's operation errors: their messages carry no code, the code is a field.
macro_rules! from_patch_errors {
    ($($error:ty),*) => {$(
        impl From<$error> for ApiError {
            fn from(e: $error) -> Self {
                Self::new(e.code().as_str(), e.to_string())
            }
        }
    )*};
}

from_patch_errors!(OpenError, RecoverError, ApplyError, UndoError, HistoryError);

impl From<papayu_agent::ConfigError> for ApiError {
    fn from(e: papayu_agent::ConfigError) -> Self {
        let code = e.code().as_str();
        Self::new(code, strip_code(code, e.to_string()))
    }
}

impl From<papayu_llm::LlmError> for ApiError {
    fn from(e: papayu_llm::LlmError) -> Self {
        let code = e.code().as_str();
        Self::new(code, strip_code(code, e.to_string()))
    }
}

impl From<papayu_fs::FsError> for ApiError {
    fn from(e: papayu_fs::FsError) -> Self {
        Self::new(papayu_protocol::ErrorCode::Io.as_str(), e.to_string())
    }
}
