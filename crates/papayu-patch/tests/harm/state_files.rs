//! State files that block, lie or alias: FIFOs, a lock committed to a repository, a hard link.

use std::path::Path;
use std::time::Duration;

use papayu_patch::{Project, read_state_file};

use crate::common::{v2, write_files};

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// Run `f` on another thread and fail if it has not returned within 20 s (it used to block on
/// a FIFO forever).
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what}: still blocked after 20 s"))
}

fn create(name: &str) -> papayu_validate::ValidatedPlan {
    v2(&format!(
        r#"{{"actions":[{{"kind":"CREATE_FILE","path":"{name}","content":"x\n"}}],"summary":"s"}}"#
    ))
}

#[test]
fn r_a_fifo_at_a_state_file_blocks_no_command() {
    for state in [".papa-yu/tx/stack.json", ".papa-yu/lock"] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        write_files(&root, &[("a.txt", "a\n")]);
        mkfifo(&root.join(state));
        let r = root.clone();
        let outcome = bounded(state, move || {
            let project = Project::open(&r).map_err(|e| e.to_string())?;
            project
                .transaction(&create("b.txt"))
                .apply()
                .map_err(|e| e.to_string())?;
            project.history().map_err(|e| e.to_string())?;
            project.undo(false).map_err(|e| e.to_string())?;
            Ok::<_, String>(())
        });
        // Both are papayu's own files: the stack is derived state and rebuilt, the lock note
        // is replaced; every command runs.
        assert_eq!(outcome, Ok(()), "{state}");
        assert!(!root.join("b.txt").exists(), "{state}: undone");
    }
}

#[test]
fn r_a_fifo_at_policy_or_project_json_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["policy.json", "project.json"] {
        let path = dir.path().join(".papa-yu").join(name);
        mkfifo(&path);
        let err = bounded(name, move || read_state_file(&path)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
        assert!(err.to_string().contains("not a regular file"), "{err}");
        assert!(
            err.to_string().contains(name),
            "the error names the file: {err}"
        );
    }
}

#[test]
fn read_state_file_reads_text_and_refuses_links_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[(".papa-yu/policy.json", "{}\n"), ("elsewhere.json", "x")],
    );
    assert_eq!(
        read_state_file(dir.path().join(".papa-yu/policy.json")).unwrap(),
        "{}\n"
    );
    let missing = read_state_file(dir.path().join(".papa-yu/project.json")).unwrap_err();
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere.json"),
        dir.path().join(".papa-yu/project.json"),
    )
    .unwrap();
    let link = read_state_file(dir.path().join(".papa-yu/project.json")).unwrap_err();
    assert_eq!(link.kind(), std::io::ErrorKind::InvalidInput, "{link}");
    assert!(link.to_string().contains("symbolic link"), "{link}");
    let not_file = read_state_file(dir.path().join(".papa-yu")).unwrap_err();
    assert_eq!(
        not_file.kind(),
        std::io::ErrorKind::InvalidInput,
        "{not_file}"
    );
}

#[test]
fn r_a_lock_committed_to_the_repository_means_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // pid 1 is alive on every machine: under the old pid-file lock this was a permanent
    // ERR_LOCKED.
    write_files(dir.path(), &[(".papa-yu/lock", "pid=1\nstart=0\n")]);
    let project = Project::open(dir.path()).unwrap();
    project.transaction(&create("a.txt")).apply().unwrap();
    assert!(dir.path().join("a.txt").exists());
    assert!(
        !dir.path().join(".papa-yu/lock").exists(),
        "the note is removed on release"
    );
}

#[test]
fn r_a_lock_note_hard_linked_to_a_user_file_keeps_the_users_bytes() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("src/main.rs", "fn main() {}\n")]);
    std::fs::create_dir_all(dir.path().join(".papa-yu")).unwrap();
    std::fs::hard_link(
        dir.path().join("src/main.rs"),
        dir.path().join(".papa-yu/lock"),
    )
    .unwrap();
    let project = Project::open(dir.path()).unwrap();
    project.transaction(&create("a.txt")).apply().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
}

#[test]
fn the_state_directory_papayu_creates_ignores_what_must_never_be_committed() {
    let dir = tempfile::tempdir().unwrap();
    Project::open(dir.path()).unwrap();
    let ignore = std::fs::read_to_string(dir.path().join(".papa-yu/.gitignore")).unwrap();
    let lines: Vec<&str> = ignore.lines().filter(|l| !l.starts_with('#')).collect();
    for state in [
        "/tx/",
        "/lock",
        "/state.json",
        "/traces/",
        "/logs/",
        "/conflicts/",
        "/displaced/",
    ] {
        assert!(lines.contains(&state), "{state} missing from {ignore}");
    }
    assert!(!ignore.contains("/project.json") && !ignore.contains("/policy.json"));
    // A `.papa-yu/` the user made (or committed) is theirs: papayu adds nothing to it.
    let other = tempfile::tempdir().unwrap();
    write_files(other.path(), &[(".papa-yu/policy.json", "{}\n")]);
    Project::open(other.path()).unwrap();
    assert!(!other.path().join(".papa-yu/.gitignore").exists());
}
