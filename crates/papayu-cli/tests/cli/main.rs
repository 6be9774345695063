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

mod errors;
mod integrations;
mod schema;
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

/// Run the real binary with `args` in `dir`, with a clean papayu environment.
pub fn papayu(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_papayu"))
        .args(args)
        .current_dir(dir)
        .env_remove("PAPAYU_PROTOCOL_VERSION")
        .env_remove("PAPAYU_PROTOCOL_DEFAULT")
        .env_remove("RUST_LOG")
        .output()
        .expect("papayu runs");
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
