//! The transaction's error type.

use papayu_protocol::ErrorCode;

use crate::engine::EngineError;
use crate::fsx::FsError;

/// Why a preview, apply, undo, redo or recovery failed. Nothing was left half-written: every
/// error after the first disk write has already been rolled back when it is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PatchError {
    /// Another papayu process holds the project lock.
    #[error("ERR_LOCKED: another papayu (pid {pid}) is working on this project ({lock})")]
    Locked {
        /// The holder's pid.
        pid: u32,
        /// The lock file.
        lock: String,
    },
    /// A write would go through a symlink or leave the project root.
    #[error("ERR_PATH_ESCAPES_ROOT: `{path}` {reason}")]
    PathEscapesRoot {
        /// The offending path (relative to the root).
        path: String,
        /// Why.
        reason: String,
    },
    /// The plan failed the checks the engine repeats before touching the disk.
    #[error("{code}: action {index} (`{path}`): {message}")]
    Invalid {
        /// The stable code.
        code: ErrorCode,
        /// The action's index in the plan.
        index: usize,
        /// The action's path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A PATCH/EDIT/REPLACE_RANGE/content engine refused an action.
    #[error("action {index} (`{path}`): {source}")]
    Engine {
        /// The action's index in the plan.
        index: usize,
        /// The action's path.
        path: String,
        /// The engine's error (its `code()` is this error's code).
        #[source]
        source: EngineError,
    },
    /// CREATE_FILE on an existing path (v2/v3).
    #[error("ERR_FILE_EXISTS: action {index}: `{path}` already exists")]
    FileExists {
        /// The action's index.
        index: usize,
        /// The path.
        path: String,
    },
    /// v2: UPDATE_FILE on an existing file.
    #[error(
        "ERR_V2_UPDATE_EXISTING_FORBIDDEN: action {index}: `{path}` exists; protocol v2 updates existing files with PATCH_FILE"
    )]
    UpdateExistingForbidden {
        /// The action's index.
        index: usize,
        /// The path.
        path: String,
    },
    /// A check command failed; the transaction was rolled back.
    #[error("ERR_CHECK_FAILED: `{command}` {status}; changes rolled back\n{output}")]
    CheckFailed {
        /// The command line.
        command: String,
        /// "exited with 1", "timed out after 120 s", …
        status: String,
        /// The tail of its combined stdout/stderr (UTF-8, lossy).
        output: String,
    },
    /// The caller set the cancel flag ([`crate::ApplyOptions::cancel_flag`]); the transaction
    /// was rolled back (a running check command was killed).
    #[error("ERR_CANCELLED: cancelled; changes rolled back, nothing was written")]
    Cancelled,
    /// Undo/redo found files changed since the transaction.
    #[error("ERR_UNDO_CONFLICT: changed since the transaction: {}; use force to override", paths.join(", "))]
    UndoConflict {
        /// The paths whose current state is not the transaction's result.
        paths: Vec<String>,
    },
    /// Nothing to undo (or redo).
    #[error("ERR_NOTHING_TO_UNDO: nothing to {what}")]
    NothingToUndo {
        /// "undo" or "redo".
        what: &'static str,
    },
    /// A filesystem operation failed. If it happened while applying, the transaction was
    /// rolled back before this was returned.
    #[error("ERR_IO: {op} `{path}`: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The path (relative to the root, or the root itself).
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A journal under `.papa-yu/tx/` is unreadable or does not verify; it was left in place.
    #[error("ERR_IO: journal `{path}`: {message}")]
    Journal {
        /// The journal file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The operation failed, and so did the rollback: the journal was kept and
    /// [`crate::recover`] (run by every entry point) will finish the rollback.
    #[error(
        "{error}; rollback incomplete ({rollback}); the journal was kept and the next papayu run will finish it"
    )]
    RollbackFailed {
        /// The original failure.
        error: Box<PatchError>,
        /// Why the rollback did not finish.
        rollback: Box<PatchError>,
    },
}

impl PatchError {
    /// The stable code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            PatchError::Locked { .. } => ErrorCode::Locked,
            PatchError::PathEscapesRoot { .. } => ErrorCode::PathEscapesRoot,
            PatchError::Invalid { code, .. } => *code,
            PatchError::Engine { source, .. } => source.code(),
            PatchError::FileExists { .. } => ErrorCode::FileExists,
            PatchError::UpdateExistingForbidden { .. } => ErrorCode::V2UpdateExistingForbidden,
            PatchError::CheckFailed { .. } => ErrorCode::CheckFailed,
            PatchError::Cancelled => ErrorCode::Cancelled,
            PatchError::UndoConflict { .. } => ErrorCode::UndoConflict,
            PatchError::NothingToUndo { .. } => ErrorCode::NothingToUndo,
            PatchError::Io { .. } | PatchError::Journal { .. } => ErrorCode::Io,
            PatchError::RollbackFailed { error, .. } => error.code(),
        }
    }

    /// The path the error is about, when there is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            PatchError::PathEscapesRoot { path, .. }
            | PatchError::Invalid { path, .. }
            | PatchError::Engine { path, .. }
            | PatchError::FileExists { path, .. }
            | PatchError::UpdateExistingForbidden { path, .. }
            | PatchError::Io { path, .. }
            | PatchError::Journal { path, .. } => Some(path),
            PatchError::RollbackFailed { error, .. } => error.path(),
            _ => None,
        }
    }
}

impl From<FsError> for PatchError {
    fn from(e: FsError) -> Self {
        match e {
            FsError::Escape { path, reason } => PatchError::PathEscapesRoot { path, reason },
            FsError::Io { op, path, source } => PatchError::Io { op, path, source },
        }
    }
}
