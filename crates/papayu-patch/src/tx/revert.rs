//! Undo and redo: the top transaction of a stack reverted as a new journaled transaction, in
//! named steps (find it, check for conflicts, plan the restoring ops, run them). A forced one
//! first copies what it replaces to `.papa-yu/displaced/`.
//! It touches the paths the reverted transaction touched, through the executor.

use super::execute::{Header, execute, refuse_unfinished};
use super::options::ApplyOptions;
use super::project::Project;
use super::report::{ApplyReport, Summary};
use crate::error::{Direction, JournalFault, StoreError, UndoError};
use crate::fsx::{Node, Root};
use crate::journal::{
    self, Bytes, JournalKey, Manifest, Op, PlannedOp, Snapshot, State, TxKind, pack_copy,
    symlink_target,
};
use crate::lock;

/// Undo or redo the top transaction of its stack in `project`.
pub(super) fn revert(
    project: &Project,
    direction: Direction,
    force: bool,
    mut options: ApplyOptions<'_>,
) -> Result<ApplyReport, UndoError> {
    let root = Root::open(project.root())?;
    let key = project.key();
    let _lock = lock::acquire(&root)?;
    let recovery = journal::recover_locked(&root, key, options.undo_depth)?;
    let target = target(&root, key, direction)?;
    let changed = conflicts(&root, &target)?;
    if !force && !changed.is_empty() {
        return Err(UndoError::Conflict { paths: changed });
    }
    let pack = root.read(&format!("{}/orig.bin", journal::tx_path(&target.id)))?;
    let (ops, displace) = restore_ops(&root, &target, &pack, &changed)?;
    refuse_unfinished(&recovery, &ops)?;
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
    let committed = execute::<UndoError>(&root, key, &mut options, header, ops, &displace)?;
    Ok(ApplyReport {
        tx_id: committed.manifest.id,
        files: Vec::new(),
        summary: Summary::default(),
        checks: Vec::new(),
        displaced: committed.displaced,
    })
}

/// The manifest of the transaction `direction` would revert: the top of the undo (or redo)
/// stack.
fn target(root: &Root, key: &JournalKey, direction: Direction) -> Result<Manifest, UndoError> {
    let stack = journal::read_stack(root)?;
    let top = match direction {
        Direction::Undo => stack.undo.last(),
        Direction::Redo => stack.redo.last(),
    };
    let id = top.ok_or(UndoError::NothingToUndo { direction })?;
    journal::read_manifest(root, key, id)?
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
/// originals taken from `pack` (its `orig.bin`) and verified by hash; and the indices of the
/// ops that replace content changed since `m` (`changed`, only given when forced), whose
/// content is set aside first. A directory `m` created loses, with a force, the files added to
/// it since: they are removed (and set aside) too.
fn restore_ops<'p>(
    root: &Root,
    m: &Manifest,
    pack: &'p [u8],
    changed: &[String],
) -> Result<(Vec<PlannedOp<'p>>, Vec<usize>), StoreError> {
    let in_journal = |fault| StoreError::journal(journal::tx_path(&m.id), fault);
    let mut ops = Vec::new();
    let mut displace = Vec::new();
    for e in m.entries.iter().rev() {
        let path = e.path.clone();
        let op = match &e.before {
            State::Absent => match root.node(&e.path)? {
                Node::Dir { .. } => {
                    remove_foreign(root, m, &e.path, &mut ops, &mut displace)?;
                    Op::RemoveDir { path }
                }
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
        if changed.contains(&e.path) {
            displace.push(ops.len());
        }
        ops.push(PlannedOp { op, before });
    }
    Ok((ops, displace))
}

/// Ops removing what was added to directory `dir` (created by `m`) since: everything below it
/// that `m` does not name, deepest first; each file is set aside (its index in `displace`).
fn remove_foreign<'p>(
    root: &Root,
    m: &Manifest,
    dir: &str,
    ops: &mut Vec<PlannedOp<'p>>,
    displace: &mut Vec<usize>,
) -> Result<(), StoreError> {
    for name in root.list(dir)? {
        let child = format!("{dir}/{name}");
        // A name papayu never writes stays (and so does the directory: the undo then stops,
        // changing nothing).
        if m.entries.iter().any(|e| e.path == child) || crate::plan::protected_by(&child).is_some()
        {
            continue;
        }
        let before = Snapshot::read(root, &child)?;
        let op = match before {
            Snapshot::Dir { .. } => {
                remove_foreign(root, m, &child, ops, displace)?;
                Op::RemoveDir { path: child }
            }
            Snapshot::Absent => continue,
            Snapshot::File { .. } => {
                displace.push(ops.len());
                Op::RemoveFile { path: child }
            }
            Snapshot::Symlink { .. } => Op::RemoveFile { path: child },
        };
        ops.push(PlannedOp { op, before });
    }
    Ok(())
}
