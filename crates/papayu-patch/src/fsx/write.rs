//! Atomic, durable writes: temp file → write → fsync → rename, with the write-back of many files
//! started before their fsyncs; and the fsync and rename primitives beneath them.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::{Node, Root, StoreResult, node_at, parent_display, split_parent};
use crate::error::{EscapeReason, IoOp, StoreError};

impl Root {
    /// Durably write `bytes` to `rel` via `tmp` in the same directory, replacing it atomically.
    /// `mode`: permission bits to set (None → default for a new file, subject to umask).
    pub(crate) fn write_atomic(
        &self,
        rel: &str,
        tmp: &str,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> StoreResult<()> {
        self.write_atomic_with(rel, tmp, bytes, mode, true)
    }

    /// [`Root::write_atomic`]; with `sync_dir == false` the caller fsyncs the directory itself
    /// later (once per directory, before its commit point).
    pub(crate) fn write_atomic_with(
        &self,
        rel: &str,
        tmp: &str,
        bytes: &[u8],
        mode: Option<u32>,
        sync_dir: bool,
    ) -> StoreResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        let fd = self.write_staged_at(&dir, rel, tmp, bytes, mode)?;
        self.sync_staged_at(&dir, fd, rel, tmp)?;
        let result = self.rename_staged_at(&dir, rel, tmp).and_then(|()| {
            if sync_dir {
                self.fsync(&dir, parent_display(parent))
            } else {
                Ok(())
            }
        });
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&dir, tmp, AtFlags::empty());
        }
        result
    }

    /// The first half of an atomic write into directory `dir`: check that `rel` may be written
    /// (not a symlink, directory or special file), write `bytes` to the temp file `tmp` next to
    /// it and start its write-back without waiting for it, then return the still open temp file
    /// for [`Root::sync_staged_at`] (a caller staging many files fsyncs them all afterwards).
    /// Starting every file's write-back before the first fsync lets the device write all their
    /// data at once and the filesystem write the metadata they share once (see
    /// `journal::apply_ops`). On error no temp file is left behind.
    pub(crate) fn write_staged_at(
        &self,
        dir: &OwnedFd,
        rel: &str,
        tmp: &str,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> StoreResult<OwnedFd> {
        let (_, name) = split_parent(rel);
        writable_at(dir, name, rel)?;
        let flags =
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(dir, tmp, flags, Mode::from_raw_mode(0o666)) {
            Ok(fd) => fd,
            // A stale temp file from an interrupted run: it is ours to remove.
            Err(Errno::EXIST) => {
                let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
                rustix::fs::openat(dir, tmp, flags, Mode::from_raw_mode(0o666))
                    .map_err(|e| StoreError::io(IoOp::CreateTemp, rel, e))?
            }
            Err(e) => return Err(StoreError::io(IoOp::CreateTemp, rel, e)),
        };
        self.fill_new_at(dir, fd, tmp, rel, bytes, mode)
    }

    /// The common end of [`Root::write_staged_at`] and [`Root::create_new_at`]: on the file
    /// `name` just created in `dir`, set `mode`, write `bytes` and start the write-back; on
    /// error the file is removed again.
    fn fill_new_at(
        &self,
        dir: &OwnedFd,
        fd: OwnedFd,
        name: &str,
        rel: &str,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> StoreResult<OwnedFd> {
        let result = (|| {
            if let Some(m) = mode {
                rustix::fs::fchmod(&fd, Mode::from_raw_mode(m & 0o7777))
                    .map_err(|e| StoreError::io(IoOp::Chmod, rel, e))?;
            }
            self.write_all(&fd, bytes, rel)
        })();
        if let Err(e) = result {
            drop(fd);
            let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
            return Err(e);
        }
        // Only a hint, so its result is ignored: the fsync that must follow before the rename
        // is what makes the bytes durable, and it still reports any write-back error (without
        // SYNC_FILE_RANGE_WAIT_* the kernel does not consume the file's error state), so a
        // failure here cannot turn into a silent success. Failing on it instead would refuse
        // filesystems that merely do not support the hint.
        let _ = start_writeback(&fd);
        Ok(fd)
    }

    /// Create the new file `rel` in directory `dir` (`O_CREAT|O_EXCL`, never following a
    /// symlink, mode 0644), write `bytes` and start its write-back like
    /// [`Root::write_staged_at`]; the caller fsyncs the returned file. An existing file is an
    /// error. On error the file is removed again.
    pub(crate) fn create_new_at(
        &self,
        dir: &OwnedFd,
        rel: &str,
        bytes: &[u8],
    ) -> StoreResult<OwnedFd> {
        let (_, name) = split_parent(rel);
        let fd = rustix::fs::openat(
            dir,
            name,
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| StoreError::io(IoOp::Create, rel, e))?;
        self.fill_new_at(dir, fd, name, rel, bytes, None)
    }

    /// The fsync of a temp file from [`Root::write_staged_at`] (closing it); on error the temp
    /// file is removed.
    pub(crate) fn sync_staged_at(
        &self,
        dir: &OwnedFd,
        fd: OwnedFd,
        rel: &str,
        tmp: &str,
    ) -> StoreResult<()> {
        let result = self.fsync(&fd, rel);
        drop(fd);
        if result.is_err() {
            let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
        }
        result
    }

    /// The second half: rename the staged temp file onto `rel` (checked again: the target may
    /// have changed since staging). The directory is not fsynced here.
    pub(crate) fn rename_staged_at(&self, dir: &OwnedFd, rel: &str, tmp: &str) -> StoreResult<()> {
        let (_, name) = split_parent(rel);
        writable_at(dir, name, rel)?;
        self.rename(dir, tmp, name, rel)
    }

    pub(super) fn write_all(&self, fd: &OwnedFd, mut bytes: &[u8], rel: &str) -> StoreResult<()> {
        self.faults
            .hit(crate::fault::FaultKind::Write)
            .map_err(|e| StoreError::io(IoOp::Write, rel, e))?;
        while !bytes.is_empty() {
            match rustix::io::write(fd, bytes) {
                Ok(0) => return Err(StoreError::io(IoOp::Write, rel, Errno::IO)),
                Ok(n) => bytes = &bytes[n..],
                Err(Errno::INTR) => {}
                Err(e) => return Err(StoreError::io(IoOp::Write, rel, e)),
            }
        }
        Ok(())
    }

    /// fsync an open directory (or file); `rel` names it in errors.
    pub(crate) fn fsync(&self, fd: &impl AsFd, rel: &str) -> StoreResult<()> {
        self.faults
            .hit(crate::fault::FaultKind::Fsync)
            .map_err(|e| StoreError::io(IoOp::Fsync, rel, e))?;
        // Never retried: after a failed fsync the page cache state is unknown (fsyncgate).
        rustix::fs::fsync(fd).map_err(|e| StoreError::io(IoOp::Fsync, rel, e))
    }

    /// fsync several open files or directories at once, one thread each (the calling thread
    /// takes the first), so that their writes and device cache flushes overlap instead of
    /// queueing one behind the other. Every one is attempted; the first error in `items` order
    /// is returned.
    pub(crate) fn fsync_all(&self, items: &[(BorrowedFd<'_>, &str)]) -> StoreResult<()> {
        let Some(((first, first_rel), rest)) = items.split_first() else {
            return Ok(());
        };
        std::thread::scope(|scope| {
            let others: Vec<_> = rest
                .iter()
                .map(|(fd, rel)| {
                    let sync = move || self.fsync(fd, rel);
                    // Out of threads: do it here instead.
                    std::thread::Builder::new()
                        .spawn_scoped(scope, sync)
                        .map_err(|_| sync())
                })
                .collect();
            let mut result = self.fsync(first, first_rel);
            for ((_, rel), other) in rest.iter().zip(others) {
                let r = match other {
                    Ok(handle) => handle.join().unwrap_or_else(|_| {
                        Err(StoreError::io(
                            IoOp::Fsync,
                            rel,
                            std::io::Error::other("thread panicked"),
                        ))
                    }),
                    Err(r) => r,
                };
                if result.is_ok() {
                    result = r;
                }
            }
            result
        })
    }

    fn rename(&self, dir: &OwnedFd, from: &str, to: &str, rel: &str) -> StoreResult<()> {
        self.faults
            .hit(crate::fault::FaultKind::Rename)
            .map_err(|e| StoreError::io(IoOp::Rename, rel, e))?;
        rustix::fs::renameat(dir, from, dir, to).map_err(|e| StoreError::io(IoOp::Rename, rel, e))
    }
}

/// Start writing back `fd`'s dirty pages without waiting for the I/O
/// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`). Neither a durability guarantee nor a substitute
/// for fsync: it only lets the write-back of many files overlap before they are fsynced.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn start_writeback(fd: &OwnedFd) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: `fd` is an open descriptor borrowed for the whole call, and the call takes no
    // pointers; offset 0 with length 0 means "to the end of the file".
    let rc = unsafe { libc::sync_file_range(fd.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Elsewhere there is no portable way to start write-back early: the fsync does all of it.
#[cfg(not(target_os = "linux"))]
fn start_writeback(_fd: &OwnedFd) -> std::io::Result<()> {
    Ok(())
}

/// What an atomic write may replace at `name`: nothing, or a regular file.
fn writable_at(dir: &OwnedFd, name: &str, rel: &str) -> StoreResult<()> {
    match node_at(dir, name, rel)? {
        Node::Symlink => Err(StoreError::escape(rel, EscapeReason::Symlink)),
        Node::Dir { .. } | Node::Other => Err(StoreError::unusable(
            IoOp::Write,
            rel,
            std::io::ErrorKind::IsADirectory,
            "not a regular file",
        )),
        Node::Absent | Node::File { .. } => Ok(()),
    }
}
