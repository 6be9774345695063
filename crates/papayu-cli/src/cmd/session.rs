//! What every model-facing command shares: configuration from the environment (read once,
//! here), the provider, the agent, the async runtime and the progress indicator.

pub use crate::term::progress::ProgressLine;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, Result};
use camino::Utf8PathBuf;
use papayu_agent::{Agent, AgentConfig};
use papayu_app::provider::{self, LocalInputs, ProviderError};
use papayu_llm::Provider;

use crate::exit::{Exit, UsageError};
use crate::global::Global;

pub use crate::layers::{cache_home as cache_dir, config_home as config_dir, env_map};

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

/// The GGUF file the user named: `--model-path`, else `local.model` (`PAPAYU_LOCAL_MODEL` or a
/// config file) — a path, or the short name of a catalogue model (`qwen2.5-coder-0.5b`: its
/// place in the model cache) when no file of that name exists.
pub fn named_local_model(global: &Global) -> Option<PathBuf> {
    let named = global.model_path.clone().or_else(|| {
        crate::layers::layered(global)
            .ok()?
            .value(papayu_agent::layered::keys::LOCAL_MODEL)
            .map(str::trim)
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

/// `local.threads` (`PAPAYU_LOCAL_THREADS` or a config file): the local provider's CPU threads
/// (default: every core).
#[cfg(feature = "local")]
fn local_threads(global: &Global) -> Result<Option<usize>> {
    crate::layers::layered(global)?
        .local_threads()
        .map_err(|e| UsageError(e.to_string()).into())
}

/// What papayu-app's provider choice needs to know about local models: the model the user
/// named and the cached default one.
pub fn local_inputs(global: &Global) -> LocalInputs {
    LocalInputs::new(named_local_model(global), default_model())
}

/// `local` with the local provider's settings: the prompt cache in [`prompt_cache_dir`] and
/// `local.threads` threads.
#[cfg(feature = "local")]
fn with_local_settings(mut local: LocalInputs, global: &Global) -> Result<LocalInputs> {
    local.prompt_cache_dir = Some(prompt_cache_dir());
    local.threads = local_threads(global)?;
    Ok(local)
}

/// The local provider's configuration as every command uses it: the model at `path`, the
/// prompt cache in [`prompt_cache_dir`], `local.threads` threads (default: every core).
#[cfg(feature = "local")]
pub fn local_config(path: &std::path::Path, global: &Global) -> Result<papayu_llm::LocalConfig> {
    Ok(with_local_settings(LocalInputs::default(), global)?.local_config(path))
}

/// The agent configuration: the layered configuration (files, environment, flags), the API key
/// from the environment.
pub fn agent_config(global: &Global) -> Result<AgentConfig> {
    let mut config = crate::layers::agent_config(global)?;
    config.sandbox = sandbox(&config);
    config.virtual_env = virtual_env();
    config.env_probe_memory = Some(tool_versions_file());
    config.tool_search_path = tool_search_path();
    config.tool_selectors = tool_selectors();
    config.original_user_prefs = crate::cmd::memory::original_user_prefs();
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

/// Where the `env` block remembers tool versions: `<cache>/papayu/tool-versions.json`
/// (derived data: deleting it only costs the next run its probes).
pub fn tool_versions_file() -> PathBuf {
    cache_dir().join("papayu").join("tool-versions.json")
}

/// The `PATH` papayu runs tools with, for the `env` block's memory of their versions.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
fn tool_search_path() -> Option<std::ffi::OsString> {
    std::env::var_os("PATH").filter(|p| !p.is_empty())
}

/// The variables that choose which version of a tool runs, part of each remembered version's
/// key.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
pub fn tool_selectors() -> std::collections::BTreeMap<String, String> {
    std::env::vars()
        .filter(|(k, _)| papayu_context::is_tool_selector(k))
        .collect()
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
    // Only the in-process model reads local.threads: a bad value must not fail a network run.
    #[cfg(feature = "local")]
    let local = match provider::choose(config, &local) {
        provider::Choice::Local { .. } => with_local_settings(local, global)?,
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
    // A spinner and a --json-stream transcript show the characters as they arrive.
    config.stream = (std::io::stderr().is_terminal() && !global.json) || crate::json::streaming();
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

/// Ask `question [y/N]` (in Russian `[д/Н]`) on stderr; "no" unless the answer is yes. On a
/// terminal (stdin and stderr both) it is dialoguer's prompt: in English `y` or `n`, then
/// Enter; in Russian a line (`д`, `да`, `y`, `yes`); Enter alone is the default, no. Otherwise (a script's piped `y`) one line is read from stdin: `y`, `yes`, `д` or `да`
/// is yes, anything else and the end of input no. dialoguer reads keys from the terminal, never
/// from a pipe, hence the line read.
pub fn confirm(question: &str) -> Result<bool> {
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        let asked = match crate::i18n::lang() {
            crate::i18n::Lang::En => dialoguer::Confirm::new()
                .with_prompt(question)
                .default(false)
                .wait_for_newline(true)
                .interact(),
            // dialoguer's Confirm shows `[y/N]` and takes only `y`/`n` keys: in Russian the
            // answer is a line, read as the piped one is, under a prompt that shows `[д/Н]`.
            crate::i18n::Lang::Ru => dialoguer::Input::<String>::with_theme(&SuffixTheme)
                .with_prompt(format!("{question} {}", crate::tr!("confirm-suffix")))
                .allow_empty(true)
                .interact_text()
                .map(|answer| is_yes(&answer)),
        };
        return match asked {
            Ok(answer) => Ok(answer),
            // Ctrl-C: the prompt raised SIGINT, which ends papayu unless `chat` listens for it
            // (then the question is declined and the REPL goes on).
            Err(dialoguer::Error::IO(e)) if e.kind() == std::io::ErrorKind::Interrupted => {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        };
    }
    let mut err = std::io::stderr();
    write!(err, "{question} {} ", crate::tr!("confirm-suffix"))?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(is_yes(&line))
}

/// An answer is yes when it is `y`, `yes`, `д` or `да` (any case, spaces around), in either
/// language: the prompt shows `y` in English and `д` in Russian.
fn is_yes(answer: &str) -> bool {
    matches!(
        answer.trim().to_lowercase().as_str(),
        "y" | "yes" | "д" | "да"
    )
}

/// A line prompt that shows the question as given (its suffix included), with no `:` added.
struct SuffixTheme;

impl dialoguer::theme::Theme for SuffixTheme {
    fn format_input_prompt(
        &self,
        f: &mut dyn std::fmt::Write,
        prompt: &str,
        _default: Option<&str>,
    ) -> std::fmt::Result {
        write!(f, "{prompt} ")
    }

    fn format_input_prompt_selection(
        &self,
        f: &mut dyn std::fmt::Write,
        prompt: &str,
        selection: &str,
    ) -> std::fmt::Result {
        write!(f, "{prompt} {selection}")
    }
}

/// Report an agent error with its code (the machine document with `--json`) and return the
/// exit code.
pub fn report_agent_error(e: &papayu_agent::AgentError, global: &Global) -> Result<Exit> {
    if global.json {
        crate::json::print_failure(e.code(), &e.to_string(), &serde_json::Value::Null)?;
    } else {
        anstream::eprintln!(
            "papayu: {}",
            crate::exit::with_code(e.code(), &e.to_string())
        );
    }
    Ok(Exit::from(e.code()))
}

/// Print a serialisable outcome as the machine document of a success (`"ok": true`,
/// `"code": null`, then its fields).
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    crate::json::print_ok(value)
}

#[cfg(test)]
mod confirm_tests {
    use super::is_yes;

    #[test]
    fn yes_is_what_either_prompt_shows() {
        for yes in ["y", "Y", "yes", " д\n", "Д", "да", "ДА"] {
            assert!(is_yes(yes), "{yes:?}");
        }
        for no in ["", "\n", "n", "н", "нет", "no", "yep"] {
            assert!(!is_yes(no), "{no:?}");
        }
    }
}
