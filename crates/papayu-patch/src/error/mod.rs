//! The errors of the public operations: one type per operation, each with `.code()` and `.path()`.
//! Types only, no I/O; the lock, file and journal failures they share are [`StoreError`].
//!
//! Messages carry no code: a frontend shows the stable [`ErrorCode`] next to the message itself.

mod store;

use papayu_protocol::{ActionKind, ErrorCode, ProtocolVersion};
use papayu_validate::RelPath;

use crate::checks::CheckReport;
use crate::engine::EngineError;
use crate::journal::{RollbackConflict, Rolled};

pub use store::{EscapeReason, IoOp, JournalFault, StoreError};

/// Why [`crate::Project::open`] failed: it runs recovery first, which needs the project lock.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The project lock, its files or its journal.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl OpenError {
    /// The stable code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            OpenError::Store(e) => e.code(),
        }
    }

    /// The path the error is about, when there is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            OpenError::Store(e) => e.path(),
        }
    }
}

impl From<RecoverError> for OpenError {
    fn from(e: RecoverError) -> Self {
        match e {
            RecoverError::Store(e) => OpenError::Store(e),
        }
    }
}

/// Why [`crate::recover`] (rolling back an unfinished transaction) failed. What could not be
/// rolled back stays journaled for the next attempt.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecoverError {
    /// The project lock, its files or its journal.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl RecoverError {
    /// The stable code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            RecoverError::Store(e) => e.code(),
        }
    }

    /// The path the error is about, when there is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            RecoverError::Store(e) => e.path(),
        }
    }
}

/// Why [`crate::Project::history`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The undo/redo stack or a journal could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl HistoryError {
    /// The stable code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            HistoryError::Store(e) => e.code(),
        }
    }

    /// The path the error is about, when there is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            HistoryError::Store(e) => e.path(),
        }
    }
}

/// Why a preview or an apply failed. Nothing was left half-written: every error after the
/// first disk write has already been rolled back when it is returned.
///
/// [`crate::FileDiff::error`] reports the per-action variants ([`ApplyError::Invalid`],
/// [`ApplyError::Engine`], [`ApplyError::FileExists`], [`ApplyError::UpdateExistingForbidden`]
/// and [`ApplyError::Store`]) for every action of a preview; apply refuses a plan with the first.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// The action failed a check the engine repeats before touching the disk.
    #[error("action {index} (`{path}`): {reason}")]
    Invalid {
        /// The action's index in the plan.
        index: usize,
        /// The action's path.
        path: RelPath,
        /// What is wrong (it decides the code).
        reason: InvalidAction,
    },
    /// A PATCH/EDIT/REPLACE_RANGE/content engine refused the action.
    #[error("action {index} (`{path}`): {source}")]
    Engine {
        /// The action's index in the plan.
        index: usize,
        /// The action's path.
        path: RelPath,
        /// The engine's error (its `code()` is this error's code).
        #[source]
        source: EngineError,
    },
    /// CREATE_FILE on an existing path (v2/v3), or CREATE_DIR/CREATE_FILE where the other
    /// kind of node is.
    #[error("action {index}: `{path}` already exists")]
    FileExists {
        /// The action's index.
        index: usize,
        /// The action's path.
        path: RelPath,
    },
    /// v2: UPDATE_FILE on an existing file.
    #[error("action {index}: `{path}` exists; protocol v2 updates existing files with PATCH_FILE")]
    UpdateExistingForbidden {
        /// The action's index.
        index: usize,
        /// The action's path.
        path: RelPath,
    },
    /// A check command failed (its report: command, status, the tail of its output); the
    /// transaction was rolled back.
    #[error("{}; changes rolled back\n{}", check_line(.0), .0.output)]
    CheckFailed(CheckReport),
    /// The caller set the cancel flag ([`crate::ApplyOptions::cancel_flag`]); the transaction
    /// was rolled back (a running check command was killed).
    #[error("cancelled; changes rolled back, nothing was written")]
    Cancelled,
    /// The project lock, its files or the journal. If it happened while applying, the
    /// transaction was rolled back before this was returned.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The apply failed, and so did a step of the rollback: every other path was rolled back,
    /// the journal was kept and [`crate::recover`] (run by every entry point) will finish it.
    #[error(
        "{error}; rollback incomplete ({rollback}){}; the journal was kept and the next papayu run will finish it",
        conflict_list(conflicts)
    )]
    RollbackFailed {
        /// The original failure.
        error: Box<ApplyError>,
        /// Why the rollback did not finish.
        rollback: StoreError,
        /// Paths the rollback left as someone else wrote them.
        conflicts: Vec<RollbackConflict>,
    },
    /// The apply failed and was rolled back, except where a path held content it did not write
    /// (`ERR_ROLLBACK_CONFLICT`): that content was kept, and each original saved under
    /// `.papa-yu/conflicts/`.
    #[error("rolled back, except{}\n{error}", conflict_list(conflicts))]
    RollbackConflict {
        /// The original failure.
        error: Box<ApplyError>,
        /// The paths kept as someone else wrote them (never empty).
        conflicts: Vec<RollbackConflict>,
    },
}

impl ApplyError {
    /// The stable code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            ApplyError::Invalid { reason, .. } => reason.code(),
            ApplyError::Engine { source, .. } => source.code(),
            ApplyError::FileExists { .. } => ErrorCode::FileExists,
            ApplyError::UpdateExistingForbidden { .. } => ErrorCode::V2UpdateExistingForbidden,
            ApplyError::CheckFailed(_) => ErrorCode::CheckFailed,
            ApplyError::Cancelled => ErrorCode::Cancelled,
            ApplyError::Store(e) => e.code(),
            ApplyError::RollbackFailed { error, .. } => error.code(),
            ApplyError::RollbackConflict { .. } => ErrorCode::RollbackConflict,
        }
    }

    /// The path the error is about, when there is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            ApplyError::Invalid { path, .. }
            | ApplyError::Engine { path, .. }
            | ApplyError::FileExists { path, .. }
            | ApplyError::UpdateExistingForbidden { path, .. } => Some(path.as_str()),
            ApplyError::Store(e) => e.path(),
            ApplyError::RollbackFailed { error, .. } => error.path(),
            ApplyError::RollbackConflict { conflicts, .. } => {
                conflicts.first().map(|c| c.path.as_str())
            }
            ApplyError::CheckFailed(_) | ApplyError::Cancelled => None,
        }
    }
}

/// Why an action fails the checks the engine repeats itself, whatever validation did.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidAction {
    /// The kind is not part of the plan's protocol version (`ERR_UNKNOWN_KIND`).
    #[error("{kind} is not part of protocol {version}")]
    KindNotInProtocol {
        /// The action's kind.
        kind: ActionKind,
        /// The plan's protocol version.
        version: ProtocolVersion,
    },
    /// A kind papayu does not know (`ERR_UNKNOWN_KIND`).
    #[error("unknown action kind `{kind}`")]
    UnknownKind {
        /// The kind as the model wrote it.
        kind: String,
    },
    /// The path is not in canonical form (`ERR_INVALID_PATH`).
    #[error("the path is not in canonical form")]
    NotCanonical,
    /// The path is protected — papayu's state or git's (in any spelling a filesystem reads as
    /// them), a secret — and no plan writes it (`ERR_PROTECTED_PATH`).
    #[error("protected by `{rule}`: no plan writes it")]
    Protected {
        /// The protection rule it falls under.
        rule: String,
    },
    /// A DELETE_DIR would remove a protected file below it (`ERR_PROTECTED_PATH`).
    #[error(
        "DELETE_DIR `{dir}` would delete `{child}`, which is protected (`{rule}`); delete the other files one by one"
    )]
    ProtectedBelow {
        /// The directory being deleted where the file was found.
        dir: String,
        /// The protected file.
        child: String,
        /// The protection rule it falls under.
        rule: String,
    },
}

impl InvalidAction {
    /// The stable code for this reason.
    pub fn code(&self) -> ErrorCode {
        match self {
            InvalidAction::KindNotInProtocol { .. } | InvalidAction::UnknownKind { .. } => {
                ErrorCode::UnknownKind
            }
            InvalidAction::NotCanonical => ErrorCode::InvalidPath,
            InvalidAction::Protected { .. } | InvalidAction::ProtectedBelow { .. } => {
                ErrorCode::ProtectedPath
            }
        }
    }
}

/// Which way [`crate::Project::undo`] / [`crate::Project::redo`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Revert the most recent transaction.
    Undo,
    /// Re-apply the most recently undone one.
    Redo,
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Undo => "undo",
            Direction::Redo => "redo",
        })
    }
}

/// Why an undo or a redo failed. Like an apply, it is a journaled transaction: a failure after
/// its first write has been rolled back when it is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UndoError {
    /// The stack is empty.
    #[error("nothing to {direction}")]
    NothingToUndo {
        /// Undo or redo.
        direction: Direction,
    },
    /// Files changed since the transaction (and `force` was not given).
    #[error("changed since the transaction: {}; pass --force to override (the files' current content is then replaced)", paths.join(", "))]
    Conflict {
        /// The paths whose current state is not the transaction's result, sorted.
        paths: Vec<String>,
    },
    /// A check command failed; the undo/redo was rolled back.
    #[error("{}; changes rolled back\n{}", check_line(.0), .0.output)]
    CheckFailed(CheckReport),
    /// The caller set the cancel flag; the undo/redo was rolled back.
    #[error("cancelled; changes rolled back, nothing was written")]
    Cancelled,
    /// The project lock, its files or the journal.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The undo/redo failed, and so did a step of its rollback: every other path was rolled
    /// back, the journal was kept and [`crate::recover`] will finish it.
    #[error(
        "{error}; rollback incomplete ({rollback}){}; the journal was kept and the next papayu run will finish it",
        conflict_list(conflicts)
    )]
    RollbackFailed {
        /// The original failure.
        error: Box<UndoError>,
        /// Why the rollback did not finish.
        rollback: StoreError,
        /// Paths the rollback left as someone else wrote them.
        conflicts: Vec<RollbackConflict>,
    },
    /// The undo/redo failed and was rolled back, except where a path held content it did not
    /// write (`ERR_ROLLBACK_CONFLICT`): that content was kept, each original saved under
    /// `.papa-yu/conflicts/`.
    #[error("rolled back, except{}\n{error}", conflict_list(conflicts))]
    RollbackConflict {
        /// The original failure.
        error: Box<UndoError>,
        /// The paths kept as someone else wrote them (never empty).
        conflicts: Vec<RollbackConflict>,
    },
}

impl UndoError {
    /// The stable code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            UndoError::NothingToUndo {
                direction: Direction::Undo,
            } => ErrorCode::NothingToUndo,
            UndoError::NothingToUndo {
                direction: Direction::Redo,
            } => ErrorCode::NothingToRedo,
            UndoError::Conflict { .. } => ErrorCode::UndoConflict,
            UndoError::CheckFailed(_) => ErrorCode::CheckFailed,
            UndoError::Cancelled => ErrorCode::Cancelled,
            UndoError::Store(e) => e.code(),
            UndoError::RollbackFailed { error, .. } => error.code(),
            UndoError::RollbackConflict { .. } => ErrorCode::RollbackConflict,
        }
    }

    /// The path the error is about, when there is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            UndoError::Store(e) => e.path(),
            UndoError::RollbackFailed { error, .. } => error.path(),
            UndoError::RollbackConflict { conflicts, .. } => {
                conflicts.first().map(|c| c.path.as_str())
            }
            UndoError::NothingToUndo { .. }
            | UndoError::Conflict { .. }
            | UndoError::CheckFailed(_)
            | UndoError::Cancelled => None,
        }
    }
}

/// ": `a.txt` changed …; `b/` holds …" (empty for none).
fn conflict_list(conflicts: &[RollbackConflict]) -> String {
    conflicts
        .iter()
        .map(|c| format!(": {c}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// "`cargo check` exited with 101": the first line of a failed check's error.
fn check_line(report: &CheckReport) -> String {
    match &report.rejected {
        Some(why) => format!("`{}` {}, and {why}", report.command, report.status),
        None => format!("`{}` {}", report.command, report.status),
    }
}

/// The failures of a journaled run ([`crate::tx`]'s executor), as the error of the operation
/// that started it (an apply, an undo or a redo).
pub(crate) trait RunFailure: From<StoreError> + std::fmt::Display {
    fn check_failed(report: CheckReport) -> Self;
    fn cancelled() -> Self;
    /// This failure, with what its rollback did: an unfinished step or conflicts wrap it.
    fn rolled_back(self, rolled: Rolled) -> Self;
    fn code(&self) -> ErrorCode;

    fn rollback_failed(self, rollback: StoreError) -> Self
    where
        Self: Sized,
    {
        self.rolled_back(Rolled {
            conflicts: Vec::new(),
            failed: Some(rollback),
        })
    }
}

/// The two operations whose errors a journaled run can have.
macro_rules! run_failure {
    ($($error:ident),*) => {$(
        impl RunFailure for $error {
            fn check_failed(report: CheckReport) -> Self {
                $error::CheckFailed(report)
            }

            fn cancelled() -> Self {
                $error::Cancelled
            }

            fn rolled_back(self, rolled: Rolled) -> Self {
                match rolled.failed {
                    Some(rollback) => $error::RollbackFailed {
                        error: Box::new(self),
                        rollback,
                        conflicts: rolled.conflicts,
                    },
                    None if rolled.conflicts.is_empty() => self,
                    None => $error::RollbackConflict {
                        error: Box::new(self),
                        conflicts: rolled.conflicts,
                    },
                }
            }

            fn code(&self) -> ErrorCode {
                $error::code(self)
            }
        }
    )*};
}

run_failure!(ApplyError, UndoError);
