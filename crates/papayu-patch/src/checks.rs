//! Check commands run after writing and before committing (SPEC §5.5).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Serialize, Serializer};

use crate::fsx::{Node, Root};

/// How much of a check's output is kept (the tail).
pub const OUTPUT_TAIL_BYTES: usize = 64 * 1024;

/// Where the last check output is saved: the `check` log source of SPEC §6.1.
pub const CHECK_LOG: &str = ".papa-yu/logs/check.log";

/// Which checks a transaction runs before it commits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Checks {
    /// No checks.
    #[default]
    None,
    /// These shell command lines (`sh -c`), in order, in the project root.
    Commands(Vec<String>),
    /// Detect from the project: `Cargo.toml` → `cargo check`; `package.json` scripts →
    /// `npm run -s typecheck|build|test` as present; `pyproject.toml` / `requirements.txt` →
    /// `python3 -m compileall -q .`.
    Detect,
}

/// How check commands are confined. A check runs code the model wrote (the project's tests,
/// after a change): confined, it can write only inside the project and a temporary directory,
/// and reach no network, where the operating system allows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sandbox {
    /// Run as the user, unconfined.
    #[default]
    None,
    /// Run through a launcher: `program args… --write <project> --write <tmp> -- sh -c <cmd>`.
    /// The launcher confines itself (e.g. Landlock) and then executes the rest; it must exit
    /// with the command's status. `papayu sandbox-exec` is one.
    Launcher {
        /// The launcher executable.
        program: std::path::PathBuf,
        /// Arguments before the writable directories.
        args: Vec<std::ffi::OsString>,
    },
}

/// The outcome of one check command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// The command line.
    pub command: String,
    /// Whether it exited 0 within the timeout.
    pub success: bool,
    /// How it ended (serialised as its message: `exited with 0`, `timed out after 120 s and was
    /// killed`, …).
    pub status: CheckStatus,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The last [`OUTPUT_TAIL_BYTES`] of combined stdout and stderr, decoded lossily.
    pub output: String,
    /// Why the transaction's judge ([`crate::ApplyOptions::judge`]) refused this run, when it
    /// did: a run may exit 0 and still not verify a change, or exit 1 and verify it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
}

/// How a check command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckStatus {
    /// It exited with this code (0 is success).
    Exited(i32),
    /// It was killed by a signal.
    Signalled,
    /// It ran past its timeout and its process group was killed.
    TimedOut(Duration),
    /// The transaction was cancelled while it ran, and its process group was killed.
    Cancelled,
    /// The pipe for its output could not be created (the OS error's message).
    NoPipe(String),
    /// It could not be started (the OS error's message).
    NotStarted(String),
    /// Waiting for it failed (the OS error's message).
    NotWaited(String),
}

impl CheckStatus {
    /// Whether the command exited 0.
    pub fn success(&self) -> bool {
        *self == CheckStatus::Exited(0)
    }
}

impl std::fmt::Display for CheckStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckStatus::Exited(code) => write!(f, "exited with {code}"),
            CheckStatus::Signalled => f.write_str("was killed by a signal"),
            CheckStatus::TimedOut(after) => write!(
                f,
                "timed out after {} s and was killed",
                after.as_secs_f64()
            ),
            CheckStatus::Cancelled => f.write_str("was cancelled and killed"),
            CheckStatus::NoPipe(e) => write!(f, "could not create a pipe: {e}"),
            CheckStatus::NotStarted(e) => write!(f, "could not start: {e}"),
            CheckStatus::NotWaited(e) => write!(f, "could not wait for it: {e}"),
        }
    }
}

impl Serialize for CheckStatus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The commands [`Checks::Detect`] picks for the project at `root`.
pub(crate) fn detect(root: &Root) -> Vec<String> {
    let is_file = |p: &str| matches!(root.node(p), Ok(Node::File { .. }));
    let mut out = Vec::new();
    if is_file("Cargo.toml") {
        out.push("cargo check".to_owned());
    }
    if is_file("package.json")
        && let Ok(bytes) = root.read("package.json")
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
        && let Some(scripts) = v.get("scripts").and_then(|s| s.as_object())
    {
        for s in ["typecheck", "build", "test"] {
            if scripts.contains_key(s) {
                out.push(format!("npm run -s {s}"));
            }
        }
    }
    if is_file("pyproject.toml") || is_file("requirements.txt") {
        out.push("python3 -m compileall -q .".to_owned());
    }
    out
}

/// Keep the tail of a byte stream.
struct Tail {
    buf: Vec<u8>,
    dropped: u64,
}

impl Tail {
    fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
        if self.buf.len() > 2 * OUTPUT_TAIL_BYTES {
            let cut = self.buf.len() - OUTPUT_TAIL_BYTES;
            self.dropped += cut as u64;
            self.buf.drain(..cut);
        }
    }

    /// UTF-8-safe text: the cut never splits a character (leading continuation bytes skipped).
    fn text(mut self) -> String {
        if self.buf.len() > OUTPUT_TAIL_BYTES {
            let cut = self.buf.len() - OUTPUT_TAIL_BYTES;
            self.dropped += cut as u64;
            self.buf.drain(..cut);
        }
        let mut start = 0;
        if self.dropped > 0 {
            while start < self.buf.len().min(4) && (self.buf[start] & 0xC0) == 0x80 {
                start += 1;
            }
        }
        let body = String::from_utf8_lossy(&self.buf[start..]).into_owned();
        if self.dropped > 0 {
            format!(
                "...[{} bytes of earlier output omitted]...\n{body}",
                self.dropped
            )
        } else {
            body
        }
    }
}

/// A fresh directory name outside any project for one check's Python bytecode.
fn pycache_dir() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("papayu-pycache-{}-{n}", std::process::id()))
}

/// Run one command in `dir` (`sh -c`, its own process group, confined by `sandbox`) with a
/// timeout; on timeout, or when `cancel` is set, its whole process group is killed. Nothing
/// is journaled: the transaction runs it as a check; callers run it before a change (a
/// baseline) too.
pub fn run_check(
    dir: &Path,
    command: &str,
    timeout: Duration,
    cancel: Option<&std::sync::atomic::AtomicBool>,
    sandbox: &Sandbox,
) -> CheckReport {
    let started = Instant::now();
    let fail = |status: CheckStatus| CheckReport {
        command: command.to_owned(),
        success: false,
        status,
        duration_ms: started.elapsed().as_millis() as u64,
        output: String::new(),
        rejected: None,
    };
    let (mut reader, writer) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => return fail(CheckStatus::NoPipe(e.to_string())),
    };
    let writer2 = match writer.try_clone() {
        Ok(w) => w,
        Err(e) => return fail(CheckStatus::NoPipe(e.to_string())),
    };
    let scratch = std::env::temp_dir();
    // The launcher runs in `dir`: a relative project path would name another directory there.
    let dir_abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    let mut cmd = match sandbox {
        Sandbox::None => Command::new("sh"),
        Sandbox::Launcher { program, args } => {
            let mut c = Command::new(program);
            c.args(args)
                .arg("--write")
                .arg(&dir_abs)
                .arg("--write")
                .arg(&scratch)
                .arg("--")
                .arg("sh");
            c
        }
    };
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer2);
    // Its own process group, so a timeout kills everything it started.
    cmd.process_group(0);
    // Python (the detected `compileall`, or a test run) writes bytecode next to the sources,
    // i.e. into the project, outside the transaction: send it to a directory of its own.
    let pycache = pycache_dir();
    cmd.env("PYTHONPYCACHEPREFIX", &pycache);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return fail(CheckStatus::NotStarted(e.to_string())),
    };
    // The parent's copies of the write end are in `cmd`; drop them so EOF arrives.
    drop(cmd);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tail = Tail {
            buf: Vec::new(),
            dropped: 0,
        };
        let mut buf = [0u8; 8192];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => tail.push(&buf[..n]),
            }
        }
        let _ = tx.send(tail.text());
    });
    let pgid = rustix::process::Pid::from_child(&child);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Ok(st),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
                let _ = child.wait();
                break Err(CheckStatus::TimedOut(timeout));
            }
            Ok(None) if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) => {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
                let _ = child.wait();
                break Err(CheckStatus::Cancelled);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => break Err(CheckStatus::NotWaited(e.to_string())),
        }
    };
    // Grandchildren that outlive the command may hold the pipe open: stop waiting after 2 s.
    let output = rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    let _ = fs_err::remove_dir_all(&pycache);
    let status = match status {
        Ok(st) => match st.code() {
            Some(c) => CheckStatus::Exited(c),
            None => CheckStatus::Signalled,
        },
        Err(s) => s,
    };
    CheckReport {
        command: command.to_owned(),
        success: status.success(),
        status,
        duration_ms: started.elapsed().as_millis() as u64,
        output,
        rejected: None,
    }
}

/// Save the checks' combined output as the `check` log source.
pub(crate) fn save_log(root: &Root, reports: &[CheckReport]) {
    let mut text = String::new();
    for r in reports {
        text.push_str(&format!("$ {}\n{}\n[{}]\n", r.command, r.output, r.status));
    }
    let res = root
        .ensure_dirs(".papa-yu/logs")
        .and_then(|()| root.write_atomic(CHECK_LOG, ".check.log.tmp", text.as_bytes(), None));
    if let Err(e) = res {
        tracing::warn!(error = ?e, "could not save the check log");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_never_splits_a_character() {
        let mut t = Tail {
            buf: Vec::new(),
            dropped: 0,
        };
        let s = "я".repeat(OUTPUT_TAIL_BYTES); // 2 bytes each
        t.push(b"x");
        t.push(s.as_bytes());
        let text = t.text();
        assert!(!text.contains('\u{FFFD}'), "a character was split");
        assert!(text.starts_with("...["));
    }
}
