//! `env`: OS, architecture, tool versions (the project's languages' tools, probed concurrently,
//! each with a timeout, or remembered from an earlier run) and the package manager detected
//! from lockfiles.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::ToolProbe;
use crate::block::{Block, BlockKind};
use crate::project::Project;
use crate::tools::{VersionMemory, find_executable, probe_key};

/// Lockfiles (and manifests) that reveal a package manager, most specific first.
const PACKAGE_MANAGERS: &[(&str, &str)] = &[
    ("Cargo.lock", "cargo"),
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lockb", "bun"),
    ("bun.lock", "bun"),
    ("package-lock.json", "npm"),
    ("poetry.lock", "poetry"),
    ("uv.lock", "uv"),
    ("Pipfile.lock", "pipenv"),
    ("requirements.txt", "pip"),
    ("go.sum", "go"),
    ("go.mod", "go"),
    ("Gemfile.lock", "bundler"),
    ("composer.lock", "composer"),
];

/// Run `exe` (the program as found on the configured search path), else the program by name:
/// `Ok` with the version line, or `Err` with the line saying why there is none (not found,
/// timed out, failed, no output) — only an `Ok` is worth remembering.
fn probe(
    tool: &ToolProbe,
    exe: Option<&std::path::Path>,
    cwd: &std::path::Path,
    timeout: Duration,
) -> Result<String, String> {
    let program = exe.map_or_else(|| std::ffi::OsStr::new(&tool.program), |e| e.as_os_str());
    let child = Command::new(program)
        .args(&tool.args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err("not found".to_owned()),
        Err(e) => return Err(format!("could not run ({})", e.kind())),
    };
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} ms", timeout.as_millis()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("could not run ({})", e.kind())),
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    // Some tools (old Python) print their version on stderr.
    let first = out
        .lines()
        .chain(err.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let first: String = first
        .chars()
        .filter(|c| !c.is_control())
        .take(120)
        .collect();
    match (status.success(), first.is_empty()) {
        (true, false) => Ok(first),
        (true, true) => Err("no output".to_owned()),
        (false, _) => Err(format!(
            "failed ({status}){}",
            if first.is_empty() {
                String::new()
            } else {
                format!(": {first}")
            }
        )),
    }
}

impl Project {
    /// `env`: `ENV:` then `os`, `arch`, one line per tool probe of the project's languages
    /// (and a `not probed:` line naming the others), `package_manager` and `virtualenv`.
    pub fn env(&self) -> Block {
        let cwd = self.root.canonical().as_std_path();
        let timeout = self.config.env_probe_timeout;
        let (probes, skipped) = self.relevant_probes();
        // With a search path, each probe runs the executable found on it, which is also what a
        // remembered version is keyed by.
        let located: Vec<Option<std::path::PathBuf>> = match &self.config.tool_search_path {
            Some(search_path) => probes
                .iter()
                .map(|p| find_executable(&p.program, search_path))
                .collect(),
            None => vec![None; probes.len()],
        };
        let memory = self
            .config
            .env_probe_memory
            .as_deref()
            .filter(|_| self.config.tool_search_path.is_some());
        let keys: Vec<Option<(String, Duration)>> = match memory {
            Some(_) => {
                let pins = self.version_pins();
                probes
                    .iter()
                    .zip(&located)
                    .map(|(p, exe)| probe_key(exe.as_deref()?, p, &pins))
                    .collect()
            }
            None => vec![None; probes.len()],
        };
        let mut remembered = memory.map(VersionMemory::load);
        let known: Vec<Option<String>> = keys
            .iter()
            .map(|k| {
                k.as_ref()
                    .and_then(|(k, _)| remembered.as_ref()?.get(k))
                    .map(str::to_owned)
            })
            .collect();
        let versions: Vec<(String, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> = probes
                .iter()
                .zip(&known)
                .zip(&located)
                .map(|((tool, known), exe)| {
                    known
                        .is_none()
                        .then(|| s.spawn(move || probe(tool, exe.as_deref(), cwd, timeout)))
                })
                .collect();
            handles
                .into_iter()
                .zip(&known)
                .map(|(h, known)| match (h, known) {
                    (Some(h), _) => match h.join() {
                        Ok(Ok(version)) => (version, true),
                        Ok(Err(why)) => (why, false),
                        Err(_) => ("probe failed".to_owned(), false),
                    },
                    (None, known) => (known.clone().unwrap_or_default(), false),
                })
                .collect()
        });
        if let Some(memory) = remembered.as_mut() {
            for ((key, known), (line, ok)) in keys.iter().zip(&known).zip(&versions) {
                if let (Some((key, max_age)), None, true) = (key, known, ok) {
                    memory.put(key.clone(), line.clone(), *max_age);
                }
            }
        }
        if let Some(memory) = remembered {
            memory.save();
        }
        let mut body = format!(
            "os: {}\narch: {}\n",
            std::env::consts::OS,
            std::env::consts::ARCH
        );
        for (tool, (version, _)) in probes.iter().zip(versions) {
            body.push_str(&format!("{}: {version}\n", tool.name));
        }
        if !skipped.is_empty() {
            body.push_str(&format!(
                "not probed: {} (the project shows none of their files)\n",
                skipped.join(", ")
            ));
        }
        body.push_str("package_manager: ");
        body.push_str(&self.detect_package_managers());
        body.push_str("\nvirtualenv: ");
        body.push_str(&self.virtual_env());
        Block::new(
            BlockKind::Env,
            "env".to_owned(),
            "ENV:".to_owned(),
            body,
            None,
        )
    }

    /// The active virtual environment (from the frontend), else a `.venv`/`venv` directory of
    /// the project with a `pyvenv.cfg`, else `none`.
    pub fn virtual_env(&self) -> String {
        if let Some(v) = self.config.virtual_env.as_deref().filter(|v| !v.is_empty()) {
            return format!("{v} (active)");
        }
        for dir in [".venv", "venv", "env"] {
            let cfg = self.root.canonical().join(dir).join("pyvenv.cfg");
            if fs_err::symlink_metadata(cfg.as_std_path()).is_ok_and(|m| m.is_file()) {
                return format!("{dir} (in the project, not active)");
            }
        }
        "none".to_owned()
    }

    /// Package managers whose lockfile (or manifest) is at the project root, e.g.
    /// `cargo (Cargo.lock), npm (package-lock.json)`; `unknown` when none is.
    pub fn detect_package_managers(&self) -> String {
        let mut found: Vec<String> = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for (file, pm) in PACKAGE_MANAGERS {
            let p = self.root.canonical().join(file);
            if fs_err::symlink_metadata(p.as_std_path()).is_ok_and(|m| m.is_file())
                && !seen.contains(pm)
            {
                seen.push(pm);
                found.push(format!("{pm} ({file})"));
            }
        }
        if found.is_empty() {
            "unknown (no lockfile found)".to_owned()
        } else {
            found.join(", ")
        }
    }
}
