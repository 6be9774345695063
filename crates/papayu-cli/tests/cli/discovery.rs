//! Project-root discovery (issue 18 item 1): a subdirectory finds its project's history, nested
//! projects stay apart, `-v` says which root and why, read-only commands create no state.

use std::path::Path;

use crate::{hermetic, tree_of};

const PLAN: &str =
    r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"a\n"}],"summary":"add a"}"#;

fn mkdirs(root: &Path, dirs: &[&str]) {
    for d in dirs {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
}

#[test]
fn a_subdirectory_finds_the_parents_history() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    mkdirs(&repo, &[".git", "src/deep"]);
    let plan = home.path().join("plan.json");
    std::fs::write(&plan, PLAN).unwrap();
    let applied = hermetic(
        &repo.join("src/deep"),
        home.path(),
        &[],
        &["apply-plan", plan.to_str().unwrap(), "--yes", "--no-check"],
    );
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    assert!(
        repo.join("a.txt").is_file(),
        "applied at the repository root"
    );
    assert!(!repo.join("src/deep/.papa-yu").exists());

    let history = hermetic(
        &repo.join("src"),
        home.path(),
        &[],
        &["history", "--json", "-v"],
    );
    assert_eq!(history.code, 0, "{}", history.stderr);
    let doc: serde_json::Value = serde_json::from_str(&history.stdout).unwrap();
    assert_eq!(doc["history"]["undo"].as_array().unwrap().len(), 1);
    assert!(
        history.stderr.contains(&format!(
            "project root {} (the nearest directory holding .papa-yu/)",
            repo.display()
        )),
        "{}",
        history.stderr
    );
    assert!(!repo.join("src/.papa-yu").exists());
}

#[test]
fn nested_projects_stay_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let outer = tmp.path().join("outer");
    mkdirs(&outer, &[".git", "src", "inner/.papa-yu", "inner/src"]);
    let root_of = |dir: &Path| {
        let run = hermetic(dir, home.path(), &[], &["config", "path", "-v"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stderr
    };
    let inner = root_of(&outer.join("inner/src"));
    assert!(
        inner.contains(&format!("project root {} (", outer.join("inner").display())),
        "{inner}"
    );
    let outer_root = root_of(&outer.join("src"));
    assert!(
        outer_root.contains(&format!(
            "project root {} (the nearest repository root (it holds .git))",
            outer.display()
        )),
        "{outer_root}"
    );
}

#[test]
fn read_only_commands_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    mkdirs(&repo, &[".git", "src"]);
    std::fs::write(repo.join("src/lib.rs"), "fn main() {}\n").unwrap();
    let plan = home.path().join("plan.json");
    std::fs::write(&plan, PLAN).unwrap();
    let before = tree_of(tmp.path());
    for args in [
        &["history"][..],
        &["report"],
        &["trace", "list"],
        &[
            "context",
            "--request",
            r#"{"type":"read_file","path":"src/lib.rs"}"#,
        ],
        &["doctor", "--offline"],
        &["config", "show"],
        &["config", "get", "llm.model"],
        &["config", "path"],
        &["preview", plan.to_str().unwrap()],
    ] {
        let run = hermetic(&repo.join("src"), home.path(), &[], args);
        assert!(run.code == 0 || run.code == 1, "{args:?}: {}", run.stderr);
        assert_eq!(tree_of(tmp.path()), before, "{args:?} created something");
    }
}

#[test]
fn a_project_that_does_not_exist_is_a_usage_error_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let run = hermetic(
        tmp.path(),
        tmp.path(),
        &[],
        &["history", "--project", "/nonexistent/p"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--project /nonexistent/p: no such directory"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("os error"), "{}", run.stderr);
}
