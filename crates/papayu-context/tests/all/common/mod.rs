//! Shared helpers: temp projects on the real filesystem.

use std::path::Path;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_context::{ContextConfig, ContextEngine, Project};

/// A temp project; the directory lives as long as the value.
pub struct TempProject {
    pub _dir: tempfile::TempDir,
    pub root: Utf8PathBuf,
}

impl TempProject {
    pub fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).unwrap();
        let p = Self { _dir: dir, root };
        for (path, content) in files {
            p.write(path, content.as_bytes());
        }
        p
    }

    pub fn write(&self, rel: &str, bytes: &[u8]) {
        let full = self.root.join(rel);
        fs_err::create_dir_all(full.parent().unwrap()).unwrap();
        fs_err::write(full, bytes).unwrap();
    }

    pub fn project(&self) -> Project {
        Project::open(&self.root, hermetic_config()).unwrap()
    }

    pub fn engine(&self) -> ContextEngine {
        ContextEngine::new(&self.root, hermetic_config()).unwrap()
    }

    pub fn path(&self) -> &Utf8Path {
        &self.root
    }
}

/// SPEC defaults, minus the tool probes (the user's toolchain is not part of a test).
pub fn hermetic_config() -> ContextConfig {
    ContextConfig {
        env_probes: Vec::new(),
        ..ContextConfig::default()
    }
}

/// Copy a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in fs_err::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs_err::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            fs_err::copy(entry.path(), &target).unwrap();
        }
    }
}

#[cfg(unix)]
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}
