//! Engine errors print their stable code once, in front of a message that does not repeat it.

use crate::papayu;

#[test]
fn undo_with_nothing_to_undo_prints_the_code_once() {
    let dir = tempfile::tempdir().unwrap();
    let run = papayu(dir.path(), &["undo"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        "papayu: ERR_NOTHING_TO_UNDO: nothing to undo"
    );
}

#[test]
fn a_blocked_action_shows_its_code_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    std::fs::write(
        dir.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"new\n"}],"summary":"s"}"#,
    )
    .unwrap();
    let run = papayu(dir.path(), &["preview", "plan.json"]);
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    let blocked: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("BLOCKED"))
        .collect();
    assert_eq!(
        blocked,
        ["  BLOCKED ERR_FILE_EXISTS: action 0: `a.txt` already exists"],
        "{}",
        run.stdout
    );
}

#[test]
fn a_locked_project_shows_err_locked_once_in_front() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".papa-yu")).unwrap();
    // A live holder: this test process, holding the lock as papayu does (an flock on
    // `.papa-yu/`, and the note naming it).
    let held = std::fs::File::open(dir.path().join(".papa-yu")).unwrap();
    #[allow(unsafe_code)]
    // SAFETY: `held` is an open descriptor for the whole call; flock takes no pointers.
    let rc = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&held),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    std::fs::write(
        dir.path().join(".papa-yu/lock"),
        format!("pid={}\nstart=0\n", std::process::id()),
    )
    .unwrap();
    let run = papayu(dir.path(), &["history"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let line = run.stderr.trim_end();
    assert!(
        line.starts_with("papayu: error: ERR_LOCKED: cannot open project "),
        "{line}"
    );
    assert_eq!(line.matches("ERR_LOCKED").count(), 1, "{line}");
    assert!(line.contains("another papayu"), "{line}");
}

#[test]
fn undo_force_says_where_the_users_version_went() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"b\n"}],"summary":"s"}"#,
    )
    .unwrap();
    let applied = papayu(
        dir.path(),
        &["apply-plan", "--yes", "--no-check", "plan.json"],
    );
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    std::fs::write(dir.path().join("b.txt"), "mine\n").unwrap();
    let refused = papayu(dir.path(), &["undo"]);
    assert_eq!(refused.code, 4, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("ERR_UNDO_CONFLICT"),
        "{}",
        refused.stderr
    );
    let forced = papayu(dir.path(), &["undo", "--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    let line = forced
        .stdout
        .lines()
        .find(|l| l.contains(".papa-yu/displaced/"))
        .unwrap_or_else(|| panic!("{}", forced.stdout));
    assert!(line.contains("`b.txt`"), "{line}");
    let saved = line.rsplit('`').nth(1).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(saved)).unwrap(),
        "mine\n"
    );
    assert!(!dir.path().join("b.txt").exists());
}

/// `report --since` takes humantime spans, never months or years (their length varies).
#[test]
fn report_since_takes_spans_and_refuses_calendar_units() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for ok in ["90m", "2h 30m", "7d", "1w"] {
        let run = crate::hermetic(dir.path(), home.path(), &[], &["report", "--since", ok]);
        assert_eq!(run.code, 0, "{ok}: {}", run.stderr);
    }
    for bad in ["7y", "1M", "soon"] {
        let run = crate::hermetic(dir.path(), home.path(), &[], &["report", "--since", bad]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "--since {bad:?}: use e.g. 30m, 12h, 7d or 2h 30m (months and years are refused"
            )),
            "{bad}: {}",
            run.stderr
        );
    }
}
