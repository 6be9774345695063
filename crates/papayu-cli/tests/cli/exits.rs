//! Exit codes and messages of issue 18 item 8: the empty redo stack has its own code, an undo
//! conflict names the flag that overrides it.

use crate::hermetic;

#[test]
fn redo_with_nothing_to_redo_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = hermetic(dir.path(), home.path(), &[], &["redo"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        "papayu: ERR_NOTHING_TO_REDO: nothing to redo"
    );
}

#[test]
fn an_undo_conflict_names_the_force_flag() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let plan = home.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"a\n"}],"summary":"s"}"#,
    )
    .unwrap();
    let p = dir.path();
    let applied = hermetic(
        p,
        home.path(),
        &[],
        &["apply-plan", plan.to_str().unwrap(), "--yes", "--no-check"],
    );
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    std::fs::write(p.join("a.txt"), "edited\n").unwrap();
    let run = hermetic(p, home.path(), &[], &["undo"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("ERR_UNDO_CONFLICT") && run.stderr.contains("pass --force"),
        "{}",
        run.stderr
    );
    let forced = hermetic(p, home.path(), &[], &["undo", "--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert!(!p.join("a.txt").exists());
}
