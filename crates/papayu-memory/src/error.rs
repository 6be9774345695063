//! The crate's single error type.

use camino::Utf8PathBuf;
use papayu_protocol::ErrorCode;

use crate::value::RejectReason;

/// Everything that can go wrong loading, changing or saving the memory files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// Reading or writing a memory file failed.
    #[error("I/O error on memory file {path}")]
    Io {
        /// The file (or temporary file, or directory) the operation was about.
        path: Utf8PathBuf,
        /// The underlying error (from `fs-err`, so it names the path too).
        #[source]
        source: std::io::Error,
    },
    /// A preferences file is not valid JSON.
    #[error("{path}: not valid JSON at line {line}, column {column}: {message}")]
    Malformed {
        /// The file.
        path: Utf8PathBuf,
        /// 1-based line of the syntax error.
        line: usize,
        /// 1-based column of the syntax error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A preferences file is valid JSON but not an object.
    #[error("{path}: the top level must be a JSON object")]
    NotAnObject {
        /// The file.
        path: Utf8PathBuf,
    },
    /// A field of a preferences file has the wrong type or an out-of-range value.
    #[error("{path}: field `{field}`: {reason}")]
    InvalidField {
        /// The file.
        path: Utf8PathBuf,
        /// The field, e.g. `ask_budget` or `log_files.app`.
        field: String,
        /// Why the value was refused.
        reason: RejectReason,
    },
    /// [`Memory::set`](crate::Memory::set) or [`Memory::unset`](crate::Memory::unset) was given
    /// a key that is not settable.
    #[error(
        "unknown memory key `{key}` (settable keys: the memory_patch whitelist and project.log_files.<name>)"
    )]
    UnknownKey {
        /// The key as given.
        key: String,
    },
    /// [`Memory::set`](crate::Memory::set) was given a value the key does not accept.
    #[error("memory key `{key}`: {reason}")]
    InvalidValue {
        /// The key as given.
        key: String,
        /// Why the value was refused.
        reason: RejectReason,
    },
}

impl MemoryError {
    /// The stable error code for this error.
    ///
    /// Every configuration problem (bad file, bad `set` key or value) is
    /// [`ErrorCode::InvalidConfig`]; `memory_patch` rejections are not errors but entries of a
    /// [`PatchReport`](crate::PatchReport), each carrying [`ErrorCode::MemoryPatchRejected`].
    pub fn code(&self) -> ErrorCode {
        match self {
            MemoryError::Io { .. } => ErrorCode::Io,
            MemoryError::Malformed { .. }
            | MemoryError::NotAnObject { .. }
            | MemoryError::InvalidField { .. }
            | MemoryError::UnknownKey { .. }
            | MemoryError::InvalidValue { .. } => ErrorCode::InvalidConfig,
        }
    }
}
