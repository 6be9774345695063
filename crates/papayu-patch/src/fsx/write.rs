//! Atomic, durable writes: temp file → write → fsync → rename, with the write-back of many files
//! started before their fsyncs; and the fsync and rename primitives beneath them.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::{
    Node, Root, StoreResult, node_at, open_read_at, parent_display, read_fd, split_parent,
};
use crate::error::{EscapeReason, IoOp, StoreError};

/// What a path must hold, checked under its directory's handle immediately before papayu
/// replaces or removes it: what a transaction computed its change from (or what it wrote, when
/// a rollback undoes it). Anything else is [`StoreError::Changed`] — someone else's bytes,
/// which papayu never writes over.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Expect<'a> {
    /// Nothing: the name is created only if nothing appeared meanwhile (no-replace).
    Absent,
    /// A regular file with exactly these bytes.
    Bytes(&'a [u8]),
    /// A regular file whose bytes hash to this sha256 (hex).
    Sha256(&'a str),
    /// A symlink to this target.
    Link(&'a [u8]),
    /// Nothing or a regular file, whatever it holds: papayu's own state files.
    Any,
}

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

    /// [`Root::write_atomic`] onto a path that must hold what `expect` says, checked right
    /// before the rename ([`StoreError::Changed`] otherwise, and nothing is written).
    pub(crate) fn write_atomic_expecting(
        &self,
        rel: &str,
        tmp: &str,
        bytes: &[u8],
        mode: Option<u32>,
        expect: Expect<'_>,
    ) -> StoreResult<()> {
        self.write_atomic_inner(rel, tmp, bytes, mode, true, expect)
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
        self.write_atomic_inner(rel, tmp, bytes, mode, sync_dir, Expect::Any)
    }

    fn write_atomic_inner(
        &self,
        rel: &str,
        tmp: &str,
        bytes: &[u8],
        mode: Option<u32>,
        sync_dir: bool,
        expect: Expect<'_>,
    ) -> StoreResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        let fd = self.write_staged_at(&dir, rel, tmp, bytes, mode)?;
        self.sync_staged_at(&dir, fd, rel, tmp)?;
        let result = self
            .replace_staged_at(&dir, rel, tmp, expect)
            .and_then(|()| {
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
        let (fd, name) = create_excl_at(dir, rel, 0o644)?;
        self.fill_new_at(dir, fd, name, rel, bytes, None)
    }

    /// Create the new file `rel` in directory `dir` with `len` bytes allocated (`fallocate`,
    /// no data written) and return it for its fsync: space set aside now for later. `Ok(None)`
    /// where the filesystem cannot allocate without writing (it then gets no reserve); a disk
    /// without the space is an error. On error the file is removed again.
    pub(crate) fn reserve_at(
        &self,
        dir: &OwnedFd,
        rel: &str,
        len: u64,
    ) -> StoreResult<Option<OwnedFd>> {
        let (fd, name) = create_excl_at(dir, rel, 0o600)?;
        let allocated = self
            .faults
            .hit(crate::fault::FaultKind::Write)
            .map_err(|e| StoreError::io(IoOp::Reserve, rel, e))
            .and_then(|()| allocate(&fd, len, rel));
        match allocated {
            Ok(true) => Ok(Some(fd)),
            other => {
                drop(fd);
                let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
                other.map(|_| None)
            }
        }
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

    /// The second half: rename the staged temp file onto `rel`, which may be anything
    /// [`Expect::Any`] allows (checked again: the target may have changed since staging). The
    /// directory is not fsynced here.
    pub(crate) fn rename_staged_at(&self, dir: &OwnedFd, rel: &str, tmp: &str) -> StoreResult<()> {
        self.replace_staged_at(dir, rel, tmp, Expect::Any)
    }

    /// Rename the staged temp file onto `rel` only if `rel` holds what `expect` says, checked
    /// right before the rename; a new name ([`Expect::Absent`]) is created with no-replace
    /// semantics, so a file created meanwhile is never clobbered. The directory is not fsynced.
    pub(crate) fn replace_staged_at(
        &self,
        dir: &OwnedFd,
        rel: &str,
        tmp: &str,
        expect: Expect<'_>,
    ) -> StoreResult<()> {
        let (_, name) = split_parent(rel);
        if let Expect::Absent = expect {
            return self.rename_new(dir, tmp, name, rel);
        }
        verify_at(dir, name, rel, expect)?;
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

    /// Rename `from` onto the new name `to`, failing with [`StoreError::Changed`] if `to`
    /// exists: `renameat2(RENAME_NOREPLACE)`, or where the filesystem lacks it a hard link
    /// (which fails on an existing name too) and the removal of `from`.
    fn rename_new(&self, dir: &OwnedFd, from: &str, to: &str, rel: &str) -> StoreResult<()> {
        self.faults
            .hit(crate::fault::FaultKind::Rename)
            .map_err(|e| StoreError::io(IoOp::Rename, rel, e))?;
        match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => Err(StoreError::changed(rel)),
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                match rustix::fs::linkat(dir, from, dir, to, AtFlags::empty()) {
                    Ok(()) => {}
                    Err(Errno::EXIST) => return Err(StoreError::changed(rel)),
                    Err(e) => return Err(StoreError::io(IoOp::Rename, rel, e)),
                }
                rustix::fs::unlinkat(dir, from, AtFlags::empty())
                    .map_err(|e| StoreError::io(IoOp::RemoveFile, rel, e))
            }
            Err(e) => Err(StoreError::io(IoOp::Rename, rel, e)),
        }
    }
}

/// Whether `name` in `dir` holds what `expect` says; [`StoreError::Changed`] if not. A file is
/// compared in full (its size first): a stat alone can miss an edit of the same size within one
/// timestamp tick.
pub(crate) fn verify_at(
    dir: &OwnedFd,
    name: &str,
    rel: &str,
    expect: Expect<'_>,
) -> StoreResult<()> {
    let same = match expect {
        Expect::Any => return writable_at(dir, name, rel),
        Expect::Absent => node_at(dir, name, rel)? == Node::Absent,
        Expect::Link(target) => match rustix::fs::readlinkat(dir, name, Vec::new()) {
            Ok(t) => t.as_bytes() == target,
            Err(Errno::NOENT | Errno::INVAL) => false,
            Err(e) => return Err(StoreError::io(IoOp::ReadLink, rel, e)),
        },
        Expect::Bytes(_) | Expect::Sha256(_) => {
            let fd = match open_read_at(dir, name) {
                Ok(fd) => fd,
                Err(Errno::NOENT | Errno::LOOP | Errno::NXIO) => {
                    return Err(StoreError::changed(rel));
                }
                Err(e) => return Err(StoreError::io(IoOp::Open, rel, e)),
            };
            let st = rustix::fs::fstat(&fd).map_err(|e| StoreError::io(IoOp::Stat, rel, e))?;
            let size = usize::try_from(st.st_size).unwrap_or(usize::MAX);
            match expect {
                _ if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile => false,
                Expect::Bytes(bytes) => size == bytes.len() && read_fd(&fd, size, rel)? == bytes,
                Expect::Sha256(sha256) => {
                    papayu_protocol::sha256_hex(&read_fd(&fd, size, rel)?) == sha256
                }
                _ => false,
            }
        }
    };
    if same {
        Ok(())
    } else {
        Err(StoreError::changed(rel))
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

/// Create the new file `rel` (its name in `dir`) with permission bits `mode`, never following a
/// symlink and never opening an existing file; returns it and its name.
pub(super) fn create_excl_at<'r>(
    dir: &OwnedFd,
    rel: &'r str,
    mode: u32,
) -> StoreResult<(OwnedFd, &'r str)> {
    let (_, name) = split_parent(rel);
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .map_err(|e| StoreError::io(IoOp::Create, rel, e))?;
    Ok((fd, name))
}

/// Allocate `len` bytes to `fd`: `Ok(false)` where the filesystem cannot without writing them.
#[cfg(target_os = "linux")]
fn allocate(fd: &OwnedFd, len: u64, rel: &str) -> StoreResult<bool> {
    match rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::empty(), 0, len) {
        Ok(()) => Ok(true),
        Err(Errno::OPNOTSUPP | Errno::NOSYS) => Ok(false),
        Err(e) => Err(StoreError::io(IoOp::Reserve, rel, e)),
    }
}

/// Elsewhere papayu reserves nothing: a rollback on a full disk then relies on removing what
/// the transaction wrote before writing an original back.
#[cfg(not(target_os = "linux"))]
fn allocate(_fd: &OwnedFd, _len: u64, _rel: &str) -> StoreResult<bool> {
    Ok(false)
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
