//! Undo and redo: the top transaction of a stack reverted as a new journaled transaction, in
//! named steps (find it, check for conflicts, plan the restoring ops, run them).
//! It touches the paths the reverted transaction touched, through the executor.

use std::path::Path;

use super::execute::{Header, execute};
use super::options::ApplyOptions;
use super::report::{ApplyReport, Summary};
use crate::error::{Direction, JournalFault, StoreError, UndoError};
use crate::fsx::{Node, Root};
use crate::journal::{
    self, Bytes, Manifest, Op, PlannedOp, Snapshot, State, TxKind, pack_copy, symlink_target,
};
use crate::lock;

/// Undo or redo the top transaction of its stack in the project at `root`.
pub(super) fn revert(
    root: &Path,
    direction: Direction,
    force: bool,
    mut options: ApplyOptions<'_>,
) -> Result<ApplyReport, UndoError> {
    let root = Root::open(root)?;
    let _lock = lock::acquire(&root)?;
    journal::recover_locked(&root, options.undo_depth)?;
    let target = target(&root, direction)?;
    if !force {
        let changed = conflicts(&root, &target)?;
        if !changed.is_empty() {
            return Err(UndoError::Conflict { paths: changed });
        }
    }
    let pack = root.read(&format!("{}/orig.bin", journal::tx_path(&target.id)))?;
    let ops = restore_ops(&root, &target, &pack)?;
    let kind = match direction {
        Direction::Undo => TxKind::Undo,
        Direction::Redo => TxKind::Redo,
    };
    let header = Header {
        kind,
        reverts: Some(target.id.clone()),
        actions: target.actions.clone(),
        protocol: target.protocol,
    };
    let committed = execute::<UndoError>(&root, &mut options, header, ops)?;
    Ok(ApplyReport {
        tx_id: committed.manifest.id,
        files: Vec::new(),
        summary: Summary::default(),
        checks: Vec::new(),
    })
}

/// The manifest of the transaction `direction` would revert: the top of the undo (or redo)
/// stack.
fn target(root: &Root, direction: Direction) -> Result<Manifest, UndoError> {
    let stack = journal::read_stack(root)?;
    let top = match direction {
        Direction::Undo => stack.undo.last(),
        Direction::Redo => stack.redo.last(),
    };
    let id = top.ok_or(UndoError::NothingToUndo { direction })?;
    journal::read_manifest(root, id)?
        .ok_or_else(|| StoreError::journal(journal::tx_path(id), JournalFault::Missing).into())
}

/// The paths changed since transaction `m` (sorted, once each): those that no longer hold its
/// result, and new entries in directories it created.
fn conflicts(root: &Root, m: &Manifest) -> Result<Vec<String>, StoreError> {
    let mut changed = Vec::new();
    for e in &m.entries {
        // A committed manifest records every after-state; one without is not trusted.
        let holds = match &e.after {
            Some(after) => journal::holds(root, &e.path, after)?,
            None => false,
        };
        if !holds {
            changed.push(e.path.clone());
        }
    }
    // A directory the transaction created must not have gained files since.
    for e in &m.entries {
        if matches!(e.before, State::Absent)
            && matches!(e.after, Some(State::Dir { .. }))
            && matches!(root.node(&e.path)?, Node::Dir { .. })
        {
            for name in root.list(&e.path)? {
                let child = format!("{}/{name}", e.path);
                if !m.entries.iter().any(|x| x.path == child) {
                    changed.push(child);
                }
            }
        }
    }
    changed.sort();
    changed.dedup();
    Ok(changed)
}

/// The ops that bring every path of `m` back to its before-state, last entry first, with the
/// originals taken from `pack` (its `orig.bin`) and verified by hash.
fn restore_ops<'p>(
    root: &Root,
    m: &Manifest,
    pack: &'p [u8],
) -> Result<Vec<PlannedOp<'p>>, StoreError> {
    let in_journal = |fault| StoreError::journal(journal::tx_path(&m.id), fault);
    let mut ops = Vec::new();
    for e in m.entries.iter().rev() {
        let path = e.path.clone();
        let op = match &e.before {
            State::Absent => match root.node(&e.path)? {
                Node::Dir { .. } => Op::RemoveDir { path },
                Node::Absent => continue,
                _ => Op::RemoveFile { path },
            },
            State::Dir { mode } => Op::MkDir { path, mode: *mode },
            State::Symlink { target } => Op::Symlink {
                target: symlink_target(&e.path, target).map_err(in_journal)?,
                path,
            },
            State::File { sha256, mode, copy } => Op::Write {
                bytes: Bytes::Borrowed(
                    pack_copy(pack, &e.path, sha256, *copy).map_err(in_journal)?,
                ),
                path,
                mode: *mode,
            },
        };
        let before = Snapshot::read(root, &e.path)?;
        ops.push(PlannedOp { op, before });
    }
    Ok(ops)
}
