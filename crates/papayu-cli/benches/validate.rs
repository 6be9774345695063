//! In-process parse + validate throughput, and `papayu` process start-up time.
//!
//! `cargo xtask bench validate` (or `cargo bench -p papayu-cli --bench validate`). Prints one
//! JSON object per line: `{"bench","case","metric","value","unit"}`.
#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs
)]

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use papayu_protocol::{ProtocolVersion, parse_document};
use papayu_validate::{Context, Policy, check_text, validate_document};
use serde_json::json;

fn emit(case: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({"bench": "parse_validate", "case": case, "metric": metric, "value": value, "unit": unit})
    );
}

/// A realistic plan: `n` actions of mixed kinds with about `bytes_per_file` of content each.
fn plan(n: usize, bytes_per_file: usize) -> String {
    let line = "    let value = compute(input, &config).map_err(Error::from)?; // Привет\n";
    let body: String = line.repeat(bytes_per_file / line.len() + 1);
    let mut actions = Vec::with_capacity(n);
    for i in 0..n {
        let path = format!("src/module_{:03}/file_{i:03}.rs", i % 17);
        actions.push(match i % 4 {
            0 => json!({"kind": "CREATE_FILE", "path": path, "content": body}),
            1 => json!({"kind": "UPDATE_FILE", "path": path, "content": body}),
            2 => json!({"kind": "PATCH_FILE", "path": path, "base_sha256": "a".repeat(64),
                        "patch": format!("--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@\n fn a() {{\n-    1\n+    2\n }}\n")}),
            _ => json!({"kind": "CREATE_DIR", "path": format!("assets/dir_{i:03}")}),
        });
    }
    json!({"actions": actions, "summary": "bench"}).to_string()
}

/// Run `f` repeatedly for about `budget`; return (iterations, mean time per iteration).
fn measure(budget: Duration, mut f: impl FnMut()) -> (u64, Duration) {
    f(); // warm-up
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        f();
        n += 1;
    }
    (n, start.elapsed() / n.max(1) as u32)
}

fn main() {
    let policy = Policy::default();
    let ctx = Context::new(ProtocolVersion::V2);
    for (case, n, bytes) in [
        ("20 actions, 40 KB", 20, 2_000),
        ("200 actions, 4.6 MB", 200, 23_000),
    ] {
        let text = plan(n, bytes);
        let (_, per) = measure(Duration::from_secs(2), || {
            let report = check_text(black_box(&text), &ctx, &policy);
            assert!(report.is_valid(), "{:?}", report.violations());
        });
        emit(
            case,
            "parse+validate per plan",
            per.as_secs_f64() * 1e6,
            "µs",
        );
        emit(
            case,
            "throughput",
            text.len() as f64 / per.as_secs_f64() / 1e6,
            "MB/s",
        );
        let (_, parse_only) = measure(Duration::from_secs(1), || {
            black_box(parse_document(black_box(&text), ProtocolVersion::V2).unwrap());
        });
        emit(
            case,
            "parse only per plan",
            parse_only.as_secs_f64() * 1e6,
            "µs",
        );
        let doc = parse_document(&text, ProtocolVersion::V2).unwrap();
        let (_, rules) = measure(Duration::from_secs(1), || {
            black_box(validate_document(black_box(&doc), &ctx, &policy));
        });
        emit(case, "rules only per plan", rules.as_secs_f64() * 1e6, "µs");
    }
    let bad = fs_err::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/plans/rejected_everything.json"
    ))
    .unwrap();
    let (_, per) = measure(Duration::from_secs(1), || {
        assert!(!check_text(black_box(&bad), &ctx, &policy).is_valid());
    });
    emit(
        "rejected_everything.json (201 actions)",
        "parse+validate per plan",
        per.as_secs_f64() * 1e6,
        "µs",
    );

    // Process start-up: the median of 30 runs of `papayu --version`.
    let exe = env!("CARGO_BIN_EXE_papayu");
    let mut times: Vec<f64> = (0..30)
        .map(|_| {
            let t = Instant::now();
            let out = Command::new(exe).arg("--version").output().unwrap();
            assert!(out.status.success());
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    emit(
        "papayu --version",
        "median wall time",
        times[times.len() / 2],
        "ms",
    );
}
