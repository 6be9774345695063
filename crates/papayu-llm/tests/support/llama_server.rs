//! llama-cpp-python's OpenAI-compatible server with the SmolLM2 model `scripts/local-llm.sh`
//! sets up, on a free loopback port. One copy, included with `#[path]` by every real-model test
//! and bench (papayu-llm's and papayu-cli's), each using the part it needs.
#![allow(
    dead_code,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::expect_used,
    clippy::print_stderr
)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server; killed (and its log removed) when dropped, however the test ends.
pub struct LlamaServer {
    child: Child,
    log: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
    /// How long it took to answer `GET /v1/models`.
    pub ready_after: Duration,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// The user's model cache (`$XDG_CACHE_HOME` or `~/.cache`, then `papayu/models`, as the CLI
/// looks it up).
fn user_model_cache() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
        });
    papayu_llm::model_cache_dir(&cache)
}

/// A model of the user's cache; fails (never skips) when it is missing.
fn cached(path: PathBuf, name: &str) -> PathBuf {
    assert!(
        path.is_file(),
        "the local model {name} is missing at {}: run `scripts/local-llm.sh setup` (CI does) or `papayu model fetch`",
        path.display()
    );
    path
}

/// The cached small model (SmolLM2-135M): what the engine's and the server's tests run, fast.
pub fn cached_small_model() -> PathBuf {
    cached(
        papayu_llm::small_model_path(&user_model_cache()),
        papayu_llm::SMALL_MODEL_NAME,
    )
}

/// The cached default model (the one papayu runs when nothing is configured): what the tests
/// of a real fix run.
pub fn cached_default_model() -> PathBuf {
    cached(
        papayu_llm::default_model_path(&user_model_cache()),
        papayu_llm::DEFAULT_MODEL_NAME,
    )
}

/// `scripts/local-llm.sh env` → (python, model).
pub fn local_llm_paths() -> (String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/local-llm.sh"))
        .arg("env")
        .stderr(Stdio::inherit())
        .output()
        .expect("run scripts/local-llm.sh env");
    assert!(
        out.status.success(),
        "scripts/local-llm.sh env failed: {}",
        out.status
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8 from scripts/local-llm.sh env");
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{key} missing from scripts/local-llm.sh env:\n{text}"))
            .to_owned()
    };
    (value("PAPAYU_E2E_PYTHON"), value("PAPAYU_E2E_MODEL"))
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Whether `GET /v1/models` answers 200.
fn models_ready(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        format!("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
}

impl LlamaServer {
    /// Start it with these extra arguments (`--n_ctx`, threads …) and wait until it answers;
    /// panics with the log's tail if it exits or is not ready within `ready_timeout`.
    pub fn start(extra_args: &[&str], ready_timeout: Duration) -> LlamaServer {
        let (python, model) = local_llm_paths();
        let port = free_port();
        let log = std::env::temp_dir().join(format!("papayu-llama-server-{port}.log"));
        let log_file = std::fs::File::create(&log).expect("create the server log");
        let child = Command::new(python)
            .args(["-m", "llama_cpp.server", "--model", &model])
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(extra_args)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("clone the log handle"))
            .stderr(log_file)
            .spawn()
            .expect("spawn llama_cpp.server");
        let mut server = LlamaServer {
            child,
            log,
            port,
            ready_after: Duration::ZERO,
        };
        let started = Instant::now();
        while !models_ready(port) {
            if let Some(status) = server.child.try_wait().expect("poll llama_cpp.server") {
                panic!(
                    "llama_cpp.server exited early ({status}):\n{}",
                    server.log_tail()
                );
            }
            assert!(
                started.elapsed() < ready_timeout,
                "llama_cpp.server not ready after {ready_timeout:?}:\n{}",
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        server.ready_after = started.elapsed();
        eprintln!(
            "local model server ready on port {port} after {:?}",
            server.ready_after
        );
        server
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Its process id (for its peak RSS).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last 30 lines of its output.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}
