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
use papayu_llm::{Provider, ProviderKind};

use crate::exit::UsageError;
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

/// The GGUF file the user named: `--model-path`, else `PAPAYU_LOCAL_MODEL`.
pub fn named_local_model(global: &Global) -> Option<PathBuf> {
    global.model_path.clone().or_else(|| {
        env_map()
            .get("PAPAYU_LOCAL_MODEL")
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
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

/// The local provider's configuration as every command uses it: the model at `path`, the
/// prompt cache in [`prompt_cache_dir`], `PAPAYU_LOCAL_THREADS` threads (default: every core).
#[cfg(feature = "local")]
pub fn local_config(path: &std::path::Path) -> Result<papayu_llm::LocalConfig> {
    let mut local = papayu_llm::LocalConfig::new(path);
    local.prompt_cache = Some(prompt_cache_dir());
    if let Some(threads) = local_threads()? {
        local.threads = threads;
    }
    Ok(local)
}

/// Which provider a command uses, before anything is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// `PAPAYU_LLM_PROVIDERS` or `PAPAYU_LLM_API_URL`/`PAPAYU_LLM_MODEL`: over the network.
    Network,
    /// The in-process model at this path; `implicit` when nothing was configured and papayu
    /// fell back to the cached default model.
    Local {
        /// The GGUF file.
        path: PathBuf,
        /// Chosen because nothing else was configured.
        implicit: bool,
    },
}

/// The provider choice: `PAPAYU_LLM_PROVIDERS` → fan-out; `--provider local` /
/// `PAPAYU_LLM_PROVIDER=local`, or a model file named with no URL → local; nothing configured
/// at all → local with the cached default model; otherwise the network provider.
pub fn choose(config: &AgentConfig, global: &Global) -> Choice {
    if !config.providers.is_empty() {
        return Choice::Network;
    }
    let named = named_local_model(global);
    let explicit = config.provider == Some(ProviderKind::Local)
        || (named.is_some() && config.provider.is_none() && config.api_url.is_none());
    if explicit {
        return Choice::Local {
            path: named.unwrap_or_else(default_model),
            implicit: false,
        };
    }
    if config.provider.is_none() && config.api_url.is_none() && config.model.is_none() {
        return Choice::Local {
            path: default_model(),
            implicit: true,
        };
    }
    Choice::Network
}

/// How to configure a provider, for messages.
const CONFIGURE_HINT: &str = "Configure a provider, e.g. PAPAYU_LLM_API_URL=http://127.0.0.1:8080/v1 PAPAYU_LLM_MODEL=<model> \
(scripts/local-llm.sh serve 8080 runs a local one), or see `papayu doctor`.";

#[cfg(feature = "local")]
fn local_provider(
    config: &AgentConfig,
    path: PathBuf,
    implicit: bool,
) -> Result<Arc<dyn Provider>> {
    if implicit && !path.exists() {
        return Err(papayu_llm::LlmError::ModelNotFound {
            path: path.display().to_string(),
        })
        .with_context(|| {
            format!(
                "no provider is configured and the default local model is not downloaded: run `papayu model fetch` (once, offline afterwards).\n{CONFIGURE_HINT}"
            )
        });
    }
    let mut local = local_config(&path)?;
    local.temperature = config.temperature;
    // Unset, the local provider's own default holds: the network default (16 384) would let a
    // small local model loop for minutes. Set — in the environment or in `papayu ui`'s settings,
    // which reach this through `config` — it applies.
    local.max_tokens = config.max_tokens_for(ProviderKind::Local);
    local.timeout = config.timeout;
    let provider = papayu_llm::LocalProvider::new(local)?;
    // Said once per process: `papayu ui` builds an agent per project.
    static SAID: AtomicBool = AtomicBool::new(false);
    if implicit && !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "papayu: no provider configured; using the local model {} (set PAPAYU_LLM_API_URL and PAPAYU_LLM_MODEL for another)",
            provider.model_path().display()
        );
    }
    Ok(Arc::new(provider))
}

#[cfg(not(feature = "local"))]
fn local_provider(
    _config: &AgentConfig,
    path: PathBuf,
    implicit: bool,
) -> Result<Arc<dyn Provider>> {
    let why = if implicit {
        "no provider is configured, and this papayu was built without the in-process local provider"
            .to_owned()
    } else {
        format!(
            "the local provider (model {}) is not part of this build",
            path.display()
        )
    };
    Err(UsageError(format!(
        "{why}: rebuild it with `cargo install --path crates/papayu-cli --features local` (needs cmake, clang and libclang-dev).\n{CONFIGURE_HINT}"
    ))
    .into())
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
    Ok(config)
}

/// The provider the configuration names ([`choose`]): the in-process local model, or
/// papayu-app's `build_provider` (shared with the UI): every entry of `PAPAYU_LLM_PROVIDERS`
/// behind one fan-out, or the single `PAPAYU_LLM_API_URL` provider; a configuration error says
/// how to configure one.
pub fn provider(config: &AgentConfig, global: &Global) -> Result<Arc<dyn Provider>> {
    if let Choice::Local { path, implicit } = choose(config, global) {
        return local_provider(config, path, implicit);
    }
    papayu_app::build_provider(config).map_err(|e| match e {
        papayu_app::ProviderError::Config(e) => UsageError(format!("{e}\n{CONFIGURE_HINT}")).into(),
        other => anyhow::Error::new(other),
    })
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
    Agent::new(config, &root, &config_dir, provider)
        .with_context(|| format!("cannot open project {root}"))
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

/// The exit code for an agent error (SPEC §11): rejected by validation → 3, apply rejected or
/// rolled back → 4, configuration → 2, anything else → 1.
pub fn exit_for(code: papayu_protocol::ErrorCode) -> crate::exit::Exit {
    use crate::exit::Exit;
    use papayu_protocol::ErrorCode as C;
    match code {
        C::JsonParse
        | C::SchemaValidation
        | C::UnknownKind
        | C::FieldNotAllowed
        | C::InvalidPath
        | C::PathTooLong
        | C::ProtectedPath
        | C::ForbiddenPath
        | C::TooManyActions
        | C::ContentTooLarge
        | C::ContentRequired
        | C::PseudoBinary
        | C::PlaceholderContent
        | C::PatchRequired
        | C::PatchNotUnified
        | C::BaseSha256Invalid
        | C::RangeInvalid
        | C::ActionConflict
        | C::ApplyEmptyActions
        | C::PlanHasActions
        | C::UpdateWithoutBase
        | C::V2UpdateExistingForbidden => Exit::Rejected,
        C::BaseMismatch
        | C::EditBaseMismatch
        | C::NonUtf8File
        | C::PatchApplyFailed
        | C::EditApplyFailed
        | C::EditAmbiguous
        | C::EditAnchorNotFound
        | C::EditBeforeNotFound
        | C::FileExists
        | C::CheckFailed
        | C::PathEscapesRoot
        | C::UndoConflict => Exit::RolledBack,
        C::LlmConfig | C::InvalidConfig | C::ModelNotFound | C::ModelInvalid => Exit::Usage,
        _ => Exit::Failure,
    }
}

/// Report an agent error with its code (JSON with `--json`) and return the exit code.
pub fn report_agent_error(
    e: &papayu_agent::AgentError,
    global: &Global,
) -> Result<crate::exit::Exit> {
    if global.json {
        let doc = serde_json::json!({"ok": false, "code": e.code(), "error": format!("{e}")});
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        eprintln!(
            "papayu: {}",
            crate::exit::with_code(e.code(), &e.to_string())
        );
    }
    Ok(exit_for(e.code()))
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
