//! Recovery: roll back every transaction a crash left uncommitted, discard journals that never
//! became complete; it touches `.papa-yu/tx` and the paths the unfinished journals name.

use serde::Serialize;

use super::format::{TxStatus, read_manifest};
use super::rollback::rollback;
use super::stack::{fold_committed, read_stack, seq_of, tx_ids};
use super::{TX_DIR, tx_path};
use crate::error::StoreError;
use crate::fsx::Root;

/// What recovery (`papayu recover`, or opening a project) did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    /// Transactions found unfinished and rolled back.
    pub rolled_back: Vec<String>,
    /// Journals discarded because they were never complete (nothing had been applied).
    pub discarded: Vec<String>,
}

/// Roll back every uncommitted journal; the caller holds the lock.
pub(crate) fn recover_locked(root: &Root, depth: usize) -> Result<RecoveryReport, StoreError> {
    let mut report = RecoveryReport::default();
    let stack = read_stack(root)?;
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
        match read_manifest(root, &id)? {
            None => {
                root.remove_tree(&tx_path(&id))?;
                report.discarded.push(id);
            }
            Some(m) if m.status == TxStatus::Pending => {
                tracing::warn!(tx = %id, "rolling back an unfinished transaction");
                rollback(root, &m)?;
                report.rolled_back.push(id);
            }
            Some(m) => {
                // A committed journal the stack no longer references is finished garbage.
                if m.seq <= stack.through_seq
                    && !stack.undo.contains(&m.id)
                    && !stack.redo.contains(&m.id)
                {
                    root.remove_tree(&tx_path(&id))?;
                }
            }
        }
    }
    if !report.rolled_back.is_empty() || !report.discarded.is_empty() {
        root.fsync_dir(TX_DIR)?;
    }
    fold_committed(root, depth)?;
    Ok(report)
}
