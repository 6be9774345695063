//! plan → apply across processes, rejections (exit 3), rolled-back applies (exit 4), `--json`,
//! undo.

use serde_json::{Value, json};

use crate::support::*;

fn lib_project() -> Project {
    Project::new(&[("src/lib.rs", LIB_RS), ("README.md", "# demo\n")])
}

/// `before` with `src/lib.rs` patched and `docs/NOTES.md` created: what [`change_answer`] plans.
fn planned(before: &Tree) -> Tree {
    let mut t = before.clone();
    t.insert("src/lib.rs".into(), LIB_RS_42.into());
    t.insert("docs/".into(), Vec::new());
    t.insert("docs/NOTES.md".into(), NOTES_MD.into());
    t
}

#[test]
fn plan_then_apply_in_a_later_process_applies_the_saved_plan() {
    let project = lib_project();
    let before = project.tree();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("Diagnosis: answer() returns 41.\n1) return 42\n2) note it"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);

    let plan = project.papayu(&model, &[], &["plan", "make", "answer()", "return", "42"]);
    plan.expect_code(0);
    assert!(
        plan.stdout.contains("Diagnosis: answer() returns 41."),
        "{plan:#?}"
    );
    assert!(plan.stdout.contains("Saved."), "{plan:#?}");
    assert_tree(&project, &before, &plan);
    assert_eq!(
        model.requests().len(),
        2,
        "one context round, then the plan"
    );

    let apply = project.papayu(&model, &[], &["apply", "--yes"]);
    apply.expect_code(0);
    assert!(
        apply.stdout.contains("[0] PATCH_FILE src/lib.rs"),
        "{apply:#?}"
    );
    assert!(
        apply.stdout.contains("[1] CREATE_FILE docs/NOTES.md"),
        "{apply:#?}"
    );
    assert!(apply.stdout.contains("Applied (transaction"), "{apply:#?}");
    assert_tree(&project, &planned(&before), &apply);
    assert!(project.outside().is_empty(), "{:?}", project.outside());

    // The later process sent the approved plan and the file it was planned against.
    let reqs = model.requests();
    assert_eq!(reqs.len(), 3);
    let apply_user = reqs[2]["messages"][1]["content"].as_str().unwrap();
    assert!(
        apply_user.contains("Diagnosis: answer() returns 41."),
        "{apply_user}"
    );
    assert!(
        apply_user.contains(&format!(
            "FILE[src/lib.rs] (sha256={})",
            sha(LIB_RS.as_bytes())
        )),
        "{apply_user}"
    );

    // An applied plan is cleared: a second apply has nothing to apply and changes nothing.
    let again = project.papayu(&model, &[], &["apply", "--yes"]);
    assert_ne!(again.code, Some(0), "{again:#?}");
    assert_tree(&project, &planned(&before), &again);
}

#[test]
fn apply_without_yes_and_no_answer_writes_nothing() {
    let project = lib_project();
    let before = project.tree();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    // stdin is empty: the confirmation reads "no".
    let run = project.papayu(&model, &[], &["run", "make answer() return 42"]);
    run.expect_code(1);
    assert!(run.stderr.contains("Apply this change?"), "{run:#?}");
    assert!(run.stderr.contains("ERR_CANCELLED"), "{run:#?}");
    assert!(
        run.stdout.contains("+    42"),
        "the preview shows the diff: {run:#?}"
    );
    assert_tree(&project, &before, &run);
}

/// `papayu run --yes` with a model that keeps answering `answer`: exit 3, the error `code`,
/// and the project byte for byte as it was, nothing written next to it.
fn check_rejected(answer: Value, code: &str) {
    let project = lib_project();
    std::fs::write(project.root().join(".env.example"), "KEY=\n").unwrap();
    let before = project.tree();
    // The first answer and the repair (and spares, so running out is not what fails).
    let model = Model::start(&[answer.clone(), answer.clone(), answer.clone(), answer]);
    let run = project.papayu(&model, &[], &["run", "--yes", "do it"]);
    run.expect_code(3);
    assert!(run.stderr.contains(code), "{run:#?}");
    assert_tree(&project, &before, &run);
    assert!(project.outside().is_empty(), "{:?}", project.outside());

    let json = project.papayu(&model, &[], &["run", "--yes", "--json", "do it"]);
    json.expect_code(3);
    let doc = json.json();
    assert_eq!(doc["ok"], json!(false), "{doc}");
    assert_eq!(doc["code"], json!(code), "{doc}");
    assert_tree(&project, &before, &json);
}

#[test]
fn run_rejects_a_path_outside_the_project_with_exit_3() {
    check_rejected(
        json!({"actions": [{"kind": "CREATE_FILE", "path": "../x", "content": "escaped\n"}], "summary": "s"}),
        "ERR_INVALID_PATH",
    );
}

#[test]
fn run_rejects_writing_dot_env_with_exit_3() {
    check_rejected(
        json!({"actions": [{"kind": "CREATE_FILE", "path": ".env", "content": "API_KEY=x\n"}], "summary": "s"}),
        "ERR_PROTECTED_PATH",
    );
}

#[test]
fn run_with_a_wrong_base_exits_4_and_changes_nothing() {
    let project = lib_project();
    let before = project.tree();
    let wrong = sha(b"not the file\n");
    let answer = json!({"actions": [
        {"kind": "CREATE_FILE", "path": "docs/NOTES.md", "content": NOTES_MD},
        {"kind": "PATCH_FILE", "path": "src/lib.rs", "base_sha256": wrong, "patch": LIB_PATCH}
    ], "summary": "s"});
    let model = Model::start(&[
        read_request("src/lib.rs"),
        answer.clone(),
        answer.clone(),
        answer,
    ]);
    let run = project.papayu(&model, &[], &["run", "--yes", "--json", "make it 42"]);
    run.expect_code(4);
    let doc = run.json();
    assert_eq!(doc["ok"], json!(false), "{doc}");
    assert_eq!(doc["code"], json!("ERR_BASE_MISMATCH"), "{doc}");
    assert_tree(&project, &before, &run);
}

#[test]
fn run_whose_check_fails_is_rolled_back_with_exit_4() {
    let project = lib_project();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    project
        .papayu(
            &model,
            &[],
            &["memory", "set", "project.default_test_command", "false"],
        )
        .expect_code(0);
    let before = project.tree();
    // `false` is the test command: the change cannot verify; one attempt.
    let run = project.papayu(
        &model,
        &[],
        &["run", "--yes", "--attempts", "1", "make it 42"],
    );
    run.expect_code(4);
    assert!(run.stderr.contains("ERR_CHECK_FAILED"), "{run:#?}");
    assert!(run.stdout.contains("not verified, rolled back"), "{run:#?}");
    assert_tree(&project, &before, &run);
    assert!(project.outside().is_empty(), "{:?}", project.outside());
}

#[test]
fn json_run_prints_one_document_and_undo_restores() {
    let project = lib_project();
    let before = project.tree();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    let nothing = project.papayu(&model, &[], &["undo", "--json"]);
    assert_ne!(nothing.code, Some(0), "nothing to undo yet: {nothing:#?}");
    assert_eq!(nothing.json()["ok"], json!(false), "{nothing:#?}");

    let run = project.papayu(&model, &[], &["--json", "run", "--yes", "make it 42"]);
    run.expect_code(0);
    let doc = run.json();
    assert_eq!(doc["ok"], json!(true), "{doc}");
    // No test command in this project: applied after the usual checks, said so.
    assert_eq!(doc["outcome"], json!("applied_unverified"), "{doc}");
    assert_eq!(doc["applied"]["applied"], json!(true), "{doc}");
    assert_eq!(doc["applied"]["selected"], json!([0, 1]), "{doc}");
    assert_tree(&project, &planned(&before), &run);

    let undo = project.papayu(&model, &[], &["undo", "--json"]);
    undo.expect_code(0);
    assert_eq!(undo.json()["ok"], json!(true));
    assert_tree(&project, &before, &undo);

    let redo = project.papayu(&model, &[], &["redo", "--json"]);
    redo.expect_code(0);
    assert_tree(&project, &planned(&before), &redo);

    let undo_again = project.papayu(&model, &[], &["undo", "--json"]);
    undo_again.expect_code(0);
    assert_tree(&project, &before, &undo_again);
    assert_eq!(
        model.requests().len(),
        2,
        "undo and redo never ask the model"
    );
}

#[test]
fn apply_only_selected_actions() {
    let project = lib_project();
    let before = project.tree();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) return 42\n2) note it"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    project
        .papayu(&model, &[], &["plan", "make it 42"])
        .expect_code(0);
    let apply = project.papayu(&model, &[], &["apply", "--yes", "--only", "1"]);
    apply.expect_code(0);
    let mut expected = before.clone();
    expected.insert("docs/".into(), Vec::new());
    expected.insert("docs/NOTES.md".into(), NOTES_MD.into());
    assert_tree(&project, &expected, &apply);
}

#[test]
fn r_detected_python_check_writes_nothing_but_the_plan() {
    // A Python project gets `python3 -m compileall` as its detected check; the check must
    // not leave bytecode behind: the tree after apply is exactly the planned one.
    let project = Project::new(&[
        (
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        ),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
    ]);
    let before = project.tree();
    let answer = json!({"actions": [
        {"kind": "CREATE_FILE", "path": "util.py", "content": "def sub(a, b):\n    return a - b\n"}
    ], "summary": "add sub"});
    let model = Model::start(&[answer]);
    let run = project.papayu(&model, &[], &["run", "--yes", "create util.py with sub()"]);
    run.expect_code(0);
    let mut expected = before.clone();
    expected.insert(
        "util.py".into(),
        "def sub(a, b):\n    return a - b\n".into(),
    );
    assert_tree(&project, &expected, &run);
}

#[test]
fn r_failed_python_check_rolls_back_without_bytecode_left() {
    let project = Project::new(&[
        (
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1.0\"\n",
        ),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
    ]);
    let before = project.tree();
    let broken = json!({"actions": [
        {"kind": "CREATE_FILE", "path": "util.py", "content": "def sub(a, b)\n    return a - b\n"}
    ], "summary": "add sub"});
    let model = Model::start(&[broken]);
    let run = project.papayu(&model, &[], &["run", "--yes", "create util.py with sub()"]);
    run.expect_code(4);
    assert!(run.stderr.contains("ERR_CHECK_FAILED"), "{run:#?}");
    assert_tree(&project, &before, &run);
}

/// Every outcome of a `--json` command is exactly one JSON document on stdout with `ok`.
#[test]
fn json_is_one_document_with_ok_for_every_outcome() {
    let project = lib_project();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    let cases: &[(&[&str], i32, bool)] = &[
        // `--json` never prompts: a run that would have to ask is a usage error.
        (&["--json", "run", "make it 42"], 2, false),
        (&["--json", "apply", "--yes"], 1, false),
        (&["--json", "trace", "show", "nope"], 1, false),
        (&["--json", "trace", "list"], 0, true),
        (&["--json", "memory", "set", "user.nope", "1"], 2, false),
        (&["--json", "history"], 0, true),
        (&["--json", "report", "--since", "soon"], 2, false),
    ];
    let before = project.tree();
    for (args, code, ok) in cases {
        let run = project.papayu(&model, &[], args);
        assert_eq!(run.code, Some(*code), "{args:?}: {run:#?}");
        let doc = run.json();
        assert_eq!(doc["ok"], json!(ok), "{args:?}: {doc:#}");
    }
    assert_tree(&project, &before, &"nothing applied");
    // Without a model name: a configuration (usage) error, still one document.
    let mut cmd = project.command(&model, &[], &["--json", "plan", "x"]);
    cmd.env_remove("PAPAYU_LLM_MODEL");
    let run = run_bounded(cmd);
    run.expect_code(2);
    assert_eq!(run.json()["ok"], json!(false), "{run:#?}");
}

/// Issue 18 item 13: `run --commit` makes one commit of the applied change, its summary as the
/// subject; the user's own staged change stays out of it.
#[test]
fn run_with_commit_commits_the_applied_transaction() {
    let project = lib_project();
    let root = project.root();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    git(&["config", "user.name", "T"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "commit.gpgsign", "false"]);
    git(&["add", "src", "README.md"]);
    git(&["commit", "-q", "-m", "init"]);
    std::fs::write(root.join("README.md"), "# mine\n").unwrap();
    git(&["add", "README.md"]);
    let model = Model::start(&[
        read_request("src/lib.rs"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    let run = project.papayu(&model, &[], &["run", "--yes", "--commit", "make it 42"]);
    run.expect_code(0);
    assert!(run.stderr.contains("committed as "), "{run:#?}");
    let files = git(&["show", "--name-only", "--format=%B", "HEAD"]);
    assert!(files.contains("Papayu-Transaction: "), "{files}");
    assert!(
        files.contains("src/lib.rs") && files.contains("docs/NOTES.md"),
        "{files}"
    );
    assert!(!files.contains("README.md"), "{files}");
    assert_eq!(
        git(&["diff", "--cached", "--name-only"]).trim(),
        "README.md"
    );
}

/// A calculator whose add() subtracts, with the unittest that says so.
fn calc_project() -> Project {
    Project::new(&[
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        (
            "test_calc.py",
            "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
        ),
    ])
}

#[test]
fn run_tries_papayus_own_one_token_edits_before_and_after_the_models_attempt_and_says_so() {
    // The model finds nothing to change; the tests still fail.
    let nothing = json!({"actions": [], "summary": "looks right to me"});
    // Before the model is asked (D89): fixed by papayu's own edit, no model call.
    let project = calc_project();
    let model = Model::start(std::slice::from_ref(&nothing));
    let run = project.papayu(
        &model,
        &[],
        &["run", "--yes", "fix: add() in calc.py subtracts"],
    );
    run.expect_code(0);
    assert!(
        run.stdout.contains(
            "attempt 0, before the model was asked (papayu's own edit of `calc.py` line 2 \
             (`return a - b` → `return a + b`)"
        ),
        "{run:#?}"
    );
    assert!(run.stdout.contains("model calls: 0"), "{run:#?}");
    // With the early round off, after the model's attempt.
    let project = calc_project();
    let model = Model::start(&[
        nothing.clone(),
        nothing.clone(),
        nothing.clone(),
        nothing.clone(),
    ]);
    let run = project.papayu(
        &model,
        &[],
        &[
            "run",
            "--yes",
            "--attempts",
            "2",
            "--early-mutants",
            "0",
            "fix: add() in calc.py subtracts",
        ],
    );
    run.expect_code(0);
    assert!(
        run.stdout
            .contains("papayu's own edit of `calc.py` line 2 (`return a - b` → `return a + b`)"),
        "{run:#?}"
    );
    assert!(
        !run.stdout.contains("before the model was asked"),
        "{run:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(project.root().join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n",
        "{run:#?}"
    );
    // Off: the model's answers are all there is, and the project is as it was.
    let project = calc_project();
    let before = project.tree();
    let model = Model::start(&[nothing.clone(), nothing.clone(), nothing.clone(), nothing]);
    let run = project.papayu(
        &model,
        &[],
        &[
            "--json",
            "run",
            "--yes",
            "--attempts",
            "2",
            "--mutants",
            "0",
            "fix: add() in calc.py subtracts",
        ],
    );
    assert_ne!(run.code, Some(0), "{run:#?}");
    assert_eq!(run.json()["outcome"], json!("not_solved"), "{run:#?}");
    assert_tree(&project, &before, &run);
}
