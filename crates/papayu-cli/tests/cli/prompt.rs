//! The y/N confirmation (`session::confirm`): dialoguer's prompt on a terminal, one line read
//! from a pipe; the same question, the same default (no).

use std::io::{ErrorKind, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use expectrl::Expect;
use expectrl::process::unix::WaitStatus;

const QUESTION: &str = "Apply these changes? [y/N]";

/// A project directory and a plan creating `a.txt` in it, outside the project.
fn project() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let plans = tempfile::tempdir().unwrap();
    std::fs::write(
        plans.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"a.txt","content":"a\n"}],"summary":"s"}"#,
    )
    .unwrap();
    (dir, plans)
}

fn apply_plan(dir: &Path, plans: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_papayu"));
    cmd.args(["apply-plan", "--no-check"])
        .arg(plans.join("plan.json"))
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", plans.join("config"))
        .env("TERM", "dumb")
        .env_remove("NO_COLOR");
    cmd
}

/// `papayu apply-plan` on a pseudo-terminal, answered with `keys` once it asks; its exit code
/// and everything it printed.
fn on_a_terminal(keys: &str) -> (i32, String, bool) {
    on_a_terminal_in(None, QUESTION, keys)
}

/// [`on_a_terminal`] with `PAPAYU_LANG=lang`, answering once `question` shows.
fn on_a_terminal_in(lang: Option<&str>, question: &str, keys: &str) -> (i32, String, bool) {
    let (dir, plans) = project();
    let mut cmd = apply_plan(dir.path(), plans.path());
    if let Some(lang) = lang {
        cmd.env("PAPAYU_LANG", lang);
    }
    let mut session = expectrl::Session::spawn(cmd).unwrap();
    let mut transcript = Vec::new();
    let mut buf = [0u8; 4096];
    let mut answered = false;
    let started = Instant::now();
    loop {
        let text = String::from_utf8_lossy(&transcript).into_owned();
        if !answered && text.contains(question) {
            session.send(keys).unwrap();
            answered = true;
        }
        match session.try_read(&mut buf) {
            Ok(0) => {}
            Ok(n) => {
                transcript.extend_from_slice(&buf[..n]);
                continue;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            // EIO: the child closed the terminal.
            Err(_) => {}
        }
        match session.get_process().status() {
            Ok(WaitStatus::StillAlive) => {}
            Ok(WaitStatus::Exited(_, code)) => {
                while let Ok(n) = session.try_read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    transcript.extend_from_slice(&buf[..n]);
                }
                let text = String::from_utf8_lossy(&transcript).into_owned();
                return (code, text, dir.path().join("a.txt").exists());
            }
            other => panic!("papayu: {other:?}; transcript:\n{text}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "papayu did not finish; transcript:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn on_a_terminal_y_then_enter_applies() {
    let (code, text, applied) = on_a_terminal("y\r");
    assert_eq!(code, 0, "{text}");
    assert!(applied, "{text}");
    assert!(text.contains("Apply these changes? yes"), "{text}");
}

#[test]
fn on_a_terminal_enter_alone_is_no() {
    let (code, text, applied) = on_a_terminal("\r");
    assert_eq!(code, 1, "{text}");
    assert!(!applied, "{text}");
    assert!(text.contains("Apply these changes? no"), "{text}");
    assert!(text.contains("cancelled; nothing was changed"), "{text}");
}

/// A script pipes its answer: the same question on stderr, one line read.
#[test]
fn a_piped_y_applies_and_anything_else_declines() {
    for (answer, applied) in [("y\n", true), ("yes\n", true), ("n\n", false), ("", false)] {
        let (stderr, success, written) = piped(None, answer);
        assert!(stderr.contains(QUESTION), "{answer:?}: {stderr}");
        assert_eq!(success, applied, "{answer:?}: {stderr}");
        assert_eq!(written, applied, "{answer:?}");
    }
}

/// `papayu apply-plan` (with `PAPAYU_LANG=lang`) answered `answer` through a pipe: its stderr,
/// whether it succeeded, whether the file was written.
fn piped(lang: Option<&str>, answer: &str) -> (String, bool, bool) {
    let (dir, plans) = project();
    let mut cmd = apply_plan(dir.path(), plans.path());
    if let Some(lang) = lang {
        cmd.env("PAPAYU_LANG", lang);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (
        stderr,
        out.status.success(),
        dir.path().join("a.txt").exists(),
    )
}

/// In Russian the terminal prompt shows `[д/Н]` and takes `д` (a line), Enter alone is no.
#[test]
fn on_a_russian_terminal_d_applies_and_enter_alone_is_no() {
    let (code, text, applied) = on_a_terminal_in(Some("ru"), "[д/Н]", "д\r");
    assert_eq!(code, 0, "{text}");
    assert!(applied, "{text}");
    assert!(text.contains("Применить эт"), "{text}");
    assert!(!text.contains("[y/N]"), "{text}");
    let (code, text, applied) = on_a_terminal_in(Some("ru"), "[д/Н]", "\r");
    assert_eq!(code, 1, "{text}");
    assert!(!applied, "{text}");
    assert!(text.contains("отменено; ничего не изменено"), "{text}");
}

/// A script piping its answer to the Russian prompt sees `[д/Н]` and may answer `д` or `да`.
#[test]
fn a_piped_d_applies_under_the_russian_prompt() {
    for (answer, applied) in [("д\n", true), ("да\n", true), ("y\n", true), ("н\n", false)] {
        let (stderr, success, written) = piped(Some("ru"), answer);
        assert!(stderr.contains("? [д/Н] "), "{answer:?}: {stderr}");
        assert_eq!(success, applied, "{answer:?}: {stderr}");
        assert_eq!(written, applied, "{answer:?}");
    }
}
