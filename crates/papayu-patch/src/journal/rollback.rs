//! Rollback: bring every path of a journal back to its before-state, verified by hash, and
//! delete the journal; it touches the journal's paths and the journal itself.

use papayu_protocol::sha256_hex;

use super::format::{Entry, Manifest, State};
use super::{join, parent_of, tmp_name, tx_path};
use crate::error::{IoOp, JournalFault, StoreError};
use crate::fsx::{Node, Root};

/// Restore every path of `manifest` to its before-state (idempotent, hash-verified), then
/// delete the journal.
pub(crate) fn rollback(root: &Root, manifest: &Manifest) -> Result<(), StoreError> {
    let dir = tx_path(&manifest.id);
    let pack_path = format!("{dir}/orig.bin");
    let pack = if manifest
        .entries
        .iter()
        .any(|e| matches!(e.before, State::File { .. }))
    {
        root.read(&pack_path)?
    } else {
        Vec::new()
    };
    for e in &manifest.entries {
        if let Some(tmp) = &e.tmp {
            match root.remove_file(&join(parent_of(&e.path), tmp)) {
                Ok(()) => {}
                Err(err) if err.is_not_found() => {}
                // A parent that is now missing or a symlink holds no temp file of ours.
                Err(StoreError::PathEscapesRoot { .. }) => {}
                Err(err) => return Err(err),
            }
        }
    }
    for (i, e) in manifest.entries.iter().enumerate().rev() {
        restore(root, manifest, i, e, &pack, &pack_path)?;
    }
    root.remove_file(&format!("{dir}/manifest.json"))?;
    root.remove_tree(&dir)
}

fn restore(
    root: &Root,
    m: &Manifest,
    i: usize,
    e: &Entry,
    pack: &[u8],
    pack_path: &str,
) -> Result<(), StoreError> {
    let path = e.path.as_str();
    let now = root.node(path)?;
    match &e.before {
        State::Absent => match now {
            Node::Absent => {}
            Node::Dir { .. } => root.remove_dir(path)?,
            Node::File { .. } | Node::Symlink => root.remove_file(path)?,
            Node::Other => return Err(StoreError::not_a_node(IoOp::Restore, path)),
        },
        State::File { sha256, mode, copy } => {
            if matches!(now, Node::File { .. }) && sha256_hex(&root.read(path)?) == *sha256 {
                return Ok(());
            }
            let bytes = pack_copy(pack, path, sha256, *copy)
                .map_err(|fault| StoreError::journal(pack_path, fault))?;
            match now {
                Node::Dir { .. } => root.remove_tree(path)?,
                Node::Symlink => root.remove_file(path)?,
                _ => {}
            }
            root.write_atomic(path, &tmp_name(&m.id, i), bytes, *mode)?;
        }
        State::Dir { mode } => match now {
            Node::Dir { .. } => {}
            Node::Absent => root.mkdir(path, *mode)?,
            Node::File { .. } | Node::Symlink => {
                root.remove_file(path)?;
                root.mkdir(path, *mode)?;
            }
            Node::Other => return Err(StoreError::not_a_node(IoOp::Restore, path)),
        },
        State::Symlink { target } => {
            let target = symlink_target(path, target)
                .map_err(|fault| StoreError::journal(pack_path, fault))?;
            match now {
                Node::Symlink if root.read_link(path)? == target => {}
                Node::Absent => root.symlink(path, &target)?,
                Node::Symlink | Node::File { .. } => {
                    root.remove_file(path)?;
                    root.symlink(path, &target)?;
                }
                Node::Dir { .. } => {
                    root.remove_tree(path)?;
                    root.symlink(path, &target)?;
                }
                Node::Other => return Err(StoreError::not_a_node(IoOp::Restore, path)),
            }
        }
    }
    Ok(())
}

/// The journaled original of `path` in `pack` (the bytes of `orig.bin`), checked against the
/// `sha256` the manifest recorded: a copy that does not verify is never written back.
pub(crate) fn pack_copy<'a>(
    pack: &'a [u8],
    path: &str,
    sha256: &str,
    copy: Option<(u64, u64)>,
) -> Result<&'a [u8], JournalFault> {
    let (start, len) = copy.ok_or_else(|| JournalFault::NoCopy {
        path: path.to_owned(),
    })?;
    let bytes = usize::try_from(start)
        .ok()
        .zip(usize::try_from(start + len).ok())
        .and_then(|(s, end)| pack.get(s..end))
        .ok_or_else(|| JournalFault::CopyOutOfRange {
            path: path.to_owned(),
        })?;
    if sha256_hex(bytes) != sha256 {
        return Err(JournalFault::CopyCorrupt {
            path: path.to_owned(),
        });
    }
    Ok(bytes)
}

/// A journaled symlink target (hex-encoded bytes) of `path`.
pub(crate) fn symlink_target(path: &str, hex_target: &str) -> Result<Vec<u8>, JournalFault> {
    hex::decode(hex_target).map_err(|_| JournalFault::BadSymlinkTarget {
        path: path.to_owned(),
    })
}

/// Whether `path` currently holds exactly `state` (for undo/redo conflict detection).
pub(crate) fn holds(root: &Root, path: &str, state: &State) -> Result<bool, StoreError> {
    let now = root.node(path)?;
    Ok(match (state, now) {
        (State::Absent, Node::Absent) => true,
        (State::Dir { .. }, Node::Dir { .. }) => true,
        (State::File { sha256, .. }, Node::File { .. }) => sha256_hex(&root.read(path)?) == *sha256,
        (State::Symlink { target }, Node::Symlink) => hex::encode(root.read_link(path)?) == *target,
        _ => false,
    })
}
