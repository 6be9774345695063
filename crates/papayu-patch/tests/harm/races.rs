//! A path is checked against what the plan was computed from right before it is replaced or
//! removed: an edit made while the transaction runs is never written over
//! (`ERR_BASE_MISMATCH`), and a file created meanwhile at a new path is never clobbered.
//!
//! The edits are made from the progress callback, which runs after each rename: between the
//! computation of the plan and the later renames, exactly where the red team's racing editor
//! got its edit overwritten in 2 trials of 24.

use papayu_patch::{ApplyOptions, Project, Stage};
use papayu_protocol::ErrorCode;

use crate::common::{sha, v2, write_files};

/// Apply `plan` to `root`, running `edit` (once) when the write of `after` is reported.
fn apply_editing(
    root: &std::path::Path,
    plan: &papayu_validate::ValidatedPlan,
    after: &str,
    edit: impl Fn(),
) -> Result<papayu_patch::ApplyReport, papayu_patch::ApplyError> {
    let mut done = false;
    Project::open(root)
        .unwrap()
        .transaction(plan)
        .options(ApplyOptions::default().on_progress(|p| {
            if p.stage == Stage::Writing && p.item == after && !done {
                done = true;
                edit();
            }
        }))
        .apply()
}

#[test]
fn r_an_edit_of_a_patch_target_during_apply_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("b.txt", "b\n")]);
    let plan = v2(&format!(
        r#"{{"actions":[{{"kind":"CREATE_FILE","path":"a.txt","content":"a\n"}},
        {{"kind":"PATCH_FILE","path":"b.txt","base_sha256":"{}","patch":"@@ -1 +1 @@\n-b\n+B\n"}}],"summary":"s"}}"#,
        sha(b"b\n")
    ));
    let root = dir.path();
    // Same size as the patched content: only a comparison of the bytes tells them apart.
    let err = apply_editing(root, &plan, "a.txt", || {
        std::fs::write(root.join("b.txt"), "U\n").unwrap()
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BaseMismatch, "{err}");
    assert_eq!(err.path(), Some("b.txt"));
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "U\n");
    assert!(!root.join("a.txt").exists(), "rolled back");
    assert!(
        !root.join(".papa-yu/conflicts").exists(),
        "b.txt was never touched"
    );
}

#[test]
fn r_a_file_created_at_a_new_path_during_apply_is_never_clobbered() {
    let dir = tempfile::tempdir().unwrap();
    let plan = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"a\n"},
        {"kind":"CREATE_FILE","path":"c.txt","content":"c\n"}],"summary":"s"}"#,
    );
    let root = dir.path();
    let err = apply_editing(root, &plan, "a.txt", || {
        std::fs::write(root.join("c.txt"), "mine\n").unwrap()
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BaseMismatch, "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("c.txt")).unwrap(),
        "mine\n"
    );
    assert!(!root.join("a.txt").exists());
}

#[test]
fn r_a_file_edited_before_its_deletion_is_not_deleted() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("d1.txt", "1\n"), ("d2.txt", "2\n")]);
    let plan = v2(
        r#"{"actions":[{"kind":"DELETE_FILE","path":"d1.txt"},{"kind":"DELETE_FILE","path":"d2.txt"}],"summary":"s"}"#,
    );
    let root = dir.path();
    let err = apply_editing(root, &plan, "d1.txt", || {
        std::fs::write(root.join("d2.txt"), "X\n").unwrap()
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BaseMismatch, "{err}");
    assert_eq!(std::fs::read_to_string(root.join("d2.txt")).unwrap(), "X\n");
    assert_eq!(
        std::fs::read_to_string(root.join("d1.txt")).unwrap(),
        "1\n",
        "rolled back"
    );
}

#[test]
fn r_a_file_added_to_a_directory_being_deleted_is_not_deleted() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n"), ("old/x.txt", "x\n")]);
    let plan = v2(
        r#"{"actions":[{"kind":"DELETE_FILE","path":"a.txt"},{"kind":"DELETE_DIR","path":"old"}],"summary":"s"}"#,
    );
    let root = dir.path();
    let err = apply_editing(root, &plan, "a.txt", || {
        std::fs::write(root.join("old/new.txt"), "mine\n").unwrap()
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BaseMismatch, "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("old/new.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("old/x.txt")).unwrap(),
        "x\n"
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
}
