//! Which tools the `env` block probes for a project — those of the languages its manifests and
//! files show — and the on-disk memory of their versions per executable, so a Python project
//! never waits for `npm --version` and a repeated run does not re-ask an unchanged `python3`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ignore::WalkBuilder;
use serde::{Deserialize, Serialize};

use crate::Language;
use crate::ToolProbe;
use crate::confine::{is_cache_dir, is_protected_entry};
use crate::project::Project;

/// Files at the project root that name a language.
const MARKERS: &[(&str, Language)] = &[
    ("Cargo.toml", Language::Rust),
    ("Cargo.lock", Language::Rust),
    ("rust-toolchain", Language::Rust),
    ("rust-toolchain.toml", Language::Rust),
    ("pyproject.toml", Language::Python),
    ("setup.py", Language::Python),
    ("setup.cfg", Language::Python),
    ("requirements.txt", Language::Python),
    ("Pipfile", Language::Python),
    ("poetry.lock", Language::Python),
    ("uv.lock", Language::Python),
    ("tox.ini", Language::Python),
    ("package.json", Language::Node),
    ("package-lock.json", Language::Node),
    ("yarn.lock", Language::Node),
    ("pnpm-lock.yaml", Language::Node),
    ("bun.lockb", Language::Node),
    ("bun.lock", Language::Node),
    ("deno.json", Language::Node),
    ("tsconfig.json", Language::Node),
    ("go.mod", Language::Go),
    ("go.work", Language::Go),
    ("pom.xml", Language::Jvm),
    ("build.gradle", Language::Jvm),
    ("build.gradle.kts", Language::Jvm),
];

/// File extensions that name a language.
const EXTENSIONS: &[(&str, Language)] = &[
    ("py", Language::Python),
    ("pyi", Language::Python),
    ("rs", Language::Rust),
    ("js", Language::Node),
    ("mjs", Language::Node),
    ("cjs", Language::Node),
    ("jsx", Language::Node),
    ("ts", Language::Node),
    ("tsx", Language::Node),
    ("mts", Language::Node),
    ("cts", Language::Node),
    ("go", Language::Go),
    ("java", Language::Jvm),
    ("kt", Language::Jvm),
    ("kts", Language::Jvm),
    ("scala", Language::Jvm),
];

/// The language walk looks this deep (the root is depth 0) …
const WALK_MAX_DEPTH: usize = 4;
/// … and at this many entries at most, so a huge tree costs a bounded time.
const WALK_MAX_ENTRIES: usize = 5_000;

/// Files that pick a tool's version (rustup, the go command, pyenv, nvm, asdf) in the project
/// root or any directory above it: their bytes are part of a remembered version's key.
const VERSION_PINS: &[&str] = &[
    "rust-toolchain",
    "rust-toolchain.toml",
    "go.mod",
    "go.work",
    ".python-version",
    ".nvmrc",
    ".node-version",
    ".tool-versions",
];

/// Executables that dispatch to another tool chosen by the environment, the directory or their
/// own global setting (rustup's proxies, version managers; anything under a `shims`
/// directory): their answers are remembered only for [`DISPATCHER_MAX_AGE`], since a global
/// switch (`pyenv global`, `rustup default`) changes nothing the key sees.
const DISPATCHERS: &[&str] = &["rustup", "mise", "asdf", "volta", "proto", "pyenv", "rtx"];

/// Environment variables that choose a toolchain, by name …
const SELECTOR_NAMES: &[&str] = &[
    "RUSTUP_TOOLCHAIN",
    "RUSTUP_HOME",
    "CARGO_HOME",
    "PYENV_VERSION",
    "PYENV_ROOT",
    "GOTOOLCHAIN",
    "GOROOT",
    "NODE_VERSION",
    "NVM_BIN",
    "VOLTA_HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
];
/// … and by prefix.
const SELECTOR_PREFIXES: &[&str] = &["ASDF_", "MISE_", "RTX_", "RBENV_"];

/// Whether the environment variable `name` can choose which version of a tool runs
/// (`RUSTUP_TOOLCHAIN`, `PYENV_VERSION`, `GOTOOLCHAIN`, `ASDF_*`, …): a frontend passes those
/// it has as [`ContextConfig::tool_selectors`](crate::ContextConfig::tool_selectors).
///
/// ```
/// assert!(papayu_context::is_tool_selector("PYENV_VERSION"));
/// assert!(papayu_context::is_tool_selector("ASDF_PYTHON_VERSION"));
/// assert!(!papayu_context::is_tool_selector("HOME"));
/// ```
pub fn is_tool_selector(name: &str) -> bool {
    SELECTOR_NAMES.contains(&name) || SELECTOR_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// A remembered version older than this is asked again.
const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);
/// … and a dispatcher's, older than this.
const DISPATCHER_MAX_AGE: Duration = Duration::from_secs(10 * 60);
/// The memory keeps at most this many versions (the most recent).
const MAX_ENTRIES: usize = 64;
/// Format of the memory file; another format is ignored and replaced.
const FORMAT: u32 = 2;

impl Project {
    /// The languages the project shows: by a marker file at its root (`Cargo.toml`,
    /// `pyproject.toml`, `package.json`, `go.mod`, …) or by the extension of a file within
    /// four directories of the root (ignore files honoured, protected paths skipped, at most
    /// 5 000 entries looked at). Empty when nothing tells.
    pub fn languages(&self) -> Vec<Language> {
        let root = self.root.canonical().as_std_path();
        let mut found: Vec<Language> = Vec::new();
        let mut add = |l: Language| {
            if !found.contains(&l) {
                found.push(l);
            }
        };
        for (file, language) in MARKERS {
            if fs_err::symlink_metadata(root.join(file)).is_ok_and(|m| m.is_file()) {
                add(*language);
            }
        }
        let policy = self.root.policy().clone();
        let walk_root = root.to_path_buf();
        let walk = WalkBuilder::new(root)
            .require_git(false)
            .add_custom_ignore_filename(".papayuignore")
            .follow_links(false)
            .max_depth(Some(WALK_MAX_DEPTH))
            .filter_entry(move |e| !is_protected_entry(&policy, &walk_root, e) && !is_cache_dir(e))
            .build();
        for entry in walk.take(WALK_MAX_ENTRIES).flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let ext = entry.path().extension().and_then(|e| e.to_str());
            if let Some((_, language)) = EXTENSIONS.iter().find(|(e, _)| Some(*e) == ext) {
                add(*language);
            }
        }
        found
    }

    /// The probes the `env` block runs for this project, and the names of those it skips:
    /// a probe tied to a language runs only when the project shows that language (every probe
    /// runs when the project shows none).
    pub(crate) fn relevant_probes(&self) -> (Vec<&ToolProbe>, Vec<&str>) {
        let languages = self.languages();
        let mut run = Vec::new();
        let mut skipped = Vec::new();
        for probe in &self.config.env_probes {
            match probe.language {
                Some(l) if !languages.is_empty() && !languages.contains(&l) => {
                    skipped.push(probe.name.as_str());
                }
                _ => run.push(probe),
            }
        }
        (run, skipped)
    }

    /// The version-pin files of the root and the directories above it, and the frontend's
    /// toolchain-selecting variables, digested (part of a remembered version's key).
    pub(crate) fn version_pins(&self) -> String {
        let root = self.root.canonical().as_std_path();
        let mut all = Vec::new();
        for dir in root.ancestors() {
            for pin in VERSION_PINS {
                let path = dir.join(pin);
                if let Ok(bytes) = fs_err::read(&path) {
                    all.extend_from_slice(path.as_os_str().as_encoded_bytes());
                    all.push(0);
                    all.extend_from_slice(&bytes);
                    all.push(0);
                }
            }
        }
        for (name, value) in &self.config.tool_selectors {
            all.extend_from_slice(name.as_bytes());
            all.push(b'=');
            all.extend_from_slice(value.as_bytes());
            all.push(0);
        }
        papayu_protocol::sha256_hex(&all)
    }
}

/// The key under which a probe's answer is remembered: the executable it runs (`exe`, as
/// [`find_executable`] found it; symlinks resolved), its size and modification time, the
/// arguments, and the project's version pins; and how long an answer under it stays good
/// (shorter for a dispatcher, whose answer depends on more than its own bytes).
pub(crate) fn probe_key(exe: &Path, probe: &ToolProbe, pins: &str) -> Option<(String, Duration)> {
    let canonical = fs_err::canonicalize(exe).ok()?;
    let dispatcher = canonical.components().any(|c| c.as_os_str() == "shims")
        || canonical
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| DISPATCHERS.contains(&n));
    let max_age = if dispatcher {
        DISPATCHER_MAX_AGE
    } else {
        MAX_AGE
    };
    let meta = fs_err::metadata(&canonical).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let key = format!(
        "{}\u{1f}{}\u{1f}{modified}\u{1f}{}\u{1f}{pins}",
        canonical.display(),
        meta.len(),
        probe.args.join("\u{1e}")
    );
    Some((key, max_age))
}

/// `program` as the OS would find it on `search_path` (a program with a `/` is taken as is).
pub(crate) fn find_executable(program: &str, search_path: &OsString) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(search_path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs_err::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    fs_err::metadata(p).is_ok_and(|m| m.is_file())
}

/// One remembered answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Remembered {
    /// The probe's first line of output.
    output: String,
    /// When it was asked, in seconds since the Unix epoch.
    at: u64,
    /// For how many seconds it stays good.
    max_age: u64,
}

/// The memory file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Memory {
    format: u32,
    versions: BTreeMap<String, Remembered>,
}

/// Tool versions remembered in a file between runs. Every failure to read or write it only
/// means probing again: the memory never fails the `env` block.
#[derive(Debug)]
pub(crate) struct VersionMemory {
    file: PathBuf,
    memory: Memory,
    changed: bool,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl VersionMemory {
    /// The memory in `file` (empty when it is missing, unreadable or of another format).
    pub(crate) fn load(file: &Path) -> Self {
        let memory = fs_err::read(file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Memory>(&b).ok())
            .filter(|m| m.format == FORMAT)
            .unwrap_or_default();
        Self {
            file: file.to_path_buf(),
            memory,
            changed: false,
        }
    }

    /// The remembered answer under `key`, unless it is older than it may be.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        let r = self.memory.versions.get(key)?;
        let age = now_secs().saturating_sub(r.at);
        (age < r.max_age.min(MAX_AGE.as_secs())).then_some(r.output.as_str())
    }

    /// Remember `output` under `key` for `max_age`.
    pub(crate) fn put(&mut self, key: String, output: String, max_age: Duration) {
        self.memory.versions.insert(
            key,
            Remembered {
                output,
                at: now_secs(),
                max_age: max_age.as_secs(),
            },
        );
        self.changed = true;
    }

    /// Write the memory back when it changed (the most recent [`MAX_ENTRIES`], through a
    /// temporary file renamed over the old one, so a reader never sees half a file).
    pub(crate) fn save(mut self) {
        if !self.changed {
            return;
        }
        let now = now_secs();
        self.memory
            .versions
            .retain(|_, r| now.saturating_sub(r.at) < r.max_age.min(MAX_AGE.as_secs()));
        if self.memory.versions.len() > MAX_ENTRIES {
            let mut ages: Vec<u64> = self.memory.versions.values().map(|r| r.at).collect();
            ages.sort_unstable_by(|a, b| b.cmp(a));
            if let Some(&cutoff) = ages.get(MAX_ENTRIES - 1) {
                self.memory.versions.retain(|_, r| r.at >= cutoff);
            }
        }
        self.memory.format = FORMAT;
        let Ok(bytes) = serde_json::to_vec_pretty(&self.memory) else {
            return;
        };
        let Some(dir) = self.file.parent() else {
            return;
        };
        if fs_err::create_dir_all(dir).is_err() {
            return;
        }
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            self.file
                .file_name()
                .map_or_else(|| "versions".into(), |n| n.to_string_lossy()),
            std::process::id()
        ));
        if fs_err::write(&tmp, bytes).is_ok() && fs_err::rename(&tmp, &self.file).is_err() {
            let _ = fs_err::remove_file(&tmp);
        }
    }
}
