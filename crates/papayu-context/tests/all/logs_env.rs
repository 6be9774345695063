//! `logs` and `env`.

use std::time::Duration;

use papayu_context::{ContextConfig, Project, ToolProbe};

use crate::common::{TempProject, hermetic_config};

fn with_logs(p: &TempProject, logs: &[(&str, &str)]) -> Project {
    let log_files = logs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Project::open(
        p.path(),
        ContextConfig {
            log_files,
            ..hermetic_config()
        },
    )
    .unwrap()
}

#[test]
fn check_source_serves_the_last_n_lines_of_the_given_output() {
    let p = TempProject::new(&[]);
    let project = p.project();
    let output: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    let b = project.logs("check", None, Some(&output));
    assert_eq!(b.header, "LOGS[check]:");
    assert_eq!(b.key, r#"logs{source="check",last_n=200}"#);
    assert!(b.body.starts_with("line 101\n"));
    assert!(b.body.ends_with("line 300"));
    assert_eq!(
        project.logs("check", Some(2), Some(&output)).body,
        "line 299\nline 300"
    );
    assert_eq!(
        project.logs("check", None, None).body,
        "[no check output has been recorded yet]"
    );
}

#[test]
fn named_log_files_are_read_and_confined() {
    let p = TempProject::new(&[
        ("logs/app.log", "a\nb\nc\n"),
        (".env", "K=v\n"),
        ("bin.log", ""),
    ]);
    p.write("bin.log", b"\xff\xfe\n");
    let project = with_logs(
        &p,
        &[
            ("app", "logs/app.log"),
            ("env", ".env"),
            ("up", "../x.log"),
            ("bin", "bin.log"),
            ("gone", "no.log"),
        ],
    );
    assert_eq!(
        project.logs("app", Some(2), None).render(),
        "LOGS[app]:\nb\nc"
    );
    assert!(project.logs("env", None, None).body.contains("protected"));
    assert!(
        project
            .logs("up", None, None)
            .body
            .starts_with("[refused: invalid path")
    );
    assert!(project.logs("bin", None, None).body.contains("not UTF-8"));
    assert_eq!(
        project.logs("gone", None, None).body,
        "[missing: no such file in the project]"
    );
    assert_eq!(
        project.logs("nope", None, None).body,
        "[unknown log source; available: check, app, bin, env, gone, up]"
    );
}

#[test]
fn big_log_files_are_read_from_their_tail() {
    let text: String = (1..=10_000).map(|i| format!("entry {i}\n")).collect();
    let p = TempProject::new(&[("big.log", &text)]);
    let log_files = [("big".to_owned(), "big.log".to_owned())]
        .into_iter()
        .collect();
    let project = Project::open(
        p.path(),
        ContextConfig {
            log_files,
            max_file_bytes: 1_000,
            ..hermetic_config()
        },
    )
    .unwrap();
    let b = project.logs("big", Some(3), None);
    assert_eq!(b.body, "entry 9998\nentry 9999\nentry 10000");
}

#[test]
fn env_block_lists_os_probes_and_package_manager() {
    let p = TempProject::new(&[("Cargo.lock", ""), ("package-lock.json", "{}")]);
    let probes = vec![
        ToolProbe::new("echo", "sh", &["-c", "echo 'tool 1.2.3'; echo second"]),
        ToolProbe::new("stderr", "sh", &["-c", "echo 'Python 3.8' >&2"]),
        ToolProbe::new("failing", "sh", &["-c", "exit 3"]),
        ToolProbe::new("absent", "papayu-no-such-tool-zz", &["--version"]),
    ];
    let project = Project::open(
        p.path(),
        ContextConfig {
            env_probes: probes,
            ..hermetic_config()
        },
    )
    .unwrap();
    let b = project.env();
    assert_eq!(b.key, "env");
    let body = b
        .body
        .replace(std::env::consts::OS, "<os>")
        .replace(std::env::consts::ARCH, "<arch>");
    insta::assert_snapshot!("env_block", format!("{}\n{body}", b.header));
}

#[test]
fn env_probes_time_out_and_run_concurrently() {
    let p = TempProject::new(&[]);
    let probes = (0..4)
        .map(|i| ToolProbe::new(&format!("slow{i}"), "sleep", &["5"]))
        .collect();
    let project = Project::open(
        p.path(),
        ContextConfig {
            env_probes: probes,
            env_probe_timeout: Duration::from_millis(300),
            ..hermetic_config()
        },
    )
    .unwrap();
    let start = std::time::Instant::now();
    let b = project.env();
    let elapsed = start.elapsed();
    assert_eq!(
        b.body.matches("timed out after 300 ms").count(),
        4,
        "{}",
        b.body
    );
    assert!(
        elapsed < Duration::from_millis(1_500),
        "probes ran one after another: {elapsed:?}"
    );
    assert!(
        b.body
            .ends_with("package_manager: unknown (no lockfile found)\nvirtualenv: none")
    );
}

#[test]
fn default_probes_are_the_spec_tools() {
    let names: Vec<String> = ToolProbe::defaults().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["rustc", "cargo", "python3", "node", "npm", "go"]);
}

#[test]
fn real_rustc_is_found() {
    // Every machine building this crate has rustc; the probe must see it.
    let p = TempProject::new(&[]);
    let probes = vec![ToolProbe::new("rustc", "rustc", &["--version"])];
    let project = Project::open(
        p.path(),
        ContextConfig {
            env_probes: probes,
            env_probe_timeout: Duration::from_secs(20),
            ..hermetic_config()
        },
    )
    .unwrap();
    let body = project.env().body;
    assert!(body.contains("rustc: rustc 1."), "{body}");
}
