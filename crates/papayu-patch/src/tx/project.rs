//! [`Project`]: a project directory and the operations on it — open (with recovery), start a
//! transaction, undo/redo, history; it touches the project only through the journal.

use std::path::{Path, PathBuf};

use papayu_validate::ValidatedPlan;

use super::options::{ApplyOptions, DEFAULT_UNDO_DEPTH};
use super::report::{ApplyReport, History, HistoryEntry};
use super::revert;
use super::transaction::Transaction;
use crate::error::{Direction, HistoryError, OpenError, RecoverError, StoreError, UndoError};
use crate::fsx::Root;
use crate::journal::{self, RecoveryReport};
use crate::lock;

/// A project directory papayu applies transactions to.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    undo_depth: usize,
}

/// Roll back any unfinished transaction in the project at `root` (SPEC §5.2 step 7).
///
/// # Errors
///
/// [`RecoverError`] when the project is locked by another papayu, or a journal or file cannot
/// be read or restored (what could not be rolled back stays journaled).
pub fn recover(root: impl AsRef<Path>) -> Result<RecoveryReport, RecoverError> {
    let r = Root::open(root.as_ref())?;
    let _lock = lock::acquire(&r)?;
    Ok(journal::recover_locked(&r, DEFAULT_UNDO_DEPTH)?)
}

impl Project {
    /// Open a project, first rolling back any unfinished transaction (every entry point does).
    ///
    /// # Errors
    ///
    /// [`OpenError`] when recovery fails (see [`recover`]).
    pub fn open(root: impl AsRef<Path>) -> Result<Project, OpenError> {
        let root = root.as_ref().to_path_buf();
        recover(&root)?;
        Ok(Project {
            root,
            undo_depth: DEFAULT_UNDO_DEPTH,
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
        recover(&self.root)
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
        revert::revert(&self.root, Direction::Undo, force, options)
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
        revert::revert(&self.root, Direction::Redo, force, options)
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
                out.extend(history_entry(&root, id)?);
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
fn history_entry(root: &Root, id: &str) -> Result<Option<HistoryEntry>, StoreError> {
    let Some(m) = journal::read_manifest(root, id)? else {
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
