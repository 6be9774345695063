//! The primitives of the project lock: an atomic exclusive create, an `flock`, an unsynced
//! removal. Nothing else uses them: the lock is never fsynced (see `crate::lock`).

use std::sync::atomic::Ordering;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::{Root, StoreResult, split_parent};
use crate::error::{IoOp, StoreError};

impl Root {
    /// Create `rel` holding `bytes`, atomically and only if nothing is there (`Ok(false)` when
    /// something is), without fsync: for the project lock only. The bytes go to a temporary
    /// file that is then hard-linked to `rel` (`linkat` fails on an existing name), so no other
    /// process ever sees `rel` empty or half-written.
    pub(crate) fn create_exclusive_unsynced(&self, rel: &str, bytes: &[u8]) -> StoreResult<bool> {
        let (parent, name) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        // Unique per call, not only per process: two threads of one process (`papayu ui` runs
        // jobs side by side) would otherwise truncate, link and unlink the same temp file.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let tmp = format!(
            ".{name}.{}-{}.tmp",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let flags =
            OFlags::CREATE | OFlags::TRUNC | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, tmp.as_str(), flags, Mode::from_raw_mode(0o644))
            .map_err(|e| StoreError::io(IoOp::Create, rel, e))?;
        let linked = self.write_all(&fd, bytes, rel).and_then(|()| {
            match rustix::fs::linkat(&dir, tmp.as_str(), &dir, name, AtFlags::empty()) {
                Ok(()) => Ok(true),
                Err(Errno::EXIST) => Ok(false),
                Err(e) => Err(StoreError::io(IoOp::Create, rel, e)),
            }
        });
        drop(fd);
        let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
        linked
    }

    /// Run `f` holding an exclusive `flock` on `rel` (created if missing, never removed): for
    /// the project lock's stale-lock reclaim, so two processes never both remove-and-retake.
    pub(crate) fn with_flock<T>(&self, rel: &str, f: impl FnOnce() -> T) -> StoreResult<T> {
        let (parent, name) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        let fd = rustix::fs::openat(
            &dir,
            name,
            OFlags::CREATE | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| StoreError::io(IoOp::Open, rel, e))?;
        rustix::fs::flock(&fd, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| StoreError::io(IoOp::Flock, rel, e))?;
        let out = f();
        // Closing the descriptor releases the lock.
        drop(fd);
        Ok(out)
    }

    /// Remove a file or symlink (never following it) without fsync of its directory: for the
    /// project lock only. Missing is fine.
    pub(crate) fn remove_file_unsynced(&self, rel: &str) -> StoreResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        self.remove_file_at(&dir, rel)
    }
}
