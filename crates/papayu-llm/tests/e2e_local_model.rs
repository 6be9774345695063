//! End-to-end against the real local model: llama-cpp-python's OpenAI-compatible server with
//! SmolLM2-135M (set up by `scripts/local-llm.sh`).
//!
//! It checks papayu's behaviour, not the model's wisdom: strict mode asks for `json_schema`,
//! the server refuses it naming `response_format`, papayu falls back to `json_object` + schema
//! (which this server turns into a sampling grammar), records the fallback, remembers it, and
//! the answer is schema-valid JSON. A second, streamed call starts at the remembered form.
// Test helpers outside `#[test]` functions may panic, and the server log is read with std::fs.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use papayu_llm::{
    CapabilityCache, CapabilityKey, ChatRequest, HttpProvider, Message, Progress, Provider,
    ProviderConfig, ProviderKind, ResponseFormat, check_answer,
};
use papayu_protocol::ProtocolVersion;

/// How long the server may take to load the model.
const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// Kills the server when the test ends, however it ends.
struct ServerGuard {
    child: Child,
    log: PathBuf,
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServerGuard {
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `scripts/local-llm.sh env` → (python, model).
fn local_llm_paths() -> (String, String) {
    let out = Command::new("bash")
        .arg(workspace_root().join("scripts/local-llm.sh"))
        .arg("env")
        .stderr(Stdio::inherit())
        .output()
        .expect("run scripts/local-llm.sh env");
    assert!(
        out.status.success(),
        "scripts/local-llm.sh env failed: {}",
        out.status
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| {
                panic!("{key} missing from scripts/local-llm.sh env output:\n{text}")
            })
            .to_owned()
    };
    (value("PAPAYU_E2E_PYTHON"), value("PAPAYU_E2E_MODEL"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn start_server() -> (ServerGuard, String) {
    let (python, model) = local_llm_paths();
    let port = free_port();
    let log = std::env::temp_dir().join(format!("papayu-e2e-llm-{port}.log"));
    let log_file = std::fs::File::create(&log).unwrap();
    let child = Command::new(python)
        .args([
            "-m",
            "llama_cpp.server",
            "--model",
            &model,
            "--host",
            "127.0.0.1",
        ])
        .args(["--port", &port.to_string(), "--n_ctx", "4096"])
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .expect("spawn llama_cpp.server");
    let mut guard = ServerGuard { child, log };
    let base = format!("http://127.0.0.1:{port}/v1");
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        if let Some(status) = guard.child.try_wait().unwrap() {
            panic!(
                "llama_cpp.server exited early ({status}):\n{}",
                guard.log_tail()
            );
        }
        let ready = http
            .get(format!("{base}/models"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            break;
        }
        assert!(
            started.elapsed() < READY_TIMEOUT,
            "llama_cpp.server not ready after {READY_TIMEOUT:?}:\n{}",
            guard.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    eprintln!(
        "local model server ready on {base} after {:?}",
        started.elapsed()
    );
    (guard, base)
}

/// A short prompt with the exact answer to copy: the test is about papayu's side.
fn plan_request() -> ChatRequest {
    let example = r#"{"actions":[],"summary":"Nothing to change.","context_requests":null,"memory_patch":null,"mode":null,"questions":null,"plan":null,"proposed_changes":null,"patch":null,"commands_to_run":null,"verification":null,"risks":null,"rollback":null}"#;
    ChatRequest::new(vec![
        Message::system(format!(
            "You answer with one JSON object and nothing else. LLM_PLAN_SCHEMA_VERSION=2. \
             Copy this answer exactly:\n{example}"
        )),
        Message::user("Plan: is anything to change? Answer with the JSON object."),
    ])
    .protocol(ProtocolVersion::V2)
    .strict(true)
    .max_tokens(512)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_mode_falls_back_and_gets_schema_valid_json_from_the_local_model() {
    let (server, base) = start_server().await;
    let cache = CapabilityCache::new();
    let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, base, "smollm2-135m")
        .with_timeout(Duration::from_secs(300));
    let provider = HttpProvider::new(config).unwrap().with_cache(cache.clone());

    let completion = match provider.complete(&plan_request()).await {
        Ok(c) => c,
        Err(e) => panic!("request failed: {e}\nserver log:\n{}", server.log_tail()),
    };
    eprintln!(
        "answer ({:?}, {:?}): {}",
        completion.elapsed, completion.usage, completion.text
    );

    // The server refused json_schema, naming response_format, and papayu stepped down once.
    assert_eq!(completion.fallbacks.len(), 1, "{:?}", completion.fallbacks);
    let fallback = &completion.fallbacks[0];
    assert_eq!(
        (fallback.from, fallback.to),
        (
            ResponseFormat::JsonSchema,
            ResponseFormat::JsonObjectWithSchema
        )
    );
    assert!(fallback.status >= 400, "{fallback:?}");
    assert!(
        fallback.reason.contains("response_format"),
        "{}",
        fallback.reason
    );
    assert_eq!(completion.format, ResponseFormat::JsonObjectWithSchema);

    // The fallback is remembered for this provider + model.
    let key = CapabilityKey {
        kind: ProviderKind::OpenAiCompatible,
        endpoint: provider.endpoint().to_owned(),
        model: "smollm2-135m".into(),
    };
    assert_eq!(cache.get(&key), Some(ResponseFormat::JsonObjectWithSchema));

    // Grammar-constrained output: schema-valid JSON for protocol v2.
    assert_eq!(
        completion.finish_reason.as_deref(),
        Some("stop"),
        "answer cut off: {}",
        completion.text
    );
    let plan = check_answer(&completion.text, ProtocolVersion::V2, None)
        .unwrap_or_else(|v| panic!("not schema-valid: {v:?}\n{}", completion.text));
    assert!(plan.summary.is_some());
    assert!(completion.usage.is_some_and(|u| u.output_tokens.is_some()));

    // A streamed call starts at the remembered form: no fallback, progress reported.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let progress: Progress = Arc::new(move |n| sink.lock().unwrap().push(n));
    let streamed = provider
        .complete(&plan_request().streaming(Some(progress)))
        .await
        .unwrap();
    assert!(streamed.fallbacks.is_empty());
    assert_eq!(streamed.format, ResponseFormat::JsonObjectWithSchema);
    assert!(streamed.streamed);
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() > 1, "progress: {seen:?}");
    assert_eq!(seen.last().copied(), Some(streamed.text.chars().count()));
    check_answer(&streamed.text, ProtocolVersion::V2, None)
        .unwrap_or_else(|v| panic!("streamed answer not schema-valid: {v:?}\n{}", streamed.text));
    drop(server);
}
