//! What every model-facing command shares: configuration from the environment (read once,
//! here), the provider, the agent, the async runtime and the progress indicator.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, Result};
use camino::Utf8PathBuf;
use papayu_agent::{Agent, AgentConfig, Progress};
use papayu_app::provider::{self, LocalInputs, ProviderError};
use papayu_llm::Provider;

use crate::exit::{Exit, UsageError};
use crate::global::Global;

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

/// The user's configuration directory (`$XDG_CONFIG_HOME`, else `~/.config`).
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
pub fn config_dir() -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join(".config"),
    }
}

/// The user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`).
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join(".cache"),
    }
}

/// Where papayu keeps models: `<cache>/papayu/models` (shared with `scripts/local-llm.sh`).
pub fn model_dir() -> PathBuf {
    papayu_llm::model_cache_dir(&cache_dir())
}

/// Where the local provider keeps the KV state of system prompts between runs:
/// `<cache>/papayu/prompt-cache` (derived data: deleting it only costs the next run time).
#[cfg(feature = "local")]
pub fn prompt_cache_dir() -> PathBuf {
    cache_dir().join("papayu").join("prompt-cache")
}

/// The cached default model (it may not exist yet: `papayu model fetch`).
pub fn default_model() -> PathBuf {
    papayu_llm::default_model_path(&model_dir())
}

/// The GGUF file the user named: `--model-path`, else `PAPAYU_LOCAL_MODEL` — a path, or the
/// short name of a catalogue model (`qwen2.5-coder-0.5b`: its place in the model cache) when no
/// file of that name exists.
pub fn named_local_model(global: &Global) -> Option<PathBuf> {
    let named = global.model_path.clone().or_else(|| {
        env_map()
            .get("PAPAYU_LOCAL_MODEL")
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })?;
    if !named.exists()
        && let Some(spec) = named.to_str().and_then(papayu_llm::find_model)
    {
        return Some(spec.path(&model_dir()));
    }
    Some(named)
}

/// `PAPAYU_LOCAL_THREADS`: the local provider's CPU threads (default: every core).
#[cfg(feature = "local")]
fn local_threads() -> Result<Option<usize>> {
    let Some(v) = env_map()
        .get("PAPAYU_LOCAL_THREADS")
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
    else {
        return Ok(None);
    };
    match v.parse::<usize>() {
        Ok(n) if (1..=512).contains(&n) => Ok(Some(n)),
        _ => Err(UsageError(format!(
            "PAPAYU_LOCAL_THREADS={v}: expected a number of threads from 1 to 512"
        ))
        .into()),
    }
}

/// What papayu-app's provider choice needs to know about local models: the model the user
/// named and the cached default one.
pub fn local_inputs(global: &Global) -> LocalInputs {
    LocalInputs::new(named_local_model(global), default_model())
}

/// `local` with the local provider's settings: the prompt cache in [`prompt_cache_dir`] and
/// `PAPAYU_LOCAL_THREADS` threads.
#[cfg(feature = "local")]
fn with_local_settings(mut local: LocalInputs) -> Result<LocalInputs> {
    local.prompt_cache_dir = Some(prompt_cache_dir());
    local.threads = local_threads()?;
    Ok(local)
}

/// The local provider's configuration as every command uses it: the model at `path`, the
/// prompt cache in [`prompt_cache_dir`], `PAPAYU_LOCAL_THREADS` threads (default: every core).
#[cfg(feature = "local")]
pub fn local_config(path: &std::path::Path) -> Result<papayu_llm::LocalConfig> {
    Ok(with_local_settings(LocalInputs::default())?.local_config(path))
}

/// The agent configuration: the environment, then the global flags on top.
pub fn agent_config(global: &Global) -> Result<AgentConfig> {
    let mut config =
        AgentConfig::from_env_map(&env_map()).map_err(|e| UsageError(e.to_string()))?;
    if let Some(p) = &global.provider {
        config.provider = Some(
            p.parse()
                .map_err(|e| UsageError(format!("--provider {p}: {e}")))?,
        );
    }
    if let Some(m) = &global.model {
        config.model = Some(m.clone());
    }
    if global.protocol.is_some() {
        config.protocol_version = Some(global.protocol_version()?);
    }
    config.sandbox = sandbox(&config);
    config.virtual_env = virtual_env();
    Ok(config)
}

/// Build directories the user pointed their tools at: a confined test run may write there too
/// (a shared `CARGO_TARGET_DIR` is common, and cargo fails without it).
const BUILD_DIR_VARIABLES: &[&str] = &["CARGO_TARGET_DIR", "GOCACHE", "npm_config_cache"];

/// How check and test commands are confined: through `papayu sandbox-exec` when this machine
/// can confine them (Landlock, or bubblewrap) and `PAPAYU_SANDBOX` is not `off`.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
pub fn sandbox(config: &AgentConfig) -> papayu_patch::Sandbox {
    if !config.sandbox_enabled {
        return papayu_patch::Sandbox::None;
    }
    if matches!(
        crate::cmd::sandbox_exec::probe(),
        papayu_patch::Confinement::None { .. }
    ) {
        return papayu_patch::Sandbox::None;
    }
    let Ok(program) = std::env::current_exe() else {
        return papayu_patch::Sandbox::None;
    };
    let mut args: Vec<std::ffi::OsString> = vec!["sandbox-exec".into()];
    for var in BUILD_DIR_VARIABLES {
        if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty())
            && std::path::Path::new(&dir).is_absolute()
        {
            // A directory that does not exist yet is created now, so the sandbox can name it.
            let _ = fs_err::create_dir_all(&dir);
            args.push("--write".into());
            args.push(dir);
        }
    }
    papayu_patch::Sandbox::Launcher { program, args }
}

/// The active virtual environment (`VIRTUAL_ENV`), shown to the model in the `env` block.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
fn virtual_env() -> Option<String> {
    std::env::var("VIRTUAL_ENV").ok().filter(|v| !v.is_empty())
}

/// The provider the configuration names (papayu-app's [`provider::build`], shared with
/// `papayu ui`); its notice is said once per process (`papayu ui` builds an agent per project).
pub fn provider(config: &AgentConfig, global: &Global) -> Result<Arc<dyn Provider>> {
    let local = local_inputs(global);
    // Only the in-process model reads PAPAYU_LOCAL_THREADS: a bad value must not fail a
    // network run.
    #[cfg(feature = "local")]
    let local = match provider::choose(config, &local) {
        provider::Choice::Local { .. } => with_local_settings(local)?,
        provider::Choice::Network => local,
    };
    let chosen = provider::build(config, &local).map_err(provider_error)?;
    static SAID: AtomicBool = AtomicBool::new(false);
    if let Some(notice) = chosen.notice
        && !SAID.swap(true, Ordering::Relaxed)
    {
        eprintln!("papayu: {notice}");
    }
    Ok(chosen.provider)
}

/// What the user can fix in the configuration is a usage error (exit 2); a model file's
/// problem keeps its code.
fn provider_error(e: ProviderError) -> anyhow::Error {
    let message = e.to_string();
    match e {
        ProviderError::Config(c) => UsageError(format!("{c}\n{}", provider::CONFIGURE_HINT)).into(),
        ProviderError::LocalNotBuilt { .. } => UsageError(message).into(),
        ProviderError::Local(l) => l.into(),
        // The LlmError stays findable for its code (`exit::finish`); the context says why.
        ProviderError::DefaultModelMissing { source } => {
            anyhow::Error::new(source).context(message)
        }
        other => other.into(),
    }
}

fn utf8(path: PathBuf, what: &str) -> Result<Utf8PathBuf> {
    Utf8PathBuf::from_path_buf(path)
        .map_err(|p| UsageError(format!("{what} {} is not UTF-8", p.display())).into())
}

/// Open the agent on the project (recovery of an unfinished transaction runs first).
pub fn open_agent(global: &Global) -> Result<Agent> {
    let mut config = agent_config(global)?;
    config.stream = std::io::stderr().is_terminal() && !global.json;
    let provider = provider(&config, global)?;
    let root = utf8(global.project_root()?, "project")?;
    let config_dir = utf8(config_dir(), "config directory")?;
    let mut agent = Agent::new(config, &root, &config_dir, provider)
        .with_context(|| format!("cannot open project {root}"))?;
    crate::cmd::research::install(&mut agent, &root)?;
    Ok(agent)
}

/// A single-threaded runtime for one command.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Progress on stderr: one updating line on a terminal, plain lines with `-v`, nothing with
/// `--json` (stdout stays one JSON document).
pub struct ProgressLine {
    live: bool,
    verbose: bool,
    dirty: AtomicBool,
}

impl ProgressLine {
    /// A progress printer for this invocation.
    pub fn new(global: &Global) -> Self {
        Self {
            live: std::io::stderr().is_terminal() && !global.json,
            verbose: global.verbose > 0 && !global.json,
            dirty: AtomicBool::new(false),
        }
    }

    /// Show one progress event.
    pub fn show(&self, p: &Progress) {
        if !self.live && !self.verbose {
            return;
        }
        let text = match p {
            Progress::GatheringContext => "gathering context…".to_owned(),
            Progress::Requesting { attempt, protocol } => {
                format!("asking the model ({attempt}, protocol v{protocol})…")
            }
            Progress::Receiving { chars } => format!("receiving the answer… {chars} chars"),
            Progress::ContextRound { round, requests } => {
                format!("context round {round}: {requests} request(s)…")
            }
            Progress::Repair { codes } => format!(
                "answer rejected ({}); asking for a repair…",
                codes
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Progress::Fallback { from, to, reason } => {
                format!("protocol fallback v{from} → v{to} ({reason})…")
            }
            Progress::Previewing => "computing the preview…".to_owned(),
            Progress::Testing {
                command,
                baseline: true,
            } => format!("running the tests before any change: `{command}`…"),
            Progress::Testing { command, .. } => {
                format!("change applied; running the tests: `{command}`…")
            }
            Progress::Tested {
                failing,
                duration_ms,
                ..
            } => format!(
                "tests ran in {:.1} s: {failing} failing",
                *duration_ms as f64 / 1000.0
            ),
            Progress::Attempt { number, of } => format!("attempt {number} of {of}…"),
            Progress::Applying { done, total, item } => format!("applying {done}/{total} {item}"),
            Progress::Checked {
                done,
                total,
                command,
                status,
                ..
            } => format!("check {done}/{total} `{command}` {status}"),
            _ => return,
        };
        let mut err = std::io::stderr().lock();
        if self.live {
            let _ = write!(err, "\r\x1b[2K{text}");
            self.dirty.store(true, Ordering::Relaxed);
        } else {
            let _ = writeln!(err, "papayu: {text}");
        }
        let _ = err.flush();
    }

    /// Clear the live line before printing results.
    pub fn done(&self) {
        if self.dirty.swap(false, Ordering::Relaxed) {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// Ask a yes/no question on stderr, read the answer from stdin (no answer is "no").
pub fn confirm(question: &str) -> Result<bool> {
    let mut err = std::io::stderr();
    write!(err, "{question} [y/N] ")?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(matches!(
        line.trim().to_lowercase().as_str(),
        "y" | "yes" | "д" | "да"
    ))
}

/// Report an agent error with its code (JSON with `--json`) and return the exit code.
pub fn report_agent_error(e: &papayu_agent::AgentError, global: &Global) -> Result<Exit> {
    if global.json {
        let doc = serde_json::json!({"ok": false, "code": e.code(), "error": format!("{e}")});
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        eprintln!(
            "papayu: {}",
            crate::exit::with_code(e.code(), &e.to_string())
        );
    }
    Ok(Exit::from(e.code()))
}

/// Print a serialisable outcome as one JSON document with `"ok": true` merged in.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut doc = serde_json::to_value(value)?;
    if let serde_json::Value::Object(map) = &mut doc {
        map.insert("ok".into(), serde_json::Value::Bool(true));
    }
    println!("{}", serde_json::to_string_pretty(&doc)?);
    Ok(())
}
