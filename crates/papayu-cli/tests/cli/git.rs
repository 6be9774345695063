//! Git awareness (issue 18 item 13): a warning for uncommitted changes in the files a plan
//! touches, one commit per applied transaction with `--commit` (or `git.commit`), and an undo of
//! a committed transaction says what to do with the commit.

use std::path::Path;
use std::process::Command;

use crate::hermetic;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn commit_warn_and_undo_of_a_committed_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q"]);
    git(p, &["config", "user.name", "T"]);
    git(p, &["config", "user.email", "t@example.com"]);
    git(p, &["config", "commit.gpgsign", "false"]);
    std::fs::write(p.join("kept.txt"), "k\n").unwrap();
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "init"]);
    std::fs::write(p.join("scratch.txt"), "mine\n").unwrap();

    let plan = home.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"actions":[{"kind":"CREATE_FILE","path":"new.txt","content":"n\n"},{"kind":"DELETE_FILE","path":"scratch.txt"}],"summary":"Add new.txt, drop the scratch file"}"#,
    )
    .unwrap();
    let run = hermetic(
        p,
        home.path(),
        &[],
        &[
            "apply-plan",
            plan.to_str().unwrap(),
            "--yes",
            "--no-check",
            "--commit",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("uncommitted changes in scratch.txt"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("committed as "), "{}", run.stderr);
    let log = git(p, &["log", "--format=%s%n%b", "-n", "1"]);
    assert!(
        log.starts_with("Add new.txt, drop the scratch file"),
        "{log}"
    );
    assert!(log.contains("Papayu-Transaction: "), "{log}");
    let files = git(p, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(
        files.trim(),
        "new.txt",
        "the untracked file's deletion has nothing to commit"
    );

    let undo = hermetic(p, home.path(), &[], &["undo"]);
    assert_eq!(undo.code, 0, "{}", undo.stderr);
    assert!(
        undo.stderr.contains("was committed as") && undo.stderr.contains("git reset --soft"),
        "{}",
        undo.stderr
    );
    assert!(!p.join("new.txt").exists());

    // Without --commit (and without git.commit) nothing is committed.
    let commits = git(p, &["rev-list", "--count", "HEAD"]);
    let again = hermetic(p, home.path(), &[], &["redo"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(git(p, &["rev-list", "--count", "HEAD"]), commits);
}
