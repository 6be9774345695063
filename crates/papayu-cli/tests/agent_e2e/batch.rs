//! `papayu batch FILE --yes [--keep-going]` end to end on a small shell project: each goal is
//! its own verified transaction, a goal whose change fails the tests is rolled back, and the
//! summary (table or `--json`), the exit code, the files and `papayu history` agree.

use serde_json::{Value, json};

use crate::support::*;

/// The project's test: no `.txt` file may say BROKEN.
const TEST_SH: &str = "#!/bin/sh\nfor f in *.txt; do\n  [ -e \"$f\" ] || continue\n  if grep -q BROKEN \"$f\"; then echo \"broken: $f\"; exit 1; fi\ndone\necho ok\n";
const NOTES: &str = "notes: fine\n";
const GOALS: &str = "# three goals, one per line\ncreate a.txt\n\nbreak notes.txt\ncreate c.txt\n";

fn shell_project() -> Project {
    Project::new(&[("test.sh", TEST_SH), ("notes.txt", NOTES)])
}

fn create(path: &str, text: &str) -> Value {
    json!({"actions": [{"kind": "CREATE_FILE", "path": path, "content": text}], "summary": format!("create {path}")})
}

/// Goal 1 passes the test, goal 2 breaks it (`notes.txt` says BROKEN), goal 3 passes.
fn answers() -> Vec<Value> {
    vec![
        create("a.txt", "A\n"),
        json!({"actions": [{"kind": "PATCH_FILE", "path": "notes.txt", "base_sha256": sha(NOTES.as_bytes()),
            "patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-notes: fine\n+notes: BROKEN\n"}], "summary": "break it"}),
        create("c.txt", "C\n"),
    ]
}

fn batch(project: &Project, model: &Model, extra: &[&str]) -> Run {
    std::fs::write(project.tmp.path().join("goals.txt"), GOALS).unwrap();
    let goals = project.tmp.path().join("goals.txt");
    let mut args = vec![
        "batch",
        goals.to_str().unwrap(),
        "--yes",
        "--attempts",
        "1",
        "--test",
        "sh test.sh",
    ];
    args.extend_from_slice(extra);
    project.papayu(model, &[], &args)
}

/// The table's goal rows as (number, outcome, attempts, code, goal), and its last line.
fn table(stdout: &str) -> (Vec<Vec<String>>, String) {
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        lines[0]
            .split_whitespace()
            .eq(["#", "outcome", "attempts", "code", "goal"]),
        "{stdout}"
    );
    let rows = lines[1..lines.len() - 1]
        .iter()
        .map(|l| {
            let mut w: Vec<String> = l.split_whitespace().map(str::to_owned).collect();
            let goal = w.split_off(4).join(" ");
            w.push(goal);
            w
        })
        .collect();
    (rows, lines[lines.len() - 1].to_owned())
}

fn row(n: &str, outcome: &str, attempts: &str, code: &str, goal: &str) -> Vec<String> {
    [n, outcome, attempts, code, goal]
        .map(str::to_owned)
        .to_vec()
}

/// The undo stack of `papayu history --json`, newest first: each transaction's paths (every
/// entry an `apply`).
fn undo_paths(project: &Project, model: &Model) -> Vec<Vec<String>> {
    let history = project.papayu(model, &[], &["history", "--json"]);
    history.expect_code(0);
    let doc = history.json();
    doc["history"]["undo"]
        .as_array()
        .unwrap_or_else(|| panic!("no undo stack: {doc}"))
        .iter()
        .map(|entry| {
            assert_eq!(entry["kind"], "apply", "{entry}");
            let mut paths: Vec<String> = entry["paths"]
                .as_array()
                .unwrap_or_else(|| panic!("no paths: {entry}"))
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect();
            paths.sort();
            paths
        })
        .collect()
}

/// Run the three goals with `extra` flags: exit 1, goal 1 verified, goal 2 rolled back
/// (`notes.txt` byte for byte as before), goal 3 ending as `third`; the files `created` are the
/// only change on disk, the model was asked `calls` times, and `papayu history` holds one
/// transaction per created file, newest first.
fn check(extra: &[&str], third: &str, total: &str, created: &[(&str, &str)], calls: usize) {
    let project = shell_project();
    let model = Model::start(&answers());
    let before = project.tree();
    let run = batch(&project, &model, extra);
    run.expect_code(1);
    let (rows, last) = table(&run.stdout);
    let third_attempts = if third == "skipped" { "0" } else { "1" };
    assert_eq!(
        rows,
        [
            row("1", "verified", "1", "-", "create a.txt"),
            row(
                "2",
                "not_solved",
                "1",
                "ERR_CHECK_FAILED",
                "break notes.txt"
            ),
            row("3", third, third_attempts, "-", "create c.txt"),
        ],
        "{run:#?}"
    );
    assert_eq!(last, total);
    let mut expected = before.clone();
    for (path, text) in created {
        expected.insert((*path).into(), text.as_bytes().to_vec());
    }
    assert_tree(&project, &expected, &run);
    assert_eq!(model.requests().len(), calls);
    let newest_first: Vec<Vec<&str>> = created.iter().rev().map(|(p, _)| vec![*p]).collect();
    assert_eq!(undo_paths(&project, &model), newest_first);
}

#[test]
fn batch_stops_at_the_failing_goal_and_rolls_it_back() {
    // The skipped goal asks the model nothing.
    check(
        &[],
        "skipped",
        "1 of 3 goals succeeded",
        &[("a.txt", "A\n")],
        2,
    );
}

#[test]
fn batch_keep_going_runs_every_goal() {
    check(
        &["--keep-going"],
        "verified",
        "2 of 3 goals succeeded",
        &[("a.txt", "A\n"), ("c.txt", "C\n")],
        3,
    );
}

#[test]
fn batch_json_is_one_document_with_a_row_per_goal() {
    let project = shell_project();
    let model = Model::start(&answers());
    let run = batch(&project, &model, &["--json", "--keep-going"]);
    run.expect_code(1);
    assert_eq!(
        run.json(),
        json!({
            "ok": false,
            "code": "ERR_CHECK_FAILED",
            "error": "2 of 3 goals succeeded",
            "all_ok": false,
            "goals": [
                {"goal": "create a.txt", "outcome": "verified", "code": null, "attempts": 1},
                {"goal": "break notes.txt", "outcome": "not_solved", "code": "ERR_CHECK_FAILED", "attempts": 1},
                {"goal": "create c.txt", "outcome": "verified", "code": null, "attempts": 1},
            ]
        }),
        "{run:#?}"
    );

    // Every goal succeeding: exit 0, `ok` true and no code.
    let project = shell_project();
    let model = Model::start(&[
        create("a.txt", "A\n"),
        create("b.txt", "B\n"),
        create("c.txt", "C\n"),
    ]);
    let run = batch(&project, &model, &["--json"]);
    run.expect_code(0);
    let doc = run.json();
    assert_eq!(doc["ok"], json!(true), "{doc}");
    assert_eq!(doc["code"], Value::Null, "{doc}");
    assert_eq!(doc["all_ok"], json!(true), "{doc}");
    assert_eq!(doc["goals"].as_array().unwrap().len(), 3, "{doc}");
}
