//! The transaction protocol: ordering, lock, journal, modes, progress, preview writes nothing.

use std::os::unix::fs::PermissionsExt;

use papayu_patch::{ApplyOptions, Project, Stage};
use papayu_protocol::ErrorCode;

use crate::common::{Node, hold_lock, plan, sha, tree, v2, write_files};

#[test]
fn preview_writes_nothing_and_matches_apply() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "one\ntwo\nthree\n")]);
    let before = tree(dir.path());
    let plan = v2(&format!(
        r#"{{"actions":[{{"kind":"PATCH_FILE","path":"a.txt","base_sha256":"{}","patch":"@@ -2,1 +2,1 @@\n-two\n+TWO\n"}},
        {{"kind":"CREATE_FILE","path":"b/c.txt","content":"c\n"}},{{"kind":"DELETE_FILE","path":"zzz.txt"}}],"summary":"s"}}"#,
        sha(b"one\ntwo\nthree\n")
    ));
    let project = Project::open(dir.path()).unwrap();
    let preview = project.transaction(&plan).preview().unwrap();
    assert_eq!(tree(dir.path()), before, "preview wrote something");
    assert!(preview.is_ok());
    assert_eq!(
        (
            preview.summary.create,
            preview.summary.patch,
            preview.summary.delete
        ),
        (1, 1, 1)
    );
    // Apply order (§5.1): creates before patches before deletes.
    let kinds: Vec<_> = preview.files.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["CREATE_FILE", "PATCH_FILE", "DELETE_FILE"]);
    let patch = &preview.files[1];
    assert!(patch.diff.contains("-two\n+TWO\n"), "{}", patch.diff);
    assert!(
        patch.diff.starts_with("--- a/a.txt\n+++ b/a.txt\n"),
        "{}",
        patch.diff
    );
    assert_eq!(patch.hunks[0].tier.as_str(), "exact");
    assert!(preview.files[2].noop);
    let json = serde_json::to_value(&preview).unwrap();
    assert_eq!(json["summary"]["blocked"], 0);
    let report = project.transaction(&plan).apply().unwrap();
    // Everything but the diff text (which only the preview renders) is identical.
    let mut previewed = preview.files.clone();
    previewed.iter_mut().for_each(|f| f.diff.clear());
    assert_eq!(report.files, previewed, "apply did what preview said");
    assert!(report.files.iter().all(|f| f.diff.is_empty()));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    assert!(!dir.path().join(".papa-yu/lock").exists(), "lock released");
}

#[test]
fn permission_bits_are_preserved() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("run.sh", "echo a\n")]);
    std::fs::set_permissions(
        dir.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    let plan = v2(&format!(
        r#"{{"actions":[{{"kind":"PATCH_FILE","path":"run.sh","base_sha256":"{}","patch":"@@ -1 +1 @@\n-echo a\n+echo b\n"}}],"summary":"s"}}"#,
        sha(b"echo a\n")
    ));
    let project = Project::open(dir.path()).unwrap();
    project.transaction(&plan).apply().unwrap();
    let md = std::fs::metadata(dir.path().join("run.sh")).unwrap();
    assert_eq!(md.permissions().mode() & 0o7777, 0o750);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("run.sh")).unwrap(),
        "echo b\n"
    );
    project.undo(false).unwrap();
    let md = std::fs::metadata(dir.path().join("run.sh")).unwrap();
    assert_eq!(md.permissions().mode() & 0o7777, 0o750);
}

#[test]
fn a_failing_action_aborts_before_touching_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n")]);
    let before = tree(dir.path());
    let plan = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"new/x.txt","content":"x\n"},
        {"kind":"PATCH_FILE","path":"a.txt","base_sha256":"0000000000000000000000000000000000000000000000000000000000000000","patch":"@@ -1 +1 @@\n-a\n+b\n"}],"summary":"s"}"#,
    );
    let err = Project::open(dir.path())
        .unwrap()
        .transaction(&plan)
        .apply()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BaseMismatch);
    assert_eq!(tree(dir.path()), before);
    assert!(
        !dir.path().join(".papa-yu/tx").exists()
            || std::fs::read_dir(dir.path().join(".papa-yu/tx"))
                .unwrap()
                .count()
                == 0
    );
}

#[test]
fn second_papayu_gets_err_locked_and_a_stale_lock_is_reclaimed() {
    let dir = tempfile::tempdir().unwrap();
    let project = Project::open(dir.path()).unwrap();
    let plan =
        v2(r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"a\n"}],"summary":"s"}"#);
    // A live holder: this very process, through another open file description (as another
    // papayu instance would be).
    let held = hold_lock(dir.path());
    let err = project.transaction(&plan).apply().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Locked);
    assert_eq!(
        Project::open(dir.path()).unwrap_err().code(),
        ErrorCode::Locked
    );
    drop(held);
    // A dead holder: a child that has exited and been reaped.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    std::fs::write(
        dir.path().join(".papa-yu/lock"),
        format!("pid={dead}\nstart=1\n"),
    )
    .unwrap();
    project.transaction(&plan).apply().unwrap();
    assert!(dir.path().join("a.txt").exists());
    assert!(!dir.path().join(".papa-yu/lock").exists());
}

#[test]
fn threads_of_one_process_get_the_lock_or_err_locked_never_an_io_error() {
    // `papayu ui` runs jobs side by side in one process: taking the lock must not trip over a
    // temp file another thread of the same process is using.
    let dir = tempfile::tempdir().unwrap();
    let project = Project::open(dir.path()).unwrap();
    let mut applied = 0;
    for round in 0..20 {
        let plans: Vec<_> = (0..8)
            .map(|i| {
                v2(&format!(
                    r#"{{"actions":[{{"kind":"CREATE_FILE","path":"r{round}/f{i}.txt","content":"x\n"}}],"summary":"s"}}"#
                ))
            })
            .collect();
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = plans
                .iter()
                .map(|plan| s.spawn(|| project.transaction(plan).apply().map(|_| ())))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in results {
            match r {
                Ok(()) => applied += 1,
                Err(e) => assert_eq!(e.code(), ErrorCode::Locked, "round {round}: {e}"),
            }
        }
    }
    assert!(applied >= 20, "{applied}");
    assert!(!dir.path().join(".papa-yu/lock").exists());
}

#[test]
fn progress_callback_sees_every_write_and_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let plan = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"a"},{"kind":"CREATE_FILE","path":"b.txt","content":"b"}],"summary":"s"}"#,
    );
    let mut events = Vec::new();
    let project = Project::open(dir.path()).unwrap();
    project
        .transaction(&plan)
        .options(ApplyOptions::default().on_progress(|p| events.push((p.stage, p.done, p.total))))
        .apply()
        .unwrap();
    assert_eq!(
        events,
        [
            (Stage::Writing, 1, 2),
            (Stage::Writing, 2, 2),
            (Stage::Committed, 2, 2)
        ]
    );
}

#[test]
fn normalize_eol_option_reaches_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let plan = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"x\r\ny"}],"summary":"s"}"#,
    );
    let project = Project::open(dir.path()).unwrap();
    project
        .transaction(&plan)
        .options(ApplyOptions::default().normalize_eol_lf(true))
        .apply()
        .unwrap();
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"x\ny\n");
}

// `plans_never_write_papayu_state_or_git` is a unit test in `src/tx/transaction.rs`: it hands
// the engine actions that validation refuses, and only papayu-validate makes a `ValidatedPlan`.

#[test]
fn recover_rolls_back_an_uncommitted_journal() {
    // Leave a pending journal behind the way a crash would: inject a failure into the commit
    // rename, then put the journal back as it was before the rollback by re-applying and
    // faking the crash with a copy of the journal taken mid-flight.
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "old\n")]);
    let before = tree(dir.path());
    let plan = plan(
        r#"{"actions":[{"kind":"UPDATE_FILE","path":"a.txt","content":"new\n"}],"summary":"s"}"#,
        papayu_protocol::ProtocolVersion::V1,
    );
    let project = Project::open(dir.path()).unwrap();
    let mut snapshot = None;
    let root = dir.path().to_path_buf();
    project
        .transaction(&plan)
        .options(ApplyOptions::default().on_progress(|p| {
            if p.stage == Stage::Writing && snapshot.is_none() {
                // Files are written, nothing committed: copy the journal as a crash would leave it.
                let tx = std::fs::read_dir(root.join(".papa-yu/tx"))
                    .unwrap()
                    .next()
                    .unwrap()
                    .unwrap()
                    .path();
                let mut files = Vec::new();
                for f in std::fs::read_dir(&tx).unwrap() {
                    let f = f.unwrap();
                    files.push((f.file_name(), std::fs::read(f.path()).unwrap()));
                }
                // And the undo stack as it was then (none yet): after a crash before the commit
                // the stacks cannot name this transaction.
                let stack = std::fs::read(root.join(".papa-yu/tx/stack.json")).ok();
                snapshot = Some((tx, files, stack));
            }
        }))
        .apply()
        .unwrap();
    let (tx, files, stack) = snapshot.unwrap();
    // Simulate the crash: the project holds the new bytes and an uncommitted journal.
    std::fs::create_dir_all(&tx).unwrap();
    for (name, bytes) in files {
        std::fs::write(tx.join(name), bytes).unwrap();
    }
    let stack_path = dir.path().join(".papa-yu/tx/stack.json");
    match stack {
        Some(bytes) => std::fs::write(&stack_path, bytes).unwrap(),
        None => std::fs::remove_file(&stack_path).unwrap(),
    }
    let report = papayu_patch::recover(dir.path()).unwrap();
    assert_eq!(report.rolled_back.len(), 1);
    assert_eq!(tree(dir.path()), before);
    assert!(!tx.exists());
}

#[test]
fn a_transaction_with_more_writes_than_open_temp_files_renames_in_plan_order() {
    // More writes than papayu keeps temp files open for (256): the pending writes are fsynced
    // and renamed in batches, still in plan order, and undo/redo see one transaction.
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<String> = (0..300).map(|i| format!("d{}/f{i}.txt", i % 7)).collect();
    let actions: Vec<papayu_protocol::Action> = paths
        .iter()
        .map(|p| {
            let mut action =
                papayu_protocol::Action::new(papayu_protocol::ActionKind::CreateFile, p.clone());
            action.content = Some(format!("{p}\n"));
            action
        })
        .collect();
    // More actions than the default policy allows in one plan.
    let policy = papayu_validate::Policy::from_json(r#"{"max_actions": 300}"#).unwrap();
    let plan = papayu_validate::validate_actions(
        &actions,
        &papayu_validate::Context::new(papayu_protocol::ProtocolVersion::V2),
        &policy,
    )
    .into_plan()
    .unwrap();
    let project = Project::open(dir.path()).unwrap();
    let mut written = Vec::new();
    project
        .transaction(&plan)
        .options(ApplyOptions::default().on_progress(|p| {
            if p.stage == Stage::Writing && p.item.ends_with(".txt") {
                written.push(p.item.to_owned());
            }
        }))
        .apply()
        .unwrap();
    let mut in_plan_order: Vec<String> = plan
        .actions()
        .iter()
        .map(|a| a.path.as_str().to_owned())
        .collect();
    // CREATE_FILEs run in path order (SPEC §5.1).
    in_plan_order.sort();
    assert_eq!(written, in_plan_order);
    let after = tree(dir.path());
    assert_eq!(after.len(), 300 + 7);
    for p in &paths {
        assert!(
            matches!(&after[p], Node::File(bytes, _) if *bytes == format!("{p}\n").into_bytes()),
            "{p}"
        );
    }
    project.undo(false).unwrap();
    assert!(tree(dir.path()).is_empty());
    project.redo(false).unwrap();
    assert_eq!(tree(dir.path()), after);
}

#[test]
fn the_committed_manifest_records_the_hash_of_every_file_written() {
    // The pending manifest leaves a write's after-state out (its hash is computed while the
    // file is synced); the committed one, the only one undo reads, must have every one right.
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "one\ntwo\n"), ("gone.txt", "x\n")]);
    let plan = v2(&format!(
        r#"{{"actions":[{{"kind":"PATCH_FILE","path":"a.txt","base_sha256":"{}","patch":"@@ -2,1 +2,1 @@\n-two\n+TWO\n"}},
        {{"kind":"CREATE_FILE","path":"b/c.txt","content":"c\n"}},{{"kind":"DELETE_FILE","path":"gone.txt"}}],"summary":"s"}}"#,
        sha(b"one\ntwo\n")
    ));
    let project = Project::open(dir.path()).unwrap();
    let tx_dir = dir.path().join(".papa-yu/tx");
    let manifest = |id: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(tx_dir.join(id).join("manifest.json")).unwrap())
            .unwrap()
    };
    let mut pending = None;
    let report = project
        .transaction(&plan)
        .options(ApplyOptions::default().on_progress(|p| {
            if p.stage == Stage::Writing && pending.is_none() {
                let id = std::fs::read_dir(&tx_dir)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().into_string().unwrap())
                    .find(|n| n.starts_with(|c: char| c.is_ascii_digit()))
                    .unwrap();
                pending = Some(manifest(&id));
            }
        }))
        .apply()
        .unwrap();
    let pending = pending.expect("progress was reported while writing");
    assert_eq!(pending["status"], "pending");
    let committed = manifest(&report.tx_id);
    assert_eq!(committed["status"], "committed");
    let entries = |m: &serde_json::Value| m["entries"].as_array().unwrap().clone();
    let mut written = 0;
    for (p, c) in entries(&pending).iter().zip(entries(&committed)) {
        let path = c["path"].as_str().unwrap();
        assert_eq!(p["path"], c["path"]);
        assert_eq!(p["before"], c["before"], "{path}");
        match c["after"]["type"].as_str().unwrap() {
            "file" => {
                written += 1;
                assert!(p.get("after").is_none(), "{path}: {p}");
                let on_disk = std::fs::read(dir.path().join(path)).unwrap();
                assert_eq!(c["after"]["sha256"], sha(&on_disk), "{path}");
            }
            _ => assert_eq!(p["after"], c["after"], "{path}"),
        }
    }
    assert_eq!(written, 2, "{committed}");
    // And undo (which checks every after-state first) takes it back without --force.
    project.undo(false).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\ntwo\n"
    );
}

/// Each `@@ -a,b +c,d @@` header of `diff` counts the lines of its hunk's body.
fn headers_count_their_lines(diff: &str) -> Result<(), String> {
    let mut lines = diff.lines().skip(2).peekable();
    while let Some(header) = lines.next() {
        let counts: Vec<usize> = header
            .trim_start_matches("@@ ")
            .trim_end_matches(" @@")
            .split(' ')
            .map(|r| r[1..].split(',').nth(1).map_or(1, |n| n.parse().unwrap()))
            .collect();
        let (mut old, mut new) = (0, 0);
        while let Some(l) = lines.next_if(|l| !l.starts_with("@@ ")) {
            match l.as_bytes().first() {
                Some(b'-') => old += 1,
                Some(b'+') => new += 1,
                Some(b'\\') => {}
                _ => (old, new) = (old + 1, new + 1),
            }
        }
        if counts != [old, new] {
            return Err(format!("{header} heads {old} old and {new} new lines"));
        }
    }
    Ok(())
}

#[test]
fn a_preview_diffs_hunk_headers_count_its_lines() {
    // similar 2.7's Myers gave this change a Delete and an Insert indexed on the wrong side of
    // the equal line, and the header read `@@ -1 +6,3 @@` for a 4-line and an 8-line side.
    let (old, new) = ("a\na\na\n\n", "\nb\n\n\n\n\n\n\n");
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("f.txt", old)]);
    let plan = plan(
        &format!(
            r#"{{"actions":[{{"kind":"UPDATE_FILE","path":"f.txt","content":{}}}],"summary":"s"}}"#,
            serde_json::to_string(new).unwrap()
        ),
        papayu_protocol::ProtocolVersion::V3,
    );
    let preview = Project::open(dir.path())
        .unwrap()
        .transaction(&plan)
        .preview()
        .unwrap();
    let diff = &preview.files[0].diff;
    assert!(preview.is_ok(), "{preview:?}");
    assert!(diff.contains("@@ -1,4 +1,8 @@"), "{diff}");
    headers_count_their_lines(diff).unwrap();
}
