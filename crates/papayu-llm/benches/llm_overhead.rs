//! Client overhead of papayu-llm, and streaming vs non-streaming against the real local model.
//!
//! ```sh
//! cargo bench -p papayu-llm --bench llm_overhead                    # stub on 127.0.0.1
//! cargo bench -p papayu-llm --bench llm_overhead -- --local-model   # + SmolLM2 via scripts/local-llm.sh
//! ```
//!
//! Prints one JSON object per line: `{"bench", "metric", "value", "unit"}`.
//!
//! The overhead bench sends a 100 KB prompt to a hand-rolled HTTP/1.1 stub that answers at
//! once with a pre-built 50 KB plan, and times build → redact → send → receive → parse →
//! validate per request. The stub's own work (reading the request, writing a canned answer)
//! is inside the figure, so it is an upper bound of the client's share.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs
)]

#[path = "../tests/support/llama_server.rs"]
mod llama_server;
use llama_server::LlamaServer;

use std::sync::Arc;
use std::time::{Duration, Instant};

use papayu_llm::{
    CapabilityCache, ChatRequest, HttpProvider, Message, Provider, ProviderConfig, ProviderKind,
    ResponseFormat, check_answer, redact,
};
use papayu_protocol::ProtocolVersion;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn emit(bench: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({ "bench": bench, "metric": metric, "value": (value * 1000.0).round() / 1000.0, "unit": unit })
    );
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn report(bench: &str, mut samples_us: Vec<f64>) {
    samples_us.sort_by(f64::total_cmp);
    emit(bench, "median", percentile(&samples_us, 0.5), "us");
    emit(bench, "p95", percentile(&samples_us, 0.95), "us");
    emit(bench, "min", samples_us[0], "us");
    emit(bench, "iterations", samples_us.len() as f64, "count");
}

/// About 100 KB of source-like text.
fn prompt_100k() -> String {
    let line = "fn compute(value: u64) -> u64 { value.wrapping_mul(31).rotate_left(7) ^ 0x5eed } // helper\n";
    let mut s = String::with_capacity(100_000);
    while s.len() < 100_000 {
        s.push_str(line);
    }
    s.truncate(100_000);
    s
}

/// A valid v2 plan of about 50 KB.
fn answer_50k() -> String {
    let content = "let x = 1; // generated line of content for the benchmark\n".repeat(50_000 / 59);
    json!({
        "actions": [{ "kind": "CREATE_FILE", "path": "src/generated.rs", "content": content }],
        "summary": "Add the generated module"
    })
    .to_string()
}

/// Answers every request on a keep-alive connection with `response` at once.
async fn stub(response: Arc<Vec<u8>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let response = response.clone();
            tokio::spawn(async move {
                let mut buf = Vec::with_capacity(256 * 1024);
                let mut tmp = vec![0u8; 64 * 1024];
                loop {
                    // Read one request: headers, then Content-Length bytes of body.
                    let (end, len) = loop {
                        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                            let len: usize = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .map_or(0, |v| v.trim().parse().unwrap());
                            break (end, len);
                        }
                        match socket.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                    };
                    while buf.len() < end + 4 + len {
                        match socket.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                    }
                    buf.drain(..end + 4 + len);
                    if socket.write_all(&response).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    uri
}

async fn overhead() {
    let prompt = prompt_100k();
    let answer = answer_50k();
    let body = json!({
        "id": "bench", "object": "chat.completion",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": answer }, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 25_000, "completion_tokens": 12_500 }
    })
    .to_string();
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let uri = stub(Arc::new(response.into_bytes())).await;
    let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, format!("{uri}/v1"), "bench");
    let provider = HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new());
    let request = ChatRequest::new(vec![
        Message::system(papayu_llm::default_system_prompt(ProtocolVersion::V2)),
        Message::user(prompt.clone()),
    ])
    .protocol(ProtocolVersion::V2)
    .strict(true);
    emit(
        "client_overhead",
        "prompt_bytes",
        prompt.len() as f64,
        "bytes",
    );
    emit(
        "client_overhead",
        "answer_bytes",
        answer.len() as f64,
        "bytes",
    );

    let iterations = 400;
    for _ in 0..30 {
        let c = provider.complete(&request).await.unwrap();
        check_answer(&c.text, ProtocolVersion::V2, None).unwrap();
    }
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let c = provider.complete(&request).await.unwrap();
        let plan = check_answer(&c.text, ProtocolVersion::V2, None).unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        assert_eq!(plan.effective_actions().len(), 1);
    }
    report("client_overhead_100k_prompt_50k_answer", samples);

    // The parts, for orientation.
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let body = provider.request_body(&request, ResponseFormat::JsonSchema);
        let bytes = serde_json::to_vec(&body).unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        assert!(bytes.len() > 100_000);
    }
    report("build_body_incl_redaction_100k", samples);

    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let out = redact(&prompt);
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        assert_eq!(out.len(), prompt.len());
    }
    report("redact_scan_100k", samples);

    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let plan = check_answer(&answer, ProtocolVersion::V2, None).unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        assert_eq!(plan.effective_actions().len(), 1);
    }
    report("parse_validate_50k_answer", samples);
}

/// Streaming vs non-streaming wall time against SmolLM2 on llama-cpp-python.
async fn local_model() {
    let server = LlamaServer::start(&["--n_ctx", "4096"], Duration::from_secs(180));
    let base = server.base_url();
    let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, base, "smollm2")
        .with_timeout(Duration::from_secs(300));
    let provider = HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new());
    let request = ChatRequest::new(vec![
        Message::system("Answer with one JSON object: a plan with an empty actions list and a one-sentence summary."),
        Message::user("Plan: describe how to add a README to a Rust project."),
    ])
    .protocol(ProtocolVersion::V2)
    .strict(true)
    .max_tokens(128);
    // Learn the structured-output form first so both variants use the same one.
    provider.complete(&request).await.unwrap();
    // Paired rounds, alternating which variant goes first (so drift and cache warmth cancel),
    // compared by the median of per-pair ratios. At temperature 0 both variants must produce
    // the same text, or the comparison would be of different work.
    let rounds = 10;
    let (mut plain, mut streamed, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        let mut pair = [0.0f64; 2];
        let mut texts = [String::new(), String::new()];
        for stream in order {
            let r = if stream {
                request.clone().streaming(Some(Arc::new(|_| {})))
            } else {
                request.clone()
            };
            let t = Instant::now();
            let c = provider.complete(&r).await.unwrap();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            eprintln!(
                "stream={stream} {ms:.0} ms, {} chars",
                c.text.chars().count()
            );
            pair[usize::from(stream)] = ms;
            texts[usize::from(stream)] = c.text;
        }
        assert_eq!(
            texts[0], texts[1],
            "streaming and non-streaming answers differ"
        );
        plain.push(pair[0]);
        streamed.push(pair[1]);
        ratios.push(pair[1] / pair[0]);
    }
    drop(server);
    plain.sort_by(f64::total_cmp);
    streamed.sort_by(f64::total_cmp);
    ratios.sort_by(f64::total_cmp);
    let (p, s) = (percentile(&plain, 0.5), percentile(&streamed, 0.5));
    emit("local_model_non_streaming", "median", p, "ms");
    emit("local_model_streaming", "median", s, "ms");
    emit(
        "local_model_streaming_vs_non_streaming",
        "median_paired_ratio",
        percentile(&ratios, 0.5),
        "x",
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // `cargo bench` passes `--bench`; ignore it and other harness flags.
    let local = std::env::args().any(|a| a == "--local-model");
    runtime.block_on(async {
        overhead().await;
        if local {
            local_model().await;
        }
    });
}
