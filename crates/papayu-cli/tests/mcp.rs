//! `papayu mcp` end to end: the server driven by a real MCP client, the official Python SDK
//! (PyPI `mcp`, installed by `scripts/mcp-client.sh setup`, which `.ci/run` calls), through
//! `tests/mcp_client.py`; and a client that goes away in the middle of an apply, spoken to with
//! raw JSON-RPC lines so the test controls the exact moment.
//!
//! The client is required: a machine without it (and without PyPI to install it) fails these
//! tests; they are never skipped.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const APP: &str = "def greet(name):\n    return 'hello ' + name\n";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of the venv holding the MCP SDK, installed now if it is not yet.
fn python() -> PathBuf {
    let out = Command::new("bash")
        .arg(workspace().join("scripts/mcp-client.sh"))
        .arg("setup")
        .output()
        .expect("run scripts/mcp-client.sh");
    assert!(
        out.status.success(),
        "the MCP client (PyPI `mcp`) is missing and could not be installed; run scripts/mcp-client.sh setup\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    fs_err::create_dir_all(dir.path().join("src")).expect("mkdir");
    fs_err::write(dir.path().join("src/app.py"), APP).expect("write");
    fs_err::write(dir.path().join("README.md"), "# demo\n").expect("write");
    dir
}

/// Run one scenario of `mcp_client.py` with `user` as the user's cache and configuration
/// directories (papayu's journal key lives there: processes of one user share them); its output
/// when it passed.
fn scenario(project: &Path, user: &Path, name: &str, env: &[(&str, &str)]) -> String {
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py"))
        .arg(env!("CARGO_BIN_EXE_papayu"))
        .arg(project)
        .arg(name)
        .env("MCP_E2E_SCRATCH", user)
        .envs(env.iter().copied())
        .output()
        .expect("run the MCP client");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains(&format!("MCP-E2E {name} OK")),
        "scenario {name} failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn mcp_session_with_the_python_sdk() {
    let dir = project();
    let user = tempfile::tempdir().expect("tempdir");
    scenario(dir.path(), user.path(), "session", &[]);
    assert_eq!(
        fs_err::read_to_string(dir.path().join("src/app.py")).expect("read"),
        APP
    );
}

#[test]
fn mcp_read_only_with_the_python_sdk() {
    let dir = project();
    let user = tempfile::tempdir().expect("tempdir");
    scenario(dir.path(), user.path(), "read-only", &[]);
    assert!(!dir.path().join("n.txt").exists());
}

/// A `papayu mcp` spoken to with raw JSON-RPC lines.
struct RawServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl RawServer {
    /// `papayu mcp` on `project`, with `user` as the user's cache and configuration directories.
    fn start(project: &Path, user: &Path) -> RawServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_papayu"))
            .args(["mcp", "--project"])
            .arg(project)
            .env("XDG_CACHE_HOME", user.join("cache"))
            .env("XDG_CONFIG_HOME", user.join("config"))
            .env("PAPAYU_SANDBOX", "off")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn papayu mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut server = RawServer {
            child,
            stdin,
            lines,
        };
        server.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        );
        let init = server.answer(0);
        assert_eq!(init["result"]["serverInfo"]["name"], "papayu", "{init}");
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    fn answer(&self, id: u64) -> Value {
        loop {
            let v = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("an answer within 30 s");
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Start an apply of `src/app.py` whose check sleeps, and return once the new bytes are on
    /// disk (the writes precede the checks): the transaction is in the middle.
    fn apply_slowly(&mut self, project: &Path) {
        let base = hex::encode(Sha256::digest(APP.as_bytes()));
        self.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "apply_plan", "arguments": {
                "plan": {"summary": "slow", "actions": [{"kind": "EDIT_FILE", "path": "src/app.py",
                    "base_sha256": base,
                    "edits": [{"op": "replace", "anchor": "def greet", "before": "hello", "after": "HELLO"}]}]},
                "checks": {"commands": ["sleep 20"]}}}}));
        let started = Instant::now();
        while fs_err::read_to_string(project.join("src/app.py")).expect("read") == APP {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the apply never wrote"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                started.elapsed() < within,
                "papayu mcp did not exit within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_client_disconnecting_mid_apply_rolls_the_apply_back() {
    let dir = project();
    let user = tempfile::tempdir().expect("tempdir");
    let mut server = RawServer::start(dir.path(), user.path());
    server.apply_slowly(dir.path());
    // The client goes away: stdin closes while the check runs.
    drop(server.stdin.take());
    let status = server.wait_exit(Duration::from_secs(40));
    assert!(status.success(), "papayu mcp exited with {status}");
    assert_eq!(
        fs_err::read_to_string(dir.path().join("src/app.py")).expect("read"),
        APP
    );
    let project = papayu_patch::Project::open(dir.path()).expect("open");
    assert!(project.history().expect("history").undo.is_empty());
}

#[test]
fn mcp_server_killed_mid_apply_recovers_on_next_open() {
    let dir = project();
    // The killed server and the next one are the same user's: the next can prove the journal.
    let user = tempfile::tempdir().expect("tempdir");
    let mut server = RawServer::start(dir.path(), user.path());
    server.apply_slowly(dir.path());
    server.child.kill().expect("kill");
    server.child.wait().expect("wait");
    // The half-finished transaction is on disk until the next open.
    assert_ne!(
        fs_err::read_to_string(dir.path().join("src/app.py")).expect("read"),
        APP
    );
    let sha = hex::encode(Sha256::digest(APP.as_bytes()));
    scenario(
        dir.path(),
        user.path(),
        "recovered",
        &[("MCP_E2E_EXPECT_SHA256", sha.as_str())],
    );
}
