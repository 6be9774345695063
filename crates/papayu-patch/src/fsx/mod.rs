//! papayu-patch's own filesystem layer: every access below the project root goes through a
//! directory handle and never follows a symlink; it touches only paths beneath the open root.
//!
//! Paths are opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has
//! it, and otherwise one component at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`. A symlink
//! anywhere below the root, or a path that would leave it, is
//! [`StoreError::PathEscapesRoot`]. Writes are temp file → write → fsync → rename → fsync of the
//! directory (`write`); directories and removals are in `tree`, the lock file's primitives in
//! `lockfile`, per-transaction directory handles in [`DirCache`].

mod dircache;
mod lockfile;
mod tree;
mod write;

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::error::{EscapeReason, IoOp, StoreError};
use crate::fault::Faults;

pub(crate) use dircache::DirCache;
pub(crate) use write::Expect;

pub(crate) type StoreResult<T> = Result<T, StoreError>;

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

fn check_rel(rel: &str) -> StoreResult<()> {
    if rel.starts_with('/')
        || rel
            .split('/')
            .any(|s| s == ".." || s == "." || (s.is_empty() && !rel.is_empty()))
    {
        return Err(StoreError::escape(rel, EscapeReason::NotPlainRelative));
    }
    Ok(())
}

impl Root {
    /// Open the project root directory (the root itself may be reached through a symlink: it is
    /// the user's own choice; nothing below it may be).
    pub(crate) fn open(path: &Path) -> StoreResult<Root> {
        let fd = rustix::fs::open(
            path,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| StoreError::io(IoOp::OpenRoot, &path.display().to_string(), e))?;
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
    pub(crate) fn open_dir(&self, rel: &str) -> StoreResult<OwnedFd> {
        check_rel(rel)?;
        if rel.is_empty() {
            return rustix::io::fcntl_dupfd_cloexec(&self.fd, 0)
                .map_err(|e| StoreError::io(IoOp::Dup, ".", e));
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
                Err(Errno::NOENT) => return Err(StoreError::io(IoOp::OpenDir, rel, Errno::NOENT)),
                // Any other error: walk component by component to say precisely what is wrong.
                Err(_) => {}
            }
        }
        let mut cur = rustix::io::fcntl_dupfd_cloexec(&self.fd, 0)
            .map_err(|e| StoreError::io(IoOp::Dup, ".", e))?;
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

    fn classify(&self, parent: &OwnedFd, name: &str, so_far: &str, e: Errno) -> StoreError {
        if matches!(e, Errno::LOOP | Errno::NOTDIR | Errno::XDEV) {
            if let Ok(st) = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
                && FileType::from_raw_mode(st.st_mode) == FileType::Symlink
            {
                return StoreError::escape(so_far, EscapeReason::Symlink);
            }
            if e == Errno::XDEV || e == Errno::LOOP {
                return StoreError::escape(so_far, EscapeReason::OutsideRoot);
            }
        }
        StoreError::io(IoOp::OpenDir, so_far, e)
    }

    /// What is at `rel`, without following it. A symlinked parent is an escape; a missing
    /// parent or a parent that is a file means `Absent` / an error respectively.
    pub(crate) fn node(&self, rel: &str) -> StoreResult<Node> {
        let (parent, name) = split_parent(rel);
        let dir = match self.open_dir(parent) {
            Ok(d) => d,
            Err(e) if e.is_not_found() => {
                return Ok(Node::Absent);
            }
            Err(e) => return Err(e),
        };
        node_at(&dir, name, rel)
    }

    /// Read a regular file without following symlinks.
    pub(crate) fn read(&self, rel: &str) -> StoreResult<Vec<u8>> {
        let (parent, name) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        read_at(&dir, name, rel)
    }

    /// Read a symlink's target (for journaling a symlink inside a deleted directory).
    pub(crate) fn read_link(&self, rel: &str) -> StoreResult<Vec<u8>> {
        let (parent, name) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        rustix::fs::readlinkat(&dir, name, Vec::new())
            .map(|c| c.into_bytes())
            .map_err(|e| StoreError::io(IoOp::ReadLink, rel, e))
    }

    /// Names in directory `rel`, sorted.
    pub(crate) fn list(&self, rel: &str) -> StoreResult<Vec<String>> {
        let dir = self.open_dir(rel)?;
        let d =
            rustix::fs::Dir::read_from(&dir).map_err(|e| StoreError::io(IoOp::ReadDir, rel, e))?;
        let mut out = Vec::new();
        for entry in d {
            let entry = entry.map_err(|e| StoreError::io(IoOp::ReadDir, rel, e))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            match std::str::from_utf8(name) {
                Ok(s) => out.push(s.to_owned()),
                Err(_) => {
                    return Err(StoreError::unusable(
                        IoOp::ReadDir,
                        rel,
                        std::io::ErrorKind::InvalidData,
                        "a file name is not UTF-8",
                    ));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

pub(crate) fn parent_display(parent: &str) -> &str {
    if parent.is_empty() { "." } else { parent }
}

fn node_at(dir: &OwnedFd, name: &str, rel: &str) -> StoreResult<Node> {
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
        Err(e) => Err(StoreError::io(IoOp::Stat, rel, e)),
    }
}

fn read_at(dir: &OwnedFd, name: &str, rel: &str) -> StoreResult<Vec<u8>> {
    let fd = match open_read_at(dir, name) {
        Ok(fd) => fd,
        Err(Errno::LOOP) => {
            return Err(StoreError::escape(rel, EscapeReason::Symlink));
        }
        Err(e) => return Err(StoreError::io(IoOp::Open, rel, e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| StoreError::io(IoOp::Stat, rel, e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(StoreError::unusable(
            IoOp::Read,
            rel,
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    read_fd(&fd, usize::try_from(st.st_size).unwrap_or(0), rel)
}

/// Open `name` in `dir` for reading, never following a symlink, and never waiting: opening a
/// FIFO for reading would otherwise wait for a writer forever (a FIFO committed at
/// `.papa-yu/tx/stack.json` hung every command). Callers check it is a regular file; on one the
/// flag changes nothing.
fn open_read_at(dir: &OwnedFd, name: &str) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The rest of an open file's bytes (`size`: the expected length, a capacity hint).
fn read_fd(fd: &OwnedFd, size: usize, rel: &str) -> StoreResult<Vec<u8>> {
    let mut out = Vec::with_capacity(size);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match rustix::io::read(fd, &mut buf[..]) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(Errno::INTR) => {}
            Err(e) => return Err(StoreError::io(IoOp::Read, rel, e)),
        }
    }
    Ok(out)
}
