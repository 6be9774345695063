//! The in-process `local` provider with the default model (SmolLM2-135M-Instruct Q4_1): load
//! time, first-token latency, prompt and generation tokens/s, peak RSS, and the same
//! schema-constrained request through llama-cpp-python's server (`scripts/local-llm.sh`).
//!
//! ```sh
//! cargo bench -p papayu-llm --features local --bench local_provider            # in-process only
//! cargo bench -p papayu-llm --features local --bench local_provider -- --server  # + vs the server
//! cargo bench -p papayu-llm --features local --bench local_provider -- --threads 1
//! ```
//!
//! The papayu-shaped request is measured three ways: `cold` (a new context and no prompt
//! cache), `prompt_cache` (a new context that loads the system prompt's KV state from a
//! prompt-cache file, as every `papayu` process after the first does) and `repeated` (the
//! context kept from the previous identical request); the server comparison uses `repeated`,
//! since the server also keeps its last prompt.
//!
//! Prints one JSON object per line: `{"bench", "metric", "value", "unit"}`.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    missing_docs
)]

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

#[path = "../tests/support/llama_server.rs"]
mod llama_server;
use llama_server::{LlamaServer, cached_small_model};

use papayu_llm::{
    ChatRequest, GrammarBounds, LocalConfig, LocalProvider, Message, check_answer, gbnf,
};
use papayu_protocol::ProtocolVersion;
use serde_json::json;

fn emit(bench: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({ "bench": bench, "metric": metric, "value": (value * 1000.0).round() / 1000.0, "unit": unit })
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Peak resident set size of process `pid` (`self` for this one), in MB.
fn peak_rss_mb(pid: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

const MAX_TOKENS: u32 = 256;

/// The papayu-shaped request every figure uses: the protocol v2 system prompt and a goal.
fn request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system(papayu_llm::default_system_prompt(ProtocolVersion::V2)),
        Message::user("Add a README.md that explains this project is a calculator."),
    ])
    .protocol(ProtocolVersion::V2)
    .strict(true)
    .max_tokens(MAX_TOKENS)
}

fn main() {
    let with_server = std::env::args().any(|a| a == "--server");
    let rounds = 3;
    // The small model: the one llama-cpp-python serves for the comparison.
    let path = cached_small_model();

    let args: Vec<String> = std::env::args().collect();
    let mut config = LocalConfig::new(&path);
    config.timeout = Duration::from_secs(900);
    // `--threads N` (default: the available cores).
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        config.threads = args[i + 1].parse().unwrap();
    }
    emit("local_load", "threads", config.threads as f64, "count");
    let started = Instant::now();
    let provider = LocalProvider::new(config).unwrap();
    let load = started.elapsed();
    emit(
        "local_load",
        "wall_incl_gguf_check",
        load.as_secs_f64() * 1000.0,
        "ms",
    );
    emit(
        "local_load",
        "llama_cpp_load",
        provider.load_time().as_secs_f64() * 1000.0,
        "ms",
    );

    let cancel = AtomicBool::new(false);
    let req = request();
    // The same model with a prompt-cache directory (what the CLI configures).
    let cache_dir = tempfile::tempdir().unwrap();
    let mut cached_config = provider.config().clone();
    cached_config.prompt_cache = Some(cache_dir.path().to_path_buf());
    let cached = LocalProvider::new(cached_config).unwrap();
    // Three ways a request meets the prompt: `cold` (a new context, no cache: a new process
    // without a prompt cache), `prompt_cache` (a new context, the system prompt's KV state
    // loaded from the cache file: a new process, as the CLI runs), `repeated` (the context
    // kept from the previous identical request, in the same process).
    let scenarios = ["cold", "prompt_cache", "repeated"];
    let mut figures: std::collections::BTreeMap<&str, [Vec<f64>; 4]> = Default::default();
    let mut text = String::new();
    // Warm-up: page cache, the first grammar build, the prompt-cache file.
    provider.release_context();
    cached.complete_blocking(&req, &cancel).unwrap();
    for _ in 0..rounds {
        for scenario in scenarios {
            let p = match scenario {
                "cold" => {
                    provider.release_context();
                    &provider
                }
                "prompt_cache" => {
                    cached.release_context();
                    &cached
                }
                _ => &provider,
            };
            let t = Instant::now();
            let (c, s) = p.complete_blocking(&req, &cancel).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            // At MAX_TOKENS the small model's answer may be cut (finish "length"); the figures
            // are about speed, validity is the tests' job.
            let valid = check_answer(&c.text, ProtocolVersion::V2, None).is_ok();
            eprintln!(
                "local {scenario}: {ms:.0} ms, prompt {} tok ({} cached), generated {} tok ({:?}, valid={valid}), first token {:?}",
                s.prompt_tokens,
                s.cached_prompt_tokens,
                s.generated_tokens,
                c.finish_reason,
                s.first_token
            );
            let f = figures.entry(scenario).or_default();
            f[0].push(s.first_token.as_secs_f64() * 1000.0);
            f[1].push(s.prompt_tokens_per_sec());
            f[2].push(s.generated_tokens_per_sec());
            f[3].push(ms);
            emit(
                "local_request",
                "prompt_tokens",
                f64::from(s.prompt_tokens),
                "tokens",
            );
            emit(
                "local_request",
                "generated_tokens",
                f64::from(s.generated_tokens),
                "tokens",
            );
            text = c.text;
        }
    }
    let mut repeated_wall = 0.0;
    for (scenario, [first, prompt_tps, gen_tps, wall]) in figures {
        let bench = format!("local_{scenario}");
        emit(&bench, "first_token_median", median(first), "ms");
        if scenario != "repeated" {
            emit(
                &bench,
                "prompt_tokens_per_s_median",
                median(prompt_tps),
                "tok/s",
            );
        }
        emit(
            &bench,
            "generated_tokens_per_s_median",
            median(gen_tps),
            "tok/s",
        );
        let wall = median(wall);
        emit(&bench, "wall_median", wall, "ms");
        if scenario == "repeated" {
            repeated_wall = wall;
        }
    }
    let cache_bytes: u64 = std::fs::read_dir(cache_dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    emit(
        "local_prompt_cache",
        "file_size",
        cache_bytes as f64 / 1e6,
        "MB",
    );

    // A short prompt (no schema in the system message): what first-token latency is without
    // papayu's ~1 000-token system prompt.
    let short = ChatRequest::new(vec![Message::user(
        "Reply with a JSON plan that creates hello.txt.",
    )])
    .protocol(ProtocolVersion::V2)
    .max_tokens(64);
    let mut short_first = vec![];
    for _ in 0..rounds {
        let (_, s) = provider.complete_blocking(&short, &cancel).unwrap();
        short_first.push(s.first_token.as_secs_f64() * 1000.0);
        emit(
            "local_short_prompt",
            "prompt_tokens",
            f64::from(s.prompt_tokens),
            "tokens",
        );
    }
    emit(
        "local_short_prompt",
        "first_token_median",
        median(short_first),
        "ms",
    );
    emit("local_constrained", "peak_rss", peak_rss_mb("self"), "MB");

    if with_server {
        server(&req, &text, repeated_wall, provider.config().threads);
    }
}

/// The same request, with the same GBNF grammar, through llama-cpp-python's OpenAI-compatible
/// server.
fn server(req: &ChatRequest, local_text: &str, local_wall_ms: f64, threads: usize) {
    let threads = threads.to_string();
    let server = LlamaServer::start(
        &[
            "--n_ctx",
            "4096",
            "--n_threads",
            &threads,
            "--n_threads_batch",
            &threads,
        ],
        Duration::from_secs(180),
    );
    let pid = server.pid().to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let base = server.base_url();
    let http = reqwest::Client::new();
    let body = json!({
        "model": "smollm2",
        "messages": req.messages,
        "temperature": 0.0,
        "max_tokens": MAX_TOKENS,
        // The very grammar the local provider samples with (llama-cpp-python's own converter
        // expands `maxLength` into nested rules its parser then refuses).
        "grammar": gbnf(ProtocolVersion::V2, &GrammarBounds::default()).unwrap(),
    });
    runtime.block_on(async {
        emit(
            "server_load",
            "ready_after",
            server.ready_after.as_secs_f64() * 1000.0,
            "ms",
        );
        let (mut wall, mut tps) = (vec![], vec![]);
        let mut same = true;
        for i in 0..6 {
            let t = Instant::now();
            let v: serde_json::Value = http
                .post(format!("{base}/chat/completions"))
                .json(&body)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            let text = v["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default();
            let completion_tokens = v["usage"]["completion_tokens"].as_f64().unwrap_or(0.0);
            eprintln!(
                "server: {ms:.0} ms, {completion_tokens} tokens, valid={}",
                check_answer(text, ProtocolVersion::V2, None).is_ok()
            );
            if i == 0 {
                continue;
            }
            same &= text == local_text;
            wall.push(ms);
            tps.push(completion_tokens / (ms / 1000.0));
        }
        let server_wall = median(wall);
        emit("server_constrained", "wall_median", server_wall, "ms");
        emit(
            "server_constrained",
            "completion_tokens_per_s_incl_prompt_median",
            median(tps),
            "tok/s",
        );
        emit("server_constrained", "peak_rss", peak_rss_mb(&pid), "MB");
        emit(
            "local_vs_server",
            "wall_ratio_local_over_server",
            local_wall_ms / server_wall,
            "x",
        );
        emit(
            "local_vs_server",
            "same_text",
            if same { 1.0 } else { 0.0 },
            "bool",
        );
    });
    drop(server);
}
