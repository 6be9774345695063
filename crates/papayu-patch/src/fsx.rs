//! papayu-patch's own filesystem layer: every access below the project root goes through a
//! directory handle and never follows a symlink.
//!
//! Paths are opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has
//! it, and otherwise one component at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`. A symlink
//! anywhere below the root, or a path that would leave it, is [`FsError::Escape`]. Writes are
//! temp file → write → fsync → rename → fsync of the directory.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::fault::Faults;

/// A low-level failure, before it is turned into a [`crate::PatchError`].
#[derive(Debug)]
pub(crate) enum FsError {
    /// A symlink below the root, or a path leaving it.
    Escape { path: String, reason: String },
    /// Any other I/O failure.
    Io {
        op: &'static str,
        path: String,
        source: std::io::Error,
    },
}

impl FsError {
    pub(crate) fn io(op: &'static str, path: &str, e: impl Into<std::io::Error>) -> Self {
        FsError::Io {
            op,
            path: path.to_owned(),
            source: e.into(),
        }
    }
}

pub(crate) type FsResult<T> = Result<T, FsError>;

/// What sits at a path (the path itself is never followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    /// Nothing (also when a parent is missing).
    Absent,
    /// A regular file with these permission bits.
    File { mode: u32 },
    /// A directory with these permission bits.
    Dir { mode: u32 },
    /// A symbolic link (never followed).
    Symlink,
    /// A FIFO, socket or device: papayu never touches those.
    Other,
}

static OPENAT2_UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// An open project root.
pub(crate) struct Root {
    fd: OwnedFd,
    path: PathBuf,
    pub(crate) faults: Faults,
}

pub(crate) fn split_parent(rel: &str) -> (&str, &str) {
    match rel.rfind('/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => ("", rel),
    }
}

fn check_rel(rel: &str) -> FsResult<()> {
    if rel.starts_with('/')
        || rel
            .split('/')
            .any(|s| s == ".." || s == "." || (s.is_empty() && !rel.is_empty()))
    {
        return Err(FsError::Escape {
            path: rel.to_owned(),
            reason: "not a plain relative path".to_owned(),
        });
    }
    Ok(())
}

impl Root {
    /// Open the project root directory (the root itself may be reached through a symlink: it is
    /// the user's own choice; nothing below it may be).
    pub(crate) fn open(path: &Path) -> FsResult<Root> {
        let fd = rustix::fs::open(
            path,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| FsError::io("open project root", &path.display().to_string(), e))?;
        Ok(Root {
            fd,
            path: path.to_path_buf(),
            faults: Faults::default(),
        })
    }

    /// The root as given.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Open the directory `rel` ("" is the root) without following any symlink.
    pub(crate) fn open_dir(&self, rel: &str) -> FsResult<OwnedFd> {
        check_rel(rel)?;
        if rel.is_empty() {
            return rustix::io::fcntl_dupfd_cloexec(&self.fd, 0)
                .map_err(|e| FsError::io("dup", ".", e));
        }
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        if !OPENAT2_UNSUPPORTED.load(Ordering::Relaxed) {
            match rustix::fs::openat2(
                &self.fd,
                rel,
                flags,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
            ) {
                Ok(fd) => return Ok(fd),
                Err(Errno::NOSYS | Errno::PERM) => {
                    OPENAT2_UNSUPPORTED.store(true, Ordering::Relaxed)
                }
                Err(Errno::AGAIN | Errno::INTR) => {}
                // A missing component: nothing to classify (a symlink would be ELOOP, an
                // escape EXDEV), so skip the slow walk — planning probes many absent paths.
                Err(Errno::NOENT) => return Err(FsError::io("open directory", rel, Errno::NOENT)),
                // Any other error: walk component by component to say precisely what is wrong.
                Err(_) => {}
            }
        }
        let mut cur =
            rustix::io::fcntl_dupfd_cloexec(&self.fd, 0).map_err(|e| FsError::io("dup", ".", e))?;
        let mut so_far = String::new();
        for seg in rel.split('/') {
            if !so_far.is_empty() {
                so_far.push('/');
            }
            so_far.push_str(seg);
            cur = match rustix::fs::openat(&cur, seg, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(e) => return Err(self.classify(&cur, seg, &so_far, e)),
            };
        }
        Ok(cur)
    }

    fn classify(&self, parent: &OwnedFd, name: &str, so_far: &str, e: Errno) -> FsError {
        if matches!(e, Errno::LOOP | Errno::NOTDIR | Errno::XDEV) {
            if let Ok(st) = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
                && FileType::from_raw_mode(st.st_mode) == FileType::Symlink
            {
                return FsError::Escape {
                    path: so_far.to_owned(),
                    reason: "is a symbolic link; papayu never writes through symlinks".to_owned(),
                };
            }
            if e == Errno::XDEV || e == Errno::LOOP {
                return FsError::Escape {
                    path: so_far.to_owned(),
                    reason: "resolves outside the project root".to_owned(),
                };
            }
        }
        FsError::io("open directory", so_far, e)
    }

    /// What is at `rel`, without following it. A symlinked parent is an escape; a missing
    /// parent or a parent that is a file means `Absent` / an error respectively.
    pub(crate) fn node(&self, rel: &str) -> FsResult<Node> {
        let (parent, name) = split_parent(rel);
        let dir = match self.open_dir(parent) {
            Ok(d) => d,
            Err(FsError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Node::Absent);
            }
            Err(e) => return Err(e),
        };
        node_at(&dir, name, rel)
    }

    /// Read a regular file without following symlinks.
    pub(crate) fn read(&self, rel: &str) -> FsResult<Vec<u8>> {
        let (parent, name) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        read_at(&dir, name, rel)
    }

    /// Read a symlink's target (for journaling a symlink inside a deleted directory).
    pub(crate) fn read_link(&self, rel: &str) -> FsResult<Vec<u8>> {
        let (parent, name) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        rustix::fs::readlinkat(&dir, name, Vec::new())
            .map(|c| c.into_bytes())
            .map_err(|e| FsError::io("readlink", rel, e))
    }

    /// Names in directory `rel`, sorted.
    pub(crate) fn list(&self, rel: &str) -> FsResult<Vec<String>> {
        let dir = self.open_dir(rel)?;
        let d =
            rustix::fs::Dir::read_from(&dir).map_err(|e| FsError::io("read directory", rel, e))?;
        let mut out = Vec::new();
        for entry in d {
            let entry = entry.map_err(|e| FsError::io("read directory", rel, e))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            match std::str::from_utf8(name) {
                Ok(s) => out.push(s.to_owned()),
                Err(_) => {
                    return Err(FsError::io(
                        "read directory",
                        rel,
                        std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            "a file name is not UTF-8",
                        ),
                    ));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Durably write `bytes` to `rel` via `tmp` in the same directory, replacing it atomically.
    /// `mode`: permission bits to set (None → default for a new file, subject to umask).
    pub(crate) fn write_atomic(
        &self,
        rel: &str,
        tmp: &str,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> FsResult<()> {
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
    ) -> FsResult<()> {
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
    ) -> FsResult<OwnedFd> {
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
                    .map_err(|e| FsError::io("create temp file", rel, e))?
            }
            Err(e) => return Err(FsError::io("create temp file", rel, e)),
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
    ) -> FsResult<OwnedFd> {
        let result = (|| {
            if let Some(m) = mode {
                rustix::fs::fchmod(&fd, Mode::from_raw_mode(m & 0o7777))
                    .map_err(|e| FsError::io("chmod", rel, e))?;
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
    ) -> FsResult<OwnedFd> {
        let (_, name) = split_parent(rel);
        let fd = rustix::fs::openat(
            dir,
            name,
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| FsError::io("create", rel, e))?;
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
    ) -> FsResult<()> {
        let result = self.fsync(&fd, rel);
        drop(fd);
        if result.is_err() {
            let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
        }
        result
    }

    /// The second half: rename the staged temp file onto `rel` (checked again: the target may
    /// have changed since staging). The directory is not fsynced here.
    pub(crate) fn rename_staged_at(&self, dir: &OwnedFd, rel: &str, tmp: &str) -> FsResult<()> {
        let (_, name) = split_parent(rel);
        writable_at(dir, name, rel)?;
        self.rename(dir, tmp, name, rel)
    }

    /// Create directory `rel` (its parent must exist) and fsync the parent.
    pub(crate) fn mkdir(&self, rel: &str, mode: Option<u32>) -> FsResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        self.mkdir_at(&dir, rel, mode)?;
        self.fsync(&dir, parent_display(parent))
    }

    /// Create directory `rel` inside `dir` (its parent's handle); no fsync.
    pub(crate) fn mkdir_at(&self, dir: &OwnedFd, rel: &str, mode: Option<u32>) -> FsResult<()> {
        let (_, name) = split_parent(rel);
        match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => {}
            Err(Errno::EXIST) => match node_at(dir, name, rel)? {
                Node::Dir { .. } => {}
                Node::Symlink => {
                    return Err(FsError::Escape {
                        path: rel.to_owned(),
                        reason: "is a symbolic link".to_owned(),
                    });
                }
                _ => return Err(FsError::io("create directory", rel, Errno::EXIST)),
            },
            Err(e) => return Err(FsError::io("create directory", rel, e)),
        }
        if let Some(m) = mode {
            let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
            let sub = rustix::fs::openat(dir, name, flags, Mode::empty())
                .map_err(|e| FsError::io("open directory", rel, e))?;
            rustix::fs::fchmod(&sub, Mode::from_raw_mode(m & 0o7777))
                .map_err(|e| FsError::io("chmod", rel, e))?;
        }
        Ok(())
    }

    /// Remove a file or symlink (never following it) and fsync the parent. Missing is fine.
    pub(crate) fn remove_file(&self, rel: &str) -> FsResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        self.remove_file_at(&dir, rel)?;
        self.fsync(&dir, parent_display(parent))
    }

    /// Remove file or symlink `rel` inside `dir` (its parent's handle); no fsync.
    pub(crate) fn remove_file_at(&self, dir: &OwnedFd, rel: &str) -> FsResult<()> {
        let (_, name) = split_parent(rel);
        match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(FsError::io("remove file", rel, e)),
        }
    }

    /// Remove an empty directory and fsync the parent. Missing is fine.
    pub(crate) fn remove_dir(&self, rel: &str) -> FsResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        self.remove_dir_at(&dir, rel)?;
        self.fsync(&dir, parent_display(parent))
    }

    /// Remove empty directory `rel` inside `dir` (its parent's handle); no fsync.
    pub(crate) fn remove_dir_at(&self, dir: &OwnedFd, rel: &str) -> FsResult<()> {
        let (_, name) = split_parent(rel);
        match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(FsError::io("remove directory", rel, e)),
        }
    }

    /// Create a symlink (only ever to restore one that a DELETE_DIR removed).
    pub(crate) fn symlink(&self, rel: &str, target: &[u8]) -> FsResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        self.symlink_at(&dir, rel, target)?;
        self.fsync(&dir, parent_display(parent))
    }

    /// Create symlink `rel` inside `dir` (its parent's handle); no fsync.
    pub(crate) fn symlink_at(&self, dir: &OwnedFd, rel: &str, target: &[u8]) -> FsResult<()> {
        let (_, name) = split_parent(rel);
        let target = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(target);
        match rustix::fs::symlinkat(target, dir, name) {
            Ok(()) | Err(Errno::EXIST) => Ok(()),
            Err(e) => Err(FsError::io("create symlink", rel, e)),
        }
    }

    /// Remove a path whatever it is (file, symlink or a whole tree), without fsync: used only for
    /// papayu's own scratch state (finished journals).
    pub(crate) fn remove_tree(&self, rel: &str) -> FsResult<()> {
        match self.node(rel)? {
            Node::Absent => Ok(()),
            Node::Dir { .. } => {
                for name in self.list(rel)? {
                    self.remove_tree(&format!("{rel}/{name}"))?;
                }
                let (parent, name) = split_parent(rel);
                let dir = self.open_dir(parent)?;
                match rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR) {
                    Ok(()) | Err(Errno::NOENT) => Ok(()),
                    Err(e) => Err(FsError::io("remove directory", rel, e)),
                }
            }
            _ => {
                let (parent, name) = split_parent(rel);
                let dir = self.open_dir(parent)?;
                match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => Ok(()),
                    Err(e) => Err(FsError::io("remove file", rel, e)),
                }
            }
        }
    }

    /// Create every missing directory of `rel` (papayu's own state dirs only), each durably.
    pub(crate) fn ensure_dirs(&self, rel: &str) -> FsResult<()> {
        for parent in self.ensure_dirs_unsynced(rel)? {
            self.fsync_dir(&parent)?;
        }
        Ok(())
    }

    /// [`Root::ensure_dirs`] without the fsyncs: returns the directories whose entries it
    /// changed (the parents of those it created), which the caller fsyncs before relying on
    /// the new directories.
    pub(crate) fn ensure_dirs_unsynced(&self, rel: &str) -> FsResult<Vec<String>> {
        let mut changed = Vec::new();
        let mut so_far = String::new();
        for seg in rel.split('/') {
            let parent = so_far.clone();
            if !so_far.is_empty() {
                so_far.push('/');
            }
            so_far.push_str(seg);
            match self.node(&so_far)? {
                Node::Dir { .. } => {}
                Node::Absent => {
                    let dir = self.open_dir(&parent)?;
                    self.mkdir_at(&dir, &so_far, None)?;
                    changed.push(parent);
                }
                Node::Symlink => {
                    return Err(FsError::Escape {
                        path: so_far,
                        reason: "is a symbolic link".to_owned(),
                    });
                }
                _ => return Err(FsError::io("create directory", &so_far, Errno::NOTDIR)),
            }
        }
        Ok(changed)
    }

    /// fsync a directory by relative path.
    pub(crate) fn fsync_dir(&self, rel: &str) -> FsResult<()> {
        let dir = self.open_dir(rel)?;
        self.fsync(&dir, parent_display(rel))
    }

    /// Create `rel` holding `bytes`, atomically and only if nothing is there (`Ok(false)` when
    /// something is), without fsync: for the project lock only. The bytes go to a temporary
    /// file that is then hard-linked to `rel` (`linkat` fails on an existing name), so no other
    /// process ever sees `rel` empty or half-written.
    pub(crate) fn create_exclusive_unsynced(&self, rel: &str, bytes: &[u8]) -> FsResult<bool> {
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
            .map_err(|e| FsError::io("create", rel, e))?;
        let linked = self.write_all(&fd, bytes, rel).and_then(|()| {
            match rustix::fs::linkat(&dir, tmp.as_str(), &dir, name, AtFlags::empty()) {
                Ok(()) => Ok(true),
                Err(Errno::EXIST) => Ok(false),
                Err(e) => Err(FsError::io("create", rel, e)),
            }
        });
        drop(fd);
        let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
        linked
    }

    /// Run `f` holding an exclusive `flock` on `rel` (created if missing, never removed): for
    /// the project lock's stale-lock reclaim, so two processes never both remove-and-retake.
    pub(crate) fn with_flock<T>(&self, rel: &str, f: impl FnOnce() -> T) -> FsResult<T> {
        let (parent, name) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        let fd = rustix::fs::openat(
            &dir,
            name,
            OFlags::CREATE | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| FsError::io("open", rel, e))?;
        rustix::fs::flock(&fd, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| FsError::io("flock", rel, e))?;
        let out = f();
        // Closing the descriptor releases the lock.
        drop(fd);
        Ok(out)
    }

    /// Remove a file or symlink (never following it) without fsync of its directory: for the
    /// project lock only. Missing is fine.
    pub(crate) fn remove_file_unsynced(&self, rel: &str) -> FsResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        self.remove_file_at(&dir, rel)
    }

    fn write_all(&self, fd: &OwnedFd, mut bytes: &[u8], rel: &str) -> FsResult<()> {
        self.faults
            .hit(crate::fault::FaultKind::Write)
            .map_err(|e| FsError::io("write", rel, e))?;
        while !bytes.is_empty() {
            match rustix::io::write(fd, bytes) {
                Ok(0) => return Err(FsError::io("write", rel, Errno::IO)),
                Ok(n) => bytes = &bytes[n..],
                Err(Errno::INTR) => {}
                Err(e) => return Err(FsError::io("write", rel, e)),
            }
        }
        Ok(())
    }

    /// fsync an open directory (or file); `rel` names it in errors.
    pub(crate) fn fsync(&self, fd: &impl AsFd, rel: &str) -> FsResult<()> {
        self.faults
            .hit(crate::fault::FaultKind::Fsync)
            .map_err(|e| FsError::io("fsync", rel, e))?;
        // Never retried: after a failed fsync the page cache state is unknown (fsyncgate).
        rustix::fs::fsync(fd).map_err(|e| FsError::io("fsync", rel, e))
    }

    /// fsync several open files or directories at once, one thread each (the calling thread
    /// takes the first), so that their writes and device cache flushes overlap instead of
    /// queueing one behind the other. Every one is attempted; the first error in `items` order
    /// is returned.
    pub(crate) fn fsync_all(&self, items: &[(BorrowedFd<'_>, &str)]) -> FsResult<()> {
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
                        Err(FsError::io(
                            "fsync",
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

    fn rename(&self, dir: &OwnedFd, from: &str, to: &str, rel: &str) -> FsResult<()> {
        self.faults
            .hit(crate::fault::FaultKind::Rename)
            .map_err(|e| FsError::io("rename", rel, e))?;
        rustix::fs::renameat(dir, from, dir, to).map_err(|e| FsError::io("rename", rel, e))
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
fn writable_at(dir: &OwnedFd, name: &str, rel: &str) -> FsResult<()> {
    match node_at(dir, name, rel)? {
        Node::Symlink => Err(FsError::Escape {
            path: rel.to_owned(),
            reason: "is a symbolic link; papayu never writes through symlinks".to_owned(),
        }),
        Node::Dir { .. } | Node::Other => Err(FsError::io(
            "write",
            rel,
            std::io::Error::new(std::io::ErrorKind::IsADirectory, "not a regular file"),
        )),
        Node::Absent | Node::File { .. } => Ok(()),
    }
}

/// Directory handles opened during one transaction, so that each directory is opened once (one
/// `openat(O_NOFOLLOW)` from its parent's handle) instead of once per file. Handles are of
/// directories verified to be real directories below the root when opened; an entry is dropped
/// when the transaction itself removes that directory.
pub(crate) struct DirCache<'r> {
    root: &'r Root,
    dirs: std::collections::HashMap<String, std::sync::Arc<OwnedFd>>,
}

impl<'r> DirCache<'r> {
    pub(crate) fn new(root: &'r Root) -> Self {
        Self {
            root,
            dirs: std::collections::HashMap::new(),
        }
    }

    /// The handle of directory `rel` ("" is the root).
    pub(crate) fn dir(&mut self, rel: &str) -> FsResult<std::sync::Arc<OwnedFd>> {
        if let Some(d) = self.dirs.get(rel) {
            return Ok(d.clone());
        }
        let fd = if rel.is_empty() {
            self.root.open_dir("")?
        } else {
            check_rel(rel)?;
            let (parent, name) = split_parent(rel);
            let parent_fd = self.dir(parent)?;
            let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
            match rustix::fs::openat(&*parent_fd, name, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(e) => return Err(self.root.classify(&parent_fd, name, rel, e)),
            }
        };
        let fd = std::sync::Arc::new(fd);
        self.dirs.insert(rel.to_owned(), fd.clone());
        Ok(fd)
    }

    /// The handle of the directory that holds `rel`.
    pub(crate) fn parent(&mut self, rel: &str) -> FsResult<std::sync::Arc<OwnedFd>> {
        self.dir(split_parent(rel).0)
    }

    /// Forget `rel` and everything below it (the transaction removed that directory).
    pub(crate) fn forget(&mut self, rel: &str) {
        self.dirs
            .retain(|k, _| !(k == rel || (k.starts_with(rel) && k[rel.len()..].starts_with('/'))));
    }
}

pub(crate) fn parent_display(parent: &str) -> &str {
    if parent.is_empty() { "." } else { parent }
}

fn node_at(dir: &OwnedFd, name: &str, rel: &str) -> FsResult<Node> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => {
            let mode = st.st_mode & 0o7777;
            Ok(match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Node::File { mode },
                FileType::Directory => Node::Dir { mode },
                FileType::Symlink => Node::Symlink,
                _ => Node::Other,
            })
        }
        Err(Errno::NOENT) => Ok(Node::Absent),
        Err(Errno::NOTDIR) => Ok(Node::Absent),
        Err(e) => Err(FsError::io("stat", rel, e)),
    }
}

fn read_at(dir: &OwnedFd, name: &str, rel: &str) -> FsResult<Vec<u8>> {
    let fd = match rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::LOOP) => {
            return Err(FsError::Escape {
                path: rel.to_owned(),
                reason: "is a symbolic link; papayu never reads or writes through symlinks"
                    .to_owned(),
            });
        }
        Err(e) => return Err(FsError::io("open", rel, e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| FsError::io("stat", rel, e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(FsError::io(
            "read",
            rel,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
        ));
    }
    let mut out = Vec::with_capacity(usize::try_from(st.st_size).unwrap_or(0));
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match rustix::io::read(&fd, &mut buf[..]) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(Errno::INTR) => {}
            Err(e) => return Err(FsError::io("read", rel, e)),
        }
    }
    Ok(out)
}
