//! I/O faults injected at every write, fsync and rename of a transaction: the tree is always
//! exactly the before state (the fault hit before the commit) or the after state.

use papayu_patch::ApplyOptions;
use papayu_patch::Project;
use papayu_patch::faults::{FaultKind, FaultPlan};
use papayu_protocol::ErrorCode;

use crate::common::{sha, tree, v2, write_files};

fn project_and_plan() -> (tempfile::TempDir, papayu_validate::ValidatedPlan) {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("src/lib.rs", "fn a() {}\nfn b() {}\n"),
            ("old/x.txt", "x\n"),
            ("old/y/z.txt", "z\n"),
            ("rm.txt", "rm\n"),
        ],
    );
    let plan = v2(&format!(
        r#"{{"actions":[
        {{"kind":"CREATE_DIR","path":"newdir/inner"}},
        {{"kind":"CREATE_FILE","path":"pkg/a.py","content":"print(1)\n"}},
        {{"kind":"PATCH_FILE","path":"src/lib.rs","base_sha256":"{}","patch":"@@ -2 +2 @@\n-fn b() {{}}\n+fn b() {{ 2 }}\n"}},
        {{"kind":"DELETE_FILE","path":"rm.txt"}},
        {{"kind":"DELETE_DIR","path":"old"}}],"summary":"s"}}"#,
        sha(b"fn a() {}\nfn b() {}\n")
    ));
    (dir, plan)
}

#[test]
fn every_injected_write_fsync_and_rename_failure_rolls_back_completely() {
    let (reference, plan) = project_and_plan();
    let before = tree(reference.path());
    Project::open(reference.path())
        .unwrap()
        .transaction(&plan)
        .apply()
        .unwrap();
    let after = tree(reference.path());
    let mut fired = std::collections::BTreeMap::new();
    for kind in [FaultKind::Write, FaultKind::Fsync, FaultKind::Rename] {
        for nth in 1.. {
            let (dir, plan) = project_and_plan();
            let project = Project::open(dir.path()).unwrap();
            let result = project
                .transaction(&plan)
                .options(ApplyOptions::default().inject_fault(FaultPlan { kind, nth }))
                .apply();
            match result {
                Ok(_) => {
                    // Past the last operation of this kind: the fault never fired.
                    assert_eq!(tree(dir.path()), after);
                    break;
                }
                Err(e) => {
                    assert_eq!(e.code(), ErrorCode::Io, "{kind:?} #{nth}: {e}");
                    assert!(e.to_string().contains("injected"), "{e}");
                    assert_eq!(tree(dir.path()), before, "{kind:?} #{nth}: not rolled back");
                    papayu_patch::recover(dir.path()).unwrap();
                    assert_eq!(
                        tree(dir.path()),
                        before,
                        "{kind:?} #{nth}: recover changed the tree"
                    );
                    // The journal is gone and the project works again.
                    assert!(
                        Project::open(dir.path())
                            .unwrap()
                            .history()
                            .unwrap()
                            .undo
                            .is_empty()
                    );
                    *fired.entry(format!("{kind:?}")).or_insert(0) += 1;
                }
            }
            assert!(nth < 1000, "runaway");
        }
    }
    // Every kind of operation was hit at least at each file written (5 writes, 3+ renames).
    assert!(fired["Write"] >= 4, "{fired:?}");
    assert!(fired["Fsync"] >= 10, "{fired:?}");
    assert!(fired["Rename"] >= 3, "{fired:?}");
    println!("fault points covered: {fired:?}");
}

#[test]
fn faults_during_undo_leave_the_applied_state() {
    let (reference, plan) = project_and_plan();
    Project::open(reference.path())
        .unwrap()
        .transaction(&plan)
        .apply()
        .unwrap();
    let after = tree(reference.path());
    for kind in [FaultKind::Write, FaultKind::Fsync, FaultKind::Rename] {
        for nth in 1.. {
            let (dir, plan) = project_and_plan();
            let before = tree(dir.path());
            let project = Project::open(dir.path()).unwrap();
            project.transaction(&plan).apply().unwrap();
            match project.undo_with(
                false,
                ApplyOptions::default().inject_fault(FaultPlan { kind, nth }),
            ) {
                Ok(_) => {
                    assert_eq!(tree(dir.path()), before);
                    break;
                }
                Err(e) => {
                    assert_eq!(e.code(), ErrorCode::Io, "{e}");
                    assert_eq!(tree(dir.path()), after, "{kind:?} #{nth}");
                    // Still undoable afterwards.
                    project.undo(false).unwrap();
                    assert_eq!(tree(dir.path()), before);
                }
            }
            assert!(nth < 1000);
        }
    }
}
