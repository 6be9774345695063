//! The kinds of argument value and how a word is checked to be one.

use std::collections::BTreeSet;

use camino::{Utf8Component, Utf8Path};

/// What kind of value an option or a positional argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Value {
    /// The option takes no value.
    None,
    /// A git ref, remote or branch name.
    Ref,
    /// A free text (a commit message): passed as one argument, never interpreted.
    Text,
    /// A whole number.
    Number,
    /// A path inside the project.
    Path,
    /// A Rust package name or feature list.
    CargoName,
    /// After `cargo … --`: a test filter, a lint level (`-D`, `warnings`) or a test-harness
    /// switch.
    CargoTrailing,
    /// An npm package spec from the registry.
    NpmPackage,
    /// A PyPI requirement from the index.
    PipPackage,
    /// A script of the project's `package.json`.
    NpmScript,
    /// A pytest `-k` expression.
    Expression,
}

fn valid_ref(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(['-', '/', '.'])
        && !s.contains("..")
        && !s.contains("://")
        && !s.contains(':')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-@^~".contains(c))
}

fn valid_path(s: &str) -> bool {
    let p = Utf8Path::new(s);
    !s.is_empty()
        && !s.starts_with('-')
        && !p.is_absolute()
        && !s.contains(':')
        && p.components()
            .all(|c| matches!(c, Utf8Component::Normal(_) | Utf8Component::CurDir))
}

fn valid_npm_package(s: &str) -> bool {
    let (name, version) = match s.strip_prefix('@') {
        Some(rest) => match rest.split_once('@') {
            Some((n, v)) => (format!("@{n}"), Some(v)),
            None => (s.to_owned(), None),
        },
        None => match s.split_once('@') {
            Some((n, v)) => (n.to_owned(), Some(v)),
            None => (s.to_owned(), None),
        },
    };
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with(['.', '_', '-'])
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~".contains(c))
    };
    let name_ok = match name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(a, b)| part(a) && part(b)),
        None => part(&name),
    };
    name_ok
        && version.is_none_or(|v| {
            !v.is_empty()
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-^~=<>x".contains(c))
        })
}

fn valid_pip_package(s: &str) -> bool {
    let name_end = s.find(|c: char| "=<>!~[".contains(c)).unwrap_or(s.len());
    let (name, spec) = s.split_at(name_end);
    !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && spec
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "=<>!~.,*[]_-".contains(c))
}

fn npm_scripts(root: &Utf8Path) -> BTreeSet<String> {
    fs_err::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| {
            v.get("scripts")?
                .as_object()
                .map(|m| m.keys().cloned().collect())
        })
        .unwrap_or_default()
}

pub(super) fn check_value(kind: Value, value: &str, root: &Utf8Path) -> Result<(), String> {
    let ok = match kind {
        Value::None => false,
        Value::Ref => valid_ref(value),
        Value::Text => !value.trim().is_empty(),
        Value::Number => value.parse::<u32>().is_ok(),
        Value::Path => valid_path(value),
        Value::CargoName => {
            !value.starts_with('-')
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-,/".contains(c))
        }
        Value::CargoTrailing => {
            [
                "-D",
                "-W",
                "-A",
                "--nocapture",
                "--ignored",
                "--include-ignored",
                "-q",
                "--quiet",
            ]
            .contains(&value)
                || (!value.starts_with('-')
                    && value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_:-".contains(c)))
        }
        Value::NpmPackage => valid_npm_package(value),
        Value::PipPackage => valid_pip_package(value),
        Value::Expression => {
            !value.starts_with('-')
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || " _-.".contains(c))
        }
        Value::NpmScript => {
            let scripts = npm_scripts(root);
            if !scripts.contains(value) {
                return Err(format!(
                    "{value:?} is not a script of package.json (scripts: {})",
                    scripts.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
            true
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{value:?} is not an allowed {kind:?} argument").to_lowercase())
    }
}
