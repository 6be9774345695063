//! Strict-mode `ask` against the real local server: llama-cpp-python's OpenAI-compatible server
//! with SmolLM2-135M (`scripts/local-llm.sh`), the setup of issue #22.
//!
//! ```sh
//! cargo xtask bench llm-server                                # papayu's strict ask, 10 asks
//! cargo bench -p papayu-llm --bench llm-server -- --compare   # each schema form, 10 asks each
//! cargo bench -p papayu-llm --bench llm-server -- --orphan    # does the server stop on a cancel?
//! ```
//!
//! Each ask is a PLAN narrowed to a summary and no actions ([`RequestShape`]), streamed, with a
//! 120 s budget and a 30 s silence limit. Prints one JSON object per line (`{"bench", "metric",
//! "value", "unit"}`), the load average with each group of figures.
//!
//! - default: papayu's own `ask` (the capability ladder, the compact schema): how many answers
//!   were schema-valid out of 10, median and max seconds (failures count at the time they took).
//! - `--compare`: the same 10 asks with the same messages and answer limit, once per
//!   `response_format` the ladder could send (the whole v2 schema, the compact schema, the
//!   compact schema with one action object whose `kind` is an enum, `json_object` without a
//!   schema): answers that are JSON as sent, answers papayu accepts, median and max seconds,
//!   median tokens per second.
//! - `--orphan`: a long answer abandoned after 5 s, four ways (papayu's streamed request past its
//!   budget, the same dropped by its caller, a narrowed request whose caller wants no stream
//!   past its budget, a client that does not stream and gives up); for each, how long the
//!   server process kept using CPU afterwards and how much.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

#[path = "../tests/support/llama_server.rs"]
mod llama_server;
use llama_server::LlamaServer;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use papayu_llm::{
    AskOptions, CapabilityCache, ChatRequest, HttpProvider, Message, Provider, ProviderConfig,
    ProviderKind, ResponseFormat, ask, check_answer, shaped_system_prompt,
};
use papayu_protocol::{ProtocolVersion, RequestShape};
use serde_json::{Value, json};

const ASKS: usize = 10;

const PROMPTS: [&str; 5] = [
    "Plan: how would you add a --verbose flag to a small command-line tool?",
    "Plan: how would you add a README to a Rust library?",
    "Plan: a test fails because add() subtracts. What is the fix?",
    "Plan: how would you rename a function used in three files?",
    "Plan: how would you add logging to an HTTP handler?",
];

const BUDGET: Duration = Duration::from_secs(120);

fn emit(bench: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({ "bench": bench, "metric": metric, "value": (value * 1000.0).round() / 1000.0, "unit": unit })
    );
}

/// The 1-minute load average.
fn load() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}

fn plan_shape() -> RequestShape {
    RequestShape {
        apply: false,
        context_requests: false,
        ..RequestShape::default()
    }
}

fn provider(base: &str, budget: Duration) -> HttpProvider {
    let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, base, "smollm2-135m")
        .with_timeout(budget)
        .with_silence_timeout(Duration::from_secs(30));
    HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new())
}

/// papayu's own strict `ask`, as a user runs it.
async fn run_ask(base: &str) {
    let provider = provider(base, BUDGET);
    let load_before = load();
    let (mut valid, mut seconds) = (0usize, Vec::new());
    for i in 0..ASKS {
        let options = AskOptions {
            protocol: ProtocolVersion::V2,
            strict_json: true,
            shape: Some(plan_shape()),
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
                "ask {i}: invalid after {took:.1}s ({}, {:?}): {:?}\n{:?}",
                o.completion.format, o.completion.finish_reason, o.violations, o.completion.text
            ),
            Err(e) => eprintln!("ask {i}: failed after {took:.1}s: {e}"),
        }
    }
    let name = "llm_server_compact";
    emit(name, "valid_answers", valid as f64, "of 10");
    emit(name, "median", median(&mut seconds.clone()), "s");
    emit(
        name,
        "max",
        seconds.iter().copied().fold(0.0, f64::max),
        "s",
    );
    emit(name, "load_average", (load_before + load()) / 2.0, "1 min");
}

/// A compact variant: one action object whose `kind` is an enum (the whole schema's form of
/// `actions`, without its nullable fields) instead of "no actions". For a PLAN it admits actions
/// a plan may not have; it is here to price that form's grammar against the compact one.
fn enum_kind_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "actions": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": ["CREATE_FILE", "UPDATE_FILE", "DELETE_FILE", "PATCH_FILE"]},
                    "path": {"type": "string"},
                },
                "required": ["kind", "path"],
                "additionalProperties": false,
            }},
        },
        "required": ["summary", "actions"],
        "additionalProperties": false,
    })
}

/// One answer read off the wire: its text, seconds, and tokens per second between the first
/// and the last token (a streamed chunk of llama-cpp-python's server is one token).
struct Raw {
    text: String,
    seconds: f64,
    tokens_per_s: Option<f64>,
}

/// POST `body` streamed, collect the text within `budget`.
async fn stream_raw(client: &reqwest::Client, url: &str, body: &Value) -> Result<Raw, String> {
    let started = Instant::now();
    let read = async {
        let response = client
            .post(url)
            .json(body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!(
                "{}: {}",
                response.status(),
                response.text().await.unwrap_or_default()
            ));
        }
        let (mut text, mut tokens, mut first, mut last) = (String::new(), 0usize, None, None);
        let mut pending = String::new();
        let mut bytes = response.bytes_stream();
        while let Some(chunk) = bytes.next().await {
            pending.push_str(&String::from_utf8_lossy(&chunk.map_err(|e| e.to_string())?));
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                let Some(data) = line.trim().strip_prefix("data:") else {
                    continue;
                };
                let Ok(event) = serde_json::from_str::<Value>(data.trim()) else {
                    continue;
                };
                if let Some(piece) = event
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    && !piece.is_empty()
                {
                    text.push_str(piece);
                    tokens += 1;
                    first.get_or_insert_with(Instant::now);
                    last = Some(Instant::now());
                }
            }
        }
        let tokens_per_s = match (first, last) {
            (Some(f), Some(l)) if tokens > 1 && l > f => {
                Some((tokens - 1) as f64 / (l - f).as_secs_f64())
            }
            _ => None,
        };
        Ok((text, tokens_per_s))
    };
    let (text, tokens_per_s) = tokio::time::timeout(BUDGET, read)
        .await
        .map_err(|_| format!("no answer within {BUDGET:?}"))??;
    Ok(Raw {
        text,
        seconds: started.elapsed().as_secs_f64(),
        tokens_per_s,
    })
}

/// The same 10 asks under each `response_format` the ladder could send.
async fn run_compare(base: &str) {
    let papayu = provider(base, BUDGET);
    let client = reqwest::Client::new();
    let url = format!("{base}/chat/completions");
    let shape = plan_shape();
    let forms: [(&str, Option<Value>); 4] = [
        ("whole_v2_schema", None),
        (
            "compact_schema",
            Some(papayu_protocol::compact_schema(&shape)),
        ),
        ("compact_enum_kind", Some(enum_kind_schema())),
        ("json_object_no_schema", Some(Value::Null)),
    ];
    for (name, schema) in forms {
        let load_before = load();
        let (mut json_as_sent, mut accepted) = (0usize, 0usize);
        let (mut seconds, mut speeds) = (Vec::new(), Vec::new());
        for i in 0..ASKS {
            let messages = vec![
                Message::system(shaped_system_prompt(ProtocolVersion::V2, &shape)),
                Message::user(PROMPTS[i % PROMPTS.len()]),
            ];
            // Same messages and answer limit for every form; only `response_format` differs.
            let mut request = ChatRequest::new(messages)
                .protocol(ProtocolVersion::V2)
                .strict(true)
                .streaming(None);
            request.max_tokens = Some(papayu_protocol::answer_tokens(&shape, 0));
            let mut body = papayu.request_body(&request, ResponseFormat::JsonObjectWithSchema);
            match &schema {
                None => {}
                Some(Value::Null) => body["response_format"] = json!({"type": "json_object"}),
                Some(s) => body["response_format"]["schema"] = s.clone(),
            }
            match stream_raw(&client, &url, &body).await {
                Ok(raw) => {
                    seconds.push(raw.seconds);
                    speeds.extend(raw.tokens_per_s);
                    let is_json =
                        serde_json::from_str::<Value>(raw.text.trim()).is_ok_and(|v| v.is_object());
                    json_as_sent += usize::from(is_json);
                    match check_answer(&raw.text, ProtocolVersion::V2, None) {
                        Ok(_) => accepted += 1,
                        Err(v) => eprintln!(
                            "{name} ask {i}: refused after {:.1}s: {:?}\n{:?}",
                            raw.seconds, v, raw.text
                        ),
                    }
                    if !is_json {
                        eprintln!("{name} ask {i}: not JSON as sent: {:?}", raw.text);
                    }
                }
                Err(e) => {
                    seconds.push(BUDGET.as_secs_f64());
                    eprintln!("{name} ask {i}: failed: {e}");
                }
            }
        }
        let bench = format!("llm_server_{name}");
        emit(&bench, "json_as_sent", json_as_sent as f64, "of 10");
        emit(&bench, "valid_answers", accepted as f64, "of 10");
        emit(&bench, "median", median(&mut seconds.clone()), "s");
        emit(
            &bench,
            "max",
            seconds.iter().copied().fold(0.0, f64::max),
            "s",
        );
        emit(&bench, "median_decode", median(&mut speeds), "tok/s");
        emit(
            &bench,
            "load_average",
            (load_before + load()) / 2.0,
            "1 min",
        );
    }
}

/// CPU seconds the process has used (user + system, all threads), from `/proc/PID/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces) start at field 3 (`state`).
    let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .collect();
    let ticks: f64 = rest[11].parse::<f64>().unwrap() + rest[12].parse::<f64>().unwrap();
    // USER_HZ is 100 on Linux.
    ticks / 100.0
}

/// After a cancel: sample the server's CPU every 250 ms until it has been idle (< 20 % of a
/// core) for 2 s or 120 s have passed. Returns (seconds until the last busy sample ended, CPU
/// seconds used in that time).
async fn busy_after(pid: u32) -> (f64, f64) {
    let step = Duration::from_millis(250);
    let start = Instant::now();
    let cpu_start = cpu_seconds(pid);
    let (mut last_busy, mut cpu_at_last_busy, mut prev) = (0.0, 0.0, cpu_start);
    while start.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(step).await;
        let now = cpu_seconds(pid);
        if now - prev > 0.2 * step.as_secs_f64() {
            last_busy = start.elapsed().as_secs_f64();
            cpu_at_last_busy = now - cpu_start;
        } else if start.elapsed().as_secs_f64() - last_busy > 2.0 {
            break;
        }
        prev = now;
    }
    (last_busy, cpu_at_last_busy)
}

/// A long answer that a 135M model keeps writing up to the limit.
fn long_request() -> ChatRequest {
    let mut request = ChatRequest::new(vec![Message::user(
        "Write a very long story about a dragon who learns to program. At least 3000 words.",
    )]);
    request.max_tokens = Some(1_000);
    request
}

/// A long answer abandoned after 5 s three ways; how long the server kept generating.
async fn run_orphan(base: &str, pid: u32) {
    let cancel_after = Duration::from_secs(5);
    // Warm up (the model's first request loads its weights into the page cache).
    let warm = provider(base, BUDGET);
    let mut short = ChatRequest::new(vec![Message::user("Say hi.")]);
    short.max_tokens = Some(8);
    warm.complete(&short).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_before = cpu_seconds(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    emit(
        "llm_server_orphan_idle",
        "cpu",
        (cpu_seconds(pid) - idle_before) / 2.0,
        "cores",
    );

    let cases = [
        "papayu_streamed_budget",
        "papayu_dropped",
        "papayu_narrowed_not_streamed",
        "client_not_streamed",
    ];
    for case in cases {
        let load_before = load();
        let cpu_before = cpu_seconds(pid);
        let started = Instant::now();
        let outcome = match case {
            "papayu_streamed_budget" => {
                let p = provider(base, cancel_after);
                let request = long_request().streaming(None);
                format!("{:?}", p.complete(&request).await.map(|c| c.text.len()))
            }
            "papayu_dropped" => {
                let p = provider(base, BUDGET);
                let request = long_request().streaming(None);
                let r = tokio::time::timeout(cancel_after, p.complete(&request)).await;
                format!("{:?}", r.map(|c| c.map(|c| c.text.len())))
            }
            "papayu_narrowed_not_streamed" => {
                // The caller wants no progress; papayu streams it on the wire anyway.
                let p = provider(base, cancel_after);
                let request = long_request().strict(true).shaped(plan_shape());
                format!("{:?}", p.complete(&request).await.map(|c| c.text.len()))
            }
            _ => {
                let p = provider(base, BUDGET);
                let body = p.request_body(&long_request(), ResponseFormat::None);
                let client = reqwest::Client::builder()
                    .timeout(cancel_after)
                    .build()
                    .unwrap();
                let r = client
                    .post(format!("{base}/chat/completions"))
                    .json(&body)
                    .send()
                    .await;
                format!("{:?}", r.map(|r| r.status()).map_err(|e| e.is_timeout()))
            }
        };
        let gave_up = started.elapsed().as_secs_f64();
        // What the server did before the cancel: generating, not waiting.
        let cpu_until_cancel = cpu_seconds(pid) - cpu_before;
        let (busy, cpu) = busy_after(pid).await;
        eprintln!("{case}: gave up after {gave_up:.1}s: {outcome}");
        let bench = format!("llm_server_orphan_{case}");
        emit(&bench, "gave_up_after", gave_up, "s");
        emit(&bench, "server_cpu_until_cancel", cpu_until_cancel, "s");
        emit(&bench, "server_busy_after_cancel", busy, "s");
        emit(&bench, "server_cpu_after_cancel", cpu, "s");
        emit(
            &bench,
            "load_average",
            (load_before + load()) / 2.0,
            "1 min",
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = LlamaServer::start(&["--n_ctx", "4096"], Duration::from_secs(180));
    let base = server.base_url();
    runtime.block_on(async {
        if has("--compare") {
            run_compare(&base).await;
        } else if has("--orphan") {
            run_orphan(&base, server.pid()).await;
        } else {
            run_ask(&base).await;
        }
    });
    drop(server);
}
