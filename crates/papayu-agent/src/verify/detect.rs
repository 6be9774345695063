//! Which command runs a project's tests: the one the user gave, the one in project memory, or
//! one detected from the files the project has (Cargo, Go, npm/Node, pytest/unittest, make).

use camino::Utf8Path;
use serde::Serialize;

/// Where a test command came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TestCommandSource {
    /// Given for this run (`--test CMD`).
    Given,
    /// `project.default_test_command` in the project memory.
    Memory,
    /// Detected from the project's files.
    Detected {
        /// What gave it away (`Cargo.toml`, `package.json scripts.test`, …).
        reason: String,
    },
}

/// The command that runs a project's tests, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestCommand {
    /// A shell command line, run in the project root.
    pub command: String,
    /// Where it came from.
    #[serde(flatten)]
    pub source: TestCommandSource,
}

impl TestCommand {
    /// A command with its source.
    pub fn new(command: impl Into<String>, source: TestCommandSource) -> Self {
        Self {
            command: command.into(),
            source,
        }
    }

    fn detected(command: &str, reason: &str) -> Self {
        Self::new(
            command,
            TestCommandSource::Detected {
                reason: reason.to_owned(),
            },
        )
    }
}

/// Directories never searched for test files.
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".papa-yu",
    ".venv",
    "venv",
    "node_modules",
    "target",
    "__pycache__",
    "dist",
    "build",
];

fn read(root: &Utf8Path, name: &str) -> Option<String> {
    let path = root.join(name);
    let meta = fs_err::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    fs_err::read_to_string(path).ok()
}

fn is_file(root: &Utf8Path, name: &str) -> bool {
    fs_err::symlink_metadata(root.join(name)).is_ok_and(|m| m.is_file())
}

fn is_python_test(name: &str) -> bool {
    name.ends_with(".py") && (name.starts_with("test") || name.ends_with("_test.py"))
}

fn is_js_test(name: &str) -> bool {
    [".js", ".mjs", ".cjs"].iter().any(|ext| {
        name.strip_suffix(ext).is_some_and(|stem| {
            stem.ends_with(".test") || stem.ends_with("_test") || stem.starts_with("test")
        })
    })
}

/// Files directly in `dir` (not recursive), by name.
fn names(dir: &Utf8Path) -> Vec<String> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect()
}

/// Whether a file matching `pred` exists under `dir`, at most `depth` levels down.
fn any_file(dir: &Utf8Path, depth: u8, pred: &dyn Fn(&str) -> bool) -> bool {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return false;
    };
    for e in entries.flatten() {
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_file() && pred(&name) {
            return true;
        }
        if kind.is_dir()
            && depth > 0
            && !name.starts_with('.')
            && !SKIP_DIRS.contains(&name.as_str())
            && any_file(&dir.join(&name), depth - 1, pred)
        {
            return true;
        }
    }
    false
}

/// The npm placeholder script `npm init` writes: not a test suite.
fn is_placeholder_npm_test(script: &str) -> bool {
    script.contains("no test specified")
}

fn python_command(root: &Utf8Path) -> Option<TestCommand> {
    let pyproject = read(root, "pyproject.toml").unwrap_or_default();
    let uses_pytest = is_file(root, "pytest.ini")
        || is_file(root, "conftest.py")
        || pyproject.contains("[tool.pytest")
        || read(root, "setup.cfg").is_some_and(|s| s.contains("[tool:pytest]"))
        || read(root, "tox.ini").is_some_and(|s| s.contains("[pytest]"));
    if uses_pytest {
        return Some(TestCommand::detected(
            "python3 -m pytest -q -rA",
            "pytest configuration",
        ));
    }
    if names(root).iter().any(|n| is_python_test(n)) {
        return Some(TestCommand::detected(
            "python3 -m unittest discover -v",
            "Python test files in the project root",
        ));
    }
    for dir in ["tests", "test"] {
        let path = root.join(dir);
        if !path.is_dir() || !any_file(&path, 3, &is_python_test) {
            continue;
        }
        // unittest discovers a test directory from the root only when it is a package.
        let command = if path.join("__init__.py").is_file() {
            "python3 -m unittest discover -v".to_owned()
        } else {
            format!("python3 -m unittest discover -v -s {dir}")
        };
        return Some(TestCommand::new(
            command,
            TestCommandSource::Detected {
                reason: format!("Python test files in {dir}/"),
            },
        ));
    }
    None
}

fn node_command(root: &Utf8Path) -> Option<TestCommand> {
    if let Some(text) = read(root, "package.json")
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(script) = v.pointer("/scripts/test").and_then(|s| s.as_str())
        && !is_placeholder_npm_test(script)
    {
        return Some(TestCommand::detected(
            "npm test",
            "package.json scripts.test",
        ));
    }
    if any_file(root, 3, &is_js_test) {
        return Some(TestCommand::detected(
            "node --test",
            "JavaScript test files (node's built-in runner)",
        ));
    }
    None
}

fn make_command(root: &Utf8Path) -> Option<TestCommand> {
    let makefile = read(root, "Makefile").or_else(|| read(root, "makefile"))?;
    makefile
        .lines()
        .any(|l| l.starts_with("test:"))
        .then(|| TestCommand::detected("make test", "a `test` target in the Makefile"))
}

/// Detect the test command of the project at `root` from its files, or `None` when nothing
/// says how its tests run. Rust, Go, JavaScript, Python, then a Makefile `test` target: the first
/// that applies wins.
pub fn detect_test_command(root: &Utf8Path) -> Option<TestCommand> {
    if is_file(root, "Cargo.toml") {
        // Without --no-fail-fast, cargo stops at the first failing test binary and the tests of
        // the others never show whether they pass.
        return Some(TestCommand::detected(
            "cargo test --no-fail-fast",
            "Cargo.toml",
        ));
    }
    if is_file(root, "go.mod") {
        return Some(TestCommand::detected("go test -v ./...", "go.mod"));
    }
    node_command(root)
        .or_else(|| python_command(root))
        .or_else(|| make_command(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, camino::Utf8PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = camino::Utf8PathBuf::from_path_buf(dir.path().to_owned()).expect("utf-8");
        for (path, text) in files {
            let p = root.join(path);
            fs_err::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            fs_err::write(p, text).expect("write");
        }
        (dir, root)
    }

    fn detected(files: &[(&str, &str)]) -> Option<String> {
        let (_dir, root) = project(files);
        detect_test_command(&root).map(|c| c.command)
    }

    #[test]
    fn each_ecosystem_has_its_command() {
        assert_eq!(
            detected(&[("Cargo.toml", "[package]")]).as_deref(),
            Some("cargo test --no-fail-fast")
        );
        assert_eq!(
            detected(&[("go.mod", "module x")]).as_deref(),
            Some("go test -v ./...")
        );
        assert_eq!(
            detected(&[("package.json", r#"{"scripts":{"test":"jest"}}"#)]).as_deref(),
            Some("npm test")
        );
        assert_eq!(
            detected(&[("calc.py", ""), ("test_calc.py", "")]).as_deref(),
            Some("python3 -m unittest discover -v")
        );
        assert_eq!(
            detected(&[("pytest.ini", "[pytest]"), ("tests/test_a.py", "")]).as_deref(),
            Some("python3 -m pytest -q -rA")
        );
        assert_eq!(
            detected(&[("Makefile", "all:\n\ttrue\ntest:\n\t./run\n")]).as_deref(),
            Some("make test")
        );
    }

    #[test]
    fn a_tests_directory_that_is_not_a_package_is_discovered_from_itself() {
        assert_eq!(
            detected(&[("app.py", ""), ("tests/test_app.py", "")]).as_deref(),
            Some("python3 -m unittest discover -v -s tests")
        );
        assert_eq!(
            detected(&[("tests/__init__.py", ""), ("tests/test_app.py", "")]).as_deref(),
            Some("python3 -m unittest discover -v")
        );
    }

    #[test]
    fn the_npm_placeholder_is_not_a_test_suite() {
        let placeholder = r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}"#;
        assert_eq!(detected(&[("package.json", placeholder)]), None);
        assert_eq!(
            detected(&[("package.json", placeholder), ("test/cart.test.js", "")]).as_deref(),
            Some("node --test")
        );
    }

    #[test]
    fn nothing_to_run_is_none() {
        assert_eq!(detected(&[("README.md", "# hi")]), None);
        // Test files inside skipped directories do not count.
        assert_eq!(detected(&[("node_modules/x/a.test.js", "")]), None);
    }
}
