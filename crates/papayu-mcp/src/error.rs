//! The crate's errors: opening the project a server serves, and running the server. What goes
//! wrong inside one tool call is never one of these: it is the call's answer (a JSON-RPC error
//! or a rejection carrying its code).

use camino::Utf8PathBuf;
use papayu_protocol::ErrorCode;

/// Why [`PapayuMcp::new`](crate::PapayuMcp::new) could not open the project.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The root is missing, not a directory, or not UTF-8.
    #[error(transparent)]
    Root(#[from] papayu_context::ContextError),
    /// Recovery of an unfinished transaction failed, or the project is locked.
    #[error(transparent)]
    Recover(#[from] papayu_patch::OpenError),
    /// `.papa-yu/policy.json` cannot be read or is invalid.
    #[error("{path}: {message}")]
    Policy {
        /// The policy file.
        path: Utf8PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The server reads plans under protocol 2 or 3 only (v1 updates files without a base
    /// hash).
    #[error("papayu mcp reads plans under protocol 2 or 3, not {version}")]
    Protocol {
        /// The version asked for.
        version: u8,
    },
}

impl OpenError {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            OpenError::Root(e) => e.code(),
            OpenError::Recover(e) => e.code(),
            OpenError::Policy { .. } | OpenError::Protocol { .. } => ErrorCode::InvalidConfig,
        }
    }
}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client never completed the `initialize` handshake (or the transport failed before).
    #[error("the MCP session could not start: {0}")]
    Initialize(String),
    /// The session's task failed.
    #[error("the MCP session ended abnormally: {0}")]
    Session(String),
}
