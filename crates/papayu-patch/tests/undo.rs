//! Undo / redo / history (SPEC §5.6) and the apply-then-undo property.

use papayu_patch::{ApplyOptions, Project};
use papayu_protocol::ErrorCode;
use proptest::prelude::*;

use crate::common::{sha, tree, v2, write_files};

#[test]
fn undo_redo_round_trip_and_history() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n")]);
    let t0 = tree(dir.path());
    let project = Project::open(dir.path()).unwrap();
    assert_eq!(
        project.undo(false).unwrap_err().code(),
        ErrorCode::NothingToUndo
    );
    assert_eq!(
        project.redo(false).unwrap_err().code(),
        ErrorCode::NothingToRedo
    );
    let p1 =
        v2(r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"b\n"}],"summary":"s"}"#);
    let r1 = project.transaction(&p1).apply().unwrap();
    let t1 = tree(dir.path());
    let p2 = v2(&format!(
        r#"{{"actions":[{{"kind":"PATCH_FILE","path":"a.txt","base_sha256":"{}","patch":"@@ -1 +1 @@\n-a\n+A\n"}},{{"kind":"DELETE_FILE","path":"b.txt"}}],"summary":"s"}}"#,
        sha(b"a\n")
    ));
    project.transaction(&p2).apply().unwrap();
    let t2 = tree(dir.path());
    let h = project.history().unwrap();
    assert_eq!(h.undo.len(), 2);
    assert_eq!(h.undo[1].tx_id, r1.tx_id, "most recent first");
    assert_eq!(h.undo[0].actions.len(), 2);
    project.undo(false).unwrap();
    assert_eq!(tree(dir.path()), t1);
    project.undo(false).unwrap();
    assert_eq!(tree(dir.path()), t0);
    assert_eq!(project.history().unwrap().redo.len(), 2);
    project.redo(false).unwrap();
    assert_eq!(tree(dir.path()), t1);
    project.redo(false).unwrap();
    assert_eq!(tree(dir.path()), t2);
    assert_eq!(
        project.redo(false).unwrap_err().code(),
        ErrorCode::NothingToRedo
    );
    project.undo(false).unwrap();
    // A new apply clears the redo stack.
    let p3 =
        v2(r#"{"actions":[{"kind":"CREATE_FILE","path":"c.txt","content":"c\n"}],"summary":"s"}"#);
    project.transaction(&p3).apply().unwrap();
    let h = project.history().unwrap();
    assert!(h.redo.is_empty());
    assert_eq!(h.undo.len(), 2);
}

#[test]
fn undo_conflict_lists_changed_files_and_force_overrides() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n")]);
    let t0 = tree(dir.path());
    let project = Project::open(dir.path()).unwrap();
    let p = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"b\n"},{"kind":"CREATE_DIR","path":"d"},{"kind":"DELETE_FILE","path":"a.txt"}],"summary":"s"}"#,
    );
    project.transaction(&p).apply().unwrap();
    std::fs::write(dir.path().join("b.txt"), "edited by the user\n").unwrap();
    std::fs::write(dir.path().join("d/user.txt"), "new\n").unwrap();
    let err = project.undo(false).unwrap_err();
    assert_eq!(err.code(), ErrorCode::UndoConflict);
    assert!(err.to_string().contains("pass --force"), "{err}");
    match &err {
        papayu_patch::UndoError::Conflict { paths } => {
            assert_eq!(paths, &["b.txt", "d/user.txt"])
        }
        other => panic!("{other}"),
    }
    std::fs::remove_file(dir.path().join("d/user.txt")).unwrap();
    project.undo(true).unwrap();
    assert_eq!(tree(dir.path()), t0);
}

#[test]
fn undo_stack_is_pruned_to_its_depth() {
    let dir = tempfile::tempdir().unwrap();
    let project = Project::open(dir.path()).unwrap();
    for i in 0..5 {
        let p = v2(&format!(
            r#"{{"actions":[{{"kind":"CREATE_FILE","path":"f{i}.txt","content":"x"}}],"summary":"s"}}"#
        ));
        project
            .transaction(&p)
            .options(ApplyOptions::default().undo_depth(3))
            .apply()
            .unwrap();
    }
    assert_eq!(project.history().unwrap().undo.len(), 3);
    let journals = std::fs::read_dir(dir.path().join(".papa-yu/tx"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(journals, 3, "pruned journals are deleted");
}

fn arb_tree() -> impl Strategy<Value = Vec<(&'static str, Vec<u8>)>> {
    let name = prop::sample::select(vec!["a.txt", "b.md", "dir/c.rs", "dir/sub/d.txt", "e.json"]);
    prop::collection::vec((name, prop::collection::vec(any::<u8>(), 0..40)), 0..5)
}

#[derive(Debug, Clone)]
enum Act {
    Create(usize, String),
    Delete(usize),
    DeleteDir,
    Mkdir,
    Patch(usize),
}

fn arb_acts() -> impl Strategy<Value = Vec<Act>> {
    prop::collection::vec(
        prop_oneof![
            (0..5usize, "[a-z\n\r ]{0,30}").prop_map(|(i, c)| Act::Create(i, c)),
            (0..5usize).prop_map(Act::Delete),
            Just(Act::DeleteDir),
            Just(Act::Mkdir),
            (0..5usize).prop_map(Act::Patch),
        ],
        1..6,
    )
}

const NAMES: [&str; 5] = ["a.txt", "b.md", "dir/c.rs", "dir/sub/d.txt", "new/f.txt"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn apply_then_undo_restores_the_tree_byte_for_byte(files in arb_tree(), acts in arb_acts()) {
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in &files {
            let full = dir.path().join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, c).unwrap();
        }
        let before = tree(dir.path());
        let mut actions = Vec::new();
        let mut used = std::collections::BTreeSet::new();
        for a in acts {
            let (path, json) = match a {
                Act::Create(i, c) => (NAMES[i], serde_json::json!({"kind": "CREATE_FILE", "path": NAMES[i], "content": c})),
                Act::Delete(i) => (NAMES[i], serde_json::json!({"kind": "DELETE_FILE", "path": NAMES[i]})),
                Act::DeleteDir => ("dir", serde_json::json!({"kind": "DELETE_DIR", "path": "dir"})),
                Act::Mkdir => ("new/sub", serde_json::json!({"kind": "CREATE_DIR", "path": "new/sub"})),
                Act::Patch(i) => {
                    let Ok(old) = std::fs::read(dir.path().join(NAMES[i])) else { continue };
                    let Ok(text) = String::from_utf8(old.clone()) else { continue };
                    let new_text = format!("{text}added line\n");
                    let patch = similar::TextDiff::from_lines(&text, &new_text).unified_diff().to_string();
                    (NAMES[i], serde_json::json!({"kind": "PATCH_FILE", "path": NAMES[i], "base_sha256": sha(&old), "patch": patch}))
                }
            };
            // Keep the plan conflict-free (validation would reject conflicts anyway).
            let top = path.split('/').next().unwrap();
            if used.iter().any(|u: &String| u == path || u.split('/').next() == Some(top) && (path == "dir" || u == "dir")) {
                continue;
            }
            used.insert(path.to_owned());
            actions.push(json);
        }
        let answer = serde_json::json!({"actions": actions, "summary": "s"}).to_string();
        let report = papayu_validate::check_text(&answer, &papayu_validate::Context::new(papayu_protocol::ProtocolVersion::V2), &papayu_validate::Policy::default());
        let Ok(plan) = report.into_plan() else { return Ok(()) };
        let project = Project::open(dir.path()).unwrap();
        match project.transaction(&plan).apply() {
            Ok(_) => {
                project.undo(false).unwrap();
                prop_assert_eq!(tree(dir.path()), before);
            }
            Err(_) => prop_assert_eq!(tree(dir.path()), before),
        }
    }
}

#[test]
fn a_damaged_journal_of_an_old_transaction_only_stops_what_reads_it() {
    // Opening a project does not re-read the committed journals on the undo stack (a full
    // stack of large transactions made every command slow), so a damaged old journal no longer
    // blocks new applies; history and undo, which do read it, report it.
    let dir = tempfile::tempdir().unwrap();
    let project = Project::open(dir.path()).unwrap();
    let create = |name: &str| {
        v2(&format!(
            r#"{{"actions":[{{"kind":"CREATE_FILE","path":"{name}","content":"x\n"}}],"summary":"s"}}"#
        ))
    };
    let old = project.transaction(&create("a.txt")).apply().unwrap();
    let manifest = dir
        .path()
        .join(".papa-yu/tx")
        .join(&old.tx_id)
        .join("manifest.json");
    std::fs::write(&manifest, b"{ torn").unwrap();
    let reopened = Project::open(dir.path()).unwrap();
    let new = reopened.transaction(&create("b.txt")).apply().unwrap();
    assert!(dir.path().join("b.txt").exists());
    let err = reopened.history().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Io);
    assert!(err.to_string().contains(&old.tx_id), "{err}");
    // The newer transaction still undoes; the damaged one is refused with the same error.
    assert_ne!(reopened.undo(false).unwrap().tx_id, new.tx_id);
    assert!(!dir.path().join("b.txt").exists());
    let err = reopened.undo(false).unwrap_err();
    assert!(err.to_string().contains(&old.tx_id), "{err}");
    assert!(dir.path().join("a.txt").exists(), "nothing was undone");
}

#[test]
fn inspect_reads_history_and_previews_without_creating_state() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n")]);
    let t0 = tree(dir.path());
    let project = Project::inspect(dir.path()).unwrap();
    let h = project.history().unwrap();
    assert!(h.undo.is_empty() && h.redo.is_empty());
    let plan =
        v2(r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"b\n"}],"summary":"s"}"#);
    project.transaction(&plan).preview().unwrap();
    assert_eq!(tree(dir.path()), t0);
    assert!(!dir.path().join(".papa-yu").exists());

    // With state, inspect sees the history an apply left.
    Project::open(dir.path())
        .unwrap()
        .transaction(&plan)
        .apply()
        .unwrap();
    let h = Project::inspect(dir.path()).unwrap().history().unwrap();
    assert_eq!(h.undo.len(), 1);
}
