//! Recovery: roll back every transaction a crash left uncommitted, discard journals that never
//! became complete, leave alone what this user's papayu did not write; it touches
//! `.papa-yu/tx`, `.papa-yu/conflicts` and the paths the unfinished journals name.
//!
//! Recovery always makes progress: a journal it may not act on, or whose rollback fails
//! (a permission, an I/O error), is reported and kept for the next attempt, and every other
//! journal is still recovered — no leftover blocks the commands that do not touch its paths.

use papayu_protocol::ErrorCode;
use serde::Serialize;

use super::aside::RollbackConflict;
use super::format::{TxStatus, read_committed_tmp, read_manifest};
use super::rollback::rollback;
use super::stack::{Stack, fold_committed, read_stack, seq_of, tx_ids};
use super::trust::JournalKey;
use super::{STACK, TX_DIR, tx_path};
use crate::error::{JournalFault, StoreError};
use crate::fsx::Root;

/// What recovery (`papayu recover`, or opening a project) did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    /// Transactions found unfinished and rolled back.
    pub rolled_back: Vec<String>,
    /// Journals discarded because they were never complete (nothing had been applied).
    pub discarded: Vec<String>,
    /// Paths the rollbacks left as someone else wrote them, with where each original went
    /// (`ERR_ROLLBACK_CONFLICT`).
    pub conflicts: Vec<RollbackConflict>,
    /// Journals papayu did not act on: not provably written by this user's papayu, naming a
    /// path papayu never writes, or unreadable. They were left as they are.
    pub left_alone: Vec<LeftAlone>,
    /// Rollbacks that could not finish (a permission, an I/O error): the rest of each was done,
    /// its journal was kept, and the next `recover` (or any command) tries again.
    pub unfinished: Vec<Unfinished>,
}

/// A journal recovery did not act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LeftAlone {
    /// The journal directory, relative to the project root.
    pub dir: String,
    /// Why, and what to do about it.
    pub reason: String,
}

/// A rollback that did not finish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Unfinished {
    /// The transaction.
    pub tx_id: String,
    /// The code of the step that failed.
    pub code: ErrorCode,
    /// What failed.
    pub error: String,
    /// Every path the transaction touched: new transactions on them are refused until the
    /// rollback finishes.
    #[serde(skip)]
    pub(crate) paths: Vec<String>,
}

impl RecoveryReport {
    /// Whether recovery left the project consistent: every unfinished transaction rolled back
    /// (conflicts and journals left alone do not count: the first are the user's bytes, kept
    /// on purpose, the second are not papayu's).
    pub fn is_complete(&self) -> bool {
        self.unfinished.is_empty()
    }

    /// The unfinished rollback (and its path) that a new transaction touching `path` would run
    /// into, if any.
    pub(crate) fn blocking(&self, path: &str) -> Option<(&Unfinished, &str)> {
        let related = |p: &str| {
            p == path
                || (p.starts_with(path) && p[path.len()..].starts_with('/'))
                || (path.starts_with(p) && path[p.len()..].starts_with('/'))
        };
        self.unfinished
            .iter()
            .find_map(|u| u.paths.iter().find(|p| related(p)).map(|p| (u, p.as_str())))
    }
}

/// Roll back every uncommitted journal; the caller holds the lock. Errors only when the
/// journal directory itself cannot be listed: everything else is in the report.
pub(crate) fn recover_locked(
    root: &Root,
    key: &JournalKey,
    depth: usize,
) -> Result<RecoveryReport, StoreError> {
    let mut report = RecoveryReport::default();
    let stack = readable_stack(root);
    for id in tx_ids(root)? {
        // On a stack means folded, and only committed manifests are folded, after their commit
        // rename is synced; the one way back to pending (a failure right after the commit
        // rename) happens in the committing call, before any fold. So there is no need to read
        // it: with a full undo stack of large transactions, reading every manifest made each
        // open cost tens of milliseconds.
        if seq_of(&id) <= stack.through_seq
            && (stack.undo.contains(&id) || stack.redo.contains(&id))
        {
            continue;
        }
        match read_manifest(root, key, &id) {
            Ok(None) => match root.remove_tree(&tx_path(&id)) {
                Ok(()) => report.discarded.push(id),
                Err(e) => {
                    tracing::warn!(tx = %id, error = %e, "could not discard an incomplete journal")
                }
            },
            Ok(Some(mut m)) if m.status == TxStatus::Pending => {
                tracing::warn!(tx = %id, "rolling back an unfinished transaction");
                // What the run wrote: its committed manifest was durable before its checks ran.
                if let Some(written) = read_committed_tmp(root, key, &id) {
                    for (e, w) in m.entries.iter_mut().zip(&written.entries) {
                        if e.after.is_none() && e.path == w.path {
                            e.after = w.after.clone();
                        }
                    }
                }
                let rolled = rollback(root, &m, None);
                report.conflicts.extend(rolled.conflicts);
                match rolled.failed {
                    None => report.rolled_back.push(id),
                    Some(e) => {
                        tracing::warn!(tx = %id, error = %e, "the rollback did not finish; `papayu recover` will try again");
                        report.unfinished.push(Unfinished {
                            tx_id: id,
                            code: e.code(),
                            error: e.to_string(),
                            paths: m.entries.iter().map(|e| e.path.clone()).collect(),
                        });
                    }
                }
            }
            Ok(Some(m)) => {
                // A committed journal the stack no longer references is finished garbage.
                if m.seq <= stack.through_seq
                    && !stack.undo.contains(&m.id)
                    && !stack.redo.contains(&m.id)
                {
                    let _ = root.remove_tree(&tx_path(&id));
                }
            }
            Err(StoreError::Journal { path, fault }) => {
                let dir = tx_path(&id);
                let reason = match fault {
                    JournalFault::Untrusted => fault.to_string(),
                    other => format!("`{path}`: {other}; it was left alone"),
                };
                tracing::warn!("journal `{dir}`: {reason}");
                report.left_alone.push(LeftAlone { dir, reason });
            }
            Err(e) => {
                tracing::warn!(tx = %id, error = %e, "could not read a journal; `papayu recover` will try again");
                report.unfinished.push(Unfinished {
                    tx_id: id,
                    code: e.code(),
                    error: e.to_string(),
                    paths: Vec::new(),
                });
            }
        }
    }
    if !report.rolled_back.is_empty() || !report.discarded.is_empty() {
        root.fsync_dir(TX_DIR)?;
    }
    // After the commit point a stack update only lags: the next run folds again.
    if let Err(e) = fold_committed(root, key, depth) {
        tracing::warn!(error = %e, "could not update the undo stack; the next papayu run will");
    }
    Ok(report)
}

/// The undo/redo stacks, for recovery: a stack file that cannot be read (a FIFO or garbage put
/// there, torn by hand) is removed — it is derived state — and rebuilt from the committed
/// journals by the fold that follows.
fn readable_stack(root: &Root) -> Stack {
    match read_stack(root) {
        Ok(stack) => stack,
        Err(e) => {
            tracing::warn!(error = %e, "rebuilding the undo stack from the committed journals");
            if let Err(e) = root.remove_tree(STACK) {
                tracing::warn!(error = %e, "could not remove the unreadable undo stack");
            }
            Stack::default()
        }
    }
}
