//! Integration tests for papayu-memory (one binary, modules per feature).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    missing_docs
)]

mod block;
mod drift;
mod files;
mod patch;
mod remember;
mod set;

use camino::{Utf8Path, Utf8PathBuf};
use tempfile::TempDir;

/// A temp dir holding `config/` (not created: papayu creates it) and `project/` (created).
pub(crate) struct Dirs {
    _tmp: TempDir,
    pub config: Utf8PathBuf,
    pub project: Utf8PathBuf,
}

impl Dirs {
    pub fn new() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(tmp.path()).unwrap().to_owned();
        let project = root.join("project");
        fs_err::create_dir(&project).unwrap();
        Dirs {
            _tmp: tmp,
            config: root.join("config"),
            project,
        }
    }

    pub fn user_file(&self) -> Utf8PathBuf {
        self.config.join("papayu/preferences.json")
    }

    pub fn project_file(&self) -> Utf8PathBuf {
        self.project.join(".papa-yu/project.json")
    }

    pub fn write_user(&self, text: &str) {
        fs_err::create_dir_all(self.config.join("papayu")).unwrap();
        fs_err::write(self.user_file(), text).unwrap();
    }

    pub fn write_project(&self, text: &str) {
        fs_err::create_dir_all(self.project.join(".papa-yu")).unwrap();
        fs_err::write(self.project_file(), text).unwrap();
    }

    pub fn load(&self) -> papayu_memory::Memory {
        papayu_memory::Memory::load(&self.config, &self.project).unwrap()
    }

    pub fn load_err(&self) -> papayu_memory::MemoryError {
        papayu_memory::Memory::load(&self.config, &self.project).unwrap_err()
    }
}

/// Every entry of a directory, sorted (to check no temp files are left behind).
pub fn listing(dir: &Utf8Path) -> Vec<String> {
    let mut names: Vec<String> = fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}
