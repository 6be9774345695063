//! End-to-end tests of the `papayu` binary: real process, real files, exit codes and output.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

mod apply_patch;
mod config;
mod discovery;
mod errors;
mod exits;
mod git;
mod integrations;
mod lang;
mod machine;
mod prompt;
mod schema;
mod terminal;
mod tools;
mod validate;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Output of one `papayu` run.
pub struct Run {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// One user configuration directory for every run (papayu keeps the user's journal key there),
/// outside the user's own.
fn config_home() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// Run the real binary with `args` in `dir`, with a clean papayu environment.
pub fn papayu(dir: &Path, args: &[&str]) -> Run {
    papayu_env(dir, &[], args)
}

/// [`papayu`] with `env` set, and no colour variable but those `env` sets.
pub fn papayu_env(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_papayu"));
    cmd.args(args)
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", config_home());
    for var in [
        "PAPAYU_PROTOCOL_VERSION",
        "PAPAYU_PROTOCOL_DEFAULT",
        "RUST_LOG",
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        // The language of human output: English unless a test asks for another.
        "PAPAYU_LANG",
        "LC_ALL",
        "LC_MESSAGES",
        "LANG",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("papayu runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// The repository root (for `examples/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Run the real binary in `dir` with nothing of the user's environment: `HOME` (and the XDG
/// directories beneath it) is `home`, no `PAPAYU_*` but `env`.
pub fn hermetic(dir: &Path, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_papayu"));
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("papayu runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// Every path beneath `dir`, sorted.
pub fn tree_of(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            }
            out.push(path);
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}
