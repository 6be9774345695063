//! The journal `.papa-yu/tx/<tx_id>/` and the primitive operations it protects (SPEC §5.2).
//! It touches the project only through [`Root`], and papayu's own state only under `.papa-yu/tx`.
//!
//! A transaction is a list of primitive [`Op`]s, each on one path. Before the first one runs,
//! the journal holds, durably (`write`): `orig.bin` (the original bytes of every file touched,
//! packed) and `manifest.json` (`format`; per op: the path's state before — existed?, sha256,
//! mode bits, where its copy is — and after, except a new file's hash). `manifest.json` appears by
//! an atomic rename only once `orig.bin` is synced, so a journal directory without it means
//! nothing was applied yet. `run` runs the ops; once every file is written and synced, the
//! committed manifest — with every after-state, new files' hashes included, and `status:
//! committed` — is synced in a temp file; renaming it onto `manifest.json` is the commit point.
//! `rollback` walks the entries backwards and restores each path that holds what the transaction
//! wrote (or nothing), verifying every copy's hash before writing it; what anyone else wrote is
//! kept, and the original set `aside`. Committed transactions make the undo/redo `stack`;
//! `recover` rolls back the others. Every manifest is sealed with the user's key (`trust`):
//! nothing acts on a journal this user's papayu did not write.

mod aside;
mod format;
mod recover;
mod rollback;
mod run;
mod stack;
mod trust;
mod write;

use std::sync::Arc;

use crate::error::{IoOp, StoreError};
use crate::fsx::{Expect, Node, Root};

pub(crate) use aside::{DISPLACED_DIR, set_aside};
pub use aside::{Displaced, FOREIGN_LISTED, Found, RollbackConflict};
pub use format::{ActionRecord, TxKind};
pub(crate) use format::{
    MANIFEST_FORMAT, Manifest, State, TxStatus, read_manifest, write_manifest,
};
pub(crate) use recover::recover_locked;
pub use recover::{LeftAlone, RecoveryReport, Unfinished};
pub(crate) use rollback::{Rolled, holds, pack_copy, rollback, symlink_target};
pub(crate) use run::{Stopped, apply_ops};
pub(crate) use stack::{fold_committed, next_seq, read_stack};
pub(crate) use trust::default_key;
pub use trust::{JournalKey, KeyError, use_journal_key_file};
pub(crate) use write::{commit, write_journal};

pub(crate) const TX_DIR: &str = ".papa-yu/tx";
pub(crate) const STACK: &str = ".papa-yu/tx/stack.json";
/// The temp file a manifest is written to before its atomic rename.
const MANIFEST_TMP: &str = ".manifest.json.tmp";
/// The committed manifest, written and synced with the journal, renamed onto `manifest.json` at
/// the commit point ([`commit`]).
const COMMITTED_TMP: &str = ".manifest.committed.tmp";
/// Space allocated with a journal for its rollback, freed first by the rollback (or at the
/// commit): see [`write_journal`].
const RESERVE: &str = "reserve";

/// What sits at a path right now, with the bytes needed to journal it.
#[derive(Debug, Clone)]
pub(crate) enum Snapshot {
    Absent,
    File { bytes: Arc<Vec<u8>>, mode: u32 },
    Dir { mode: u32 },
    Symlink { target: Vec<u8> },
}

impl Snapshot {
    pub(crate) fn read(root: &Root, path: &str) -> Result<Snapshot, StoreError> {
        Ok(match root.node(path)? {
            Node::Absent => Snapshot::Absent,
            Node::File { mode } => Snapshot::File {
                bytes: Arc::new(root.read(path)?),
                mode,
            },
            Node::Dir { mode } => Snapshot::Dir { mode },
            Node::Symlink => Snapshot::Symlink {
                target: root.read_link(path)?,
            },
            Node::Other => return Err(StoreError::not_a_node(IoOp::Journal, path)),
        })
    }
}

impl Snapshot {
    /// What the path must still hold when an op replaces or removes it.
    pub(crate) fn expect(&self) -> Expect<'_> {
        match self {
            Snapshot::Absent => Expect::Absent,
            Snapshot::File { bytes, .. } => Expect::Bytes(bytes),
            Snapshot::Symlink { target } => Expect::Link(target),
            // Nothing writes over a directory (the write refuses it): only its removal checks
            // (it must be empty).
            Snapshot::Dir { .. } => Expect::Any,
        }
    }
}

/// File content, shared without copies between the simulated tree, the ops and the preview:
/// borrowed from the plan (a new file's `content`, as given) or computed (shared).
#[derive(Debug, Clone)]
pub(crate) enum Bytes<'p> {
    Borrowed(&'p [u8]),
    Shared(Arc<Vec<u8>>),
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(b) => b,
            Bytes::Shared(b) => b,
        }
    }
}

impl<'p> From<std::borrow::Cow<'p, [u8]>> for Bytes<'p> {
    fn from(c: std::borrow::Cow<'p, [u8]>) -> Self {
        match c {
            std::borrow::Cow::Borrowed(b) => Bytes::Borrowed(b),
            std::borrow::Cow::Owned(v) => Bytes::Shared(Arc::new(v)),
        }
    }
}

/// A primitive operation: bring one path to one state.
#[derive(Debug, Clone)]
pub(crate) enum Op<'p> {
    MkDir {
        path: String,
        mode: Option<u32>,
    },
    Write {
        path: String,
        bytes: Bytes<'p>,
        mode: Option<u32>,
    },
    Symlink {
        path: String,
        target: Vec<u8>,
    },
    RemoveFile {
        path: String,
    },
    RemoveDir {
        path: String,
    },
}

impl Op<'_> {
    pub(crate) fn path(&self) -> &str {
        match self {
            Op::MkDir { path, .. }
            | Op::Write { path, .. }
            | Op::Symlink { path, .. }
            | Op::RemoveFile { path }
            | Op::RemoveDir { path } => path,
        }
    }
}

/// An op with the state it replaces.
#[derive(Debug, Clone)]
pub(crate) struct PlannedOp<'p> {
    pub(crate) op: Op<'p>,
    pub(crate) before: Snapshot,
}

/// `m` with the after-state of every write taken from the bytes `ops` write (for a rollback in
/// the process that ran them, which holds those bytes).
pub(crate) fn with_writes_known(m: &Manifest, ops: &[PlannedOp<'_>]) -> Manifest {
    let mut m = m.clone();
    for (e, p) in m.entries.iter_mut().zip(ops) {
        if let (None, Op::Write { bytes, mode, .. }) = (&e.after, &p.op) {
            e.after = Some(State::File {
                sha256: papayu_protocol::sha256_hex(bytes),
                mode: *mode,
                copy: None,
            });
        }
    }
    m
}

pub(crate) fn tx_path(id: &str) -> String {
    format!("{TX_DIR}/{id}")
}

fn tmp_name(id: &str, i: usize) -> String {
    format!(".papayu-{id}-{i}.tmp")
}

fn parent_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}
