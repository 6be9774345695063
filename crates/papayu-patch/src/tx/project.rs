//! [`Project`]: a project directory and the operations on it — open (with recovery), start a
//! transaction, undo/redo, history; it touches the project only through the journal.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use papayu_validate::ValidatedPlan;

use super::options::{ApplyOptions, DEFAULT_UNDO_DEPTH};
use super::report::{ApplyReport, History, HistoryEntry};
use super::revert;
use super::transaction::Transaction;
use crate::error::{Direction, HistoryError, OpenError, RecoverError, StoreError, UndoError};
use crate::fsx::Root;
use crate::journal::{self, JournalKey, RecoveryReport};
use crate::lock;

/// A project directory papayu applies transactions to.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    undo_depth: usize,
    key: Arc<JournalKey>,
}

/// Roll back any unfinished transaction in the project at `root` (SPEC §5.2 step 7), with the
/// process's journal key (see [`crate::use_journal_key_file`]).
///
/// Recovery always makes progress and never acts on what it cannot prove is its own: a journal
/// not written by this user's papayu is left alone, a path holding content the transaction did
/// not write is kept (its original set aside), a rollback step that fails is retried next
/// time — each reported in the [`RecoveryReport`], while everything else is recovered.
///
/// # Errors
///
/// [`RecoverError`] when the project is locked by another papayu, or its lock or journal
/// directory cannot be opened.
pub fn recover(root: impl AsRef<Path>) -> Result<RecoveryReport, RecoverError> {
    recover_with_key(root, &journal::default_key())
}

/// [`recover`] with an explicit journal key.
///
/// # Errors
///
/// As [`recover`].
pub fn recover_with_key(
    root: impl AsRef<Path>,
    key: &JournalKey,
) -> Result<RecoveryReport, RecoverError> {
    let r = Root::open(root.as_ref())?;
    let _lock = lock::acquire(&r)?;
    Ok(journal::recover_locked(&r, key, DEFAULT_UNDO_DEPTH)?)
}

/// Test seam: [`recover`] with the rollbacks' I/O failing as `fault` says (`fault-injection`
/// feature only).
///
/// # Errors
///
/// As [`recover`].
#[cfg(any(test, feature = "fault-injection"))]
#[doc(hidden)]
pub fn recover_injecting(
    root: impl AsRef<Path>,
    fault: crate::fault::RollbackFault,
) -> Result<RecoveryReport, RecoverError> {
    let r = Root::open(root.as_ref())?;
    let _lock = lock::acquire(&r)?;
    r.faults.set(None, Some(fault));
    r.faults.arm(crate::fault::Phase::Rollback);
    let report = journal::recover_locked(&r, &journal::default_key(), DEFAULT_UNDO_DEPTH);
    r.faults.arm(crate::fault::Phase::Off);
    Ok(report?)
}

impl Project {
    /// Open a project, first rolling back any unfinished transaction (every entry point does),
    /// with the process's journal key (see [`crate::use_journal_key_file`]).
    ///
    /// # Errors
    ///
    /// [`OpenError`] when recovery fails (see [`recover`]).
    pub fn open(root: impl AsRef<Path>) -> Result<Project, OpenError> {
        Self::open_with_key(root, journal::default_key())
    }

    /// [`Project::open`] with an explicit journal key: the journals this project writes are
    /// sealed with it, and only those it proves are recovered, undone or redone.
    ///
    /// # Errors
    ///
    /// As [`Project::open`].
    pub fn open_with_key(
        root: impl AsRef<Path>,
        key: impl Into<Arc<JournalKey>>,
    ) -> Result<Project, OpenError> {
        let root = root.as_ref().to_path_buf();
        let key = key.into();
        recover_with_key(&root, &key)?;
        Ok(Project {
            root,
            undo_depth: DEFAULT_UNDO_DEPTH,
            key,
        })
    }

    /// A project to preview plans and read the history of, creating nothing: without a
    /// `.papa-yu/` no transaction can be unfinished, so nothing is locked, recovered or written
    /// (read-only commands leave no state behind); with one, as [`Project::open`].
    ///
    /// # Errors
    ///
    /// As [`Project::open`].
    pub fn inspect(root: impl AsRef<Path>) -> Result<Project, OpenError> {
        let root = root.as_ref().to_path_buf();
        if root.join(".papa-yu").is_dir() {
            return Project::open(root);
        }
        Ok(Project {
            root,
            undo_depth: DEFAULT_UNDO_DEPTH,
            key: journal::default_key(),
        })
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Roll back any unfinished transaction now.
    ///
    /// # Errors
    ///
    /// As [`recover`].
    pub fn recover(&self) -> Result<RecoveryReport, RecoverError> {
        recover_with_key(&self.root, &self.key)
    }

    /// The key this project's journals are sealed with.
    pub(super) fn key(&self) -> &JournalKey {
        &self.key
    }

    /// Start a transaction for `plan` (nothing happens until [`Transaction::preview`] or
    /// [`Transaction::apply`]).
    pub fn transaction<'p>(&'p self, plan: &'p ValidatedPlan) -> Transaction<'p> {
        Transaction::new(self, plan.version(), plan.actions(), self.default_options())
    }

    /// Undo the most recent transaction. Refused with `ERR_UNDO_CONFLICT` when any path it
    /// touched no longer holds its result, unless `force`.
    ///
    /// # Errors
    ///
    /// [`UndoError`]: nothing to undo, a conflict, or the failures of a transaction.
    pub fn undo(&self, force: bool) -> Result<ApplyReport, UndoError> {
        self.undo_with(force, self.default_options())
    }

    /// Redo the most recently undone transaction (same conflict rule as [`Project::undo`]).
    ///
    /// # Errors
    ///
    /// As [`Project::undo`].
    pub fn redo(&self, force: bool) -> Result<ApplyReport, UndoError> {
        self.redo_with(force, self.default_options())
    }

    /// [`Project::undo`] / [`Project::redo`] with options (checks, progress, …).
    ///
    /// # Errors
    ///
    /// As [`Project::undo`].
    pub fn undo_with(
        &self,
        force: bool,
        options: ApplyOptions<'_>,
    ) -> Result<ApplyReport, UndoError> {
        revert::revert(self, Direction::Undo, force, options)
    }

    /// [`Project::redo`] with options.
    ///
    /// # Errors
    ///
    /// As [`Project::undo`].
    pub fn redo_with(
        &self,
        force: bool,
        options: ApplyOptions<'_>,
    ) -> Result<ApplyReport, UndoError> {
        revert::revert(self, Direction::Redo, force, options)
    }

    /// The undo and redo stacks.
    ///
    /// # Errors
    ///
    /// [`HistoryError`] when the stack or a journal cannot be read.
    pub fn history(&self) -> Result<History, HistoryError> {
        let root = Root::open(&self.root)?;
        let stack = journal::read_stack(&root)?;
        let entries = |ids: &[String]| -> Result<Vec<HistoryEntry>, StoreError> {
            let mut out = Vec::new();
            for id in ids.iter().rev() {
                out.extend(history_entry(&root, &self.key, id)?);
            }
            Ok(out)
        };
        Ok(History {
            undo: entries(&stack.undo)?,
            redo: entries(&stack.redo)?,
        })
    }

    fn default_options<'a>(&self) -> ApplyOptions<'a> {
        ApplyOptions::default().undo_depth(self.undo_depth)
    }
}

/// The history entry of transaction `id`, if its journal is still there.
fn history_entry(
    root: &Root,
    key: &JournalKey,
    id: &str,
) -> Result<Option<HistoryEntry>, StoreError> {
    let Some(m) = journal::read_manifest(root, key, id)? else {
        return Ok(None);
    };
    let actions = match (&m.reverts, m.actions.is_empty()) {
        (Some(_), true) => Vec::new(),
        _ => m.actions.clone(),
    };
    Ok(Some(HistoryEntry {
        tx_id: m.id.clone(),
        kind: m.kind,
        created_unix_ms: m.created_unix_ms,
        actions,
        paths: m.entries.iter().map(|e| e.path.clone()).collect(),
    }))
}
