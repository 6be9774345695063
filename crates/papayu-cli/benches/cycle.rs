//! papayu's own time for one plan→apply cycle, everything except model latency (issue 6 target
//! ≤ 50 ms), and its peak RSS (≤ 50 MB).
//!
//! A stub model on 127.0.0.1 answers at once: first a context request for `calc.py`, then a
//! PATCH_FILE against the sha256 of the bytes it was sent. Each trial copies
//! `examples/sample-project` to a temp dir and runs the real binary:
//! `papayu run --yes "fix add"` — one process, two model round trips, validation, preview,
//! journaled apply and the project's check command. The check is `true` (set through
//! `.papa-yu/project.json`) so that papayu's time is not hidden behind Python's start-up; the
//! detected `python3 -m compileall` check is measured separately.
#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    missing_docs
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde_json::json;

fn emit(case: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({"bench": "cycle", "case": case, "metric": metric, "value": value, "unit": unit})
    );
}

fn chat_completion(content: &str) -> String {
    json!({
        "id": "stub", "object": "chat.completion", "model": "stub",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
    .to_string()
}

/// A minimal HTTP/1.1 server: odd requests get the context request, even ones the patch.
fn stub_model(patch_answer: String) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let content = if n.is_multiple_of(2) {
                json!({"actions": [], "summary": "need calc.py",
                       "context_requests": [{"type": "read_file", "path": "calc.py"}]})
                .to_string()
            } else {
                patch_answer.clone()
            };
            let body = chat_completion(&content);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, count)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Peak resident set of the largest child process waited for so far, in KiB.
fn children_max_rss_kib() -> f64 {
    let mut usage: libc::rusage = unsafe_zeroed_rusage();
    #[allow(unsafe_code)]
    // SAFETY: `usage` is a valid, writable `rusage`; getrusage only writes into it.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0, "getrusage failed");
    usage.ru_maxrss as f64
}

fn unsafe_zeroed_rusage() -> libc::rusage {
    #[allow(unsafe_code)]
    // SAFETY: `rusage` is plain old data; all-zero is a valid value.
    unsafe {
        std::mem::zeroed()
    }
}

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sample = repo.join("examples/sample-project");
    let calc = std::fs::read(sample.join("calc.py")).unwrap();
    let base = papayu_protocol::sha256_hex(&calc);
    let patch = "--- a/calc.py\n+++ b/calc.py\n@@ -4,4 +4,4 @@\n def add(a, b):\n     \"\"\"Return the sum of a and b.\"\"\"\n-    return a - b\n+    return a + b\n \n";
    let answer = json!({"actions": [{"kind": "PATCH_FILE", "path": "calc.py", "base_sha256": base, "patch": patch}],
                        "summary": "add() adds"})
    .to_string();
    let (port, requests) = stub_model(answer);
    let exe = env!("CARGO_BIN_EXE_papayu");
    let tmp = tempfile::tempdir().unwrap();

    for (case, check) in [
        ("check=true", Some("true")),
        ("check=detected (python3 -m compileall)", None),
    ] {
        let trials = 15;
        let mut times = Vec::with_capacity(trials);
        for i in 0..trials {
            let project = tmp
                .path()
                .join(format!("{}-{i}", check.unwrap_or("detect")));
            copy_dir(&sample, &project);
            if let Some(cmd) = check {
                std::fs::create_dir_all(project.join(".papa-yu")).unwrap();
                std::fs::write(
                    project.join(".papa-yu/project.json"),
                    json!({"default_test_command": cmd}).to_string(),
                )
                .unwrap();
            }
            let before = requests.load(Ordering::SeqCst);
            let t = Instant::now();
            let out = Command::new(exe)
                .args([
                    "--project",
                    project.to_str().unwrap(),
                    "--json",
                    "run",
                    "--yes",
                    "fix add",
                ])
                .env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("HOME", tmp.path())
                .env("XDG_CONFIG_HOME", tmp.path().join("config"))
                .env("PAPAYU_LLM_API_URL", format!("http://127.0.0.1:{port}/v1"))
                .env("PAPAYU_LLM_MODEL", "stub")
                .output()
                .unwrap();
            let elapsed = t.elapsed().as_secs_f64() * 1e3;
            assert!(
                out.status.success(),
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                requests.load(Ordering::SeqCst) - before,
                2,
                "one context round, then the patch"
            );
            let fixed = std::fs::read_to_string(project.join("calc.py")).unwrap();
            assert!(fixed.contains("return a + b"), "{fixed}");
            times.push(elapsed);
        }
        times.sort_by(f64::total_cmp);
        emit(
            case,
            "plan→apply cycle, median wall time",
            times[trials / 2],
            "ms",
        );
        emit(case, "plan→apply cycle, min wall time", times[0], "ms");
    }
    emit(
        "all trials",
        "peak RSS of one papayu process",
        children_max_rss_kib() / 1024.0,
        "MiB",
    );
}
