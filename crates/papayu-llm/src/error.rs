//! The one error type of this crate.

use std::time::Duration;

use papayu_protocol::{ErrorCode, Violation};

/// Why a call to a language model failed.
///
/// Every variant maps to a stable [`ErrorCode`] through [`LlmError::code`]. Bodies quoted from a
/// provider are passed through [`crate::redact`] and shortened before they are stored here, so an
/// error can be logged or shown as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The configuration is incomplete or invalid (unknown provider kind, bad URL, no model).
    #[error("invalid LLM configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// The provider did not answer within the timeout.
    #[error("{url}: no complete answer within {}s", .after.as_secs_f64())]
    Timeout {
        /// The endpoint.
        url: String,
        /// The timeout that expired.
        after: Duration,
    },
    /// A streamed answer stopped: no new token within the silence limit. The connection was
    /// closed, so the server stops generating.
    #[error("{url}: no new token for {}s after {received} characters", .silent_for.as_secs_f64())]
    Stalled {
        /// The endpoint.
        url: String,
        /// The silence limit that expired.
        silent_for: Duration,
        /// Characters of the answer received before the silence.
        received: usize,
    },
    /// The provider could not be reached (connection refused, DNS, TLS, reset).
    #[error("{url}: network error: {message}")]
    Network {
        /// The endpoint.
        url: String,
        /// The transport's message.
        message: String,
    },
    /// The provider answered with an HTTP error status (a 404 says what was requested and, for
    /// an OpenAI-style path without `/v1`, suggests it).
    #[error("{url}: HTTP {status}: {body}{}", not_found_hint(*.status, .url))]
    Http {
        /// The endpoint.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The response body, redacted and shortened.
        body: String,
    },
    /// The provider answered 2xx but not with the envelope its API promises.
    #[error("{url}: unexpected response: {message}")]
    BadResponse {
        /// The endpoint.
        url: String,
        /// What was expected and what came.
        message: String,
    },
    /// The provider's answer grew past the size cap ([`crate::ChatRequest::max_answer_bytes`]);
    /// papayu stopped reading and dropped the connection.
    #[error("{url}: the answer is larger than {limit} bytes; papayu stopped reading it")]
    AnswerTooLarge {
        /// The endpoint.
        url: String,
        /// The cap, in bytes.
        limit: usize,
    },
    /// The answer (after the repair round, if any) still breaks the protocol or the caller's
    /// validation rules.
    #[error("the answer was rejected: {}", papayu_protocol::join_violations(.violations))]
    InvalidAnswer {
        /// Every violation found, in order; the first one's code is [`LlmError::code`].
        violations: Vec<Violation>,
    },
    /// The local provider's model file does not exist.
    #[error(
        "model file {path} not found (`papayu model fetch` downloads the default model; or set PAPAYU_LOCAL_MODEL / --model-path to a GGUF file)"
    )]
    ModelNotFound {
        /// The path that was looked for.
        path: String,
    },
    /// The local provider's model file is not a usable GGUF model.
    #[error("model file {path} is not a usable GGUF model: {message}")]
    ModelInvalid {
        /// The model file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The in-process model failed while answering (prompt longer than its context, a decode
    /// error).
    #[error("local model {model}: {message}")]
    Inference {
        /// The model file name.
        model: String,
        /// What went wrong.
        message: String,
    },
    /// Multi-provider: no provider produced a valid plan.
    #[error("none of the {} providers produced a valid plan: {}", .failures.len(), .failures.join("; "))]
    NoValidCandidate {
        /// The code of the first provider's failure.
        first_code: ErrorCode,
        /// One line per provider.
        failures: Vec<String>,
    },
}

/// For a 404: what was requested, and the `/v1` most OpenAI-compatible servers need.
fn not_found_hint(status: u16, url: &str) -> String {
    if status != 404 {
        return String::new();
    }
    let mut hint = format!(" (papayu sent POST {url}; the server has no such path");
    if let Some(base) = url.strip_suffix("/chat/completions")
        && !base.ends_with("/v1")
    {
        hint.push_str(&format!(
            "; OpenAI-compatible servers serve it under /v1: set the API URL to {base}/v1"
        ));
    }
    hint.push(')');
    hint
}

impl LlmError {
    /// The stable error code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Config { .. } => ErrorCode::LlmConfig,
            Self::Timeout { .. } | Self::Stalled { .. } => ErrorCode::LlmTimeout,
            Self::Network { .. } => ErrorCode::LlmNetwork,
            Self::Http { .. } => ErrorCode::LlmHttp,
            Self::BadResponse { .. } | Self::Inference { .. } => ErrorCode::LlmBadResponse,
            Self::AnswerTooLarge { .. } => ErrorCode::ContentTooLarge,
            Self::ModelNotFound { .. } => ErrorCode::ModelNotFound,
            Self::ModelInvalid { .. } => ErrorCode::ModelInvalid,
            Self::InvalidAnswer { violations } => violations
                .first()
                .map_or(ErrorCode::SchemaValidation, |v| v.code),
            Self::NoValidCandidate { first_code, .. } => *first_code,
        }
    }

    /// The HTTP status, for [`LlmError::Http`].
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::Config {
            message: message.into(),
        }
    }
}
