//! The primitives of the project lock: an `flock` on a directory, and the unsynced note that
//! names its holder (see `crate::lock`: the lock is never fsynced).

use std::os::fd::OwnedFd;

use rustix::fs::{AtFlags, FlockOperation};
use rustix::io::Errno;

use super::write::create_excl_at;
use super::{Root, StoreResult, split_parent};
use crate::error::{IoOp, StoreError};

impl Root {
    /// Take an exclusive `flock` on directory `rel` without waiting: `Ok(None)` when another
    /// open file description holds it. The lock lives as long as the returned handle, and the
    /// kernel drops it when its holder dies, whatever is left on disk.
    pub(crate) fn try_flock_dir(&self, rel: &str) -> StoreResult<Option<OwnedFd>> {
        let fd = self.open_dir(rel)?;
        match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(fd)),
            Err(Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(StoreError::io(IoOp::Flock, rel, e)),
        }
    }

    /// Replace whatever is at `rel` with a new regular file holding `bytes`, without fsync: for
    /// papayu's files that need no durability (the lock's note, written while the lock is held;
    /// `.papa-yu/.gitignore`). The old entry is unlinked first (never truncated: a hard link to
    /// a user's file must not lose its bytes) — and so is a FIFO, symlink or empty directory
    /// someone left there.
    pub(crate) fn replace_unsynced(&self, rel: &str, bytes: &[u8]) -> StoreResult<()> {
        let (parent, name) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(Errno::ISDIR | Errno::PERM) => {
                rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR)
                    .map_err(|e| StoreError::io(IoOp::RemoveDir, rel, e))?;
            }
            Err(e) => return Err(StoreError::io(IoOp::RemoveFile, rel, e)),
        }
        let (fd, _) = create_excl_at(&dir, rel, 0o644)?;
        self.write_all(&fd, bytes, rel)
    }

    /// Remove a file or symlink (never following it) without fsync of its directory: for the
    /// lock's note only. Missing is fine.
    pub(crate) fn remove_file_unsynced(&self, rel: &str) -> StoreResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        self.remove_file_at(&dir, rel)
    }
}
