//! Search and assembly benchmarks (run with `cargo bench -p papayu-context --bench context [-- ROOT]`).
//!
//! Prints one JSON object per line: `{"bench":…,"metric":…,"value":…,"unit":…}`.
//! ROOT defaults to `~/.cargo/registry/src`, a large real tree on every machine with Rust.
//! `search` is compared with `rg --fixed-strings` (ripgrep must be installed: it is the
//! yardstick) on the same queries with a warm page cache; the full context assembly runs in a
//! child process so its peak RSS (`VmHWM`) is its own.
#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_context::{ContextConfig, ContextEngine, Project, SearchMode};
use papayu_protocol::ContextRequest;

const QUERIES: &[&str] = &[
    "fn main",
    "unsafe impl",
    "HashMap<String",
    "TODO",
    "zq_no_such_text_qz",
];
const RUNS: usize = 5;

fn emit(bench: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        serde_json::json!({"bench": bench, "metric": metric, "value": (value * 1000.0).round() / 1000.0, "unit": unit})
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn count_files(dir: &std::path::Path) -> u64 {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => n += count_files(&e.path()),
            Ok(t) if t.is_file() => n += 1,
            _ => {}
        }
    }
    n
}

fn rg_ms(root: &Utf8Path, query: &str) -> Result<(f64, usize), String> {
    let start = Instant::now();
    // Piped, not /dev/null: ripgrep stops at the first match when it sees /dev/null.
    let out = Command::new("rg")
        .args([
            "--fixed-strings",
            "--no-messages",
            "-n",
            "--",
            query,
            root.as_str(),
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run rg: {e}"))?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    Ok((ms, out.stdout.iter().filter(|b| **b == b'\n').count()))
}

fn vm_hwm_kb() -> Option<f64> {
    let status = fs_err::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A Rust panic with a backtrace naming `file` (absolute, inside the tree) plus frames outside it.
fn goal_with_trace(root: &Utf8Path, file: &str, line: u64) -> String {
    format!(
        "Fix this crash:\n\nthread 'main' panicked at {root}/{file}:{line}:9:\ncalled `Option::unwrap()` on a `None` value\n\
         stack backtrace:\n   0: rust_begin_unwind\n             at /rustc/4eb161250e340c8f48f66e2b929ef4a5bed7c181/library/std/src/panicking.rs:665:5\n\
         \x20  1: core::panicking::panic\n             at /rustc/4eb161250e340c8f48f66e2b929ef4a5bed7c181/library/core/src/panicking.rs:148:5\n\
         \x20  2: demo::run\n             at {root}/{file}:{line2}:5\n   3: std::rt::lang_start\n             at /home/ci/.rustup/toolchains/stable/lib/rustlib/src/rust/library/std/src/rt.rs:195:17\n",
        line2 = line + 30
    )
}

fn child_assemble(root: &Utf8Path, file: &str, line: u64, with_requests: bool) -> ExitCode {
    let goal = goal_with_trace(root, file, line);
    let requests: Vec<ContextRequest> = if with_requests {
        vec![
            ContextRequest::ReadFile {
                path: file.to_owned(),
                start_line: None,
                end_line: None,
            },
            ContextRequest::Search {
                query: "fn main".to_owned(),
                glob: None,
            },
        ]
    } else {
        Vec::new()
    };
    let name = if with_requests {
        "assemble_trace_plus_requests"
    } else {
        "assemble_trace"
    };
    let start = Instant::now();
    let Ok(mut engine) = ContextEngine::new(root, ContextConfig::default()) else {
        eprintln!("cannot open {root}");
        return ExitCode::FAILURE;
    };
    let ctx = engine.assemble(&requests, Some(&goal));
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    if ctx.stats.context_files_count == 0 {
        eprintln!(
            "the trace gathered no file: {:#?}",
            ctx.blocks.iter().map(|b| &b.header).collect::<Vec<_>>()
        );
        return ExitCode::FAILURE;
    }
    emit(name, "wall_time", ms, "ms");
    emit(
        name,
        "files_gathered",
        ctx.stats.context_files_count as f64,
        "count",
    );
    emit(
        name,
        "context_chars",
        ctx.stats.context_total_chars as f64,
        "chars",
    );
    if let Some(kb) = vm_hwm_kb() {
        emit(name, "peak_rss", kb / 1024.0, "MiB");
    }
    ExitCode::SUCCESS
}

#[allow(clippy::disallowed_methods)] // a bench binary may read HOME for its default root
fn default_root() -> Utf8PathBuf {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
    Utf8PathBuf::from(home).join(".cargo/registry/src")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child-assemble") {
        let [_, root, file, line, reqs] = args.as_slice() else {
            return ExitCode::FAILURE;
        };
        return child_assemble(
            Utf8Path::new(root),
            file,
            line.parse().unwrap_or(1),
            reqs == "1",
        );
    }
    let root = args
        .first()
        .map(Utf8PathBuf::from)
        .unwrap_or_else(default_root);
    if Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_err()
    {
        eprintln!(
            "error: ripgrep (`rg`) is not installed; install it (apt-get install -y ripgrep) to run this benchmark"
        );
        return ExitCode::FAILURE;
    }
    let files = count_files(root.as_std_path());
    emit("tree", "files", files as f64, "count");
    let project = match Project::open(&root, ContextConfig::default()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut ratios = Vec::new();
    for q in QUERIES {
        // Warm the page cache (and both code paths) first.
        let _ = rg_ms(&root, q);
        let _ = project.search_hits(q, None, SearchMode::Literal);
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let mut hits = 0;
        let mut rg_lines = 0;
        for _ in 0..RUNS {
            let start = Instant::now();
            let r = project.search_hits(q, None, SearchMode::Literal);
            ours.push(start.elapsed().as_secs_f64() * 1000.0);
            hits = r.map(|r| r.hits.len()).unwrap_or(0);
            match rg_ms(&root, q) {
                Ok((ms, lines)) => {
                    theirs.push(ms);
                    rg_lines = lines;
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        let (o, t) = (median(ours), median(theirs));
        let bench = format!("search[{q}]");
        emit(&bench, "papayu_median", o, "ms");
        emit(&bench, "rg_median", t, "ms");
        emit(&bench, "ratio_papayu_over_rg", o / t, "x");
        emit(&bench, "papayu_hits", hits as f64, "count");
        emit(&bench, "rg_matching_lines", rg_lines as f64, "count");
        ratios.push(o / t);
    }
    emit(
        "search",
        "worst_ratio_papayu_over_rg",
        ratios.iter().copied().fold(0.0, f64::max),
        "x",
    );

    // A real file for the stack trace: the first `fn main` hit.
    let Some(hit) = project
        .search_hits("fn main", None, SearchMode::Literal)
        .ok()
        .and_then(|r| r.hits.into_iter().next())
    else {
        eprintln!("error: no `fn main` in {root}");
        return ExitCode::FAILURE;
    };
    let Ok(exe) = std::env::current_exe() else {
        return ExitCode::FAILURE;
    };
    for reqs in ["0", "1"] {
        let out = Command::new(&exe)
            .args([
                "--child-assemble",
                root.as_str(),
                &hit.path,
                &hit.line.to_string(),
                reqs,
            ])
            .stderr(Stdio::inherit())
            .output();
        match out {
            Ok(o) if o.status.success() => print!("{}", String::from_utf8_lossy(&o.stdout)),
            _ => {
                eprintln!("error: the assembly child failed");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
