//! `undo --force` (and `redo --force`) replaces what a user changed since the transaction, and
//! keeps it where the user finds it: `.papa-yu/displaced/<tx>/<path>`, reported, never pruned.

use papayu_patch::{ApplyOptions, Project};
use papayu_protocol::ErrorCode;

use crate::common::{sha, v2, write_files};

#[test]
fn r_undo_force_keeps_the_users_later_edit_where_the_user_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(root, &[("a.txt", "a\n")]);
    let project = Project::open(root).unwrap();
    let plan = v2(&format!(
        r#"{{"actions":[{{"kind":"PATCH_FILE","path":"a.txt","base_sha256":"{}","patch":"@@ -1 +1 @@\n-a\n+A\n"}},
        {{"kind":"CREATE_DIR","path":"gen"}}],"summary":"s"}}"#,
        sha(b"a\n")
    ));
    project.transaction(&plan).apply().unwrap();
    std::fs::write(root.join("a.txt"), "USER\n").unwrap();
    write_files(root, &[("gen/notes/user.md", "mine\n")]);
    assert_eq!(
        project.undo(false).unwrap_err().code(),
        ErrorCode::UndoConflict
    );
    let report = project.undo(true).unwrap();
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    assert!(
        !root.join("gen").exists(),
        "the directory the transaction made is undone"
    );
    let mut displaced: Vec<(&str, &str)> = report
        .displaced
        .iter()
        .map(|d| (d.path.as_str(), d.saved_to.as_str()))
        .collect();
    displaced.sort();
    let a = format!(".papa-yu/displaced/{}/a.txt", report.tx_id);
    let user = format!(".papa-yu/displaced/{}/gen/notes/user.md", report.tx_id);
    assert_eq!(
        displaced,
        [("a.txt", a.as_str()), ("gen/notes/user.md", user.as_str())]
    );
    assert_eq!(std::fs::read_to_string(root.join(&a)).unwrap(), "USER\n");
    assert_eq!(std::fs::read_to_string(root.join(&user)).unwrap(), "mine\n");
    assert!(
        report.displaced[0]
            .to_string()
            .contains(".papa-yu/displaced/")
    );
    // Later applies prune the undo journals (depth 1 here), never the displaced copies.
    for i in 0..3 {
        let plan = v2(&format!(
            r#"{{"actions":[{{"kind":"CREATE_FILE","path":"n{i}.txt","content":"n\n"}}],"summary":"s"}}"#
        ));
        project
            .transaction(&plan)
            .options(ApplyOptions::default().undo_depth(1))
            .apply()
            .unwrap();
    }
    assert_eq!(std::fs::read_to_string(root.join(&a)).unwrap(), "USER\n");
    assert_eq!(std::fs::read_to_string(root.join(&user)).unwrap(), "mine\n");
}

#[test]
fn redo_force_keeps_the_users_edit_too_and_an_unforced_undo_displaces_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let project = Project::open(root).unwrap();
    let plan =
        v2(r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"b\n"}],"summary":"s"}"#);
    project.transaction(&plan).apply().unwrap();
    let undone = project.undo(false).unwrap();
    assert!(undone.displaced.is_empty());
    std::fs::write(root.join("b.txt"), "USER b\n").unwrap();
    assert_eq!(
        project.redo(false).unwrap_err().code(),
        ErrorCode::UndoConflict
    );
    let redone = project.redo(true).unwrap();
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "b\n");
    assert_eq!(redone.displaced.len(), 1);
    assert_eq!(
        std::fs::read_to_string(root.join(&redone.displaced[0].saved_to)).unwrap(),
        "USER b\n"
    );
}
