//! Running a checked command with a timeout and appending its output to the commands log.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use camino::Utf8Path;
use serde::Serialize;

use super::check::CheckedCommand;
use crate::error::AutomationError;

/// Where command output is appended (the `commands` log source), relative to the root.
pub const COMMANDS_LOG: &str = ".papa-yu/commands.log";
/// The log keeps this many bytes at most (the newest).
const LOG_MAX_BYTES: usize = 256 * 1024;
/// Output kept per stream of one run.
const OUTPUT_MAX_BYTES: usize = 64 * 1024;

/// How one command ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandRun {
    /// The command as shown.
    pub command: String,
    /// Its exit code (`None`: killed, e.g. on timeout).
    pub exit_code: Option<i32>,
    /// Whether the timeout ended it.
    pub timed_out: bool,
    /// Standard output (the last 64 KiB).
    pub stdout: String,
    /// Standard error (the last 64 KiB).
    pub stderr: String,
}

impl CommandRun {
    /// Exit code 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }
}

fn tail(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(OUTPUT_MAX_BYTES);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut out);
        }
        out
    })
}

/// Run `command` in `root` (no shell, stdin closed), killed after `timeout`; its output is
/// returned and appended to [`COMMANDS_LOG`].
pub fn run(
    command: &CheckedCommand,
    root: &Utf8Path,
    timeout: Duration,
) -> Result<CommandRun, AutomationError> {
    let mut child = Command::new(&command.program)
        .args(&command.args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| AutomationError::NotStarted {
            program: command.program.clone(),
            message: e.to_string(),
        })?;
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let run = CommandRun {
        command: command.display(),
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        stdout: tail(&out.join().unwrap_or_default()),
        stderr: tail(&err.join().unwrap_or_default()),
    };
    append_log(root, &run);
    Ok(run)
}

fn append_log(root: &Utf8Path, run: &CommandRun) {
    let path = root.join(COMMANDS_LOG);
    let mut log = fs_err::read(&path).unwrap_or_default();
    let status = match (run.timed_out, run.exit_code) {
        (true, _) => "timed out".to_owned(),
        (false, Some(c)) => format!("exit {c}"),
        (false, None) => "killed".to_owned(),
    };
    log.extend_from_slice(
        format!(
            "$ {} ({status})\n{}{}\n",
            run.command, run.stdout, run.stderr
        )
        .as_bytes(),
    );
    let start = log.len().saturating_sub(LOG_MAX_BYTES);
    if let Err(e) = papayu_fs::write_atomic(&path, &log[start..]) {
        tracing::warn!(%path, error = %e, "the commands log was not written");
    }
}

/// The [`COMMANDS_LOG`] text of the project at `root` (`None` when no command ran yet).
pub fn log_text(root: &Utf8Path) -> Option<String> {
    fs_err::read(root.join(COMMANDS_LOG))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}
