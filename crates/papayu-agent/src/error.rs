//! The one error type of the agent.

use camino::Utf8PathBuf;
use papayu_context::ContextError;
use papayu_llm::LlmError;
use papayu_memory::MemoryError;
use papayu_patch::{ApplyError, HistoryError, OpenError, UndoError};
use papayu_protocol::{ErrorCode, Violation};

use crate::agent::Stage;
use crate::config::ConfigError;

/// Why an agent operation failed. Every variant maps to a stable [`ErrorCode`] through
/// [`AgentError::code`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The model could not be asked (transport, HTTP, timeout, configuration).
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The model's answer was rejected after the repair round and any protocol fallback.
    #[error("the plan was rejected at the {stage} stage: {}", papayu_protocol::join_violations(.violations))]
    Rejected {
        /// Where the last rejection happened.
        stage: Stage,
        /// Every violation of the last answer; the first one's code is [`AgentError::code`].
        violations: Vec<Violation>,
    },
    /// The project could not be opened for transactions (its recovery failed).
    #[error(transparent)]
    Open(#[from] OpenError),
    /// A preview or an apply failed (nothing was left half-written).
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// An undo or a redo failed (nothing was left half-written).
    #[error(transparent)]
    Undo(#[from] UndoError),
    /// The undo/redo history could not be read.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// The project could not be opened for context gathering.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// The preferences could not be read or written.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// `apply` was asked for, but no plan is saved in `.papa-yu/state.json`.
    #[error("ERR_NO_SAVED_PLAN: there is no saved plan to apply; run `papayu plan <goal>` first")]
    NoSavedPlan,
    /// The selection contains DELETE actions and the caller did not confirm them.
    #[error("ERR_CANCELLED: deleting {} needs explicit confirmation", .paths.join(", "))]
    DeleteNotConfirmed {
        /// The paths the DELETE actions would remove.
        paths: Vec<String>,
    },
    /// The selection names an action index the plan does not have.
    #[error("ERR_INVALID_CONFIG: action index {index} is not in the plan (it has {len} actions)")]
    InvalidSelection {
        /// The offending index.
        index: usize,
        /// Number of actions in the plan.
        len: usize,
    },
    /// A file of papayu's own state (`state.json`, a trace, a golden trace) is unreadable.
    #[error("ERR_IO: `{path}`: {message}")]
    State {
        /// The file.
        path: Utf8PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A filesystem operation on papayu's own files failed.
    #[error("ERR_IO: `{path}`: {source}")]
    Io {
        /// The path.
        path: Utf8PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A golden trace did not replay to its recorded outcome.
    #[error("golden trace `{name}` does not replay: {message}")]
    GoldenMismatch {
        /// The golden trace's name.
        name: String,
        /// What differs.
        message: String,
    },
}

impl AgentError {
    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Config(_) | Self::InvalidSelection { .. } => ErrorCode::InvalidConfig,
            Self::Llm(e) => e.code(),
            Self::Rejected { violations, .. } => violations
                .first()
                .map_or(ErrorCode::SchemaValidation, |v| v.code),
            Self::Open(e) => e.code(),
            Self::Apply(e) => e.code(),
            Self::Undo(e) => e.code(),
            Self::History(e) => e.code(),
            Self::Context(e) => e.code(),
            Self::Memory(e) => e.code(),
            Self::NoSavedPlan => ErrorCode::NoSavedPlan,
            Self::DeleteNotConfirmed { .. } => ErrorCode::Cancelled,
            Self::State { .. } | Self::Io { .. } | Self::GoldenMismatch { .. } => ErrorCode::Io,
        }
    }

    pub(crate) fn io(path: impl Into<Utf8PathBuf>) -> impl FnOnce(std::io::Error) -> AgentError {
        let path = path.into();
        move |source| AgentError::Io { path, source }
    }
}
