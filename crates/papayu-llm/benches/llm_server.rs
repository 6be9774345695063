//! Strict-mode `ask` against the real local server: llama-cpp-python's OpenAI-compatible server
//! with SmolLM2-135M (`scripts/local-llm.sh`), the setup of issue #22.
//!
//! ```sh
//! cargo xtask bench llm-server                           # narrowed (compact schema), 10 asks
//! cargo bench -p papayu-llm --bench llm-server -- --full # also the whole v2 schema, 10 asks
//! ```
//!
//! Each ask is a PLAN narrowed to a summary and no actions ([`RequestShape`]), streamed, with a
//! 120 s budget and a 30 s silence limit. Prints one JSON object per line (`{"bench", "metric",
//! "value", "unit"}`): how many answers were schema-valid out of 10 and the median seconds per
//! answer (failures count at the time they took), then the same for the whole schema with
//! `--full`.
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

use papayu_llm::{AskOptions, CapabilityCache, HttpProvider, ProviderConfig, ProviderKind, ask};
use papayu_protocol::{ProtocolVersion, RequestShape};
use serde_json::json;

const ASKS: usize = 10;

const PROMPTS: [&str; 5] = [
    "Plan: how would you add a --verbose flag to a small command-line tool?",
    "Plan: how would you add a README to a Rust library?",
    "Plan: a test fails because add() subtracts. What is the fix?",
    "Plan: how would you rename a function used in three files?",
    "Plan: how would you add logging to an HTTP handler?",
];

fn emit(bench: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({ "bench": bench, "metric": metric, "value": (value * 1000.0).round() / 1000.0, "unit": unit })
    );
}

async fn run(base: &str, name: &str, shape: Option<RequestShape>) {
    let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, base, "smollm2-135m")
        .with_timeout(Duration::from_secs(120))
        .with_silence_timeout(Duration::from_secs(30));
    let provider = HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new());
    let (mut valid, mut seconds) = (0usize, Vec::new());
    for i in 0..ASKS {
        let options = AskOptions {
            protocol: ProtocolVersion::V2,
            strict_json: true,
            shape: shape.clone(),
            stream: Some(Arc::new(|_| {})),
            ..AskOptions::default()
        };
        let started = Instant::now();
        let outcome = ask(&provider, PROMPTS[i % PROMPTS.len()], options).await;
        let took = started.elapsed().as_secs_f64();
        seconds.push(took);
        match outcome {
            Ok(o) if o.parsed.is_some() => valid += 1,
            Ok(o) => eprintln!(
                "{name} ask {i}: invalid after {took:.1}s: {:?}",
                o.violations
            ),
            Err(e) => eprintln!("{name} ask {i}: failed after {took:.1}s: {e}"),
        }
    }
    seconds.sort_by(f64::total_cmp);
    let median = (seconds[(ASKS - 1) / 2] + seconds[ASKS / 2]) / 2.0;
    emit(name, "valid_answers", valid as f64, "of 10");
    emit(name, "median", median, "s");
    emit(name, "max", seconds[ASKS - 1], "s");
}

fn main() {
    let full = std::env::args().any(|a| a == "--full");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = LlamaServer::start(&["--n_ctx", "4096"], Duration::from_secs(180));
    let base = server.base_url();
    runtime.block_on(async {
        let plan = RequestShape {
            apply: false,
            context_requests: false,
            ..RequestShape::default()
        };
        run(&base, "llm_server_compact", Some(plan)).await;
        if full {
            run(&base, "llm_server_full_schema", None).await;
        }
    });
    drop(server);
}
