//! The verified fix (SPEC §14) on a real Python project with its real tests: a change is kept
//! only when the tests confirm it; otherwise every attempt rolls back, the model is told why,
//! and the project ends byte for byte as it was.

use std::collections::BTreeMap;

use papayu_agent::{Progress, SolveOptions, SolveOutcome, Verdict, no_progress};
use serde_json::{Value, json};

use crate::support::{Model, Project, messages, sha};

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef mean(values):\n    return sum(values) / len(values)\n";
const TEST: &str = "import unittest\n\nfrom calc import add, mean\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mean(self):\n        self.assertEqual(mean([1, 2, 3]), 2)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";

fn calc_project() -> Project {
    Project::new(&[
        ("calc.py", CALC.as_bytes()),
        ("test_calc.py", TEST.as_bytes()),
    ])
}

/// A PATCH_FILE of calc.py replacing line `from` (1-based) with `to`.
fn patch(line: usize, from: &str, to: &str) -> Value {
    let old: Vec<&str> = CALC.lines().collect();
    let start = line.saturating_sub(1).max(1);
    let end = (line + 1).min(old.len());
    let mut body = String::new();
    for (i, l) in old.iter().enumerate().take(end).skip(start - 1) {
        if i + 1 == line {
            assert_eq!(*l, from);
            body.push_str(&format!("-{from}\n+{to}\n"));
        } else {
            body.push_str(&format!(" {l}\n"));
        }
    }
    let n = end - start + 1;
    let diff = format!("--- a/calc.py\n+++ b/calc.py\n@@ -{start},{n} +{start},{n} @@\n{body}");
    json!({
        "actions": [{"kind": "PATCH_FILE", "path": "calc.py", "base_sha256": sha(CALC.as_bytes()), "patch": diff}],
        "summary": format!("calc.py line {line}: {to}")
    })
}

fn right() -> Value {
    patch(2, "    return a - b", "    return a + b")
}

fn wrong() -> Value {
    patch(2, "    return a - b", "    return a * b")
}

/// Fixes add() but breaks mean().
fn breaks_mean() -> Value {
    let diff = "--- a/calc.py\n+++ b/calc.py\n@@ -1,6 +1,6 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n \n \n def mean(values):\n-    return sum(values) / len(values)\n+    return sum(values)\n";
    json!({
        "actions": [{"kind": "PATCH_FILE", "path": "calc.py", "base_sha256": sha(CALC.as_bytes()), "patch": diff}],
        "summary": "add adds; mean sums"
    })
}

/// The tests below are about the model's attempts: papayu's own small edits (D81), which
/// would fix this calculator (`-` into `+`) right after the first attempt, are off in them and
/// have tests of their own at the end.
fn model_only() -> SolveOptions {
    SolveOptions::default().mutants(0)
}

/// Every file of the project except papayu's own state and the test's config directory.
fn tree(p: &Project) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for name in ["calc.py", "test_calc.py"] {
        out.insert(
            name.to_owned(),
            std::fs::read(p.dir.path().join(name)).unwrap(),
        );
    }
    let mut extra: Vec<String> = std::fs::read_dir(p.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !matches!(
                n.as_str(),
                ".papa-yu" | ".test-config" | "calc.py" | "test_calc.py"
            )
        })
        .collect();
    extra.sort();
    assert!(extra.is_empty(), "files appeared in the project: {extra:?}");
    out
}

fn solve(p: &Project, model: &Model, options: &SolveOptions) -> papayu_agent::SolveReport {
    let mut agent = p.agent(model, &[("PAPAYU_TRACE", "1")]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(agent.solve(
        "fix: add() in calc.py subtracts, so test_calc.py fails",
        options,
        None,
        &no_progress,
    ))
    .unwrap()
}

/// "fix add()" with `options`, each progress event given to `record`.
fn solve_recording(
    p: &Project,
    model: &Model,
    options: &SolveOptions,
    record: papayu_agent::ProgressFn<'_>,
) -> papayu_agent::SolveReport {
    solve_in(p, model, options, record, &[])
}

/// [`solve_recording`] with the agent's environment `env`.
fn solve_in(
    p: &Project,
    model: &Model,
    options: &SolveOptions,
    record: papayu_agent::ProgressFn<'_>,
    env: &[(&str, &str)],
) -> papayu_agent::SolveReport {
    let mut agent = p.agent(model, env);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(agent.solve("fix add()", options, None, record))
        .unwrap()
}

/// A `record` for [`solve_recording`] counting the test runs into `runs`.
fn count_test_runs(runs: &std::sync::Mutex<u32>) -> impl Fn(&Progress) + Sync + '_ {
    move |e: &Progress| {
        if serde_json::to_value(e).unwrap()["stage"] == "testing" {
            *runs.lock().unwrap() += 1;
        }
    }
}

#[test]
fn a_right_fix_is_verified_by_the_tests_and_kept() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[right()]));
    let report = solve(&p, &model, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.attempts.len(), 1);
    let baseline = report.baseline.as_ref().unwrap();
    assert_eq!(baseline.failing, ["test_calc.CalcTest.test_add"]);
    assert_eq!(baseline.targets, ["test_calc.CalcTest.test_add"]);
    assert!(matches!(
        &report.attempts[0].verdict,
        Some(Verdict::Verified { fixed }) if fixed == &["test_calc.CalcTest.test_add"]
    ));
    assert!(p.read("calc.py").contains("return a + b"));
    assert_eq!(report.usage.model_calls, 1);
    // The first request carried calc.py and its test (the base context) and the failure.
    let requests = rt.block_on(model.requests());
    let user = &messages(&requests[0])[1].1;
    assert!(user.contains("FILE[calc.py] (sha256="), "{user}");
    assert!(user.contains("FILE[test_calc.py]"), "{user}");
    assert!(user.contains("AssertionError: -1 != 5"), "{user}");
    assert!(user.contains("PROJECT MAP"), "{user}");
    // The test file shows the failing test whole and the passing one by name (D85).
    assert!(user.contains("self.assertEqual(add(2, 3), 5)"), "{user}");
    assert!(
        user.contains("# … 1 passing test is not shown: test_mean"),
        "{user}"
    );
    assert!(!user.contains("mean([1, 2, 3])"), "{user}");
    // The traceback names files as the model names them: relative to the project.
    assert!(user.contains("File \"test_calc.py\", line"), "{user}");
    let root = p.dir.path().canonicalize().unwrap();
    assert!(!user.contains(root.to_str().unwrap()), "{user}");
}

#[test]
fn a_wrong_fix_is_rolled_back_and_the_model_is_told_why() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), right()]));
    let report = solve(&p, &model, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.attempts.len(), 2);
    assert!(matches!(
        &report.attempts[0].verdict,
        Some(Verdict::NotVerified { still_failing, .. }) if still_failing == &["test_calc.CalcTest.test_add"]
    ));
    let requests = rt.block_on(model.requests());
    assert_eq!(requests.len(), 2);
    let second = &messages(&requests[1])[1].1;
    assert!(second.contains("PREVIOUS ATTEMPT:"), "{second}");
    assert!(second.contains("ROLLED BACK"), "{second}");
    assert!(second.contains("+    return a * b"), "{second}");
    assert!(second.contains("6 != 5"), "{second}");
    // The context shows calc.py as it is again: the original hash.
    assert!(
        second.contains(&format!("FILE[calc.py] (sha256={})", sha(CALC.as_bytes()))),
        "{second}"
    );
    assert!(p.read("calc.py").contains("return a + b"));
}

#[test]
fn nothing_verified_leaves_the_project_exactly_as_it_was() {
    let p = calc_project();
    let before = tree(&p);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Attempt 3 repeats attempt 1 in all its draws.
    let model = rt.block_on(Model::start(&[
        wrong(),
        breaks_mean(),
        wrong(),
        wrong(),
        wrong(),
    ]));
    let report = solve(&p, &model, &model_only());
    assert_eq!(report.outcome, SolveOutcome::NotSolved, "{report:#?}");
    assert_eq!(report.attempts.len(), 3);
    assert!(matches!(
        &report.attempts[1].verdict,
        Some(Verdict::NotVerified { regressed, still_failing, .. })
            if regressed == &["test_calc.CalcTest.test_mean"] && still_failing.is_empty()
    ));
    assert_eq!(tree(&p), before);
    // Each attempt was a transaction: nothing committed, nothing on the undo stack.
    let mut agent = p.agent(&model, &[]);
    assert!(agent.history().unwrap().undo.is_empty());
    let _ = &mut agent;
}

#[test]
fn a_rejected_answer_costs_an_attempt_and_is_explained() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bad = json!({"actions": [{"kind": "PATCH_FILE", "path": "../calc.py", "patch": "x"}], "summary": "bad"});
    // The bad answer and its repair are both rejected: attempt 1 ends; attempt 2 is right.
    let model = rt.block_on(Model::start(&[bad.clone(), bad, right()]));
    let report = solve(&p, &model, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.attempts.len(), 2);
    assert!(report.attempts[0].error.is_some());
    let requests = rt.block_on(model.requests());
    let third = &messages(&requests[2])[1].1;
    assert!(
        third.contains("was rejected before anything was applied"),
        "{third}"
    );
}

#[test]
fn a_spoiled_answer_after_a_real_one_costs_an_attempt_but_a_first_one_is_the_providers_error() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Attempt 1 is judged, attempt 2's answer is spoiled, attempt 3 is right.
    let p = calc_project();
    let model = rt.block_on(Model::start(&[
        wrong(),
        Value::String(crate::support::SPOILED.to_owned()),
        right(),
    ]));
    let report = solve(&p, &model, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.attempts.len(), 3);
    let spoiled = report.attempts[1]
        .error
        .as_ref()
        .expect("attempt 2's error");
    assert_eq!(spoiled.code.as_str(), "ERR_LLM_BAD_RESPONSE");
    // The very first answer spoiled: the provider may not work at all; the goal ends with its
    // error and the project as it was.
    let p = calc_project();
    let before = tree(&p);
    let model = rt.block_on(Model::start(&[
        Value::String(crate::support::SPOILED.to_owned()),
        right(),
    ]));
    let mut agent = p.agent(&model, &[]);
    let err = rt
        .block_on(agent.solve("fix add()", &model_only(), None, &no_progress))
        .expect_err("the provider's error");
    assert_eq!(err.code().as_str(), "ERR_LLM_BAD_RESPONSE");
    assert_eq!(tree(&p), before);
}

#[test]
fn without_a_test_command_the_change_is_applied_unverified() {
    let p = Project::new(&[("notes.md", b"# Notes\n")]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let create = json!({"actions": [{"kind": "CREATE_FILE", "path": "todo.md", "content": "- write docs\n"}], "summary": "a todo list"});
    let model = rt.block_on(Model::start(&[create]));
    let mut agent = p.agent(&model, &[]);
    let report = rt
        .block_on(agent.solve("add a todo list", &model_only(), None, &no_progress))
        .unwrap();
    assert_eq!(
        report.outcome,
        SolveOutcome::AppliedUnverified,
        "{report:#?}"
    );
    assert!(report.test.is_none());
    assert!(
        report
            .reason
            .as_deref()
            .unwrap()
            .contains("no test command")
    );
    assert_eq!(p.read("todo.md"), "- write docs\n");
}

#[test]
fn progress_names_the_baseline_and_each_attempt() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), right()]));
    let events = std::sync::Mutex::new(Vec::new());
    let record = |e: &Progress| {
        events
            .lock()
            .unwrap()
            .push(serde_json::to_value(e).unwrap())
    };
    let report = solve_recording(&p, &model, &model_only(), &record);
    assert_eq!(report.outcome, SolveOutcome::Verified);
    let stages: Vec<String> = events
        .into_inner()
        .unwrap()
        .iter()
        .filter(|e| matches!(e["stage"].as_str(), Some("testing" | "tested" | "attempt")))
        .map(|e| e.to_string())
        .collect();
    assert!(stages[0].contains("\"baseline\":true"), "{stages:?}");
    assert!(
        stages.iter().any(|s| s.contains("\"number\":2")),
        "{stages:?}"
    );
}

#[test]
fn mode_prefixes_never_reach_the_model() {
    assert_eq!(papayu_agent::strip_mode_prefix("plan: fix it"), "fix it");
    assert_eq!(papayu_agent::strip_mode_prefix("  APPLY:do it"), "do it");
    assert_eq!(
        papayu_agent::strip_mode_prefix("fix the plan"),
        "fix the plan"
    );
}

#[test]
fn a_change_the_tests_already_rejected_is_not_tested_again() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The same wrong fix twice (as a small model with greedy decoding answers), then the right
    // one; retries as configured (no redraw), so the repeat is an attempt of its own.
    let model = rt.block_on(Model::start(&[wrong(), wrong(), right()]));
    let tests_run = std::sync::Mutex::new(0u32);
    let record = count_test_runs(&tests_run);
    let options = model_only().retry_temperature(0.0);
    let report = solve_recording(&p, &model, &options, &record);
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.attempts.len(), 3);
    assert!(matches!(
        &report.attempts[1].verdict,
        Some(Verdict::NotVerified { reason, still_failing, .. })
            if reason.contains("the change attempt 1 tried") && reason.contains("not tested again")
                && still_failing == &["test_calc.CalcTest.test_add"]
    ));
    // The baseline, attempt 1 and attempt 3: the repeat ran nothing.
    assert_eq!(*tests_run.lock().unwrap(), 3);
    let requests = rt.block_on(model.requests());
    assert_eq!(requests.len(), 3);
    let third = &messages(&requests[2])[1].1;
    assert!(
        third.contains("Attempt 2 proposed EXACTLY the change attempt 1 tried"),
        "{third}"
    );
    assert!(third.contains("+    return a * b"), "{third}");
    assert!(p.read("calc.py").contains("return a + b"));
}

/// Rewrites the failing assertion so that the tests pass without fixing add().
fn edits_the_test() -> Value {
    let diff = "--- a/test_calc.py\n+++ b/test_calc.py\n@@ -6,3 +6,3 @@\n class CalcTest(unittest.TestCase):\n     def test_add(self):\n-        self.assertEqual(add(2, 3), 5)\n+        self.assertEqual(add(2, 3), -1)\n";
    json!({
        "actions": [{"kind": "PATCH_FILE", "path": "test_calc.py", "base_sha256": sha(TEST.as_bytes()), "patch": diff}],
        "summary": "the test expects the wrong value"
    })
}

#[test]
fn a_change_that_rewrites_the_failing_tests_is_not_applied_and_the_code_is_fixed_next() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[edits_the_test(), right()]));
    let tests_run = std::sync::Mutex::new(0u32);
    let record = count_test_runs(&tests_run);
    let options = model_only().retry_temperature(0.0);
    let report = solve_recording(&p, &model, &options, &record);
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.attempts.len(), 2);
    assert!(matches!(
        &report.attempts[0].verdict,
        Some(Verdict::NotVerified { reason, still_failing, .. })
            if reason.contains("it edits the tests that judge it (`test_calc.py`)")
                && still_failing == &["test_calc.CalcTest.test_add"]
    ));
    // The baseline and attempt 2: the test-editing change was never applied or tested.
    assert_eq!(*tests_run.lock().unwrap(), 2);
    let second = &messages(&rt.block_on(model.requests())[1])[1].1;
    assert!(
        second.contains("Attempt 1 was NOT applied because it edits the tests"),
        "{second}"
    );
    assert!(
        second.contains("-        self.assertEqual(add(2, 3), 5)"),
        "{second}"
    );
    assert_eq!(p.read("test_calc.py"), TEST);
    assert!(p.read("calc.py").contains("return a + b"));
}

#[test]
fn while_the_tests_fail_a_narrowed_answer_may_not_name_a_test_file() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fixed = json!({"summary": "add adds", "actions": [{"kind": "UPDATE_FILE", "path": "calc.py",
        "content": CALC.replace("a - b", "a + b")}]});
    let model = rt.block_on(Model::start(&[fixed]));
    let mut agent = p.agent(
        &model,
        &[
            ("PAPAYU_LLM_STRICT_JSON", "1"),
            ("PAPAYU_PROTOCOL_VERSION", "3"),
        ],
    );
    let report = rt
        .block_on(agent.solve(
            "fix: add() in calc.py subtracts, so test_calc.py fails",
            &model_only(),
            None,
            &no_progress,
        ))
        .unwrap();
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    let requests = rt.block_on(model.requests());
    let schema = serde_json::to_string(&requests[0]["response_format"]).unwrap();
    assert!(schema.contains("\"calc.py\""), "{schema}");
    assert!(!schema.contains("\"test_calc.py\""), "{schema}");
    // And it must change something: an empty answer cannot verify (D63).
    assert_eq!(
        actions_schema(&requests[0]["response_format"]).map(|a| &a["minItems"]),
        Some(&json!(1)),
        "{schema}"
    );
    // Outside a verified fix the shape names every file sent, and "no change" is an answer.
    let model = rt.block_on(Model::start(&[
        json!({"summary": "NO_CHANGES: fine", "actions": []}),
    ]));
    let mut agent = p.agent(
        &model,
        &[
            ("PAPAYU_LLM_STRICT_JSON", "1"),
            ("PAPAYU_PROTOCOL_VERSION", "3"),
        ],
    );
    rt.block_on(agent.prepare_apply(Some("look at test_calc.py and calc.py"), &no_progress))
        .unwrap();
    let schema =
        serde_json::to_string(&rt.block_on(model.requests())[0]["response_format"]).unwrap();
    assert!(schema.contains("\"test_calc.py\""), "{schema}");
    let format = &rt.block_on(model.requests())[0]["response_format"];
    assert!(
        actions_schema(format).is_some_and(|a| a.get("minItems").is_none()),
        "{schema}"
    );
}

/// The schema of `actions` wherever a request's `response_format` nests the answer's schema.
fn actions_schema(v: &Value) -> Option<&Value> {
    match v {
        Value::Object(map) => map
            .get("properties")
            .and_then(|p| p.get("actions"))
            .or_else(|| map.values().find_map(actions_schema)),
        Value::Array(items) => items.iter().find_map(actions_schema),
        _ => None,
    }
}

/// The `temperature` and `seed` a request body carries.
fn sampling_of(body: &Value) -> (f64, Option<u64>) {
    (body["temperature"].as_f64().unwrap(), body["seed"].as_u64())
}

#[test]
fn retries_draw_at_the_retry_temperature_each_from_its_own_seed() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), breaks_mean(), right()]));
    let report = solve(&p, &model, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.attempts.len(), 3);
    let requests = rt.block_on(model.requests());
    assert_eq!(requests.len(), 3);
    // The first answer as configured (greedy, no seed), the retries drawn at 0.7.
    assert_eq!(sampling_of(&requests[0]), (0.0, None));
    let (t2, seed2) = sampling_of(&requests[1]);
    let (t3, seed3) = sampling_of(&requests[2]);
    assert_eq!((t2, t3), (0.7, 0.7));
    assert!(
        seed2.is_some() && seed3.is_some() && seed2 != seed3,
        "{seed2:?} {seed3:?}"
    );
    assert_eq!(report.attempts[0].sampling, None);
    let drawn = report.attempts[1].sampling.unwrap();
    assert_eq!(Some(u64::from(drawn.seed)), seed2);
    // The same run again draws from the same seeds: a run can be repeated.
    let q = calc_project();
    let again = rt.block_on(Model::start(&[wrong(), breaks_mean(), right()]));
    solve(&q, &again, &model_only());
    let seeds: Vec<_> = rt
        .block_on(again.requests())
        .iter()
        .map(sampling_of)
        .collect();
    assert_eq!(seeds, requests.iter().map(sampling_of).collect::<Vec<_>>());
}

#[test]
fn a_retry_temperature_of_zero_keeps_every_call_as_configured() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), right()]));
    let report = solve(&p, &model, &model_only().retry_temperature(0.0));
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    let requests = rt.block_on(model.requests());
    assert!(
        requests.iter().all(|r| sampling_of(r) == (0.0, None)),
        "{:?}",
        requests.iter().map(sampling_of).collect::<Vec<_>>()
    );
    assert!(report.attempts.iter().all(|a| a.sampling.is_none()));
}

#[test]
fn a_draw_that_repeats_a_rejected_change_is_drawn_again_untested() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), wrong(), right()]));
    let tests_run = std::sync::Mutex::new(0u32);
    let record = count_test_runs(&tests_run);
    let report = solve_recording(&p, &model, &model_only(), &record);
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    // Attempt 2's first draw repeated attempt 1: drawn again within the attempt, untested.
    assert_eq!(report.attempts.len(), 2);
    assert_eq!(report.attempts[1].redrawn, 1);
    assert!(report.attempts[1].diff.contains("+    return a + b"));
    // The baseline, attempt 1 and attempt 2's second draw.
    assert_eq!(*tests_run.lock().unwrap(), 3);
    let requests = rt.block_on(model.requests());
    assert_eq!(requests.len(), 3);
    assert_eq!(report.usage.model_calls, 3);
    let (_, first_draw) = sampling_of(&requests[1]);
    let (t, second_draw) = sampling_of(&requests[2]);
    assert_eq!(t, 0.7);
    assert_ne!(first_draw, second_draw);
    assert_eq!(
        Some(u64::from(report.attempts[1].sampling.unwrap().seed)),
        second_draw
    );
    assert!(p.read("calc.py").contains("return a + b"));
}

#[test]
fn redraws_are_bounded_and_a_run_of_repeats_leaves_the_project_as_it_was() {
    let p = calc_project();
    let before = tree(&p);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // A model that only ever knows the one wrong fix.
    let model = rt.block_on(Model::start(&[wrong(), wrong(), wrong(), wrong(), wrong()]));
    let tests_run = std::sync::Mutex::new(0u32);
    let record = count_test_runs(&tests_run);
    let options = model_only().attempts(2);
    let report = solve_recording(&p, &model, &options, &record);
    assert_eq!(report.outcome, SolveOutcome::NotSolved, "{report:#?}");
    assert_eq!(report.attempts.len(), 2);
    assert_eq!(report.attempts[1].redrawn, papayu_agent::REPEAT_REDRAWS);
    assert!(matches!(
        &report.attempts[1].verdict,
        Some(Verdict::NotVerified { reason, .. }) if reason.contains("not tested again")
    ));
    // Attempt 1's call and attempt 2's three draws; the tests ran for the baseline and attempt 1.
    assert_eq!(rt.block_on(model.requests()).len(), 1 + 1 + 2);
    assert_eq!(*tests_run.lock().unwrap(), 2);
    assert_eq!(tree(&p), before);
}

#[test]
fn an_attempt_draws_several_changes_from_its_one_prompt() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), right()]));
    let report = solve(&p, &model, &model_only().draws(2));
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    let turns: Vec<(u32, u32)> = report.attempts.iter().map(|a| (a.number, a.draw)).collect();
    assert_eq!(turns, [(1, 1), (1, 2)]);
    let requests = rt.block_on(model.requests());
    assert_eq!(requests.len(), 2);
    // The second draw asks what the first asked: the baseline failure, no word of the first
    // draw (the next attempt is told); it is drawn at the retry temperature.
    let second = &messages(&requests[1])[1].1;
    assert!(!second.contains("PREVIOUS ATTEMPT"), "{second}");
    assert!(second.contains("AssertionError: -1 != 5"), "{second}");
    assert_eq!(messages(&requests[1])[0], messages(&requests[0])[0]);
    assert_eq!(sampling_of(&requests[0]), (0.0, None));
    assert_eq!(sampling_of(&requests[1]).0, 0.7);
    assert!(p.read("calc.py").contains("return a + b"));
}

#[test]
fn the_next_attempt_is_told_about_the_last_draw_of_the_one_before() {
    let p = calc_project();
    let before = tree(&p);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), breaks_mean(), right()]));
    let report = solve(&p, &model, &model_only().attempts(2).draws(2));
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    let turns: Vec<(u32, u32)> = report.attempts.iter().map(|a| (a.number, a.draw)).collect();
    assert_eq!(turns, [(1, 1), (1, 2), (2, 1)]);
    let requests = rt.block_on(model.requests());
    let third = &messages(&requests[2])[1].1;
    assert!(third.contains("PREVIOUS ATTEMPT:"), "{third}");
    assert!(
        third.contains("-    return sum(values) / len(values)"),
        "{third}"
    );
    // And with nothing verified, every draw of every attempt rolled back.
    let q = calc_project();
    // Attempt 2 repeats attempt 1's two changes in all their draws.
    let failing = rt.block_on(Model::start(&[
        wrong(),
        breaks_mean(),
        wrong(),
        wrong(),
        wrong(),
        breaks_mean(),
        breaks_mean(),
        breaks_mean(),
    ]));
    let report = solve(&q, &failing, &model_only().attempts(2).draws(2));
    assert_eq!(report.outcome, SolveOutcome::NotSolved, "{report:#?}");
    assert!(
        report
            .reason
            .as_deref()
            .unwrap()
            .contains("2 attempt(s) (4 change(s) drawn)"),
        "{:?}",
        report.reason
    );
    assert_eq!(tree(&q), before);
}

#[test]
fn the_repair_of_a_drawn_answer_is_not_drawn() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bad = json!({"actions": [{"kind": "PATCH_FILE", "path": "../calc.py", "patch": "x"}], "summary": "bad"});
    let model = rt.block_on(Model::start(&[wrong(), bad, right()]));
    let report = solve(&p, &model, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    let requests = rt.block_on(model.requests());
    assert_eq!(requests.len(), 3);
    // Attempt 2 drawn at the retry temperature; its repair asks for the file's text greedily.
    assert_eq!(sampling_of(&requests[1]).0, 0.7);
    assert_eq!(sampling_of(&requests[2]), (0.0, None));
    assert_eq!(messages(&requests[2]).len(), 4, "the repair turn");
}

/// calc.py rewritten whole: add() fixed when `fix` (else multiplying), mean() broken when
/// `drift`.
fn rewrite(fix: bool, drift: bool) -> Value {
    let mut content = CALC.replace(
        "return a - b",
        if fix { "return a + b" } else { "return a * b" },
    );
    if drift {
        content = content.replace("sum(values) / len(values)", "sum(values)");
    }
    json!({
        "actions": [{"kind": "UPDATE_FILE", "path": "calc.py", "content": content}],
        "summary": "calc.py rewritten"
    })
}

/// [`solve_recording`] under protocol v3 (whole-file updates of existing files), traced.
fn solve_v3(
    p: &Project,
    model: &Model,
    options: &SolveOptions,
    record: papayu_agent::ProgressFn<'_>,
) -> papayu_agent::SolveReport {
    let env = [("PAPAYU_PROTOCOL_VERSION", "3"), ("PAPAYU_TRACE", "1")];
    solve_in(p, model, options, record, &env)
}

#[test]
fn a_rewrite_that_fixes_and_breaks_something_else_is_kept_as_its_fixing_part() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[rewrite(true, true)]));
    let events = std::sync::Mutex::new(Vec::new());
    let record = |e: &Progress| events.lock().unwrap().push(e.clone());
    let report = solve_v3(&p, &model, &model_only(), &record);
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    // One model call: the whole change was rejected (mean() regressed), its first hunk alone
    // verified.
    assert_eq!(report.usage.model_calls, 1);
    assert_eq!(report.attempts.len(), 2, "{report:#?}");
    assert!(matches!(
        &report.attempts[0].verdict,
        Some(Verdict::NotVerified { regressed, .. }) if regressed == &["test_calc.CalcTest.test_mean"]
    ));
    assert_eq!(report.attempts[0].part, None);
    let part = &report.attempts[1];
    assert_eq!(
        part.part,
        Some(papayu_agent::PartView {
            hunks: vec![1],
            keeping: vec![],
            of: 2
        })
    );
    assert_eq!((part.number, part.draw), (1, 1));
    assert!(matches!(&part.verdict, Some(Verdict::Verified { .. })));
    assert!(part.diff.contains("+    return a + b"), "{}", part.diff);
    assert!(!part.diff.contains("return sum(values)\n"), "{}", part.diff);
    assert_eq!(
        p.read("calc.py"),
        CALC.replace("return a - b", "return a + b")
    );
    assert!(events.lock().unwrap().contains(&Progress::Part {
        hunks: vec![1],
        of: 2
    }));
    // The part has its own trace, which names the change it came from.
    let trace = std::fs::read_to_string(p.dir.path().join(format!(
        ".papa-yu/traces/{}.json",
        part.trace_id.as_deref().unwrap()
    )))
    .unwrap();
    let trace: Value = serde_json::from_str(&trace).unwrap();
    let parent = report.attempts[0].trace_id.as_deref().unwrap();
    assert_eq!(trace["part_of"], format!("hunks 1 of 2 of {parent}"));
    assert_eq!(trace["apply"]["outcome"], "applied");
}

#[test]
fn parts_that_do_not_verify_are_rolled_back_and_the_model_hears_of_the_whole_change() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Neither hunk fixes add(): the whole change and both parts fail; attempt 2 is right.
    let model = rt.block_on(Model::start(&[rewrite(false, true), rewrite(true, false)]));
    let runs = std::sync::Mutex::new(0);
    let report = solve_v3(&p, &model, &model_only().draws(1), &count_test_runs(&runs));
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    let parts: Vec<_> = report
        .attempts
        .iter()
        .filter_map(|a| a.part.as_ref().map(|p| p.hunks.clone()))
        .collect();
    assert_eq!(parts, [vec![1], vec![2]], "{report:#?}");
    // Baseline, the whole change, its two parts, attempt 2.
    assert_eq!(*runs.lock().unwrap(), 5);
    let requests = rt.block_on(model.requests());
    assert_eq!(requests.len(), 2);
    let second = &messages(&requests[1])[1].1;
    assert!(second.contains("+    return a * b"), "{second}");
    assert!(second.contains("+    return sum(values)"), "{second}");
}

#[test]
fn with_parts_off_or_none_verifying_the_project_is_exactly_as_it_was() {
    for parts in [0, 3] {
        let p = calc_project();
        let before = tree(&p);
        let rt = tokio::runtime::Runtime::new().unwrap();
        let model = rt.block_on(Model::start(&[rewrite(false, true)]));
        let options = model_only().attempts(1).draws(1).parts(parts);
        let report = solve_v3(&p, &model, &options, &no_progress);
        assert_eq!(report.outcome, SolveOutcome::NotSolved, "{report:#?}");
        let tried = report.attempts.iter().filter(|a| a.part.is_some()).count();
        assert_eq!(tried, if parts == 0 { 0 } else { 2 }, "{report:#?}");
        assert_eq!(tree(&p), before);
        let agent = p.agent(&model, &[]);
        assert!(agent.history().unwrap().undo.is_empty());
    }
}

#[test]
fn an_answer_with_only_the_new_function_adds_it_to_the_file() {
    let calc = "def add(a, b):\n    return a + b\n";
    let test = "import unittest\n\nfrom calc import add, mul\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
    let p = Project::new(&[
        ("calc.py", calc.as_bytes()),
        ("test_calc.py", test.as_bytes()),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Asked for the whole new file, the model answers with the new function alone.
    let answer = json!({
        "actions": [{"kind": "UPDATE_FILE", "path": "calc.py", "content": "def mul(a, b):\n    return a * b\n"}],
        "summary": "add mul"
    });
    let model = rt.block_on(Model::start(&[answer]));
    let events = std::sync::Mutex::new(Vec::new());
    let record = |e: &Progress| events.lock().unwrap().push(e.clone());
    let report = solve_v3(&p, &model, &model_only(), &record);
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1);
    assert_eq!(
        p.read("calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
    );
    assert!(events.lock().unwrap().iter().any(|e| matches!(
        e,
        Progress::Widened { path, added: true, first: 3, last: 2, .. } if path == "calc.py"
    )));
}

#[test]
fn a_rename_begun_in_the_definition_is_completed_at_its_uses() {
    const DATES: &str = "def parse_date(text):\n    return text.strip()\n\n\ndef today():\n    return parse_date(' 2024-01-01 ')\n";
    const SHEET: &str = "from dates import parse_date\n\n\ndef days(rows):\n    return [parse_date(r) for r in rows]\n";
    const TEST: &str = "import unittest\n\nfrom dates import parse_iso_date\nfrom sheet import days\n\n\nclass DatesTest(unittest.TestCase):\n    def test_parse(self):\n        self.assertEqual(parse_iso_date(' 2024-01-31 '), '2024-01-31')\n\n    def test_days(self):\n        self.assertEqual(days([' a ']), ['a'])\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
    // A module that names the function on 60 lines: more than a model's search shows, and
    // sorted before sheet.py.
    let notes: String = (0..60)
        .map(|i| format!("# {i}: see parse_date\n"))
        .collect();
    let p = Project::new(&[
        ("aaa_notes.py", notes.as_bytes()),
        ("dates.py", DATES.as_bytes()),
        ("sheet.py", SHEET.as_bytes()),
        ("test_dates.py", TEST.as_bytes()),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The model renames the definition only; today() and sheet.py still call the old name.
    let model = rt.block_on(Model::start(&[json!({
        "actions": [{"kind": "UPDATE_FILE", "path": "dates.py",
                     "content": DATES.replacen("parse_date", "parse_iso_date", 1)}],
        "summary": "renamed"
    })]));
    let events = std::sync::Mutex::new(Vec::new());
    let record = |e: &Progress| events.lock().unwrap().push(e.clone());
    let report = solve_v3(&p, &model, &model_only(), &record);
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1);
    assert_eq!(report.attempts.len(), 2, "{report:#?}");
    assert!(matches!(
        &report.attempts[0].verdict,
        Some(Verdict::NotVerified { .. })
    ));
    let renamed = &report.attempts[1];
    assert_eq!(
        renamed.renamed,
        Some(papayu_agent::RenamedView {
            names: vec![("parse_date".into(), "parse_iso_date".into())],
            files: vec!["aaa_notes.py".into(), "sheet.py".into()],
            alone: false,
            moved: vec![],
        })
    );
    assert!(matches!(&renamed.verdict, Some(Verdict::Verified { .. })));
    assert_eq!(
        p.read("dates.py"),
        DATES.replace("parse_date", "parse_iso_date")
    );
    assert_eq!(
        p.read("sheet.py"),
        SHEET.replace("parse_date", "parse_iso_date")
    );
    // The tests, which judge the change, are as they were.
    assert_eq!(p.read("test_dates.py"), TEST);
    assert!(events.lock().unwrap().contains(&Progress::Renamed {
        names: vec![("parse_date".into(), "parse_iso_date".into())],
        files: vec!["aaa_notes.py".into(), "sheet.py".into()],
        alone: false,
    }));
    assert_eq!(
        p.read("aaa_notes.py"),
        notes.replace("parse_date", "parse_iso_date")
    );
    let trace = std::fs::read_to_string(p.dir.path().join(format!(
        ".papa-yu/traces/{}.json",
        renamed.trace_id.as_deref().unwrap()
    )))
    .unwrap();
    let trace: Value = serde_json::from_str(&trace).unwrap();
    assert_eq!(
        trace["part_of"],
        format!(
            "`parse_date` → `parse_iso_date` also in aaa_notes.py, sheet.py, completing {}",
            report.attempts[0].trace_id.as_deref().unwrap()
        )
    );
}

/// The part of a run's trace papayu's own change `id` wrote (`part_of`: what it is).
fn part_of(p: &Project, id: Option<&str>) -> Value {
    let trace = std::fs::read_to_string(
        p.dir
            .path()
            .join(format!(".papa-yu/traces/{}.json", id.unwrap())),
    )
    .unwrap();
    serde_json::from_str::<Value>(&trace).unwrap()["part_of"].clone()
}

/// Solve `goal` in `p` with protocol v3 and traces on.
fn solve_goal(
    p: &Project,
    model: &Model,
    goal: &str,
    options: &SolveOptions,
) -> papayu_agent::SolveReport {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut agent = p.agent(
        model,
        &[("PAPAYU_PROTOCOL_VERSION", "3"), ("PAPAYU_TRACE", "1")],
    );
    rt.block_on(agent.solve(goal, options, None, &no_progress))
        .unwrap()
}

/// A goal that asks for a rename in words gets it from papayu before the model is asked (D86,
/// D88): the rename, in the code files that use the name, tested like any change — the tests,
/// which already use the new name, as they are. The model is never called.
#[test]
fn a_rename_the_goal_asks_for_is_carried_out_before_the_model_is_asked() {
    const DATES: &str = "def parse_date(text):\n    return text.strip()\n";
    const SHEET: &str = "from dates import parse_date\n\n\ndef days(rows):\n    return [parse_date(r) for r in rows]\n";
    const TEST: &str = "import unittest\n\nfrom dates import parse_iso_date\nfrom sheet import days\n\n\nclass DatesTest(unittest.TestCase):\n    def test_parse(self):\n        self.assertEqual(parse_iso_date(' 2024-01-31 '), '2024-01-31')\n\n    def test_days(self):\n        self.assertEqual(days([' a ']), ['a'])\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
    let p = Project::new(&[
        ("dates.py", DATES.as_bytes()),
        ("sheet.py", SHEET.as_bytes()),
        ("test_dates.py", TEST.as_bytes()),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The model would rename another function (`days` → `all_days`).
    let model = rt.block_on(Model::start(&[json!({
        "actions": [{"kind": "UPDATE_FILE", "path": "sheet.py",
                     "content": SHEET.replace("def days", "def all_days")}],
        "summary": "renamed"
    })]));
    let goal =
        "rename parse_date to parse_iso_date everywhere (the tests already use the new name)";
    let report = solve_goal(&p, &model, goal, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 0);
    assert!(rt.block_on(model.requests()).is_empty());
    assert_eq!(report.attempts.len(), 1, "{report:#?}");
    let renamed = &report.attempts[0];
    assert_eq!((renamed.number, renamed.draw), (0, 0));
    assert_eq!(
        renamed.renamed,
        Some(papayu_agent::RenamedView {
            names: vec![("parse_date".into(), "parse_iso_date".into())],
            files: vec!["dates.py".into(), "sheet.py".into()],
            alone: true,
            moved: vec![],
        })
    );
    assert!(matches!(&renamed.verdict, Some(Verdict::Verified { .. })));
    assert_eq!(
        p.read("dates.py"),
        DATES.replace("parse_date", "parse_iso_date")
    );
    assert_eq!(
        p.read("sheet.py"),
        SHEET.replace("parse_date", "parse_iso_date")
    );
    assert_eq!(p.read("test_dates.py"), TEST);
    assert_eq!(
        part_of(&p, renamed.trace_id.as_deref()),
        "`parse_date` → `parse_iso_date` in dates.py, sheet.py, as the goal asks"
    );
}

/// `parse_money` moved from MONEY_UTILS's utils.py into money.py with the pattern only it
/// uses, and account.py importing it from there; the tests as they were (`test`).
fn assert_parse_money_moved(p: &Project, moved: &papayu_agent::AttemptView, test: &str) {
    assert_eq!(
        moved.moved,
        Some(papayu_agent::MovedView {
            names: vec!["parse_money".into()],
            from: "utils.py".into(),
            to: "money.py".into(),
            files: vec!["account.py".into()],
        })
    );
    assert_eq!(
        p.read("money.py"),
        "import re\n\n\n_AMOUNT = re.compile(r\"^\\d+$\")\n\n\ndef parse_money(text):\n    if not _AMOUNT.match(text):\n        raise ValueError(text)\n    return int(text)\n"
    );
    assert_eq!(
        p.read("utils.py"),
        "def shout(text):\n    return text.upper()\n"
    );
    assert_eq!(
        p.read("account.py"),
        "from utils import shout\nfrom money import parse_money\n\n\ndef deposit(text):\n    return shout(str(parse_money(text)))\n"
    );
    assert_eq!(p.read("test_money.py"), test);
}

const MONEY_UTILS: &str = "import re\n\n_AMOUNT = re.compile(r\"^\\d+$\")\n\n\ndef parse_money(text):\n    if not _AMOUNT.match(text):\n        raise ValueError(text)\n    return int(text)\n\n\ndef shout(text):\n    return text.upper()\n";
const MONEY_ACCOUNT: &str = "from utils import parse_money, shout\n\n\ndef deposit(text):\n    return shout(str(parse_money(text)))\n";
const MONEY_TEST: &str = "import unittest\n\nimport utils\nfrom account import deposit\nfrom money import parse_money\n\n\nclass T(unittest.TestCase):\n    def test_moved(self):\n        self.assertEqual(parse_money('7'), 7)\n        self.assertEqual(deposit('8'), '8')\n        self.assertFalse(hasattr(utils, 'parse_money'))\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";

/// A goal that asks to move some of a module's definitions into a new module gets the move
/// from papayu before the model is asked (D88): begun as a model would begin it, carried out by
/// D78 with what only they use and every import.
#[test]
fn a_move_the_goal_asks_for_is_carried_out_before_the_model_is_asked() {
    let p = Project::new(&[
        ("utils.py", MONEY_UTILS.as_bytes()),
        ("account.py", MONEY_ACCOUNT.as_bytes()),
        ("test_money.py", MONEY_TEST.as_bytes()),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[]));
    let goal =
        "Move `parse_money()` out of utils.py into a new module money.py and fix the imports.";
    let report = solve_goal(&p, &model, goal, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 0);
    let moved = &report.attempts[0];
    assert_parse_money_moved(&p, moved, MONEY_TEST);
    assert_eq!(
        part_of(&p, moved.trace_id.as_deref()),
        "`parse_money` moved from utils.py to money.py (imports in account.py), as the goal asks"
    );
}

/// Asked to move every definition of a module (and to delete it), papayu moves the module
/// (D76's completion of a delete-and-create), renaming it where it is imported.
#[test]
fn a_whole_module_move_the_goal_asks_for_moves_the_module() {
    const UTILS: &str = "def parse_money(text):\n    return int(text)\n\n\ndef format_money(cents):\n    return f'EUR {cents}'\n";
    const ACCOUNT: &str = "from utils import format_money, parse_money\n\n\ndef deposit(text):\n    return format_money(parse_money(text))\n";
    const TEST: &str = "import importlib.util\nimport unittest\n\nfrom account import deposit\nfrom money import format_money\n\n\nclass MoneyTest(unittest.TestCase):\n    def test_moved(self):\n        self.assertEqual(format_money(5), 'EUR 5')\n        self.assertEqual(deposit('7'), 'EUR 7')\n        self.assertIsNone(importlib.util.find_spec('utils'))\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
    let p = Project::new(&[
        ("utils.py", UTILS.as_bytes()),
        ("account.py", ACCOUNT.as_bytes()),
        ("test_money.py", TEST.as_bytes()),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[]));
    let goal = "move format_money and parse_money from utils.py into a new module money.py, \
                delete utils.py and fix the imports";
    let report = solve_goal(&p, &model, goal, &model_only().confirmed_deletes(true));
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 0);
    let renamed = report.attempts[0].renamed.as_ref().unwrap();
    assert_eq!(renamed.names, [("utils".to_owned(), "money".to_owned())]);
    assert_eq!(
        renamed.moved,
        [("utils.py".to_owned(), "money.py".to_owned())]
    );
    assert_eq!(p.read("money.py"), UTILS);
    assert!(!p.dir.path().join("utils.py").exists());
    assert_eq!(p.read("account.py"), ACCOUNT.replace("utils", "money"));
    assert_eq!(p.read("test_money.py"), TEST);
}

/// A move the goal asks for that the tests reject is rolled back and the model is asked as
/// usual; the project ends as the model's verified change left it.
#[test]
fn a_move_the_goal_asks_for_that_does_not_verify_leaves_the_goal_to_the_model() {
    // The test also wants deposit() to shout with a `!`: the move alone cannot pass it.
    let test = MONEY_TEST.replace("deposit('8'), '8')", "deposit('8'), '8!')");
    let account = MONEY_ACCOUNT
        .replace(
            "from utils import parse_money, shout",
            "from money import parse_money\nfrom utils import shout",
        )
        .replace("(text)))", "(text))) + '!'");
    let p = Project::new(&[
        ("utils.py", MONEY_UTILS.as_bytes()),
        ("account.py", MONEY_ACCOUNT.as_bytes()),
        ("test_money.py", test.as_bytes()),
    ]);
    let before = std::fs::read(p.dir.path().join("utils.py")).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let money = "import re\n\n_AMOUNT = re.compile(r\"^\\d+$\")\n\n\ndef parse_money(text):\n    if not _AMOUNT.match(text):\n        raise ValueError(text)\n    return int(text)\n";
    let model = rt.block_on(Model::start(&[json!({
        "actions": [
            {"kind": "CREATE_FILE", "path": "money.py", "content": money},
            {"kind": "UPDATE_FILE", "path": "utils.py", "content": "def shout(text):\n    return text.upper()\n"},
            {"kind": "UPDATE_FILE", "path": "account.py", "content": account},
        ],
        "summary": "moved, and deposit shouts"
    })]));
    let goal = "move parse_money from utils.py into money.py; deposit() must end with '!'";
    let report = solve_goal(&p, &model, goal, &model_only());
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1);
    let first = &report.attempts[0];
    assert_eq!(first.number, 0);
    assert!(first.moved.is_some(), "{report:#?}");
    assert!(matches!(&first.verdict, Some(Verdict::NotVerified { .. })));
    // The model's own change, on the project as it was before papayu's move.
    let last = report.attempts.last().unwrap();
    assert_eq!(last.number, 1);
    assert_eq!(p.read("account.py"), account);
    assert_ne!(
        std::fs::read(p.dir.path().join("utils.py")).unwrap(),
        before
    );
    assert_eq!(p.read("money.py"), money);
}

#[test]
fn a_module_renamed_in_one_import_is_moved_and_renamed_where_it_is_imported() {
    const UTILS: &str = "def parse_money(text):\n    return int(text)\n\n\ndef format_money(cents):\n    return f'EUR {cents}'\n";
    const ACCOUNT: &str = "from utils import format_money, parse_money\n\n\ndef deposit(text):\n    return format_money(parse_money(text))\n";
    const STATEMENT: &str =
        "from utils import format_money\n\n\ndef line(cents):\n    return format_money(cents)\n";
    const TEST: &str = "import importlib.util\nimport unittest\n\nfrom account import deposit\nfrom money import format_money\nfrom statement import line\n\n\nclass MoneyTest(unittest.TestCase):\n    def test_moved(self):\n        self.assertEqual(format_money(5), 'EUR 5')\n        self.assertEqual(deposit('7'), 'EUR 7')\n        self.assertEqual(line(3), 'EUR 3')\n        self.assertIsNone(importlib.util.find_spec('utils'))\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
    let p = Project::new(&[
        ("utils.py", UTILS.as_bytes()),
        ("account.py", ACCOUNT.as_bytes()),
        ("statement.py", STATEMENT.as_bytes()),
        ("test_money.py", TEST.as_bytes()),
        // Build output that names the module: not a file a change may write, so not renamed
        // (a completion that wrote it would be rejected whole).
        ("target/debug/app.d", b"app: utils.py account.py\n"),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Asked to move the helpers into money.py, the model renames the module in one import.
    let model = rt.block_on(Model::start(&[json!({
        "actions": [{"kind": "UPDATE_FILE", "path": "statement.py",
                     "content": STATEMENT.replace("from utils", "from money")}],
        "summary": "moved"
    })]));
    let options = model_only().confirmed_deletes(true);
    let report = solve_v3(&p, &model, &options, &|_| {});
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1);
    let moved = &report.attempts[1];
    assert_eq!(
        moved.renamed,
        Some(papayu_agent::RenamedView {
            names: vec![("utils".into(), "money".into())],
            files: vec!["account.py".into(), "money.py".into()],
            alone: false,
            moved: vec![("utils.py".into(), "money.py".into())],
        })
    );
    assert_eq!(p.read("money.py"), UTILS);
    assert!(!p.dir.path().join("utils.py").exists());
    assert_eq!(p.read("account.py"), ACCOUNT.replace("utils", "money"));
    assert_eq!(p.read("statement.py"), STATEMENT.replace("utils", "money"));
    assert_eq!(p.read("test_money.py"), TEST);
    assert_eq!(p.read("target/debug/app.d"), "app: utils.py account.py\n");
}

#[test]
fn a_module_move_is_not_tried_where_deletes_are_not_confirmed() {
    const UTILS: &str = "def parse_money(text):\n    return int(text)\n";
    const ACCOUNT: &str = "from utils import parse_money\n";
    const TEST: &str = "import unittest\n\nfrom money import parse_money\n\n\nclass T(unittest.TestCase):\n    def test_it(self):\n        self.assertEqual(parse_money('7'), 7)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
    let p = Project::new(&[
        ("utils.py", UTILS.as_bytes()),
        ("account.py", ACCOUNT.as_bytes()),
        ("test_money.py", TEST.as_bytes()),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let answer = json!({
        "actions": [{"kind": "UPDATE_FILE", "path": "account.py",
                     "content": "from money import parse_money\n"}],
        "summary": "moved"
    });
    let model = rt.block_on(Model::start(&[answer.clone(), answer.clone(), answer]));
    // Neither --yes nor a confirmation that would show the delete: the move is papayu's own
    // change, so it is skipped rather than ending the run with ERR_CANCELLED.
    let options = model_only().attempts(1);
    let report = solve_v3(&p, &model, &options, &|_| {});
    assert_eq!(report.outcome, SolveOutcome::NotSolved, "{report:#?}");
    assert!(
        report.attempts.iter().all(|a| a.renamed.is_none()),
        "{report:#?}"
    );
    assert_eq!(p.read("utils.py"), UTILS);
    assert_eq!(p.read("account.py"), ACCOUNT);
    assert!(!p.dir.path().join("money.py").exists());
}

#[test]
fn a_confirmed_change_that_deletes_a_file_is_applied() {
    // Before D76 a change the caller's confirmation accepted, deletes listed in its preview,
    // still failed with ERR_CANCELLED unless deletes were also confirmed up front (--yes).
    const TEST: &str = "import os\nimport unittest\n\n\nclass T(unittest.TestCase):\n    def test_gone(self):\n        self.assertFalse(os.path.exists('old.py'))\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
    let p = Project::new(&[("old.py", b"x = 1\n"), ("test_old.py", TEST.as_bytes())]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[json!({
        "actions": [{"kind": "DELETE_FILE", "path": "old.py"}],
        "summary": "remove old.py"
    })]));
    let mut agent = p.agent(&model, &[("PAPAYU_PROTOCOL_VERSION", "3")]);
    let seen = std::sync::Mutex::new(Vec::new());
    let confirm = |preview: &papayu_agent::ApplyPreview| {
        seen.lock().unwrap().push(preview.deletes.clone());
        true
    };
    let report = rt
        .block_on(agent.solve("remove old.py", &model_only(), Some(&confirm), &|_| {}))
        .unwrap();
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(*seen.lock().unwrap(), [vec!["old.py".to_owned()]]);
    assert!(!p.dir.path().join("old.py").exists());
}

#[test]
fn definitions_a_new_module_began_to_hold_are_moved_there() {
    let p = Project::new(&[
        ("utils.py", MONEY_UTILS.as_bytes()),
        ("account.py", MONEY_ACCOUNT.as_bytes()),
        ("test_money.py", MONEY_TEST.as_bytes()),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The model creates the new module with a placeholder body and fixes no import.
    let model = rt.block_on(Model::start(&[json!({
        "actions": [{"kind": "CREATE_FILE", "path": "money.py",
                     "content": "def parse_money(text):\n    pass\n"}],
        "summary": "moved"
    })]));
    let report = solve_v3(&p, &model, &model_only(), &|_| {});
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1);
    let moved = report.attempts.iter().find(|a| a.moved.is_some()).unwrap();
    assert_parse_money_moved(&p, moved, MONEY_TEST);
}

#[test]
fn a_class_rewritten_around_a_new_method_gets_the_method_alone() {
    const TODO: &str = "class Store:\n    def __init__(self):\n        self.items = []\n\n    def add(self, title, done=False):\n        self.items.append((title, done))\n\n    def count(self):\n        return len(self.items)\n";
    const TEST: &str = "import unittest\n\nfrom todo import Store\n\n\nclass T(unittest.TestCase):\n    def test_clear(self):\n        s = Store()\n        s.add('a', True)\n        s.add('b')\n        self.assertEqual(s.clear_done(), 1)\n        self.assertEqual(s.count(), 1)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
    let p = Project::new(&[
        ("todo.py", TODO.as_bytes()),
        ("test_todo.py", TEST.as_bytes()),
    ]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The whole file, the class holding the new method only: add() and count() left out.
    let model = rt.block_on(Model::start(&[json!({
        "actions": [{"kind": "UPDATE_FILE", "path": "todo.py",
                     "content": "class Store:\n    def clear_done(self):\n        before = len(self.items)\n        self.items = [i for i in self.items if not i[1]]\n        return before - len(self.items)\n"}],
        "summary": "clear_done"
    })]));
    let report = solve_v3(&p, &model, &model_only(), &|_| {});
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1);
    let added = report.attempts.iter().find(|a| a.added.is_some()).unwrap();
    assert_eq!(
        added.added,
        Some(papayu_agent::AddedView {
            names: vec!["clear_done".into()],
            files: vec!["todo.py".into()],
        })
    );
    assert_eq!(
        p.read("todo.py"),
        format!(
            "{TODO}\n    def clear_done(self):\n        before = len(self.items)\n        self.items = [i for i in self.items if not i[1]]\n        return before - len(self.items)\n"
        )
    );
}

/// Whether `events` holds one of `stage`.
fn saw(events: &std::sync::Mutex<Vec<Value>>, stage: &str) -> bool {
    events.lock().unwrap().iter().any(|e| e["stage"] == stage)
}

/// A progress recorder keeping every event's JSON.
fn recording(events: &std::sync::Mutex<Vec<Value>>) -> impl Fn(&Progress) + Sync + '_ {
    move |e: &Progress| {
        events
            .lock()
            .unwrap()
            .push(serde_json::to_value(e).unwrap())
    }
}

#[test]
fn papayus_own_one_token_edit_fixes_what_the_model_did_not_and_is_kept_verified() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The model only ever multiplies; its one attempt is rejected by the tests.
    let model = rt.block_on(Model::start(&[wrong(), wrong(), wrong()]));
    let events = std::sync::Mutex::new(Vec::new());
    let record = recording(&events);
    let mut agent = p.agent(&model, &[("PAPAYU_TRACE", "1")]);
    let report = rt
        .block_on(agent.solve(
            "fix: add() in calc.py subtracts, so test_calc.py fails",
            // Not before the model's first answer (D89 has its own test below).
            &SolveOptions::default().attempts(3).early_mutants(0),
            None,
            &record,
        ))
        .unwrap();
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1, "the model was asked once");
    let last = report.attempts.last().unwrap();
    let own = last.mutant.as_ref().expect("papayu's own edit");
    assert_eq!(
        (own.path.as_str(), own.line, own.name.as_str()),
        ("calc.py", 2, "add")
    );
    assert_eq!(
        (own.from.as_str(), own.to.as_str()),
        ("return a - b", "return a + b")
    );
    assert!(own.tried >= 1);
    assert!(matches!(
        &last.verdict,
        Some(Verdict::Verified { fixed }) if fixed == &["test_calc.CalcTest.test_add"]
    ));
    assert_eq!(p.read("calc.py"), CALC.replace("a - b", "a + b"));
    let events = events.lock().unwrap();
    let stages: Vec<&str> = events.iter().filter_map(|e| e["stage"].as_str()).collect();
    let at = stages
        .iter()
        .position(|s| *s == "mutants")
        .expect("mutants event");
    assert_eq!(events[at]["names"][0], "add");
    assert!(stages[at..].contains(&"mutated"), "{stages:?}");
    // Traces: the model's change and the kept edit; the edits tried and rolled back leave none.
    let traces = p.traces();
    assert_eq!(
        traces.len(),
        2,
        "{:?}",
        traces.iter().map(|t| &t.part_of).collect::<Vec<_>>()
    );
    assert!(traces.iter().any(|t| {
        t.part_of
            .as_deref()
            .is_some_and(|w| w.starts_with("papayu's own edit of calc.py:2"))
    }));
    // The edit is a transaction like any other: undo restores the file.
    assert_eq!(agent.history().unwrap().undo.len(), 1);
}

/// A one-token bug is fixed by papayu's own edit before the model is asked (D89): a test run
/// against a model call; the model is never called, and the edit is a transaction to undo.
#[test]
fn papayus_own_edit_before_the_model_is_asked_fixes_a_one_token_bug_without_a_call() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong()]));
    let events = std::sync::Mutex::new(Vec::new());
    let record = recording(&events);
    let mut agent = p.agent(&model, &[("PAPAYU_TRACE", "1")]);
    let report = rt
        .block_on(agent.solve(
            "fix: add() in calc.py subtracts, so test_calc.py fails",
            &SolveOptions::default(),
            None,
            &record,
        ))
        .unwrap();
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 0, "the model was not asked");
    assert!(rt.block_on(model.requests()).is_empty());
    assert_eq!(report.attempts.len(), 1, "{report:#?}");
    let own = &report.attempts[0];
    assert_eq!((own.number, own.draw), (0, 0));
    let m = own.mutant.as_ref().expect("papayu's own edit");
    assert_eq!(
        (m.from.as_str(), m.to.as_str()),
        ("return a - b", "return a + b")
    );
    assert!(m.tried <= papayu_agent::EARLY_MUTANTS as usize);
    assert_eq!(p.read("calc.py"), CALC.replace("a - b", "a + b"));
    let stages: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| e["stage"].as_str().map(str::to_owned))
        .collect();
    let at = |stage: &str| stages.iter().position(|s| s == stage);
    assert!(at("mutants") < at("mutated"), "{stages:?}");
    assert_eq!(p.traces().len(), 1);
    assert_eq!(agent.history().unwrap().undo.len(), 1);
}

/// When the early edits do not fix it, the model is asked, and the edits tried before are not
/// tried again after its change: each edit is tried once per goal.
#[test]
fn early_edits_that_do_not_verify_are_not_tried_again_after_the_models_change() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The tests want add(2, 3) to be 7: no one-token edit of `a - b` gives that.
    let test = p
        .read("test_calc.py")
        .replace("add(2, 3), 5", "add(2, 3), 7");
    std::fs::write(p.dir.path().join("test_calc.py"), &test).unwrap();
    let before = tree(&p);
    let model = rt.block_on(Model::start(&[wrong(), wrong(), wrong()]));
    let runs = std::sync::Mutex::new(0);
    let options = SolveOptions::default().attempts(1).draws(1);
    let report = solve_recording(&p, &model, &options, &count_test_runs(&runs));
    assert_eq!(report.outcome, SolveOutcome::NotSolved, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1);
    let reason = report.reason.clone().unwrap();
    let early = *runs.lock().unwrap();
    // Every edit tried once: the same goal with the early edits off tries as many in all.
    let p2 = calc_project();
    std::fs::write(p2.dir.path().join("test_calc.py"), &test).unwrap();
    let model2 = rt.block_on(Model::start(&[wrong(), wrong(), wrong()]));
    let runs2 = std::sync::Mutex::new(0);
    let report2 = solve_recording(
        &p2,
        &model2,
        &options.clone().early_mutants(0),
        &count_test_runs(&runs2),
    );
    assert_eq!(report2.reason.as_deref(), Some(reason.as_str()));
    assert_eq!(early, *runs2.lock().unwrap());
    assert!(reason.contains("small edit(s) of papayu's own"), "{reason}");
    assert_eq!(tree(&p), before);
}

#[test]
fn no_own_edits_when_turned_off_or_when_no_test_the_goal_is_about_fails() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Off: the model's wrong changes are all there is, and the project stays as it was.
    let p = calc_project();
    let before = tree(&p);
    let model = rt.block_on(Model::start(&[wrong(), wrong(), wrong(), wrong()]));
    let events = std::sync::Mutex::new(Vec::new());
    let record = recording(&events);
    let report = solve_recording(
        &p,
        &model,
        &SolveOptions::default().attempts(2).mutants(0),
        &record,
    );
    assert_eq!(report.outcome, SolveOutcome::NotSolved, "{report:#?}");
    assert!(report.attempts.iter().all(|a| a.mutant.is_none()));
    assert!(!saw(&events, "mutants"));
    assert_eq!(tree(&p), before);
    // Every test passes: an edit could only "verify" by breaking nothing, so none is tried.
    let fixed = Project::new(&[
        ("calc.py", CALC.replace("a - b", "a + b").as_bytes()),
        ("test_calc.py", TEST.as_bytes()),
    ]);
    let bigger = json!({"actions": [{"kind": "UPDATE_FILE", "path": "calc.py", "content": "def add(a, b):\n    return a + b + 0\n"}], "summary": "s"});
    let model = rt.block_on(Model::start(&[bigger.clone(), bigger.clone(), bigger]));
    let events = std::sync::Mutex::new(Vec::new());
    let record = recording(&events);
    let report = solve_recording(
        &fixed,
        &model,
        &SolveOptions::default().attempts(2),
        &record,
    );
    assert!(
        report.attempts.iter().all(|a| a.mutant.is_none()),
        "{report:#?}"
    );
    assert!(!saw(&events, "mutants"));
}

#[test]
fn a_confirmation_sees_papayus_own_edit_and_declining_it_leaves_the_project_as_it_was() {
    let p = calc_project();
    let before = tree(&p);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), wrong(), wrong()]));
    let shown = std::sync::Mutex::new(Vec::new());
    let confirm = |preview: &papayu_agent::ApplyPreview| {
        let summary = preview.summary.clone().unwrap_or_default();
        let own = summary.starts_with("papayu's own edit");
        shown.lock().unwrap().push(summary);
        // The model's change is accepted (and rejected by the tests); papayu's own is declined.
        !own
    };
    let mut agent = p.agent(&model, &[]);
    let report = rt
        .block_on(agent.solve(
            "fix: add() in calc.py subtracts, so test_calc.py fails",
            &SolveOptions::default().attempts(2),
            Some(&confirm),
            &no_progress,
        ))
        .unwrap();
    assert_eq!(report.outcome, SolveOutcome::Declined, "{report:#?}");
    let last = report.attempts.last().unwrap();
    assert_eq!(
        last.mutant.as_ref().map(|m| m.to.as_str()),
        Some("return a + b")
    );
    // Shown after it was tried (and rolled back): the one edit that verifies, nothing else.
    let shown = shown.lock().unwrap();
    assert_eq!(
        shown
            .iter()
            .filter(|s| s.starts_with("papayu's own edit"))
            .count(),
        1,
        "{shown:?}"
    );
    assert_eq!(tree(&p), before);
    assert!(agent.history().unwrap().undo.is_empty());
}

#[test]
fn papayus_own_edits_follow_the_first_judged_change_not_the_whole_attempt() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[wrong(), wrong(), wrong()]));
    // Three draws per attempt: the edits come after the first draw the tests rejected.
    let report = solve(
        &p,
        &model,
        &SolveOptions::default()
            .attempts(1)
            .draws(3)
            .early_mutants(0),
    );
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1, "{report:#?}");
    assert_eq!(report.attempts.len(), 2);
    assert_eq!(report.attempts[1].number, 1);
    assert!(report.attempts[1].mutant.is_some());
}

#[test]
fn a_change_rejected_for_editing_the_tests_is_judged_too_and_papayus_own_edits_follow_it() {
    let p = calc_project();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let model = rt.block_on(Model::start(&[
        edits_the_test(),
        edits_the_test(),
        edits_the_test(),
    ]));
    // Three draws: the edits come after the first, which the rule judged without a test run.
    let report = solve(
        &p,
        &model,
        &SolveOptions::default()
            .attempts(1)
            .draws(3)
            .early_mutants(0),
    );
    assert_eq!(report.outcome, SolveOutcome::Verified, "{report:#?}");
    assert_eq!(report.usage.model_calls, 1, "{report:#?}");
    assert!(report.attempts[1].mutant.is_some());
    assert_eq!(p.read("test_calc.py"), TEST);
    assert!(p.read("calc.py").contains("return a + b"));
}
