//! Rollback: bring every path of a journal back to its before-state — but only where the path
//! still holds what the transaction wrote — and delete the journal; it touches the journal's
//! paths, the journal itself and `.papa-yu/conflicts/`.
//!
//! Each path is compared with the journal's before- and after-states. Already as before:
//! nothing to do. Empty: the before-state is put back (nobody's bytes are lost). Holding the
//! after-state: the original is written back, the path checked again right before the rename
//! (or removal). Anything else is someone else's content: it is kept, the original goes to
//! `.papa-yu/conflicts/<tx>/<path>`, and the path is reported ([`RollbackConflict`]). A step
//! that fails does not stop the others; the journal is then kept for the next attempt.
//!
//! The rollback first frees the space its journal reserved, and removes its temp files; an
//! original that still finds the disk full is written after removing the transaction's version
//! (checked to be the transaction's), which the journal covers: a crash in between leaves the
//! path empty, and the next recovery puts the original there.

use papayu_protocol::sha256_hex;

use super::aside::{
    CONFLICTS_DIR, DISPLACED_DIR, FOREIGN_LISTED, Found, RollbackConflict, set_aside,
};
use super::format::{Entry, Manifest, State};
use super::{COMMITTED_TMP, MANIFEST_TMP, RESERVE, join, parent_of, tmp_name, tx_path};
use crate::error::{IoOp, JournalFault, StoreError};
use crate::fsx::{Expect, Node, Root};

/// What a rollback did.
#[derive(Debug, Default)]
pub(crate) struct Rolled {
    /// Paths left with content the transaction did not write.
    pub(crate) conflicts: Vec<RollbackConflict>,
    /// The first step that failed; every other path was still rolled back, and the journal
    /// was kept for the next attempt.
    pub(crate) failed: Option<StoreError>,
}

/// Roll back `manifest` (see the module docs), then delete its journal. With `touched`, only
/// the ops it marks are undone (a run that stopped knows which ops it reached); without it
/// (recovery after a crash) every path is examined.
pub(crate) fn rollback(root: &Root, manifest: &Manifest, touched: Option<&[bool]>) -> Rolled {
    let dir = tx_path(&manifest.id);
    let mut rolled = Rolled::default();
    let fail = |rolled: &mut Rolled, e: StoreError| {
        tracing::warn!(tx = %manifest.id, error = %e, "a rollback step failed");
        rolled.failed.get_or_insert(e);
    };
    // The space reserved for this moment first: the steps below may need it. Then the temp
    // files: the journal's (a committed manifest never renamed) and the project's.
    for scratch in [RESERVE, COMMITTED_TMP, MANIFEST_TMP] {
        if let Err(e) = root.remove_file(&format!("{dir}/{scratch}")) {
            fail(&mut rolled, e);
        }
    }
    for e in &manifest.entries {
        if let Some(tmp) = &e.tmp {
            match root.remove_file(&join(parent_of(&e.path), tmp)) {
                Ok(()) => {}
                Err(err) if err.is_not_found() => {}
                // A parent that is now missing, a file or a symlink holds no temp file of ours.
                Err(StoreError::PathEscapesRoot { .. }) => {}
                Err(err) if is_not_dir(&err) => {}
                Err(err) => fail(&mut rolled, err),
            }
        }
    }
    let pack_path = format!("{dir}/orig.bin");
    let pack = if manifest
        .entries
        .iter()
        .any(|e| matches!(e.before, State::File { .. }))
    {
        root.read(&pack_path)
    } else {
        Ok(Vec::new())
    };
    let ctx = Ctx {
        root,
        m: manifest,
        pack: &pack,
        pack_path: &pack_path,
    };
    for (i, e) in manifest.entries.iter().enumerate().rev() {
        if touched.is_some_and(|t| !t.get(i).copied().unwrap_or(true)) {
            continue;
        }
        match ctx.restore(i, e, &rolled.conflicts) {
            Ok(Some(conflict)) => rolled.conflicts.push(conflict),
            Ok(None) => {}
            Err(err) => fail(&mut rolled, err),
        }
    }
    if rolled.failed.is_none() {
        // A forced undo's copies of what it replaced are back in place (or set aside above).
        let displaced = format!("{DISPLACED_DIR}/{}", manifest.id);
        let done = root
            .remove_tree(&displaced)
            .and_then(|()| root.remove_file(&format!("{dir}/manifest.json")))
            .and_then(|()| root.remove_tree(&dir));
        if let Err(e) = done {
            fail(&mut rolled, e);
        }
    }
    rolled
}

/// What is at a path now, in the terms of the journal's states.
enum Now {
    Absent,
    File {
        sha256: String,
    },
    Dir,
    Symlink(Vec<u8>),
    /// A FIFO, socket or device: never touched.
    Other,
    /// Its parent is not a directory below the root any more (a file, a symlink).
    Blocked,
}

impl Now {
    fn read(root: &Root, path: &str) -> Result<Now, StoreError> {
        let node = match root.node(path) {
            Ok(n) => n,
            Err(StoreError::PathEscapesRoot { .. }) => return Ok(Now::Blocked),
            Err(e) if is_not_dir(&e) => return Ok(Now::Blocked),
            Err(e) => return Err(e),
        };
        Ok(match node {
            Node::Absent => Now::Absent,
            Node::File { .. } => Now::File {
                sha256: sha256_hex(&root.read(path)?),
            },
            Node::Dir { .. } => Now::Dir,
            Node::Symlink => Now::Symlink(root.read_link(path)?),
            Node::Other => Now::Other,
        })
    }

    fn holds(&self, state: &State) -> bool {
        match (self, state) {
            (Now::Absent, State::Absent) | (Now::Dir, State::Dir { .. }) => true,
            (Now::File { sha256 }, State::File { sha256: s, .. }) => sha256 == s,
            (Now::Symlink(target), State::Symlink { target: t }) => hex::encode(target) == *t,
            _ => false,
        }
    }
}

fn is_not_dir(e: &StoreError) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error())
}

fn is_no_space(e: &StoreError) -> bool {
    [rustix::io::Errno::NOSPC, rustix::io::Errno::DQUOT]
        .iter()
        .any(|n| e.raw_os_error() == Some(n.raw_os_error()))
}

/// One rollback's view of its journal.
struct Ctx<'a> {
    root: &'a Root,
    m: &'a Manifest,
    pack: &'a Result<Vec<u8>, StoreError>,
    pack_path: &'a str,
}

impl Ctx<'_> {
    /// Bring entry `i` back to its before-state if it holds the after-state or nothing; report
    /// a conflict otherwise.
    /// `kept`: the conflicts found so far (below `e`, for a directory).
    fn restore(
        &self,
        i: usize,
        e: &Entry,
        kept: &[RollbackConflict],
    ) -> Result<Option<RollbackConflict>, StoreError> {
        let path = e.path.as_str();
        let now = Now::read(self.root, path)?;
        if now.holds(&e.before) {
            return Ok(None);
        }
        match (now, &e.after) {
            (Now::Absent, _) => self.put_back(i, e),
            (Now::Blocked, _) => self.conflict(e, Found::ParentReplaced),
            (now, Some(after)) if now.holds(after) => self.undo_write(i, e, kept),
            (Now::File { sha256 }, None) => self.unproven(i, e, sha256, kept),
            _ => self.conflict(e, Found::Changed),
        }
    }

    /// A write whose after-state was never recorded (a crash between its rename and the
    /// committed manifest) left a file that is not the original: nothing proves whose it is,
    /// so it is set aside before the original is restored in its place.
    fn unproven(
        &self,
        i: usize,
        e: &Entry,
        sha256: String,
        kept: &[RollbackConflict],
    ) -> Result<Option<RollbackConflict>, StoreError> {
        let bytes = self.root.read(&e.path)?;
        if sha256_hex(&bytes) != sha256 {
            // Changed in between: whoever writes it now, it is not a crashed run of papayu.
            return self.conflict(e, Found::Changed);
        }
        let mode = match self.root.node(&e.path)? {
            Node::File { mode } => Some(mode),
            _ => None,
        };
        let saved_to = set_aside(self.root, CONFLICTS_DIR, &self.m.id, &e.path, &bytes, mode)?;
        let mut assumed = e.clone();
        assumed.after = Some(State::File {
            sha256,
            mode: None,
            copy: None,
        });
        match self.undo_write(i, &assumed, kept)? {
            // Edited right now: kept, with the original beside it.
            Some(conflict) => Ok(Some(conflict)),
            None => {
                let conflict = RollbackConflict {
                    tx_id: self.m.id.clone(),
                    path: e.path.clone(),
                    found: Found::Unproven { saved_to },
                    original: None,
                };
                tracing::warn!(tx = %self.m.id, "{conflict}");
                Ok(Some(conflict))
            }
        }
    }

    /// Report `e` as a conflict, with its original set aside when it was a file.
    fn conflict(&self, e: &Entry, found: Found) -> Result<Option<RollbackConflict>, StoreError> {
        let original = match &e.before {
            State::File { sha256, mode, copy } => {
                let bytes = self.original(&e.path, sha256, *copy)?;
                Some(set_aside(
                    self.root,
                    CONFLICTS_DIR,
                    &self.m.id,
                    &e.path,
                    bytes,
                    *mode,
                )?)
            }
            _ => None,
        };
        let conflict = RollbackConflict {
            tx_id: self.m.id.clone(),
            path: e.path.clone(),
            found,
            original,
        };
        tracing::warn!(tx = %self.m.id, "{conflict}");
        Ok(Some(conflict))
    }

    fn original(
        &self,
        path: &str,
        sha256: &str,
        copy: Option<(u64, u64)>,
    ) -> Result<&[u8], StoreError> {
        let pack = self.pack.as_ref().map_err(|e| {
            let kind = match e {
                StoreError::Io { source, .. } => source.kind(),
                _ => std::io::ErrorKind::InvalidData,
            };
            StoreError::unusable(
                IoOp::Read,
                self.pack_path,
                kind,
                "the originals could not be read",
            )
        })?;
        pack_copy(pack, path, sha256, copy)
            .map_err(|fault| StoreError::journal(self.pack_path, fault))
    }

    /// The path is empty: put the before-state there (its directory first, if someone removed
    /// it). A name that appears meanwhile is someone else's: a conflict.
    fn put_back(&self, i: usize, e: &Entry) -> Result<Option<RollbackConflict>, StoreError> {
        let path = e.path.as_str();
        let parent = parent_of(path);
        match self.root.ensure_dirs(parent) {
            Ok(()) => {}
            Err(StoreError::PathEscapesRoot { .. }) => {
                return self.conflict(e, Found::ParentReplaced);
            }
            Err(err) if is_not_dir(&err) => return self.conflict(e, Found::ParentReplaced),
            Err(err) => return Err(err),
        }
        let done = match &e.before {
            State::Absent => Ok(()),
            State::File { sha256, mode, copy } => {
                let bytes = self.original(path, sha256, *copy)?;
                self.root.write_atomic_expecting(
                    path,
                    &tmp_name(&self.m.id, i),
                    bytes,
                    *mode,
                    Expect::Absent,
                )
            }
            State::Dir { mode } => self.root.mkdir(path, *mode),
            State::Symlink { target } => {
                let target = symlink_target(path, target)
                    .map_err(|fault| StoreError::journal(self.pack_path, fault))?;
                self.root.symlink(path, &target)
            }
        };
        match done {
            Ok(()) => Ok(None),
            Err(StoreError::Changed { .. }) => self.conflict(e, Found::Changed),
            Err(err) => Err(err),
        }
    }

    /// The path holds what the transaction left: replace it with the before-state, checking
    /// right before each step that it still does.
    fn undo_write(
        &self,
        i: usize,
        e: &Entry,
        kept: &[RollbackConflict],
    ) -> Result<Option<RollbackConflict>, StoreError> {
        let path = e.path.as_str();
        let expect = match &e.after {
            Some(State::File { sha256, .. }) => Expect::Sha256(sha256),
            Some(State::Symlink { target }) => {
                return self.replace_with(i, e, |root| {
                    let target = symlink_target(path, target)
                        .map_err(|fault| StoreError::journal(self.pack_path, fault))?;
                    let dir = root.open_dir(parent_of(path))?;
                    root.remove_verified_at(&dir, path, Expect::Link(&target))?;
                    root.fsync(&dir, crate::fsx::parent_display(parent_of(path)))
                });
            }
            Some(State::Dir { .. }) => {
                return match self.root.remove_dir(path) {
                    // Files it did not write: kept, and named — unless all of them are already
                    // reported as kept conflicts.
                    Err(err)
                        if err.raw_os_error()
                            == Some(rustix::io::Errno::NOTEMPTY.raw_os_error()) =>
                    {
                        match foreign(self.root, path, kept)? {
                            files if files.is_empty() => Ok(None),
                            files => self.conflict(e, Found::ForeignFiles { files }),
                        }
                    }
                    Err(err) => Err(err),
                    Ok(()) => self.put_back(i, e),
                };
            }
            // Holding "absent" means empty: `put_back` handles it.
            Some(State::Absent) | None => return self.put_back(i, e),
        };
        match &e.before {
            State::File { sha256, mode, copy } => {
                let bytes = self.original(path, sha256, *copy)?;
                let tmp = tmp_name(&self.m.id, i);
                match self
                    .root
                    .write_atomic_expecting(path, &tmp, bytes, *mode, expect)
                {
                    Ok(()) => Ok(None),
                    Err(StoreError::Changed { .. }) => self.conflict(e, Found::Changed),
                    // A full disk: remove the transaction's version first (the journal still
                    // holds the original), then write the original where it was.
                    Err(err) if is_no_space(&err) => {
                        self.replace_with(i, e, |root| remove_expecting(root, path, expect))
                    }
                    Err(err) => Err(err),
                }
            }
            _ => self.replace_with(i, e, |root| remove_expecting(root, path, expect)),
        }
    }

    /// Remove what the transaction left at `e`'s path with `remove` (which checks it), then
    /// put the before-state back; a check that fails is a conflict.
    fn replace_with(
        &self,
        i: usize,
        e: &Entry,
        remove: impl FnOnce(&Root) -> Result<(), StoreError>,
    ) -> Result<Option<RollbackConflict>, StoreError> {
        match remove(self.root) {
            Ok(()) => self.put_back(i, e),
            Err(StoreError::Changed { .. }) => self.conflict(e, Found::Changed),
            Err(err) => Err(err),
        }
    }
}

/// Remove the file at `path` if it holds `expect`, and fsync its directory.
fn remove_expecting(root: &Root, path: &str, expect: Expect<'_>) -> Result<(), StoreError> {
    let parent = parent_of(path);
    let dir = root.open_dir(parent)?;
    root.remove_verified_at(&dir, path, expect)?;
    root.fsync(&dir, crate::fsx::parent_display(parent))
}

/// The files below directory `dir` (relative to the root), at most [`FOREIGN_LISTED`], except
/// those `kept` already names (kept paths, and the files of kept directories).
fn foreign(root: &Root, dir: &str, kept: &[RollbackConflict]) -> Result<Vec<String>, StoreError> {
    let reported = |path: &str| {
        kept.iter().any(|c| {
            c.path == path
                || matches!(&c.found, Found::ForeignFiles { files } if files.iter().any(|f| f == path))
        })
    };
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for name in root.list(&d)? {
            if out.len() >= FOREIGN_LISTED {
                return Ok(out);
            }
            let child = format!("{d}/{name}");
            if reported(&child) {
                continue;
            }
            match root.node(&child)? {
                Node::Dir { .. } => todo.push(child),
                _ => out.push(child),
            }
        }
    }
    out.sort();
    Ok(out)
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
    match Now::read(root, path)? {
        Now::Blocked => Ok(false),
        now => Ok(now.holds(state)),
    }
}
