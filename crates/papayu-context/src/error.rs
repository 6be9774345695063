//! The crate's error type.
//!
//! Almost nothing the model asks for is an error: a refused, missing or binary file becomes a
//! note inside its block, so the model learns why. Errors are reserved for the caller's own
//! inputs — a project root that cannot be opened.

use camino::Utf8PathBuf;
use papayu_protocol::ErrorCode;

/// What can go wrong opening a project for context gathering.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// The project root could not be resolved (missing, unreadable).
    #[error("cannot open the project root `{path}`: {source}")]
    Root {
        /// The root as given.
        path: Utf8PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The project root is not a directory.
    #[error("the project root `{path}` is not a directory")]
    RootNotDirectory {
        /// The root as given.
        path: Utf8PathBuf,
    },
    /// The canonical project root is not valid UTF-8.
    #[error("the project root `{path}` resolves to a path that is not UTF-8")]
    RootNotUtf8 {
        /// The root as given.
        path: Utf8PathBuf,
    },
}

impl ContextError {
    /// The stable code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            ContextError::Root { .. } => ErrorCode::Io,
            ContextError::RootNotDirectory { .. } | ContextError::RootNotUtf8 { .. } => {
                ErrorCode::InvalidPath
            }
        }
    }
}
