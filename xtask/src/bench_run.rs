//! `cargo xtask bench tasks [--run]`: papayu on every task of the corpus, judged by the task's
//! own test, with the figures SPEC §14 asks for (solved, left unchanged, left changed but
//! unsolved, attempts, model calls, tokens, wall time, peak memory). `--scripted` answers with a
//! perfect model (the reference fix, over the real OpenAI wire format on 127.0.0.1): every task
//! must then be solved in one attempt, which proves the loop loses nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::tasks::{Task, tree_digest};

/// What `--run` was asked for.
#[derive(Debug, Default)]
pub struct RunOptions {
    /// A built papayu (default: `cargo build --release -p papayu-cli` first).
    pub papayu: Option<PathBuf>,
    /// Answer with the reference fixes instead of a model.
    pub scripted: bool,
    /// Answer with a recorded run's answers (`DIR/<task id>.answers.json` or the traces in
    /// `DIR/<task id>/`), in order, instead of a model.
    pub replay: Option<PathBuf>,
    /// A GGUF model for the in-process provider (`--model-path`).
    pub model_path: Option<PathBuf>,
    /// `--attempts` for `papayu run`.
    pub attempts: Option<u32>,
    /// More arguments for `papayu run` (`--draws=1`, `--retry-temperature=0`, …).
    pub run_args: Vec<String>,
    /// Extra `KEY=VALUE` environment for papayu (a provider, a budget…).
    pub env: Vec<(String, String)>,
    /// Fail unless every task is solved in one attempt at most (the scripted model's promise;
    /// none when papayu's own change verifies before the model is asked, D88).
    pub expect_all: bool,
    /// Fail unless every task is solved, in any attempt (a replay whose recorded answers
    /// papayu's readings are known to turn into a fix).
    pub expect_solved: bool,
    /// Where to append one JSON line per task and one summary line.
    pub out: Option<PathBuf>,
    /// Where to keep each task's traces (`DIR/<task id>/`, the model's raw answers included)
    /// before its scratch copy is deleted.
    pub traces: Option<PathBuf>,
}

/// One task's result.
#[derive(Debug, Clone)]
struct TaskResult {
    id: String,
    outcome: String,
    solved: bool,
    unchanged: bool,
    attempts: u64,
    /// Changes drawn over all attempts (an attempt draws several with the in-process model);
    /// parts of a rejected change tried alone are not counted.
    changes: u64,
    model_calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    wall: Duration,
    peak_rss_kb: u64,
    exit: Option<i32>,
    /// How each attempt ended: its error code (a rejected answer, a blocked action, …),
    /// `not_verified` (applied, tests did not confirm it, rolled back) or `verified`.
    endings: Vec<String>,
    /// Test files (or a Rust file's `#[cfg(test)]` module) the project had and papayu's change
    /// altered or removed: the task's tests passing then proves nothing, so it is not solved.
    tests_edited: Vec<String>,
}

/// How one attempt of papayu's `--json` report ended (see [`TaskResult::endings`]).
/// A part of a rejected change tried alone (D65) ends as `part_` and the same word, the change
/// with a rename it began completed (D74) as `renamed_`, a move it began carried out (D78) as
/// `moved_`, its new definitions added alone (D79) as `added_`, papayu's own small edit
/// (D81) as `mutant_`.
fn ending(attempt: &Value) -> String {
    let part = if attempt["part"].is_object() {
        "part_"
    } else if attempt["renamed"].is_object() {
        "renamed_"
    } else if attempt["moved"].is_object() {
        "moved_"
    } else if attempt["added"].is_object() {
        "added_"
    } else if attempt["mutant"].is_object() {
        "mutant_"
    } else {
        ""
    };
    if let Some(code) = attempt["error"]["code"].as_str() {
        return format!("{part}{code}");
    }
    format!(
        "{part}{}",
        attempt["verdict"]["verdict"].as_str().unwrap_or("-")
    )
}

impl TaskResult {
    fn changed_unsolved(&self) -> bool {
        !self.solved && !self.unchanged
    }

    fn json(&self) -> Value {
        json!({
            "bench": "tasks", "case": self.id, "outcome": self.outcome, "solved": self.solved,
            "unchanged": self.unchanged, "changed_unsolved": self.changed_unsolved(),
            "attempts": self.attempts, "changes": self.changes, "model_calls": self.model_calls,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "wall_s": self.wall.as_secs_f64(), "peak_rss_mb": self.peak_rss_kb as f64 / 1024.0,
            "exit": self.exit, "attempt_endings": self.endings,
            "tests_edited": self.tests_edited,
        })
    }
}

/// Every file's test code (`papayu_agent::verify::test_section`: a test file, a Rust file's
/// `#[cfg(test)]` module), by path relative to `project`.
fn test_code(project: &Path) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (rel, path) in crate::tasks::list_files(project, crate::tasks::IGNORED_DIRS)? {
        let Ok(text) = fs_err::read_to_string(&path) else {
            continue;
        };
        if let Some(code) = papayu_agent::verify::test_section(&rel, &text) {
            out.insert(rel, code.to_owned());
        }
    }
    Ok(out)
}

/// The peak resident memory of a running process so far (`VmHWM`, KiB), if it still exists.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = fs_err::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Run papayu on `tasks` and print the table; an error when a task is left changed but
/// unsolved, or (with `expect_all`) when any is not solved in one attempt, or (with
/// `expect_solved`) when any is not solved.
pub fn run(root: &Path, tasks: &[Task], o: &RunOptions) -> Result<()> {
    let papayu = match &o.papayu {
        Some(p) => p.clone(),
        None => build_papayu(root)?,
    };
    let scratch = tempfile::Builder::new()
        .prefix("papayu-bench-run-")
        .tempdir()?;
    let cargo_target = scratch.path().join("cargo-target");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    println!(
        "{:<34} {:<18} {:>6} {:>9} {:>8} {:>6} {:>10} {:>8} {:>8}",
        "task", "outcome", "solved", "unchanged", "attempts", "calls", "tokens", "wall s", "rss MB"
    );
    let mut results = Vec::new();
    for task in tasks {
        let work = scratch.path().join(&task.id);
        let project = work.join("project");
        task.copy_project(&project)?;
        let before = tree_digest(&project)?;
        let tests_before = test_code(&project)?;
        let server = if o.scripted {
            Some(
                rt.block_on(crate::perfect::PerfectModel::start(task))?
                    .uri(),
            )
        } else {
            None
        };
        let (replay, replayed) = match &o.replay {
            Some(dir) => {
                let answers = crate::replay::answers(dir, &task.id)
                    .with_context(|| format!("the recorded answers of {}", task.id))?;
                let n = answers.len();
                let model = rt.block_on(crate::replay::ReplayModel::start(answers))?;
                (Some(model), n)
            }
            None => (None, 0),
        };
        let server = server.or_else(|| replay.as_ref().map(|r| r.uri()));
        let mut cmd = Command::new(&papayu);
        cmd.arg("--project").arg(&project).arg("--json");
        if let Some(m) = &o.model_path {
            cmd.arg("--model-path").arg(m);
        }
        cmd.arg("run").arg("--yes");
        if let Some(n) = o.attempts {
            cmd.arg("--attempts").arg(n.to_string());
        } else if o.replay.is_some() {
            // One recorded answer per attempt, as many attempts as answers.
            cmd.arg("--attempts")
                .arg(replayed.max(1).to_string())
                .arg("--draws")
                .arg("1");
        }
        cmd.args(&o.run_args);
        cmd.arg(&task.goal)
            .env("XDG_CONFIG_HOME", work.join("config"))
            .env("PAPAYU_TRACE", "1")
            .env("NO_COLOR", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("RUST_BACKTRACE", "0")
            // The tasks' own builds go into their project (`target/` is outside every digest),
            // not into the xtask's target directory.
            .env_remove("CARGO_TARGET_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if o.traces.is_some() {
            cmd.env("PAPAYU_TRACE_RAW", "1");
        }
        for (k, v) in &o.env {
            cmd.env(k, v);
        }
        if let Some(uri) = &server {
            let name = if o.scripted { "perfect" } else { "recorded" };
            cmd.env("PAPAYU_LLM_PROVIDER", "openai-compatible")
                .env("PAPAYU_LLM_API_URL", format!("{uri}/v1"))
                .env("PAPAYU_LLM_MODEL", name);
        }
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", papayu.display()))?;
        let pid = child.id();
        let mut peak = 0;
        let (stdout, stderr) = {
            let out = child.stdout.take();
            let err = child.stderr.take();
            let reader = std::thread::spawn(move || {
                let mut s = String::new();
                if let Some(mut o) = out {
                    let _ = std::io::Read::read_to_string(&mut o, &mut s);
                }
                s
            });
            let err_reader = std::thread::spawn(move || {
                let mut s = String::new();
                if let Some(mut e) = err {
                    let _ = std::io::Read::read_to_string(&mut e, &mut s);
                }
                s
            });
            loop {
                if let Some(kb) = peak_rss_kb(pid) {
                    peak = peak.max(kb);
                }
                if child.try_wait()?.is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            (
                reader.join().unwrap_or_default(),
                err_reader.join().unwrap_or_default(),
            )
        };
        let status = child.wait()?;
        let wall = started.elapsed();
        let doc: Value = stdout
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str(l).ok())
            .unwrap_or(Value::Null);
        let judge = task.run_test(&project, Duration::from_secs(120), &cargo_target)?;
        let after = tree_digest(&project)?;
        let tests_after = test_code(&project)?;
        let tests_edited: Vec<String> = tests_before
            .iter()
            .filter(|(path, code)| tests_after.get(*path) != Some(code))
            .map(|(path, _)| path.clone())
            .collect();
        let changes = doc["attempts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| {
                !a["part"].is_object()
                    && !a["renamed"].is_object()
                    && !a["moved"].is_object()
                    && !a["added"].is_object()
                    && !a["mutant"].is_object()
            })
            .count() as u64;
        let attempts = doc["attempts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["number"].as_u64())
            .max()
            .unwrap_or(0);
        let result = TaskResult {
            id: task.id.clone(),
            outcome: doc["outcome"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("error {}", doc["code"].as_str().unwrap_or("?"))),
            solved: judge.passed && tests_edited.is_empty(),
            unchanged: after == before,
            attempts,
            changes,
            model_calls: doc["usage"]["model_calls"].as_u64().unwrap_or(0),
            input_tokens: doc["usage"]["input_tokens"].as_u64().unwrap_or(0),
            output_tokens: doc["usage"]["output_tokens"].as_u64().unwrap_or(0),
            wall,
            peak_rss_kb: peak,
            exit: status.code(),
            endings: doc["attempts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(ending)
                .collect(),
            tests_edited,
        };
        if !result.tests_edited.is_empty() {
            println!(
                "{}: the change edited the tests ({}); not counted as solved",
                result.id,
                result.tests_edited.join(", ")
            );
        }
        println!(
            "{:<34} {:<18} {:>6} {:>9} {:>8} {:>6} {:>10} {:>8.1} {:>8.0}",
            result.id,
            result.outcome,
            if result.solved { "yes" } else { "NO" },
            if result.unchanged { "yes" } else { "no" },
            result.attempts,
            result.model_calls,
            result.input_tokens + result.output_tokens,
            result.wall.as_secs_f64(),
            result.peak_rss_kb as f64 / 1024.0
        );
        if result.changed_unsolved() || ((o.expect_all || o.expect_solved) && !result.solved) {
            let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
            println!(
                "    stderr (last lines):\n      {}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n      ")
            );
            println!("    judge: {}", judge.output_tail.replace('\n', "\n      "));
            for a in doc["attempts"].as_array().into_iter().flatten() {
                let why = a["verdict"]["reason"]
                    .as_str()
                    .or(a["error"]["message"].as_str())
                    .unwrap_or("-");
                println!(
                    "    attempt {}: {}",
                    a["number"],
                    why.lines().next().unwrap_or("-")
                );
            }
        }
        if let Some(s) = server {
            drop(s);
        }
        if let Some(keep) = &o.traces {
            keep_traces(&project, &keep.join(&task.id))?;
        }
        let _ = fs_err::remove_dir_all(&work);
        results.push(result);
    }
    summarise(&results, o)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn summarise(results: &[TaskResult], o: &RunOptions) -> Result<()> {
    let n = results.len();
    let solved = results.iter().filter(|r| r.solved).count();
    let unchanged = results.iter().filter(|r| r.unchanged).count();
    let changed_unsolved: Vec<&str> = results
        .iter()
        .filter(|r| r.changed_unsolved())
        .map(|r| r.id.as_str())
        .collect();
    // Solved by the model's first change, or before the model was asked (D88: the refactoring
    // the goal asks for in words is papayu's own change, and the model is never called).
    let one_attempt = results
        .iter()
        .filter(|r| r.solved && r.changes <= 1)
        .count();
    let mut per_language: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in results {
        let lang = r.id.split('-').next().unwrap_or("?");
        let e = per_language.entry(lang).or_default();
        e.1 += 1;
        if r.solved {
            e.0 += 1;
        }
    }
    let mut endings: BTreeMap<&str, usize> = BTreeMap::new();
    for e in results.iter().flat_map(|r| &r.endings) {
        *endings.entry(e.as_str()).or_default() += 1;
    }
    let summary = json!({
        "bench": "tasks", "case": "all", "tasks": n, "solved": solved,
        "solved_pct": if n == 0 { 0.0 } else { 100.0 * solved as f64 / n as f64 },
        "unchanged_unsolved": results.iter().filter(|r| !r.solved && r.unchanged).count(),
        "changed_unsolved": changed_unsolved.len(),
        "solved_in_one_attempt": one_attempt,
        "median_wall_s": median(results.iter().map(|r| r.wall.as_secs_f64()).collect()),
        "median_attempts": median(results.iter().map(|r| r.attempts as f64).collect()),
        "model_calls": results.iter().map(|r| r.model_calls).sum::<u64>(),
        "tokens": results.iter().map(|r| r.input_tokens + r.output_tokens).sum::<u64>(),
        "peak_rss_mb": results.iter().map(|r| r.peak_rss_kb).max().unwrap_or(0) as f64 / 1024.0,
        "attempt_endings": endings,
        "per_language": per_language.iter().map(|(l, (s, t))| (l.to_string(), json!(format!("{s}/{t}")))).collect::<serde_json::Map<_, _>>(),
    });
    println!(
        "\nsolved {solved}/{n} ({:.0} %), left unchanged {}, left CHANGED but unsolved {}, solved in one attempt {one_attempt}",
        summary["solved_pct"].as_f64().unwrap_or(0.0),
        unchanged,
        changed_unsolved.len()
    );
    println!(
        "median wall {:.1} s, median attempts {}, model calls {}, tokens {}, peak RSS {:.0} MB, per language {}",
        summary["median_wall_s"].as_f64().unwrap_or(0.0),
        summary["median_attempts"],
        summary["model_calls"],
        summary["tokens"],
        summary["peak_rss_mb"].as_f64().unwrap_or(0.0),
        summary["per_language"]
    );
    println!("attempt endings: {}", summary["attempt_endings"]);
    if let Some(path) = &o.out {
        let mut text = String::new();
        for r in results {
            text.push_str(&r.json().to_string());
            text.push('\n');
        }
        text.push_str(&summary.to_string());
        text.push('\n');
        let mut existing = fs_err::read_to_string(path).unwrap_or_default();
        existing.push_str(&text);
        fs_err::write(path, existing)?;
        println!("results: {}", path.display());
    }
    if !changed_unsolved.is_empty() {
        bail!(
            "tasks left changed but unsolved (must never happen): {}",
            changed_unsolved.join(", ")
        );
    }
    if o.expect_solved && solved != n {
        bail!("{} of {n} tasks were not solved", n - solved);
    }
    if o.expect_all && one_attempt != n {
        bail!(
            "{} of {n} tasks were not solved in one attempt",
            n - one_attempt
        );
    }
    Ok(())
}

/// `cargo build --release -p papayu-cli` and the binary's path.
fn build_papayu(root: &Path) -> Result<PathBuf> {
    let status = Command::new("cargo")
        .args(["build", "--release", "--quiet", "-p", "papayu-cli"])
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p papayu-cli failed");
    }
    Ok(crate::target_dir(root).join("release/papayu"))
}

/// sha256 of bytes, lowercase hex.
pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Copy `project`'s trace files into `to` (created; an earlier run's files there are replaced).
fn keep_traces(project: &Path, to: &Path) -> Result<()> {
    let from = project.join(".papa-yu/traces");
    fs_err::create_dir_all(to)?;
    let Ok(entries) = fs_err::read_dir(&from) else {
        return Ok(());
    };
    for e in entries {
        let e = e?;
        if e.file_type()?.is_file() {
            fs_err::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_code_holds_test_files_and_rust_test_modules_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        fs_err::create_dir_all(p.join("src")).unwrap();
        fs_err::create_dir_all(p.join("target")).unwrap();
        fs_err::write(p.join("calc.py"), "x = 1\n").unwrap();
        fs_err::write(p.join("test_calc.py"), "assert 1\n").unwrap();
        fs_err::write(
            p.join("src/lib.rs"),
            "pub fn f() {}\n#[cfg(test)]\nmod tests {}\n",
        )
        .unwrap();
        fs_err::write(p.join("target/test_x.py"), "junk\n").unwrap();
        let code = test_code(p).unwrap();
        assert_eq!(
            code.keys().collect::<Vec<_>>(),
            ["src/lib.rs", "test_calc.py"]
        );
        assert_eq!(code["src/lib.rs"], "#[cfg(test)]\nmod tests {}\n");
    }
}
