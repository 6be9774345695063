//! Scripted models on 127.0.0.1, temp projects, and the real `papayu` binary run with bounded
//! waits and a hermetic environment.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const LIB_RS: &str = "pub fn answer() -> u32 {\n    41\n}\n";
pub const LIB_PATCH: &str = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn answer() -> u32 {\n-    41\n+    42\n }\n";
pub const LIB_RS_42: &str = "pub fn answer() -> u32 {\n    42\n}\n";
pub const NOTES_MD: &str = "# Notes\n\nanswer() returns 42.\n";
/// An API key shaped like a real one; it must never reach a file papayu writes.
pub const API_KEY: &str = "sk-test-SECRET-e2e-0123456789abcdefABCDEF";

/// How long one `papayu` process may take before the test fails (it is killed).
const PROCESS_TIMEOUT: Duration = Duration::from_secs(60);

/// The body of a chat completion whose message is `text`.
pub fn completion(text: &str) -> Value {
    json!({
        "id": "chatcmpl-e2e", "object": "chat.completion", "model": "scripted",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

/// The answer as a response: one JSON document, or server-sent events when the request
/// asked for a stream (as `papayu chat` does on a terminal).
pub fn answer_response(req: &Request, text: &str) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    if body["stream"] == json!(true) {
        let mut sse = String::new();
        // Two chunks, so the reader has to join them.
        let mid = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        for part in [&text[..mid], &text[mid..]] {
            let chunk = json!({"choices": [{"index": 0, "delta": {"content": part}, "finish_reason": null}]});
            sse.push_str(&format!("data: {chunk}\n\n"));
        }
        let last = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}});
        sse.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
        ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream")
    } else {
        ResponseTemplate::new(200).set_body_json(completion(text))
    }
}

struct Script {
    answers: Vec<String>,
    next: AtomicUsize,
}

impl Respond for Script {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        match self.answers.get(i) {
            Some(a) => answer_response(req, a),
            // 400 is not retried: a test that asks more than it scripted fails visibly.
            None => ResponseTemplate::new(400).set_body_string("the script has no more answers"),
        }
    }
}

/// A model on 127.0.0.1 that answers the scripted texts in order, across every `papayu`
/// process of a test. It owns the runtime the mock server's bookkeeping runs on.
pub struct Model {
    pub server: MockServer,
    rt: tokio::runtime::Runtime,
}

fn text_of(a: &Value) -> String {
    match a {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Model {
    /// A model answering `answers` in order (strings verbatim, other JSON serialised).
    pub fn start(answers: &[Value]) -> Model {
        Self::with(Script {
            answers: answers.iter().map(text_of).collect(),
            next: AtomicUsize::new(0),
        })
    }

    /// A model answering with `responder`.
    pub fn with(responder: impl Respond + 'static) -> Model {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(async {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .respond_with(responder)
                .mount(&server)
                .await;
            server
        });
        Model { server, rt }
    }

    /// The base URL papayu is configured with.
    pub fn url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    /// Every request the model received, in order.
    pub fn received(&self) -> Vec<Request> {
        self.rt
            .block_on(self.server.received_requests())
            .unwrap_or_default()
    }

    /// The JSON bodies the model received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.received()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap())
            .collect()
    }
}

pub fn sha(bytes: &[u8]) -> String {
    papayu_protocol::sha256_hex(bytes)
}

pub fn plan_answer(summary: &str) -> Value {
    json!({"actions": [], "summary": summary})
}

pub fn read_request(path: &str) -> Value {
    json!({"actions": [], "summary": "I need to read the file first.", "context_requests": [{"type": "read_file", "path": path}]})
}

/// Patch `src/lib.rs` (41 → 42) against `base` and create `docs/NOTES.md`.
pub fn change_answer(base: &str) -> Value {
    json!({"actions": [
        {"kind": "PATCH_FILE", "path": "src/lib.rs", "base_sha256": base, "patch": LIB_PATCH},
        {"kind": "CREATE_FILE", "path": "docs/NOTES.md", "content": NOTES_MD}
    ], "summary": "answer is 42, with a note"})
}

/// Output of one `papayu` run.
#[derive(Debug)]
pub struct Run {
    /// Exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Panic with the whole output unless the exit code is `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit code: {self:#?}");
        self
    }

    /// Stdout parsed as exactly one JSON document (trailing text fails).
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {self:#?}"))
    }
}

/// A temp directory holding the project, the user's config directory (XDG_CONFIG_HOME), a
/// HOME, and nothing else: anything else appearing in it was written outside the project.
pub struct Project {
    pub tmp: tempfile::TempDir,
}

pub type Tree = BTreeMap<String, Vec<u8>>;

impl Project {
    pub fn new(files: &[(&str, &str)]) -> Project {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["project", "config", "home"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let project = Project { tmp };
        for (p, text) in files {
            let path = project.root().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        project
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().join("project")
    }

    pub fn config_dir(&self) -> PathBuf {
        self.tmp.path().join("config")
    }

    /// The project's files, byte for byte, without papayu's own `.papa-yu/`.
    pub fn tree(&self) -> Tree {
        tree(&self.root())
    }

    /// Whatever the temp directory holds besides the project, config and home directories.
    pub fn outside(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !["project", "config", "home"].contains(&n.as_str()))
            .collect();
        names.sort();
        names
    }

    /// Every file papayu wrote for itself: `.papa-yu/` and the user config directory.
    pub fn papayu_files(&self) -> Tree {
        let mut all = tree_all(&self.root().join(".papa-yu"));
        all.extend(
            tree_all(&self.config_dir())
                .into_iter()
                .map(|(k, v)| (format!("config/{k}"), v)),
        );
        all
    }

    /// The trace files under `.papa-yu/traces/`, parsed.
    pub fn traces(&self) -> Vec<Value> {
        let dir = self.root().join(".papa-yu/traces");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
            .collect()
    }

    /// A `papayu` command on this project against `model` with a clean environment:
    /// nothing of the user's (no PAPAYU_*, HOME and XDG_CONFIG_HOME in the temp dir).
    pub fn command(&self, model: &Model, env: &[(&str, &str)], args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_papayu"));
        cmd.args(args)
            .current_dir(self.root())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.tmp.path().join("home"))
            .env("XDG_CONFIG_HOME", self.config_dir())
            .env("PAPAYU_LLM_API_URL", model.url())
            .env("PAPAYU_LLM_MODEL", "scripted")
            .env("PAPAYU_LLM_TIMEOUT_SEC", "20");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Run `papayu args` (stdin empty, so a confirmation question is answered "no").
    pub fn papayu(&self, model: &Model, env: &[(&str, &str)], args: &[&str]) -> Run {
        run_bounded(self.command(model, env, args))
    }
}

/// Run a command to the end, killing it (and failing) after [`PROCESS_TIMEOUT`].
pub fn run_bounded(mut cmd: Command) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn papayu");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > PROCESS_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("papayu {cmd:?} still running after {PROCESS_TIMEOUT:?}; killed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code(),
        stdout: String::from_utf8(out_reader.join().unwrap()).expect("utf-8 stdout"),
        stderr: String::from_utf8(err_reader.join().unwrap()).expect("utf-8 stderr"),
    }
}

/// All files under `dir` (relative paths, `/`-separated), skipping `.papa-yu/` at the top.
pub fn tree(dir: &Path) -> Tree {
    let mut out = tree_all(dir);
    out.retain(|k, _| !k.starts_with(".papa-yu/"));
    out
}

fn tree_all(dir: &Path) -> Tree {
    fn walk(base: &Path, dir: &Path, out: &mut Tree) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let e = e.unwrap();
            let p = e.path();
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if e.file_type().unwrap().is_dir() {
                // Directories count too, so an empty directory left behind is a difference.
                out.insert(format!("{rel}/"), Vec::new());
                walk(base, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = Tree::new();
    walk(dir, dir, &mut out);
    out
}

/// A readable difference between two trees, for assertion messages.
pub fn tree_diff(before: &Tree, after: &Tree) -> String {
    let mut lines = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            None => lines.push(format!("- {k}")),
            Some(w) if w != v => lines.push(format!(
                "~ {k}: {:?} → {:?}",
                String::from_utf8_lossy(v),
                String::from_utf8_lossy(w)
            )),
            _ => {}
        }
    }
    for k in after.keys().filter(|k| !before.contains_key(*k)) {
        lines.push(format!("+ {k}"));
    }
    lines.join("\n")
}

/// Assert the project's tree (without `.papa-yu/`) is `expected`, byte for byte.
#[track_caller]
pub fn assert_tree(project: &Project, expected: &Tree, context: &dyn std::fmt::Debug) {
    let now = project.tree();
    assert!(
        &now == expected,
        "project tree differs:\n{}\n{context:#?}",
        tree_diff(expected, &now)
    );
}
