//! Where papayu's configuration comes from, read once per process: the user's directories
//! (etcetera), the project root (papayu-agent's discovery) and the layered configuration.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use anyhow::Result;
use camino::Utf8PathBuf;
use etcetera::BaseStrategy;
use papayu_agent::layered::{Layered, Layers, PROJECT_FILE, USER_FILE};
use papayu_agent::project_root::{Discovery, ProjectRoot, RootError};

use crate::exit::UsageError;
use crate::global::Global;

/// The XDG base directories on every Unix (`$XDG_CONFIG_HOME`, else `~/.config`; the same for
/// the cache), as papayu has always used them, macOS included.
fn base() -> Option<etcetera::base_strategy::Xdg> {
    etcetera::base_strategy::Xdg::new().ok()
}

/// The user's configuration directory (`$XDG_CONFIG_HOME`, else `~/.config`).
pub fn config_home() -> PathBuf {
    base().map_or_else(|| PathBuf::from(".config"), |b| b.config_dir())
}

/// The user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`).
pub fn cache_home() -> PathBuf {
    base().map_or_else(|| PathBuf::from(".cache"), |b| b.cache_dir())
}

/// The user's config file: `<config>/papayu/config.toml`.
pub fn user_file() -> PathBuf {
    config_home().join(USER_FILE)
}

/// The config file of the project at `root`.
pub fn project_file(root: &camino::Utf8Path) -> Utf8PathBuf {
    root.join(PROJECT_FILE)
}

/// Every `PAPAYU_*` variable, read once (SPEC §12: libraries never read the environment).
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
pub fn env_map() -> BTreeMap<String, String> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with("PAPAYU_"))
        .collect()
}

/// The variable a config file names as holding an API key.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
pub fn key_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `path` as UTF-8, or a usage error naming `what` it is.
pub fn utf8(path: PathBuf, what: &str) -> Result<Utf8PathBuf> {
    Utf8PathBuf::from_path_buf(path)
        .map_err(|p| UsageError(format!("{what} {} is not UTF-8", p.display())).into())
}

/// The project root: `--project`, else discovered from the current directory (never above the
/// home directory). `-v` says which and why, once.
pub fn project_root(global: &Global) -> Result<ProjectRoot> {
    static FOUND: OnceLock<ProjectRoot> = OnceLock::new();
    if let Some(found) = FOUND.get() {
        return Ok(found.clone());
    }
    let cwd = utf8(std::env::current_dir()?, "the current directory")?;
    let mut discovery = Discovery::new(cwd).given(
        global
            .project
            .as_ref()
            .map(|p| utf8(p.clone(), "--project"))
            .transpose()?,
    );
    if let Some(home) = etcetera::home_dir()
        .ok()
        .and_then(|h| Utf8PathBuf::from_path_buf(h).ok())
    {
        discovery = discovery.ceiling(home);
    }
    let found = discovery.discover().map_err(|e| match e {
        RootError::NotADirectory { path } if path.exists() => {
            UsageError(format!("--project {path}: not a directory"))
        }
        RootError::NotADirectory { path } => {
            UsageError(format!("--project {path}: no such directory"))
        }
        other => UsageError(other.to_string()),
    })?;
    if global.verbose > 0 {
        eprintln!("papayu: project root {} ({})", found.root, found.reason);
    }
    Ok(FOUND.get_or_init(|| found).clone())
}

/// The layered configuration: the user file, the project's file, the `PAPAYU_*` environment,
/// and the global flags on top (read once per process).
pub fn layered(global: &Global) -> Result<Layered> {
    static LAYERED: OnceLock<Layered> = OnceLock::new();
    if let Some(found) = LAYERED.get() {
        return Ok(found.clone());
    }
    let layered = read_layers(global)?;
    Ok(LAYERED.get_or_init(|| layered).clone())
}

/// The agent configuration from the layered configuration; the API key from the environment.
pub fn agent_config(global: &Global) -> Result<papayu_agent::AgentConfig> {
    layered(global)?
        .agent_config(&key_lookup)
        .map_err(|e| UsageError(e.to_string()).into())
}

fn read_layers(global: &Global) -> Result<Layered> {
    let usage = |e: papayu_agent::ConfigError| UsageError(e.to_string());
    let root = project_root(global)?;
    let mut layers = Layers::read(&utf8(user_file(), "config file")?, Some(&root.root))
        .map_err(usage)?
        .env(env_map());
    let flags = [
        ("llm.provider", "--provider", global.provider.clone()),
        ("llm.model", "--model", global.model.clone()),
        (
            "protocol.version",
            "--protocol",
            global.protocol.map(|n| n.to_string()),
        ),
        (
            "git.commit",
            "--commit",
            global.commit.then(|| "true".to_owned()),
        ),
        (
            "local.model",
            "--model-path",
            global
                .model_path
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned()),
        ),
    ];
    let env = env_map();
    for (key, flag, value) in flags {
        // clap fills a flag from its variable: then the value's source is the environment.
        let var = papayu_agent::layered::keys::find(key).and_then(|k| k.var);
        let from_env = var.and_then(|v| env.get(v)).map(|v| v.trim()) == value.as_deref();
        if let Some(v) = value.filter(|_| !from_env) {
            layers = layers.flag(key, flag, v).map_err(usage)?;
        }
    }
    Ok(layers.resolve())
}
