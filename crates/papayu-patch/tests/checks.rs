//! Check commands (SPEC §5.5): failure rolls back, timeouts kill, output is kept.

use std::time::{Duration, Instant};

use papayu_patch::{ApplyOptions, CHECK_LOG, Checks, Project};
use papayu_protocol::ErrorCode;

use crate::common::{tree, v2, write_files};

fn plan() -> papayu_validate::ValidatedPlan {
    v2(
        r#"{"actions":[{"kind":"CREATE_FILE","path":"src/new.txt","content":"new\n"}],"summary":"s"}"#,
    )
}

#[test]
fn failing_check_rolls_back_with_err_check_failed_and_the_output() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n")]);
    let before = tree(dir.path());
    let project = Project::open(dir.path()).unwrap();
    let cmd = "test -f src/new.txt && echo saw-the-new-file && echo 'ошибка' >&2 && exit 3";
    let err = project
        .transaction(&plan())
        .options(ApplyOptions::default().checks(Checks::Commands(vec![cmd.to_owned()])))
        .apply()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CheckFailed);
    let msg = err.to_string();
    assert!(
        msg.contains("saw-the-new-file") && msg.contains("ошибка") && msg.contains("exited with 3"),
        "{msg}"
    );
    assert_eq!(tree(dir.path()), before);
    let log = std::fs::read_to_string(dir.path().join(CHECK_LOG)).unwrap();
    assert!(log.contains("saw-the-new-file"), "{log}");
}

#[test]
fn passing_checks_commit_and_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let project = Project::open(dir.path()).unwrap();
    let report = project
        .transaction(&plan())
        .options(ApplyOptions::default().checks(Checks::Commands(vec![
            "cat src/new.txt".into(),
            "true".into(),
        ])))
        .apply()
        .unwrap();
    assert_eq!(report.checks.len(), 2);
    assert!(report.checks.iter().all(|c| c.success));
    assert_eq!(report.checks[0].output, "new\n");
    assert!(dir.path().join("src/new.txt").exists());
}

#[test]
fn a_check_that_hangs_is_killed_with_its_children_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let project = Project::open(dir.path()).unwrap();
    let started = Instant::now();
    let err = project
        .transaction(&plan())
        .options(
            ApplyOptions::default()
                .checks(Checks::Commands(vec![
                    "echo started; sleep 30 & sleep 30".into(),
                ]))
                .check_timeout(Duration::from_millis(300)),
        )
        .apply()
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not killed: {:?}",
        started.elapsed()
    );
    assert_eq!(err.code(), ErrorCode::CheckFailed);
    assert!(err.to_string().contains("timed out"), "{err}");
    assert!(err.to_string().contains("started"), "{err}");
    assert!(!dir.path().join("src/new.txt").exists());
}

#[test]
fn detection_picks_commands_from_the_project() {
    let dir = tempfile::tempdir().unwrap();
    // A package.json whose build script fails: detection must run it and roll back.
    write_files(
        dir.path(),
        &[("package.json", r#"{"scripts":{"build":"exit 1"}}"#)],
    );
    let project = Project::open(dir.path()).unwrap();
    let has_npm = std::process::Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let result = project
        .transaction(&plan())
        .options(ApplyOptions::default().checks(Checks::Detect))
        .apply();
    if has_npm {
        let err = result.unwrap_err();
        assert_eq!(err.code(), ErrorCode::CheckFailed);
        assert!(err.to_string().contains("npm run -s build"), "{err}");
    } else {
        assert_eq!(
            result.unwrap_err().code(),
            ErrorCode::CheckFailed,
            "a missing npm is a failed check"
        );
    }
}

#[test]
fn cancelling_while_a_check_runs_kills_it_and_rolls_back_with_err_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n")]);
    let before = tree(dir.path());
    let project = Project::open(dir.path()).unwrap();
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let setter = flag.clone();
    // The check proves the new file is on disk, then waits to be cancelled.
    let cmd = "test -f src/new.txt && sleep 30";
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        setter.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let started = Instant::now();
    let err = project
        .transaction(&plan())
        .options(
            ApplyOptions::default()
                .checks(Checks::Commands(vec![cmd.to_owned()]))
                .cancel_flag(flag),
        )
        .apply()
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(err.code(), ErrorCode::Cancelled, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the check was not killed: {:?}",
        started.elapsed()
    );
    assert_eq!(tree(dir.path()), before);
}

#[test]
fn a_cancel_flag_set_before_apply_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("a.txt", "a\n")]);
    let before = tree(dir.path());
    let project = Project::open(dir.path()).unwrap();
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let err = project
        .transaction(&plan())
        .options(ApplyOptions::default().cancel_flag(flag))
        .apply()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Cancelled);
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert_eq!(tree(dir.path()), before);
    // A later apply without the flag works: the cancelled one left no lock or journal behind.
    project.transaction(&plan()).apply().unwrap();
    assert!(dir.path().join("src/new.txt").exists());
}
