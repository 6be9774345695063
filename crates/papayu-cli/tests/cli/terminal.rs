//! Output for people: colour as `--color` and NO_COLOR / CLICOLOR_FORCE say, the grouped help,
//! shell completions.

use crate::{papayu, papayu_env};

/// A project with `a.txt` and a plan that creates `b.txt` (a diff) and `a.txt` (blocked).
fn diff_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    std::fs::write(
        dir.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"one\ntwo\n"},{"kind":"CREATE_FILE","path":"a.txt","content":"x\n"}],"summary":"s"}"#,
    )
    .unwrap();
    dir
}

fn coloured(env: &[(&str, &str)], extra: &[&str]) -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plan.json"),
        r#"{"actions":[{"kind":"CREATE_FILE","path":"b.txt","content":"new\n"}],"summary":"s"}"#,
    )
    .unwrap();
    let mut args = extra.to_vec();
    args.extend(["preview", "plan.json"]);
    let run = papayu_env(dir.path(), env, &args);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("+new"), "{}", run.stdout);
    run.stdout.contains('\x1b')
}

#[test]
fn colour_follows_the_flag_and_the_environment() {
    // A pipe is plain by default, CLICOLOR_FORCE colours it, NO_COLOR wins over that.
    assert!(!coloured(&[], &[]));
    assert!(coloured(&[("CLICOLOR_FORCE", "1")], &[]));
    assert!(!coloured(
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
        &[]
    ));
    // The flag decides over both.
    assert!(coloured(&[("NO_COLOR", "1")], &["--color", "always"]));
    assert!(coloured(&[], &["--color=always"]));
    assert!(!coloured(&[("CLICOLOR_FORCE", "1")], &["--color", "never"]));
}

#[test]
fn a_coloured_diff_has_the_same_text() {
    let dir = diff_project();
    let plain = papayu(dir.path(), &["preview", "plan.json"]);
    let colour = papayu(dir.path(), &["--color", "always", "preview", "plan.json"]);
    assert_eq!(plain.code, colour.code);
    assert_ne!(plain.stdout, colour.stdout);
    let stripped: String = strip_ansi(&colour.stdout);
    assert_eq!(stripped, plain.stdout);
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn help_lists_the_commands_in_groups_and_the_global_flags_once() {
    let dir = tempfile::tempdir().unwrap();
    let run = papayu(dir.path(), &["--help"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let groups = [
        "Plan and apply:",
        "Plan files:",
        "History:",
        "Context and traces:",
        "Setup:",
    ];
    let mut at = 0;
    for g in groups {
        let found = run.stdout[at..].find(g);
        assert!(found.is_some(), "{g} after byte {at}:\n{}", run.stdout);
        at += found.unwrap_or(0);
    }
    assert_eq!(run.stdout.matches("--json").count(), 1, "{}", run.stdout);

    let sub = papayu(dir.path(), &["undo", "--help"]);
    assert_eq!(sub.code, 0, "{}", sub.stderr);
    assert!(sub.stdout.contains("--force"), "{}", sub.stdout);
    let listed = |flag: &str| sub.stdout.lines().any(|l| l.trim_start().starts_with(flag));
    assert!(listed("--force"), "{}", sub.stdout);
    assert!(!listed("--model-path"), "{}", sub.stdout);
    assert!(!listed("--json"), "{}", sub.stdout);
    assert!(sub.stdout.contains("Global options"), "{}", sub.stdout);
}

#[test]
fn completions_are_a_script_for_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let bash = papayu(dir.path(), &["completions", "bash"]);
    assert_eq!(bash.code, 0, "{}", bash.stderr);
    assert!(bash.stdout.contains("complete -F"), "{}", bash.stdout);
    assert!(bash.stdout.contains("apply-plan"), "{}", bash.stdout);
    let fish = papayu(dir.path(), &["completions", "fish"]);
    assert!(
        fish.stdout.contains("complete -c papayu"),
        "{}",
        fish.stdout
    );
    let bad = papayu(dir.path(), &["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}
