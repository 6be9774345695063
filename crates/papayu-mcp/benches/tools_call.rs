//! The MCP server's own cost (issue 19 targets): a `tools/call preview_plan` round trip on a
//! 20-file plan ≤ 50 ms, and an idle server's memory ≤ 20 MB.
//!
//! The round trip goes through rmcp's client and the server over an in-memory pipe — JSON-RPC
//! encoding, dispatch, validation, the preview of 20 files, the answer decoded — so what is
//! measured is papayu's time, not a client's start-up or a process pipe. The idle memory is
//! the RSS of this same program re-run as a stdio server (`--serve-idle ROOT`: the
//! `PapayuMcp::serve_stdio` that `papayu mcp` calls), after `initialize` and `tools/list`.
//! Run with `cargo xtask bench mcp`; each figure is one JSON line.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use papayu_mcp::{McpOptions, PapayuMcp};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

const FILES: usize = 20;
const ROUNDS: usize = 200;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--serve-idle") {
        serve_idle(&args[i + 1]);
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let root = camino::Utf8Path::from_path(dir.path()).expect("utf-8 temp dir");
    let plan = project_and_plan(root);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let times = rt.block_on(round_trips(root, plan));
    report_times(&times);
    idle_memory(root);
}

/// A project of 20 Python files of ~200 lines, and a plan editing each of them.
fn project_and_plan(root: &camino::Utf8Path) -> Value {
    let mut actions = Vec::new();
    fs_err::create_dir_all(root.join("src")).expect("mkdir");
    for i in 0..FILES {
        let mut text = String::new();
        for f in 0..40 {
            text.push_str(&format!(
                "def f{f}_{i}(x):\n    y = x + {f}\n    z = y * {i}\n    return z\n\n"
            ));
        }
        let path = format!("src/m{i}.py");
        fs_err::write(root.join(&path), &text).expect("write");
        actions.push(json!({
            "kind": "EDIT_FILE", "path": path,
            "base_sha256": papayu_protocol::sha256_hex(text.as_bytes()),
            "edits": [{"op": "replace", "anchor": format!("def f20_{i}(x):"),
                       "before": "    y = x + 20", "after": "    y = x + 2000"}]
        }));
    }
    json!({"summary": "bench: edit 20 files", "actions": actions})
}

async fn round_trips(root: &camino::Utf8Path, plan: Value) -> Vec<Duration> {
    let server = PapayuMcp::new(McpOptions::new(root)).expect("open the project");
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move { server.serve(server_io).await });
    let client = ().serve(client_io).await.expect("initialize");
    let arguments = json!({ "plan": plan })
        .as_object()
        .cloned()
        .expect("object");
    let call = || CallToolRequestParams::new("preview_plan").with_arguments(arguments.clone());
    let first = client.call_tool(call()).await.expect("preview_plan");
    let body = first.structured_content.expect("structured result");
    assert_eq!(body["would_apply"], true, "{body}");
    assert_eq!(body["files"].as_array().map(Vec::len), Some(FILES));
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let r = client.call_tool(call()).await.expect("preview_plan");
        times.push(started.elapsed());
        assert_ne!(r.is_error, Some(true));
    }
    client.cancel().await.expect("close");
    times
}

fn report_times(times: &[Duration]) {
    let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    for (metric, value) in [("median", at(0.5)), ("p95", at(0.95)), ("max", at(1.0))] {
        println!(
            "{}",
            json!({"bench": "mcp_tools_call", "case": "preview_plan_20_files", "metric": metric,
                   "value": (value * 1000.0).round() / 1000.0, "unit": "ms", "target": "≤ 50 ms",
                   "rounds": ROUNDS})
        );
    }
}

/// Serve `root` on stdio until the client goes away (the child half of [`idle_memory`]).
fn serve_idle(root: &str) {
    let server = PapayuMcp::new(McpOptions::new(root)).expect("open the project");
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(server.serve_stdio())
        .expect("serve");
}

/// Start a stdio server, shake hands, list the tools, let it settle; its RSS.
fn idle_memory(root: &camino::Utf8Path) {
    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe)
        .args(["--serve-idle", root.as_str()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the server");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut ask = |message: Value| {
        writeln!(stdin, "{message}").expect("write");
        stdin.flush().expect("flush");
        if message.get("id").is_some() {
            lines.next().expect("an answer").expect("read");
        }
    };
    ask(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}}),
    );
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    std::thread::sleep(Duration::from_millis(500));
    let status =
        fs_err::read_to_string(format!("/proc/{}/status", child.id())).expect("/proc status");
    let kib = |key: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("a VmRSS line")
    };
    let (rss, hwm) = (kib("VmRSS:"), kib("VmHWM:"));
    drop(stdin);
    let _ = child.wait();
    for (metric, value) in [("rss", rss), ("peak_rss", hwm)] {
        println!(
            "{}",
            json!({"bench": "mcp_idle_memory", "case": "after_initialize_and_tools_list",
                   "metric": metric, "value": (value / 1024.0 * 10.0).round() / 10.0,
                   "unit": "MiB", "target": "≤ 20 MB"})
        );
    }
}
