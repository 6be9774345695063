//! Shared helpers: a temporary project root and configurations pointed at stubs.

use std::collections::BTreeMap;

use camino::Utf8PathBuf;
use papayu_integrations::IntegrationsConfig;
use papayu_integrations::config::{ResearchConfig, SearchBackend};

/// A temporary project directory, removed on drop.
pub struct TempProject {
    _dir: tempfile::TempDir,
    pub root: Utf8PathBuf,
}

pub fn project() -> TempProject {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = Utf8PathBuf::from_path_buf(dir.path().to_path_buf()).expect("utf-8 temp path");
    TempProject { _dir: dir, root }
}

pub fn write(root: &Utf8PathBuf, path: &str, text: &str) {
    let full = root.join(path);
    if let Some(parent) = full.parent() {
        fs_err::create_dir_all(parent).expect("mkdir");
    }
    fs_err::write(full, text).expect("write");
}

/// The integrations configuration of `vars`, with no conventional key variables set.
pub fn config(vars: &[(&str, &str)]) -> IntegrationsConfig {
    let env: BTreeMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    IntegrationsConfig::from_env(&env, &|_| None).expect("valid configuration")
}

/// Research on, through `backend`, with short timeouts.
pub fn research(backend: SearchBackend) -> ResearchConfig {
    let mut c = ResearchConfig::default();
    c.enabled = true;
    c.backend = Some(backend);
    c.timeout = std::time::Duration::from_secs(5);
    c
}
