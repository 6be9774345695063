//! A rollback never destroys a byte someone else wrote: what a user (or a check) put at a
//! path while the transaction ran is kept, the original set aside, every other path rolled
//! back — in the process that applied, and after a kill -9, in the recovery.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use papayu_patch::{ApplyError, ApplyOptions, Checks, Found, JournalKey, Project};
use papayu_protocol::ErrorCode;

use crate::common::{sha, tree, v2, write_files};

/// Wait (at most 30 s) for `path` to exist.
pub fn wait_for(path: &Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A check that says it started (writing its process group to `started`), then waits for
/// `go` and fails.
pub fn blocking_check(started: &Path, go: &Path) -> String {
    format!(
        "echo $$ > '{s}.tmp' && mv '{s}.tmp' '{s}'; while [ ! -f '{g}' ]; do sleep 0.01; done; exit 1",
        s = started.display(),
        g = go.display()
    )
}

/// A project with two files the plan patches, one it deletes, and the plan (which also creates
/// a file in a new directory).
pub fn project(root: &Path) -> papayu_validate::ValidatedPlan {
    write_files(
        root,
        &[("a.txt", "a\n"), ("b.txt", "b\n"), ("gone.txt", "gone\n")],
    );
    v2(&format!(
        r#"{{"actions":[
        {{"kind":"PATCH_FILE","path":"a.txt","base_sha256":"{}","patch":"@@ -1 +1 @@\n-a\n+A\n"}},
        {{"kind":"PATCH_FILE","path":"b.txt","base_sha256":"{}","patch":"@@ -1 +1 @@\n-b\n+B\n"}},
        {{"kind":"CREATE_FILE","path":"new/n.txt","content":"n\n"}},
        {{"kind":"DELETE_FILE","path":"gone.txt"}}],"summary":"s"}}"#,
        sha(b"a\n"),
        sha(b"b\n")
    ))
}

/// What a user does while the check runs: edit a patched file, re-create the deleted one, and
/// edit the new one.
pub fn user_edits(root: &Path) {
    std::fs::write(root.join("a.txt"), "USER a\n").unwrap();
    std::fs::write(root.join("gone.txt"), "USER gone\n").unwrap();
    std::fs::write(root.join("new/n.txt"), "USER n\n").unwrap();
}

/// The tree a rollback must leave after [`user_edits`]: the user's three files, everything
/// else as before, and the originals under `.papa-yu/conflicts/<tx>/`.
pub fn assert_users_bytes_kept(root: &Path, conflicts: &[papayu_patch::RollbackConflict]) {
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    assert_eq!(read("a.txt"), "USER a\n");
    assert_eq!(read("gone.txt"), "USER gone\n");
    assert_eq!(read("new/n.txt"), "USER n\n");
    assert_eq!(read("b.txt"), "b\n", "every other path rolled back");
    let mut paths: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, ["a.txt", "gone.txt", "new/n.txt"], "{conflicts:?}");
    for c in conflicts {
        assert_eq!(c.found, Found::Changed, "{c}");
        match c.path.as_str() {
            "new/n.txt" => assert_eq!(c.original, None, "it had no original"),
            p => {
                let saved = c.original.as_deref().unwrap();
                assert_eq!(saved, format!(".papa-yu/conflicts/{}/{p}", c.tx_id));
                let original = if p == "a.txt" { "a\n" } else { "gone\n" };
                assert_eq!(
                    read(saved),
                    original,
                    "{p}: the original is where the report says"
                );
            }
        }
    }
}

#[test]
fn r_rollback_keeps_an_edit_made_during_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("p");
    let plan = project(&root);
    let (started, go) = (tmp.path().join("started"), tmp.path().join("go"));
    let project = Project::open(&root).unwrap();
    let user = {
        let (root, started, go) = (root.clone(), started.clone(), go.clone());
        std::thread::spawn(move || {
            wait_for(&started);
            user_edits(&root);
            std::fs::write(go, "").unwrap();
        })
    };
    let err = project
        .transaction(&plan)
        .options(
            ApplyOptions::default().checks(Checks::Commands(vec![blocking_check(&started, &go)])),
        )
        .apply()
        .unwrap_err();
    user.join().unwrap();
    assert_eq!(err.code(), ErrorCode::RollbackConflict, "{err}");
    let ApplyError::RollbackConflict { error, conflicts } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(error.code(), ErrorCode::CheckFailed);
    assert_users_bytes_kept(&root, conflicts);
    let msg = err.to_string();
    assert!(
        msg.contains("a.txt") && msg.contains(".papa-yu/conflicts/"),
        "{msg}"
    );
    assert!(!root.join(".papa-yu/tx").read_dir().unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(char::is_numeric)
    }));
}

/// The child half of [`r_recovery_after_a_kill_during_the_check_keeps_the_users_edit`]: apply
/// with the blocking check, in a process the parent kills.
fn crash_child(root: &Path, key: &Path, started: &Path, go: &Path) {
    let plan = project(root);
    let key = JournalKey::load_or_create(key).unwrap();
    let project = Project::open_with_key(root, key).unwrap();
    let _ = project
        .transaction(&plan)
        .options(
            ApplyOptions::default().checks(Checks::Commands(vec![blocking_check(started, go)])),
        )
        .apply();
    panic!("the parent should have killed this process during the check");
}

/// Run this test binary's test `name` in a child process with `PAPAYU_HARM_DIR=dir`.
pub fn spawn_child(name: &str, dir: &Path) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("PAPAYU_HARM_DIR", dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// kill -9 a papayu process and the check it runs (in its own process group, whose id the
/// check wrote to `started`).
pub fn kill_all(child: &mut std::process::Child, started: &Path) {
    child.kill().unwrap();
    child.wait().unwrap();
    if let Ok(pgid) = std::fs::read_to_string(started)
        && let Some(pgid) = pgid
            .trim()
            .parse()
            .ok()
            .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

#[test]
fn r_recovery_after_a_kill_during_the_check_keeps_the_users_edit() {
    let name = "harm::rollback::r_recovery_after_a_kill_during_the_check_keeps_the_users_edit";
    #[allow(
        clippy::disallowed_methods,
        reason = "the child learns its directory from its parent"
    )]
    if let Some(dir) = std::env::var_os("PAPAYU_HARM_DIR") {
        let dir = PathBuf::from(dir);
        return crash_child(
            &dir.join("p"),
            &dir.join("key"),
            &dir.join("started"),
            &dir.join("go"),
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("p");
    let mut child = spawn_child(name, tmp.path());
    let started = tmp.path().join("started");
    wait_for(&started);
    user_edits(&root);
    kill_all(&mut child, &started);
    // The next papayu run, with the same user's key, recovers.
    let key = JournalKey::load_or_create(tmp.path().join("key")).unwrap();
    let report = papayu_patch::recover_with_key(&root, &key).unwrap();
    assert_eq!(report.rolled_back.len(), 1, "{report:?}");
    assert!(report.is_complete());
    assert_users_bytes_kept(&root, &report.conflicts);
    // Recovered once: nothing is left to do.
    let again = papayu_patch::recover_with_key(&root, &key).unwrap();
    assert_eq!(again, papayu_patch::RecoveryReport::default());
}

#[test]
fn r_a_directory_a_check_writes_into_is_kept_and_nothing_wedges() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n")]);
    let before = tree(dir.path());
    let plan = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"gen/sub/x.txt","content":"x\n"}],"summary":"s"}"#,
    );
    let project = Project::open(dir.path()).unwrap();
    let err = project
        .transaction(&plan)
        .options(ApplyOptions::default().checks(Checks::Commands(vec![
            "echo log > gen/sub/build.log; exit 1".into(),
        ])))
        .apply()
        .unwrap_err();
    let ApplyError::RollbackConflict { conflicts, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(err.code(), ErrorCode::RollbackConflict);
    let kept: Vec<_> = conflicts
        .iter()
        .map(|c| (c.path.as_str(), &c.found))
        .collect();
    assert_eq!(
        kept,
        [(
            "gen/sub",
            &Found::ForeignFiles {
                files: vec!["gen/sub/build.log".into()]
            }
        )],
        "{err}"
    );
    // The transaction's file is gone, the check's log is kept, and so are its directories.
    assert!(!dir.path().join("gen/sub/x.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("gen/sub/build.log")).unwrap(),
        "log\n"
    );
    let mut expected = before;
    for (p, n) in tree(dir.path()) {
        if p.starts_with("gen") {
            expected.insert(p, n);
        }
    }
    assert_eq!(tree(dir.path()), expected);
    // Every command runs afterwards.
    let reopened = Project::open(dir.path()).unwrap();
    assert!(reopened.history().unwrap().undo.is_empty());
    assert!(reopened.recover().unwrap().is_complete());
    assert_eq!(
        reopened.undo(false).unwrap_err().code(),
        ErrorCode::NothingToUndo
    );
}

/// `chattr +i` on a directory for the life of the guard (root only, and the filesystem must
/// support it): a failure no retry can get past, as a permission or a failing disk would be.
struct Immutable(PathBuf);

impl Immutable {
    fn set(dir: &Path) -> Result<Immutable, String> {
        let out = std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Immutable(dir.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn r_a_rollback_that_cannot_finish_blocks_only_its_own_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_files(root, &[("stuck/keep.txt", "k\n"), ("free.txt", "f\n")]);
    let before = tree(root);
    let stuck = root.join("stuck");
    // The check makes the directory immutable: the rollback cannot remove the file the
    // transaction created there, whatever it tries.
    let plan = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"stuck/new.txt","content":"n\n"}],"summary":"s"}"#,
    );
    let probe = Immutable::set(&stuck);
    let guard = match probe {
        Ok(g) => g,
        Err(why) => {
            eprintln!("skipped: `chattr +i` is not available here ({why})");
            return;
        }
    };
    drop(guard);
    let project = Project::open(root).unwrap();
    let err = project
        .transaction(&plan)
        .options(
            ApplyOptions::default().checks(Checks::Commands(vec![format!(
                "chattr +i '{}'; exit 1",
                stuck.display()
            )])),
        )
        .apply()
        .unwrap_err();
    let _guard = Immutable(stuck.clone());
    assert!(matches!(err, ApplyError::RollbackFailed { .. }), "{err:?}");
    assert!(
        err.to_string().contains("papayu run will finish it"),
        "{err}"
    );
    // Every command still runs; recovery reports what it could not finish.
    let project = Project::open(root).unwrap();
    assert!(project.history().unwrap().undo.is_empty());
    let report = project.recover().unwrap();
    assert!(!report.is_complete());
    assert_eq!(report.unfinished.len(), 1, "{report:?}");
    assert!(
        report.unfinished[0].error.contains("stuck/new.txt"),
        "{report:?}"
    );
    // A change elsewhere is applied (and undone); one on the stuck path is refused.
    let elsewhere = v2(r#"{"actions":[{"kind":"DELETE_FILE","path":"free.txt"}],"summary":"s"}"#);
    project.transaction(&elsewhere).apply().unwrap();
    project.undo(false).unwrap();
    let same = v2(r#"{"actions":[{"kind":"DELETE_FILE","path":"stuck/new.txt"}],"summary":"s"}"#);
    let err = project.transaction(&same).apply().unwrap_err();
    assert!(
        matches!(
            &err,
            ApplyError::Store(papayu_patch::StoreError::Unfinished { path, .. }) if path == "stuck/new.txt"
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("papayu recover"), "{err}");
    // Once the cause is gone, the next recovery finishes the rollback.
    drop(_guard);
    let report = project.recover().unwrap();
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.rolled_back.len(), 1);
    assert_eq!(tree(root), before);
}

#[test]
fn r_a_crash_before_the_run_recorded_its_writes_loses_no_byte() {
    // The committed manifest (what the run wrote) is durable before the checks; a crash between
    // the first rename and it leaves writes nothing proves are papayu's. Recovery restores the
    // original and keeps what it replaced — here a user's edit made in that window.
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "old\n")]);
    let before = tree(dir.path());
    let plan = crate::common::plan(
        r#"{"actions":[{"kind":"UPDATE_FILE","path":"a.txt","content":"new\n"}],"summary":"s"}"#,
        papayu_protocol::ProtocolVersion::V1,
    );
    let project = Project::open(dir.path()).unwrap();
    let tx_dir = dir.path().join(".papa-yu/tx");
    let mut journal = None;
    project
        .transaction(&plan)
        .options(ApplyOptions::default().on_progress(|p| {
            // Right after the rename, before the committed manifest: the crash.
            if p.stage == papayu_patch::Stage::Writing && journal.is_none() {
                let tx = std::fs::read_dir(&tx_dir)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .find(|p| p.is_dir())
                    .unwrap();
                let files: Vec<_> = std::fs::read_dir(&tx)
                    .unwrap()
                    .map(|f| f.unwrap())
                    .map(|f| (f.file_name(), std::fs::read(f.path()).unwrap()))
                    .collect();
                journal = Some((tx, files));
            }
        }))
        .apply()
        .unwrap();
    let (tx, files) = journal.unwrap();
    std::fs::create_dir_all(&tx).unwrap();
    for (name, bytes) in files {
        std::fs::write(tx.join(name), bytes).unwrap();
    }
    let _ = std::fs::remove_file(tx_dir.join("stack.json"));
    std::fs::write(dir.path().join("a.txt"), "USER\n").unwrap();
    let report = papayu_patch::recover(dir.path()).unwrap();
    assert_eq!(report.rolled_back.len(), 1, "{report:?}");
    assert_eq!(tree(dir.path()), before);
    let [conflict] = &report.conflicts[..] else {
        panic!("{report:?}")
    };
    let Found::Unproven { saved_to } = &conflict.found else {
        panic!("{conflict:?}")
    };
    assert_eq!(
        std::fs::read_to_string(dir.path().join(saved_to)).unwrap(),
        "USER\n"
    );
}
