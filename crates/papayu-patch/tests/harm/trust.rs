//! Recovery, undo and history act only on journals this user's papayu wrote: a journal that
//! came with a repository (or from another user, or naming a path papayu never writes) is
//! reported and left alone — never replayed.

use std::path::Path;

use papayu_patch::{ApplyOptions, Checks, JournalKey, Project};
use papayu_protocol::ErrorCode;

use crate::common::{sha, tree, v2, write_files};

/// A pending journal as a malicious repository would ship it: restore a git hook (mode 0755)
/// and delete `victim.txt`.
fn plant_journal(root: &Path, id: &str, format: u32, mac: Option<&str>) {
    let hook = b"#!/bin/sh\necho pwned\n";
    let dir = root.join(".papa-yu/tx").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("orig.bin"), hook).unwrap();
    let mut m = serde_json::json!({"format": format, "id": id, "seq": 1, "kind": "apply",
        "status": "pending", "created_unix_ms": 0, "actions": [],
        "entries": [
            {"path": ".git/hooks/pre-commit", "before": {"type": "file", "sha256": sha(hook),
              "mode": 0o755, "copy": [0, hook.len()]}, "after": {"type": "absent"}},
            {"path": "victim.txt", "before": {"type": "absent"},
              "after": {"type": "file", "sha256": sha(b"mine\n")}}]});
    if let Some(mac) = mac {
        m["mac"] = mac.into();
    }
    std::fs::write(dir.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
}

#[test]
fn r_a_journal_that_came_with_the_repository_is_never_replayed() {
    for (format, mac) in [(1, None), (2, None), (2, Some(&"00".repeat(32)[..]))] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_files(
            root,
            &[
                (".git/HEAD", "ref: refs/heads/main\n"),
                ("victim.txt", "mine\n"),
            ],
        );
        let id = "0000000001-deadbeef";
        plant_journal(root, id, format, mac);
        // Any command: history runs recovery first.
        Project::open(root).unwrap().history().unwrap();
        assert!(
            !root.join(".git/hooks/pre-commit").exists(),
            "format {format}: hook written"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("victim.txt")).unwrap(),
            "mine\n"
        );
        let report = papayu_patch::recover(root).unwrap();
        assert_eq!(report.left_alone.len(), 1, "{report:?}");
        let left = &report.left_alone[0];
        assert_eq!(left.dir, format!(".papa-yu/tx/{id}"));
        assert!(
            root.join(&left.dir).join("manifest.json").exists(),
            "left as it was"
        );
        if format == 2 {
            assert!(
                left.reason.contains("not written by papayu"),
                "{}",
                left.reason
            );
            assert!(
                left.reason.contains("delete the directory"),
                "{}",
                left.reason
            );
        }
        // And papayu keeps working beside it.
        let project = Project::open(root).unwrap();
        let plan = v2(
            r#"{"actions":[{"kind":"CREATE_FILE","path":"n.txt","content":"n\n"}],"summary":"s"}"#,
        );
        project.transaction(&plan).apply().unwrap();
        project.undo(false).unwrap();
        assert!(!root.join("n.txt").exists());
    }
}

#[test]
fn r_a_journal_written_with_another_users_key_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("p");
    write_files(&root, &[("a.txt", "a\n")]);
    let before = tree(&root);
    let mine = JournalKey::generate().unwrap();
    let theirs = JournalKey::generate().unwrap();
    // A pending journal of `theirs`, as a crash during the check leaves it: copied while the
    // check runs, put back after the rollback.
    let saved = tmp.path().join("saved");
    let plan = v2(&format!(
        r#"{{"actions":[{{"kind":"PATCH_FILE","path":"a.txt","base_sha256":"{}","patch":"@@ -1 +1 @@\n-a\n+A\n"}}],"summary":"s"}}"#,
        sha(b"a\n")
    ));
    let copy = format!(
        "cp -a .papa-yu/tx '{}' && cp a.txt '{}/a.after'; exit 1",
        saved.display(),
        saved.display()
    );
    Project::open_with_key(&root, theirs.clone())
        .unwrap()
        .transaction(&plan)
        .options(ApplyOptions::default().checks(Checks::Commands(vec![copy])))
        .apply()
        .unwrap_err();
    let crashed = |root: &Path| {
        let _ = std::fs::remove_dir_all(root.join(".papa-yu/tx"));
        let status = std::process::Command::new("cp")
            .args(["-a"])
            .arg(&saved)
            .arg(root.join(".papa-yu/tx"))
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::rename(root.join(".papa-yu/tx/a.after"), root.join("a.txt")).unwrap();
    };
    crashed(&root);
    let report = papayu_patch::recover_with_key(&root, &mine).unwrap();
    assert_eq!(report.left_alone.len(), 1, "{report:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "A\n",
        "untouched"
    );
    // The user it belongs to recovers it.
    let report = papayu_patch::recover_with_key(&root, &theirs).unwrap();
    assert_eq!(report.rolled_back.len(), 1, "{report:?}");
    assert_eq!(tree(&root), before);
}

#[test]
fn r_undo_never_replays_a_committed_journal_it_cannot_prove() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("p");
    write_files(&root, &[("a.txt", "a\n")]);
    let theirs = JournalKey::generate().unwrap();
    let plan =
        v2(r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"b\n"}],"summary":"s"}"#);
    Project::open_with_key(&root, theirs)
        .unwrap()
        .transaction(&plan)
        .apply()
        .unwrap();
    // The project (journal and stack included) arrives on another user's machine.
    let mine = Project::open_with_key(&root, JournalKey::generate().unwrap()).unwrap();
    let err = mine.undo(false).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Io, "{err}");
    assert!(err.to_string().contains("not written by papayu"), "{err}");
    assert!(root.join("b.txt").exists(), "nothing undone");
}

#[test]
fn the_journal_key_file_is_created_once_private_and_shared() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("config/papayu/journal.key");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || JournalKey::load_or_create(&path).unwrap())
        })
        .collect();
    let keys: Vec<JournalKey> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    // The same key for everyone: a journal one wrote is proven by the others.
    let root = tmp.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    let plan =
        v2(r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"b\n"}],"summary":"s"}"#);
    Project::open_with_key(&root, keys[0].clone())
        .unwrap()
        .transaction(&plan)
        .apply()
        .unwrap();
    Project::open_with_key(&root, keys[3].clone())
        .unwrap()
        .undo(false)
        .unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
    assert!(
        format!("{:?}", keys[0]).contains(".."),
        "the key is never printed"
    );
}
