//! Which tools the `env` block probes (the project's languages) and what it remembers of their
//! versions between runs.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use papayu_context::{ContextConfig, Language, Project, ToolProbe};

use crate::common::{TempProject, hermetic_config};

/// Files of a project, and the languages it should show.
type LanguageCase<'a> = (&'a [(&'a str, &'a str)], &'a [Language]);

#[test]
fn languages_come_from_root_markers_and_file_extensions() {
    let cases: &[LanguageCase<'_>] = &[
        (&[("pyproject.toml", "")], &[Language::Python]),
        (&[("Cargo.toml", ""), ("src/lib.rs", "")], &[Language::Rust]),
        (&[("package.json", "{}")], &[Language::Node]),
        (&[("go.mod", "module x\n")], &[Language::Go]),
        // No manifest: the files tell.
        (
            &[("calc.py", ""), ("test_calc.py", "")],
            &[Language::Python],
        ),
        (&[("web/app/main.ts", "")], &[Language::Node]),
        // A Python project with a front end in a subdirectory uses both.
        (
            &[("requirements.txt", ""), ("web/index.js", "")],
            &[Language::Python, Language::Node],
        ),
        (&[("README.md", ""), ("notes.txt", "")], &[]),
    ];
    for (files, want) in cases {
        let p = TempProject::new(files);
        let mut got = p.project().languages();
        let mut want = want.to_vec();
        got.sort_by_key(|l| format!("{l:?}"));
        want.sort_by_key(|l| format!("{l:?}"));
        assert_eq!(got, want, "{files:?}");
    }
}

#[test]
fn ignored_and_too_deep_files_do_not_count() {
    let p = TempProject::new(&[
        ("main.py", ""),
        (".gitignore", "node_modules/\n"),
        ("node_modules/left-pad/index.js", ""),
        ("a/b/c/d/e/deep.go", ""),
    ]);
    assert_eq!(p.project().languages(), [Language::Python]);
}

#[test]
fn default_probes_are_tied_to_their_languages() {
    let tied: Vec<(String, Option<Language>)> = ToolProbe::defaults()
        .into_iter()
        .map(|p| (p.name, p.language))
        .collect();
    assert_eq!(
        tied,
        [
            ("rustc".to_owned(), Some(Language::Rust)),
            ("cargo".to_owned(), Some(Language::Rust)),
            ("python3".to_owned(), Some(Language::Python)),
            ("node".to_owned(), Some(Language::Node)),
            ("npm".to_owned(), Some(Language::Node)),
            ("go".to_owned(), Some(Language::Go)),
        ]
    );
}

/// A directory of fake tools: each prints a version and counts its runs in `<name>.runs`.
struct Tools {
    dir: tempfile::TempDir,
}

impl Tools {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A tool `name` answering `answer` (a shell command) that counts its runs.
    fn add(&self, sub: &str, name: &str, answer: &str) -> PathBuf {
        let dir = self.dir.path().join(sub);
        fs_err::create_dir_all(&dir).unwrap();
        let runs = self.dir.path().join(format!("{name}.runs"));
        let exe = dir.join(name);
        fs_err::write(
            &exe,
            format!("#!/bin/sh\necho run >> '{}'\n{answer}\n", runs.display()),
        )
        .unwrap();
        fs_err::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    fn runs(&self, name: &str) -> usize {
        fs_err::read_to_string(self.dir.path().join(format!("{name}.runs")))
            .map_or(0, |s| s.lines().count())
    }

    fn search_path(&self, subs: &[&str]) -> OsString {
        std::env::join_paths(subs.iter().map(|s| self.dir.path().join(s))).unwrap()
    }

    fn memory(&self) -> PathBuf {
        self.dir.path().join("cache/papayu/tool-versions.json")
    }
}

fn remembering(p: &TempProject, tools: &Tools, subs: &[&str], probes: &[&str]) -> Project {
    Project::open(
        p.path(),
        ContextConfig {
            env_probes: probes
                .iter()
                .map(|n| ToolProbe::new(n, n, &["--version"]))
                .collect(),
            env_probe_memory: Some(tools.memory()),
            tool_search_path: Some(tools.search_path(subs)),
            env_probe_timeout: Duration::from_secs(10),
            ..hermetic_config()
        },
    )
    .unwrap()
}

fn touch(path: &Path, when: SystemTime) {
    fs_err::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn a_python_project_is_not_kept_waiting_for_other_languages_tools() {
    let tools = Tools::new();
    for name in ["python3", "npm", "go", "cargo"] {
        tools.add("bin", name, &format!("echo '{name} 1.0'"));
    }
    let p = TempProject::new(&[("calc.py", "")]);
    let project = Project::open(
        p.path(),
        ContextConfig {
            env_probes: ["python3", "npm", "go", "cargo"]
                .iter()
                .zip([
                    Language::Python,
                    Language::Node,
                    Language::Go,
                    Language::Rust,
                ])
                .map(|(n, l)| {
                    ToolProbe::new(
                        n,
                        tools.dir.path().join("bin").join(n).to_str().unwrap(),
                        &[],
                    )
                    .for_language(l)
                })
                .collect(),
            ..hermetic_config()
        },
    )
    .unwrap();
    let body = project.env().body;
    assert!(body.contains("python3: python3 1.0\n"), "{body}");
    assert!(
        body.contains("not probed: npm, go, cargo (the project shows none of their files)\n"),
        "{body}"
    );
    assert_eq!(tools.runs("python3"), 1);
    for other in ["npm", "go", "cargo"] {
        assert_eq!(tools.runs(other), 0, "{other} ran: {body}");
    }

    // A project that shows no language at all gets every probe.
    let bare = TempProject::new(&[("README.md", "")]);
    let project = Project::open(
        bare.path(),
        ContextConfig {
            env_probes: project_probes(&tools),
            ..hermetic_config()
        },
    )
    .unwrap();
    let body = project.env().body;
    assert!(!body.contains("not probed"), "{body}");
    assert_eq!(tools.runs("npm"), 1, "{body}");
}

fn project_probes(tools: &Tools) -> Vec<ToolProbe> {
    [("python3", Language::Python), ("npm", Language::Node)]
        .iter()
        .map(|(n, l)| {
            ToolProbe::new(
                n,
                tools.dir.path().join("bin").join(n).to_str().unwrap(),
                &[],
            )
            .for_language(*l)
        })
        .collect()
}

#[test]
fn versions_are_remembered_per_executable_until_it_changes() {
    let tools = Tools::new();
    let exe = tools.add("bin", "tool", "echo 'tool 1.2.3'");
    let p = TempProject::new(&[]);

    let first = remembering(&p, &tools, &["bin"], &["tool"]).env().body;
    assert!(first.contains("tool: tool 1.2.3\n"), "{first}");
    assert_eq!(tools.runs("tool"), 1);
    assert!(fs_err::metadata(tools.memory()).unwrap().is_file());

    // A second run, even from another process's view of a fresh Project, asks nothing.
    let other = TempProject::new(&[]);
    let second = remembering(&other, &tools, &["bin"], &["tool"]).env().body;
    assert_eq!(
        second,
        first.replace(p.path().as_str(), other.path().as_str())
    );
    assert_eq!(tools.runs("tool"), 1, "the remembered version was not used");

    // The executable changes (an upgrade): asked again, and the new answer shown.
    fs_err::write(
        &exe,
        format!(
            "#!/bin/sh\necho run >> '{}'\necho 'tool 2.0.0'\n",
            tools.dir.path().join("tool.runs").display()
        ),
    )
    .unwrap();
    touch(&exe, SystemTime::now() + Duration::from_secs(5));
    let third = remembering(&p, &tools, &["bin"], &["tool"]).env().body;
    assert!(third.contains("tool: tool 2.0.0\n"), "{third}");
    assert_eq!(tools.runs("tool"), 2);

    // Another executable of the same name earlier on PATH (a virtualenv's python3) is its own.
    tools.add("venv", "tool", "echo 'tool 3.0.0'");
    let fourth = remembering(&p, &tools, &["venv", "bin"], &["tool"])
        .env()
        .body;
    assert!(fourth.contains("tool: tool 3.0.0\n"), "{fourth}");
}

#[test]
fn a_version_pin_in_the_project_is_part_of_the_key() {
    let tools = Tools::new();
    tools.add(
        "bin",
        "tool",
        "echo \"tool $(cat .tool-versions 2>/dev/null || echo default)\"",
    );
    let p = TempProject::new(&[]);
    let body = remembering(&p, &tools, &["bin"], &["tool"]).env().body;
    assert!(body.contains("tool: tool default\n"), "{body}");
    p.write(".tool-versions", b"pinned-9");
    let body = remembering(&p, &tools, &["bin"], &["tool"]).env().body;
    assert!(body.contains("tool: tool pinned-9\n"), "{body}");
    assert_eq!(tools.runs("tool"), 2);
}

#[test]
fn failures_are_never_remembered_and_dispatchers_only_briefly() {
    let tools = Tools::new();
    tools.add("bin", "broken", "exit 3");
    tools.add("bin", "rustup", "echo 'rustc 1.95.0'");
    tools.add("pyenv/shims", "python3", "echo 'Python 3.12.1'");
    tools.add("bin", "plain", "echo 'plain 1.0'");
    let p = TempProject::new(&[]);
    let run = || {
        let project = Project::open(
            p.path(),
            ContextConfig {
                env_probes: vec![
                    ToolProbe::new("broken", "broken", &[]),
                    ToolProbe::new("rustc", "rustup", &[]),
                    ToolProbe::new("python3", "python3", &["--version"]),
                    ToolProbe::new("plain", "plain", &[]),
                ],
                env_probe_memory: Some(tools.memory()),
                tool_search_path: Some(tools.search_path(&["bin", "pyenv/shims"])),
                ..hermetic_config()
            },
        )
        .unwrap();
        let body = project.env().body;
        assert!(body.contains("broken: failed ("), "{body}");
        assert!(body.contains("rustc: rustc 1.95.0"), "{body}");
        assert!(body.contains("python3: Python 3.12.1"), "{body}");
        assert!(body.contains("plain: plain 1.0"), "{body}");
    };
    run();
    run();
    assert_eq!(tools.runs("broken"), 2, "a failure was remembered");
    for remembered in ["rustup", "python3", "plain"] {
        assert_eq!(tools.runs(remembered), 1, "{remembered}");
    }

    // Eleven minutes later the dispatchers (rustup, a shim) are asked again; a plain tool is not.
    let mut memory: serde_json::Value =
        serde_json::from_slice(&fs_err::read(tools.memory()).unwrap()).unwrap();
    for entry in memory["versions"].as_object_mut().unwrap().values_mut() {
        let at = entry["at"].as_u64().unwrap();
        entry["at"] = (at - 11 * 60).into();
    }
    fs_err::write(tools.memory(), serde_json::to_vec(&memory).unwrap()).unwrap();
    run();
    assert_eq!(tools.runs("rustup"), 2);
    assert_eq!(tools.runs("python3"), 2);
    assert_eq!(tools.runs("plain"), 1);
}

#[test]
fn a_toolchain_variable_is_part_of_the_key() {
    let tools = Tools::new();
    tools.add("bin", "tool", "echo 'tool 1.0'");
    let p = TempProject::new(&[]);
    let with = |selectors: &[(&str, &str)]| {
        Project::open(
            p.path(),
            ContextConfig {
                env_probes: vec![ToolProbe::new("tool", "tool", &[])],
                env_probe_memory: Some(tools.memory()),
                tool_search_path: Some(tools.search_path(&["bin"])),
                tool_selectors: selectors
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                ..hermetic_config()
            },
        )
        .unwrap()
        .env()
    };
    with(&[]);
    with(&[]);
    assert_eq!(tools.runs("tool"), 1);
    with(&[("RUSTUP_TOOLCHAIN", "nightly")]);
    assert_eq!(tools.runs("tool"), 2);
    with(&[("RUSTUP_TOOLCHAIN", "nightly")]);
    assert_eq!(tools.runs("tool"), 2);
    assert!(papayu_context::is_tool_selector("GOTOOLCHAIN"));
    assert!(papayu_context::is_tool_selector("MISE_NODE_VERSION"));
    assert!(!papayu_context::is_tool_selector("PATHS"));
}

#[test]
fn a_damaged_memory_file_only_means_probing_again() {
    let tools = Tools::new();
    tools.add("bin", "tool", "echo 'tool 1.0'");
    fs_err::create_dir_all(tools.memory().parent().unwrap()).unwrap();
    fs_err::write(tools.memory(), b"{ not json").unwrap();
    let p = TempProject::new(&[]);
    let body = remembering(&p, &tools, &["bin"], &["tool"]).env().body;
    assert!(body.contains("tool: tool 1.0\n"), "{body}");
    // Replaced by a good one that the next run uses.
    let _ = remembering(&p, &tools, &["bin"], &["tool"]).env();
    assert_eq!(tools.runs("tool"), 1, "the damaged file was not replaced");
}
