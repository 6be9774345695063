//! The undo/redo stacks (`.papa-yu/tx/stack.json`), derived from the committed manifests; it
//! touches only `.papa-yu/tx`.

use serde::{Deserialize, Serialize};

use super::format::{TxKind, TxStatus, read_manifest};
use super::trust::JournalKey;
use super::{STACK, TX_DIR, tx_path};
use crate::error::{JournalFault, StoreError};
use crate::fsx::{Node, Root};

/// The undo/redo stacks (`.papa-yu/tx/stack.json`). Derived state: committed manifests with a
/// `seq` above `through_seq` are folded in by [`fold_committed`], so a crash between a commit
/// and the stack update loses nothing.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Stack {
    pub(crate) through_seq: u64,
    pub(crate) undo: Vec<String>,
    pub(crate) redo: Vec<String>,
}

pub(crate) fn read_stack(root: &Root) -> Result<Stack, StoreError> {
    match root.read(STACK) {
        Ok(b) => serde_json::from_slice(&b)
            .map_err(|e| StoreError::journal(STACK, JournalFault::UnreadableStack(e))),
        Err(e) if e.is_not_found() => Ok(Stack::default()),
        Err(e) => Err(e),
    }
}

/// Replace `stack.json` atomically. Its bytes are always synced before the rename (a torn stack
/// would make the project unreadable); the rename itself is synced only with `sync_rename`.
fn write_stack(root: &Root, s: &Stack, sync_rename: bool) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(s)
        .map_err(|e| StoreError::journal(STACK, JournalFault::EncodeStack(e)))?;
    root.write_atomic_with(STACK, ".stack.json.tmp", &bytes, None, sync_rename)
}

/// Journal directory names (transaction ids), sorted (ids start with a zero-padded seq).
pub(crate) fn tx_ids(root: &Root) -> Result<Vec<String>, StoreError> {
    match root.node(TX_DIR)? {
        Node::Dir { .. } => {}
        _ => return Ok(Vec::new()),
    }
    Ok(root
        .list(TX_DIR)?
        .into_iter()
        .filter(|n| {
            n.split('-')
                .next()
                .is_some_and(|s| s.parse::<u64>().is_ok())
        })
        .collect())
}

pub(crate) fn seq_of(id: &str) -> u64 {
    id.split('-')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Fold every committed, not yet folded transaction into the stacks; prune to `depth`. Only
/// journals this user's papayu provably wrote are folded: a committed manifest that came with
/// a repository never becomes something `undo` replays.
pub(crate) fn fold_committed(
    root: &Root,
    key: &JournalKey,
    depth: usize,
) -> Result<Stack, StoreError> {
    let mut stack = read_stack(root)?;
    let mut changed = false;
    let mut drop_dirs = Vec::new();
    for id in tx_ids(root)? {
        if seq_of(&id) <= stack.through_seq {
            continue;
        }
        let m = match read_manifest(root, key, &id) {
            Ok(Some(m)) => m,
            // Not (provably) ours, or unreadable: recovery reports it; it is never folded.
            Ok(None) | Err(StoreError::Journal { .. }) => continue,
            Err(e) => return Err(e),
        };
        if m.status != TxStatus::Committed {
            continue;
        }
        match m.kind {
            TxKind::Apply => {
                drop_dirs.append(&mut stack.redo);
                stack.undo.push(m.id.clone());
            }
            TxKind::Undo => {
                if let Some(t) = &m.reverts {
                    stack.undo.retain(|x| x != t);
                    drop_dirs.push(t.clone());
                }
                stack.redo.push(m.id.clone());
            }
            TxKind::Redo => {
                if let Some(t) = &m.reverts {
                    stack.redo.retain(|x| x != t);
                    drop_dirs.push(t.clone());
                }
                stack.undo.push(m.id.clone());
            }
        }
        stack.through_seq = m.seq;
        changed = true;
    }
    while stack.undo.len() > depth {
        drop_dirs.push(stack.undo.remove(0));
        changed = true;
    }
    if changed {
        // The stack is derived from the committed manifests: if a crash loses the rename, the
        // old stack plus the manifests above its `through_seq` fold into the same one again.
        // Only journals removed below rely on the new stack being on disk first.
        write_stack(root, &stack, !drop_dirs.is_empty())?;
        for id in drop_dirs {
            // Only after the stack no longer names it; a leftover is harmless (seq ≤ through_seq).
            root.remove_tree(&tx_path(&id))?;
        }
    }
    Ok(stack)
}

/// The next transaction sequence number.
pub(crate) fn next_seq(root: &Root) -> Result<u64, StoreError> {
    let stack = read_stack(root)?;
    let max_dir = tx_ids(root)?.iter().map(|id| seq_of(id)).max().unwrap_or(0);
    Ok(stack.through_seq.max(max_dir) + 1)
}
