//! `env`: OS, architecture, tool versions (probed concurrently, each with a timeout) and the
//! package manager detected from lockfiles.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::ToolProbe;
use crate::block::{Block, BlockKind};
use crate::project::Project;

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

/// Outcome of one probe.
fn probe(tool: &ToolProbe, cwd: &std::path::Path, timeout: Duration) -> String {
    let child = Command::new(&tool.program)
        .args(&tool.args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return "not found".to_owned(),
        Err(e) => return format!("could not run ({})", e.kind()),
    };
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return format!("timed out after {} ms", timeout.as_millis());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return format!("could not run ({})", e.kind()),
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
        (true, false) => first,
        (true, true) => "no output".to_owned(),
        (false, _) => format!(
            "failed ({status}){}",
            if first.is_empty() {
                String::new()
            } else {
                format!(": {first}")
            }
        ),
    }
}

impl Project {
    /// `env`: `ENV:` then `os`, `arch`, one line per tool probe, and `package_manager`.
    pub fn env(&self) -> Block {
        let cwd = self.root.canonical().as_std_path();
        let timeout = self.config.env_probe_timeout;
        let versions: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .config
                .env_probes
                .iter()
                .map(|tool| s.spawn(move || probe(tool, cwd, timeout)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| "probe failed".to_owned()))
                .collect()
        });
        let mut body = format!(
            "os: {}\narch: {}\n",
            std::env::consts::OS,
            std::env::consts::ARCH
        );
        for (tool, version) in self.config.env_probes.iter().zip(versions) {
            body.push_str(&format!("{}: {version}\n", tool.name));
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
