//! [`DirCache`]: each directory of a transaction opened once.

use std::os::fd::OwnedFd;

use rustix::fs::{Mode, OFlags};

use super::{Root, StoreResult, check_rel, split_parent};

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
    pub(crate) fn dir(&mut self, rel: &str) -> StoreResult<std::sync::Arc<OwnedFd>> {
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
    pub(crate) fn parent(&mut self, rel: &str) -> StoreResult<std::sync::Arc<OwnedFd>> {
        self.dir(split_parent(rel).0)
    }

    /// Forget `rel` and everything below it (the transaction removed that directory).
    pub(crate) fn forget(&mut self, rel: &str) {
        self.dirs
            .retain(|k, _| !(k == rel || (k.starts_with(rel) && k[rel.len()..].starts_with('/'))));
    }
}
