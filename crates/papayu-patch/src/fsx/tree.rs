//! Directories, symlinks and removals below the root, each with or without the fsync of its
//! parent.

use std::os::fd::OwnedFd;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::write::{Expect, verify_at};
use super::{Node, Root, StoreResult, node_at, parent_display, split_parent};
use crate::error::{EscapeReason, IoOp, StoreError};

impl Root {
    /// Run `f` on the handle of `rel`'s parent directory, then fsync that directory.
    fn synced_in_parent(
        &self,
        rel: &str,
        f: impl FnOnce(&OwnedFd) -> StoreResult<()>,
    ) -> StoreResult<()> {
        let (parent, _) = split_parent(rel);
        let dir = self.open_dir(parent)?;
        f(&dir)?;
        self.fsync(&dir, parent_display(parent))
    }

    /// Create directory `rel` (its parent must exist) and fsync the parent.
    pub(crate) fn mkdir(&self, rel: &str, mode: Option<u32>) -> StoreResult<()> {
        self.synced_in_parent(rel, |dir| self.mkdir_at(dir, rel, mode))
    }

    /// Create directory `rel` inside `dir` (its parent's handle); no fsync.
    pub(crate) fn mkdir_at(&self, dir: &OwnedFd, rel: &str, mode: Option<u32>) -> StoreResult<()> {
        let (_, name) = split_parent(rel);
        match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => {}
            Err(Errno::EXIST) => match node_at(dir, name, rel)? {
                Node::Dir { .. } => {}
                Node::Symlink => {
                    return Err(StoreError::escape(rel, EscapeReason::Symlink));
                }
                _ => return Err(StoreError::io(IoOp::CreateDir, rel, Errno::EXIST)),
            },
            Err(e) => return Err(StoreError::io(IoOp::CreateDir, rel, e)),
        }
        if let Some(m) = mode {
            let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
            let sub = rustix::fs::openat(dir, name, flags, Mode::empty())
                .map_err(|e| StoreError::io(IoOp::OpenDir, rel, e))?;
            rustix::fs::fchmod(&sub, Mode::from_raw_mode(m & 0o7777))
                .map_err(|e| StoreError::io(IoOp::Chmod, rel, e))?;
        }
        Ok(())
    }

    /// Remove a file or symlink (never following it) and fsync the parent. Missing is fine.
    pub(crate) fn remove_file(&self, rel: &str) -> StoreResult<()> {
        self.synced_in_parent(rel, |dir| self.remove_file_at(dir, rel))
    }

    /// Remove file or symlink `rel` inside `dir` (its parent's handle); no fsync.
    pub(crate) fn remove_file_at(&self, dir: &OwnedFd, rel: &str) -> StoreResult<()> {
        let (_, name) = split_parent(rel);
        match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(StoreError::io(IoOp::RemoveFile, rel, e)),
        }
    }

    /// Remove an empty directory and fsync the parent. Missing is fine.
    pub(crate) fn remove_dir(&self, rel: &str) -> StoreResult<()> {
        self.synced_in_parent(rel, |dir| self.remove_dir_at(dir, rel))
    }

    /// Remove file or symlink `rel` inside `dir` only if it holds what `expect` says, checked
    /// right before the removal ([`StoreError::Changed`] otherwise); no fsync. Missing is fine
    /// only when nothing was expected.
    pub(crate) fn remove_verified_at(
        &self,
        dir: &OwnedFd,
        rel: &str,
        expect: Expect<'_>,
    ) -> StoreResult<()> {
        let (_, name) = split_parent(rel);
        verify_at(dir, name, rel, expect)?;
        self.remove_file_at(dir, rel)
    }

    /// Remove empty directory `rel` inside `dir` (its parent's handle); no fsync.
    pub(crate) fn remove_dir_at(&self, dir: &OwnedFd, rel: &str) -> StoreResult<()> {
        let (_, name) = split_parent(rel);
        match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(StoreError::io(IoOp::RemoveDir, rel, e)),
        }
    }

    /// Create a symlink (only ever to restore one that a DELETE_DIR removed).
    pub(crate) fn symlink(&self, rel: &str, target: &[u8]) -> StoreResult<()> {
        self.synced_in_parent(rel, |dir| self.symlink_at(dir, rel, target))
    }

    /// Create symlink `rel` inside `dir` (its parent's handle); no fsync.
    pub(crate) fn symlink_at(&self, dir: &OwnedFd, rel: &str, target: &[u8]) -> StoreResult<()> {
        let (_, name) = split_parent(rel);
        let target = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(target);
        match rustix::fs::symlinkat(target, dir, name) {
            Ok(()) | Err(Errno::EXIST) => Ok(()),
            Err(e) => Err(StoreError::io(IoOp::CreateSymlink, rel, e)),
        }
    }

    /// Remove a path whatever it is (file, symlink or a whole tree), without fsync: used only for
    /// papayu's own scratch state (finished journals).
    pub(crate) fn remove_tree(&self, rel: &str) -> StoreResult<()> {
        match self.node(rel)? {
            Node::Absent => Ok(()),
            Node::Dir { .. } => {
                for name in self.list(rel)? {
                    self.remove_tree(&format!("{rel}/{name}"))?;
                }
                self.remove_dir_at(&self.open_dir(split_parent(rel).0)?, rel)
            }
            _ => self.remove_file_at(&self.open_dir(split_parent(rel).0)?, rel),
        }
    }

    /// Create every missing directory of `rel` (papayu's own state dirs only), each durably.
    pub(crate) fn ensure_dirs(&self, rel: &str) -> StoreResult<()> {
        for parent in self.ensure_dirs_unsynced(rel)? {
            self.fsync_dir(&parent)?;
        }
        Ok(())
    }

    /// [`Root::ensure_dirs`] without the fsyncs: returns the directories whose entries it
    /// changed (the parents of those it created), which the caller fsyncs before relying on
    /// the new directories.
    pub(crate) fn ensure_dirs_unsynced(&self, rel: &str) -> StoreResult<Vec<String>> {
        let mut changed = Vec::new();
        if rel.is_empty() {
            return Ok(changed);
        }
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
                    return Err(StoreError::escape(&so_far, EscapeReason::Symlink));
                }
                _ => return Err(StoreError::io(IoOp::CreateDir, &so_far, Errno::NOTDIR)),
            }
        }
        Ok(changed)
    }

    /// fsync a directory by relative path.
    pub(crate) fn fsync_dir(&self, rel: &str) -> StoreResult<()> {
        let dir = self.open_dir(rel)?;
        self.fsync(&dir, parent_display(rel))
    }
}
