//! A rollback works on a full disk, leaves no temp file behind, and the next command's lock and
//! recovery work there too: the journal reserves the space its rollback needs (freed first),
//! a rollback that still finds no space removes the transaction's version before writing the
//! original back, and the lock writes no data.

use std::path::{Path, PathBuf};
use std::process::Command;

use papayu_patch::faults::{FaultKind, RollbackFault};
use papayu_patch::{ApplyOptions, Checks, Project};
use papayu_protocol::ErrorCode;

use crate::common::{sha, tree, v2, write_files};

const ENOSPC: i32 = 28;

/// Ten 100 KB files and a plan patching each (and making it longer).
fn big_project(root: &Path) -> papayu_validate::ValidatedPlan {
    let body: String = (0..10_000).map(|i| format!("line {i:05}\n")).collect();
    let mut actions = Vec::new();
    for i in 0..10 {
        let path = format!("src/f{i}.txt");
        write_files(root, &[(&path, &body)]);
        actions.push(serde_json::json!({"kind": "PATCH_FILE", "path": path,
            "base_sha256": sha(body.as_bytes()),
            "patch": "@@ -1 +1,2 @@\n-line 00000\n+line 00000\n+one more line\n"}));
    }
    v2(&serde_json::json!({"actions": actions, "summary": "s"}).to_string())
}

/// Every file below `root` named like a papayu temp file.
fn temp_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            } else if name.ends_with(".tmp") {
                out.push(e.path());
            }
        }
    }
    out
}

fn failing_check() -> ApplyOptions<'static> {
    ApplyOptions::default().checks(Checks::Commands(vec!["exit 1".into()]))
}

#[test]
fn r_rollback_that_finds_no_space_removes_the_transactions_version_first() {
    let dir = tempfile::tempdir().unwrap();
    let plan = big_project(dir.path());
    let before = tree(dir.path());
    // The rollback's first original write finds the disk full (once).
    let err = Project::open(dir.path())
        .unwrap()
        .transaction(&plan)
        .options(failing_check().inject_rollback_fault(RollbackFault {
            kind: FaultKind::Write,
            nth: 1,
            errno: ENOSPC,
            sticky: false,
        }))
        .apply()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CheckFailed, "{err}");
    assert_eq!(tree(dir.path()), before);
    assert_eq!(temp_files(dir.path()), Vec::<PathBuf>::new());
}

#[test]
fn r_a_rollback_on_a_disk_that_stays_full_leaves_no_temp_files_and_recovery_finishes_later() {
    let dir = tempfile::tempdir().unwrap();
    let plan = big_project(dir.path());
    let before = tree(dir.path());
    let full = RollbackFault {
        kind: FaultKind::Write,
        nth: 1,
        errno: ENOSPC,
        sticky: true,
    };
    let err = Project::open(dir.path())
        .unwrap()
        .transaction(&plan)
        .options(failing_check().inject_rollback_fault(full))
        .apply()
        .unwrap_err();
    assert!(
        matches!(err, papayu_patch::ApplyError::RollbackFailed { .. }),
        "{err:?}"
    );
    assert_eq!(temp_files(dir.path()), Vec::<PathBuf>::new());
    // Still full: recovery does what it can, reports the rest, and lets commands run.
    let report = papayu_patch::faults::recover_injecting(dir.path(), full).unwrap();
    assert_eq!(report.unfinished.len(), 1, "{report:?}");
    assert_eq!(temp_files(dir.path()), Vec::<PathBuf>::new());
    // Space again: the next command finishes the rollback.
    let project = Project::open(dir.path()).unwrap();
    assert_eq!(tree(dir.path()), before);
    assert!(project.history().unwrap().undo.is_empty());
}

/// A tmpfs of `size` at a new directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn r_rollback_lock_and_recovery_on_a_really_full_filesystem() {
    // A real full filesystem needs a mount, which needs root (CI runs as root); elsewhere the
    // fault-seam tests above cover the same paths.
    let fs = match Tmpfs::mount("8m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("skipped: cannot mount a small tmpfs ({why})");
            return;
        }
    };
    let root = fs.path().join("project");
    let plan = big_project(&root);
    let before = tree(&root);
    // The check fills the filesystem (outside the project), then fails: the rollback runs on a
    // full disk.
    let filler = fs.path().join("filler");
    let fill = format!("cat /dev/zero > '{}' 2>/dev/null; exit 1", filler.display());
    let err = Project::open(&root)
        .unwrap()
        .transaction(&plan)
        .options(ApplyOptions::default().checks(Checks::Commands(vec![fill])))
        .apply()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CheckFailed, "{err}");
    assert_eq!(tree(&root), before);
    assert_eq!(temp_files(&root), Vec::<PathBuf>::new());
    // Full again (the rollback freed the transaction's space): the next commands lock and
    // recover all the same.
    let refill = format!("cat /dev/zero >> '{}' 2>/dev/null", filler.display());
    let _ = Command::new("sh").args(["-c", &refill]).status();
    assert!(
        std::fs::write(fs.path().join("probe"), vec![0u8; 64 * 1024]).is_err(),
        "full"
    );
    let project = Project::open(&root).unwrap();
    assert!(project.history().unwrap().undo.is_empty());
    assert!(project.recover().unwrap().is_complete());
    // A new transaction is refused up front (no room for its journal), changing nothing.
    let err = project.transaction(&plan).apply().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Io, "{err}");
    assert_eq!(tree(&root), before);
    assert_eq!(temp_files(&root), Vec::<PathBuf>::new());
}
