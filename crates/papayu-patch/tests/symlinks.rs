//! Nothing is ever written outside the root, whatever symlinks the project holds.

use std::os::unix::fs::symlink;
use std::path::Path;

use papayu_patch::Project;
use papayu_protocol::{ErrorCode, ProtocolVersion};

use crate::common::{plan, sha, tree, v2, write_files};

struct Setup {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    write_files(
        &outside,
        &[("sentinel.txt", "do not touch\n"), ("secret.txt", "s\n")],
    );
    Setup {
        _tmp: tmp,
        root,
        outside,
    }
}

fn assert_outside_untouched(outside: &Path) {
    let t = tree(outside);
    assert_eq!(t.len(), 2, "something appeared outside the root: {t:?}");
    assert_eq!(
        std::fs::read_to_string(outside.join("sentinel.txt")).unwrap(),
        "do not touch\n"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "s\n"
    );
}

#[test]
fn r_symlinked_directory_pointing_outside() {
    let s = setup();
    symlink(&s.outside, s.root.join("linkdir")).unwrap();
    for json in [
        r#"{"actions":[{"kind":"CREATE_FILE","path":"linkdir/evil.txt","content":"x"}],"summary":"s"}"#,
        r#"{"actions":[{"kind":"CREATE_DIR","path":"linkdir/sub"}],"summary":"s"}"#,
        r#"{"actions":[{"kind":"DELETE_FILE","path":"linkdir/sentinel.txt"}],"summary":"s"}"#,
        r#"{"actions":[{"kind":"DELETE_DIR","path":"linkdir"}],"summary":"s"}"#,
    ] {
        let p = v2(json);
        let project = Project::open(&s.root).unwrap();
        let preview = project.transaction(&p).preview().unwrap();
        assert_eq!(preview.summary.blocked, 1, "{json}");
        let err = project.transaction(&p).apply().unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathEscapesRoot, "{json}: {err}");
        assert_outside_untouched(&s.outside);
    }
    let p = v2(&format!(
        r#"{{"actions":[{{"kind":"PATCH_FILE","path":"linkdir/secret.txt","base_sha256":"{}","patch":"@@ -1 +1 @@\n-s\n+x\n"}}],"summary":"s"}}"#,
        sha(b"s\n")
    ));
    let err = Project::open(&s.root)
        .unwrap()
        .transaction(&p)
        .apply()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathEscapesRoot);
    assert_outside_untouched(&s.outside);
}

#[test]
fn r_symlinked_file() {
    let s = setup();
    symlink(s.outside.join("secret.txt"), s.root.join("config.txt")).unwrap();
    for (json, version) in [
        (
            format!(
                r#"{{"actions":[{{"kind":"PATCH_FILE","path":"config.txt","base_sha256":"{}","patch":"@@ -1 +1 @@\n-s\n+x\n"}}],"summary":"s"}}"#,
                sha(b"s\n")
            ),
            ProtocolVersion::V2,
        ),
        (r#"{"actions":[{"kind":"UPDATE_FILE","path":"config.txt","content":"x"}],"summary":"s"}"#.to_owned(), ProtocolVersion::V3),
        (r#"{"actions":[{"kind":"CREATE_FILE","path":"config.txt","content":"x"}],"summary":"s"}"#.to_owned(), ProtocolVersion::V1),
        (r#"{"actions":[{"kind":"DELETE_FILE","path":"config.txt"}],"summary":"s"}"#.to_owned(), ProtocolVersion::V2),
    ] {
        let p = plan(&json, version);
        let err = Project::open(&s.root).unwrap().transaction(&p).apply().unwrap_err();
        assert_eq!(err.code(), ErrorCode::PathEscapesRoot, "{json}: {err}");
        assert_outside_untouched(&s.outside);
        assert!(std::fs::symlink_metadata(s.root.join("config.txt")).unwrap().file_type().is_symlink());
    }
}

#[test]
fn r_symlink_swapped_in_between_preview_and_apply() {
    let s = setup();
    std::fs::create_dir_all(s.root.join("sub")).unwrap();
    let p = v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"sub/new.txt","content":"x"},{"kind":"CREATE_FILE","path":"sub/deeper/a.txt","content":"y"}],"summary":"s"}"#,
    );
    let project = Project::open(&s.root).unwrap();
    assert!(project.transaction(&p).preview().unwrap().is_ok());
    // The attacker swaps the directory for a symlink after the user reviewed the preview.
    std::fs::remove_dir(s.root.join("sub")).unwrap();
    symlink(&s.outside, s.root.join("sub")).unwrap();
    let err = project.transaction(&p).apply().unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathEscapesRoot);
    assert_outside_untouched(&s.outside);
}

#[test]
fn r_symlink_inside_a_deleted_directory_is_removed_not_followed_and_restored_by_undo() {
    let s = setup();
    write_files(&s.root, &[("old/a.txt", "a\n")]);
    symlink(&s.outside, s.root.join("old/escape")).unwrap();
    let before = tree(&s.root);
    let p = v2(r#"{"actions":[{"kind":"DELETE_DIR","path":"old"}],"summary":"s"}"#);
    let project = Project::open(&s.root).unwrap();
    project.transaction(&p).apply().unwrap();
    assert!(!s.root.join("old").exists());
    assert_outside_untouched(&s.outside);
    project.undo(false).unwrap();
    assert_eq!(tree(&s.root), before);
    assert_outside_untouched(&s.outside);
}

#[test]
fn r_papa_yu_state_dir_as_symlink_is_refused() {
    let s = setup();
    symlink(&s.outside, s.root.join(".papa-yu")).unwrap();
    let err = Project::open(&s.root).unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathEscapesRoot, "{err}");
    assert_outside_untouched(&s.outside);
}
