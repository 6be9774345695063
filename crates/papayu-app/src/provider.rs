//! The provider a configuration names, chosen in one place for every frontend (`papayu`,
//! `papayu ui`, `papayu-desktop`): a fan-out of `PAPAYU_LLM_PROVIDERS`, the in-process local
//! model (cargo feature `local`), or one network provider.

use std::path::PathBuf;
use std::sync::Arc;

use papayu_agent::{AgentConfig, ConfigError};
use papayu_llm::{
    BoxFuture, ChatRequest, Completion, FanOutProvider, HttpProvider, LlmError, MergePolicy,
    Provider, ProviderInfo, ProviderKind,
};

use crate::error::ApiError;

/// How to configure a provider, for messages.
pub const CONFIGURE_HINT: &str = "Configure a provider, e.g. PAPAYU_LLM_API_URL=http://127.0.0.1:8080/v1 PAPAYU_LLM_MODEL=<model> \
(scripts/local-llm.sh serve 8080 runs a local one), or see `papayu doctor`.";

/// Why no provider could be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// Nothing (or something invalid) is configured for a network provider.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The HTTP client could not be created.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// Nothing is configured and the default local model is not downloaded.
    #[error(
        "no provider is configured and the default local model is not downloaded: run `papayu model fetch` (once, offline afterwards).\n{CONFIGURE_HINT}"
    )]
    DefaultModelMissing {
        /// [`LlmError::ModelNotFound`] with the default model's path.
        #[source]
        source: LlmError,
    },
    /// The in-process model could not be loaded (missing, not a GGUF model, bad settings).
    #[error(transparent)]
    Local(LlmError),
    /// The local provider was chosen but this build lacks the cargo feature `local`.
    #[error(
        "{}: rebuild it with `cargo install --path crates/papayu-cli --features local` (needs cmake, clang and libclang-dev).\n{CONFIGURE_HINT}",
        if *implicit {
            "no provider is configured, and this papayu was built without the in-process local provider".to_owned()
        } else {
            format!("the local provider (model {}) is not part of this build", path.display())
        }
    )]
    LocalNotBuilt {
        /// The model file that was chosen.
        path: PathBuf,
        /// Chosen because nothing else was configured.
        implicit: bool,
    },
}

impl From<ProviderError> for ApiError {
    fn from(e: ProviderError) -> Self {
        match e {
            ProviderError::Config(c) => {
                let mut a = ApiError::from(c);
                a.message.push_str(
                    "; configure a provider in Settings (or PAPAYU_LLM_API_URL and PAPAYU_LLM_MODEL)",
                );
                a
            }
            ProviderError::Llm(l) | ProviderError::Local(l) => ApiError::from(l),
            ProviderError::DefaultModelMissing { ref source } => {
                ApiError::new(source.code().as_str(), e.to_string())
            }
            ProviderError::LocalNotBuilt { .. } => ApiError::new(
                papayu_protocol::ErrorCode::LlmConfig.as_str(),
                e.to_string(),
            ),
        }
    }
}

/// What the frontend knows about local models: it reads the flags, the environment and the
/// cache directory, the choice itself reads nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocalInputs {
    /// The GGUF file the user named (`--model-path`, `PAPAYU_LOCAL_MODEL`).
    pub named_model: Option<PathBuf>,
    /// The cached default model (it may not exist yet: `papayu model fetch`).
    pub default_model: PathBuf,
    /// Where the local provider keeps the KV state of system prompts between processes.
    pub prompt_cache_dir: Option<PathBuf>,
    /// CPU threads for the local provider (`None`: every core).
    pub threads: Option<usize>,
}

impl LocalInputs {
    /// The named model (if any) and the default one; no prompt cache, every core.
    pub fn new(named_model: Option<PathBuf>, default_model: impl Into<PathBuf>) -> Self {
        Self {
            named_model,
            default_model: default_model.into(),
            prompt_cache_dir: None,
            threads: None,
        }
    }

    /// The local provider's configuration for the model at `path`: this prompt cache and
    /// thread count, every other field at its default.
    #[cfg(feature = "local")]
    pub fn local_config(&self, path: &std::path::Path) -> papayu_llm::LocalConfig {
        let mut local = papayu_llm::LocalConfig::new(path);
        local.prompt_cache = self.prompt_cache_dir.clone();
        if let Some(threads) = self.threads {
            local.threads = threads;
        }
        local
    }
}

/// Which provider a configuration names, before anything is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// `PAPAYU_LLM_PROVIDERS` or `PAPAYU_LLM_API_URL`/`PAPAYU_LLM_MODEL`: over the network.
    Network,
    /// The in-process model at this path.
    Local {
        /// The GGUF file.
        path: PathBuf,
        /// Chosen because nothing was configured: the cached default model.
        implicit: bool,
    },
}

/// The choice: `PAPAYU_LLM_PROVIDERS` → network (fan-out); `--provider local` /
/// `PAPAYU_LLM_PROVIDER=local`, or a model file named with no provider and no URL → local;
/// nothing configured at all → local with the default model (implicit); otherwise network.
pub fn choose(config: &AgentConfig, local: &LocalInputs) -> Choice {
    if !config.providers.is_empty() {
        return Choice::Network;
    }
    let named = local.named_model.as_ref();
    let explicit = config.provider == Some(ProviderKind::Local)
        || (named.is_some() && config.provider.is_none() && config.api_url.is_none());
    if explicit {
        return Choice::Local {
            path: named.unwrap_or(&local.default_model).clone(),
            implicit: false,
        };
    }
    if config.provider.is_none() && config.api_url.is_none() && config.model.is_none() {
        return Choice::Local {
            path: local.default_model.clone(),
            implicit: true,
        };
    }
    Choice::Network
}

/// Something the user should be told about the provider, once per process (libraries do not
/// print: the frontend does).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// Nothing was configured, so the cached default model answers.
    ImplicitLocalModel {
        /// The model file as loaded (canonical).
        model_path: PathBuf,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ImplicitLocalModel { model_path } => write!(
                f,
                "no provider configured; using the local model {} (set PAPAYU_LLM_API_URL and PAPAYU_LLM_MODEL for another)",
                model_path.display()
            ),
        }
    }
}

/// A provider ready for the agent, and what to tell the user about it.
#[non_exhaustive]
pub struct Chosen {
    /// The provider.
    pub provider: Arc<dyn Provider>,
    /// Said once per process, if at all.
    pub notice: Option<Notice>,
}

impl std::fmt::Debug for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chosen")
            .field("provider", &self.provider.info())
            .field("notice", &self.notice)
            .finish()
    }
}

/// The provider the configuration names ([`choose`]), built: the in-process local model, or
/// [`build_provider`].
pub fn build(config: &AgentConfig, local: &LocalInputs) -> Result<Chosen, ProviderError> {
    match choose(config, local) {
        Choice::Network => Ok(Chosen {
            provider: build_provider(config)?,
            notice: None,
        }),
        Choice::Local { path, implicit } => local_provider(config, local, path, implicit),
    }
}

#[cfg(feature = "local")]
fn local_provider(
    config: &AgentConfig,
    local: &LocalInputs,
    path: PathBuf,
    implicit: bool,
) -> Result<Chosen, ProviderError> {
    if implicit && !path.exists() {
        return Err(ProviderError::DefaultModelMissing {
            source: LlmError::ModelNotFound {
                path: path.display().to_string(),
            },
        });
    }
    let mut settings = local.local_config(&path);
    settings.temperature = config.temperature;
    // Unset, the local provider's own default holds: the network default (16 384) would let a
    // small local model loop for minutes. Set — in the environment or in the UI's settings —
    // it applies.
    settings.max_tokens = config.max_tokens_for(ProviderKind::Local);
    settings.timeout = config.timeout;
    let provider = papayu_llm::LocalProvider::new(settings).map_err(ProviderError::Local)?;
    let notice = implicit.then(|| Notice::ImplicitLocalModel {
        model_path: provider.model_path().to_owned(),
    });
    Ok(Chosen {
        provider: Arc::new(provider),
        notice,
    })
}

#[cfg(not(feature = "local"))]
fn local_provider(
    _config: &AgentConfig,
    _local: &LocalInputs,
    path: PathBuf,
    implicit: bool,
) -> Result<Chosen, ProviderError> {
    Err(ProviderError::LocalNotBuilt { path, implicit })
}

/// Stands in for the provider when none is configured, so a project still opens, previews
/// plan documents, applies and undoes; a model call fails with the configuration error.
pub(crate) struct Unconfigured(pub(crate) String);

impl Provider for Unconfigured {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            kind: ProviderKind::OpenAiCompatible,
            endpoint: String::new(),
            model: String::new(),
        }
    }

    fn complete<'a>(&'a self, _: &'a ChatRequest) -> BoxFuture<'a, Result<Completion, LlmError>> {
        let message = self.0.clone();
        Box::pin(async move { Err(LlmError::Config { message }) })
    }
}

/// Every entry of `PAPAYU_LLM_PROVIDERS` behind one fan-out (merged by the aggregator when one
/// is configured, else deterministically), or the single `PAPAYU_LLM_API_URL` provider.
pub fn build_provider(config: &AgentConfig) -> Result<Arc<dyn Provider>, ProviderError> {
    if !config.providers.is_empty() {
        let providers = config
            .providers
            .iter()
            .map(|c| Ok(Arc::new(HttpProvider::new(c.clone())?) as Arc<dyn Provider>))
            .collect::<Result<Vec<_>, LlmError>>()?;
        let policy = match &config.aggregator {
            Some(a) => MergePolicy::Aggregator(Arc::new(HttpProvider::new(a.clone())?)),
            None => MergePolicy::Deterministic,
        };
        return Ok(Arc::new(FanOutProvider::new(providers, policy)?));
    }
    Ok(Arc::new(HttpProvider::new(config.provider_config()?)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;

    use super::*;

    /// `PAPAYU_*` variables.
    type Vars<'a> = &'a [(&'a str, &'a str)];

    fn config(vars: Vars<'_>) -> AgentConfig {
        let env: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        AgentConfig::from_env_map(&env).unwrap()
    }

    fn inputs(named: Option<&str>) -> LocalInputs {
        LocalInputs::new(named.map(PathBuf::from), "/cache/default.gguf")
    }

    fn local(path: &str, implicit: bool) -> Choice {
        Choice::Local {
            path: path.into(),
            implicit,
        }
    }

    #[test]
    fn the_choice_table() {
        let url = ("PAPAYU_LLM_API_URL", "http://127.0.0.1:9/v1");
        let model = ("PAPAYU_LLM_MODEL", "m");
        let list = (
            "PAPAYU_LLM_PROVIDERS",
            r#"[{"url": "http://127.0.0.1:9/v1", "model": "m"}]"#,
        );
        let as_local = ("PAPAYU_LLM_PROVIDER", "local");
        let named = Some("/models/mine.gguf");
        #[rustfmt::skip]
        let table: &[(Vars<'_>, Option<&str>, Choice)] = &[
            // A provider list wins over everything, the named model included.
            (&[list], None, Choice::Network),
            (&[list, as_local], named, Choice::Network),
            // Local, asked for: the named model, else the default one.
            (&[as_local], None, local("/cache/default.gguf", false)),
            (&[as_local, url, model], named, local("/models/mine.gguf", false)),
            // A named model with no URL and no provider kind.
            (&[], named, local("/models/mine.gguf", false)),
            (&[model], named, local("/models/mine.gguf", false)),
            // Nothing configured: the default model, implicitly.
            (&[], None, local("/cache/default.gguf", true)),
            // Anything network-shaped otherwise.
            (&[url, model], None, Choice::Network),
            (&[url, model], named, Choice::Network),
            (&[model], None, Choice::Network),
            (&[url], None, Choice::Network),
            (&[("PAPAYU_LLM_PROVIDER", "ollama")], named, Choice::Network),
        ];
        for (vars, named, want) in table {
            assert_eq!(
                &choose(&config(vars), &inputs(*named)),
                want,
                "{vars:?} {named:?}"
            );
        }
    }

    #[test]
    fn a_network_configuration_builds_the_network_provider() {
        let c = config(&[
            ("PAPAYU_LLM_API_URL", "http://127.0.0.1:9/v1"),
            ("PAPAYU_LLM_MODEL", "m"),
        ]);
        let chosen = build(&c, &inputs(Some("/models/unused.gguf"))).unwrap();
        assert_eq!(chosen.provider.info().model, "m");
        assert_eq!(chosen.notice, None);
        // A URL without a model is a configuration error, not the local model.
        let c = config(&[("PAPAYU_LLM_API_URL", "http://127.0.0.1:9/v1")]);
        let e = build(&c, &inputs(None)).unwrap_err();
        assert!(
            matches!(&e, ProviderError::Config(c) if c.variable() == "PAPAYU_LLM_MODEL"),
            "{e}"
        );
    }

    #[cfg(feature = "local")]
    #[test]
    fn nothing_configured_and_no_default_model_says_how_to_get_one() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("default.gguf");
        let e = build(&config(&[]), &LocalInputs::new(None, &missing)).unwrap_err();
        assert!(
            matches!(&e, ProviderError::DefaultModelMissing { source: LlmError::ModelNotFound { path } } if *path == missing.display().to_string()),
            "{e:?}"
        );
        assert!(e.to_string().contains("papayu model fetch"), "{e}");
        assert!(e.to_string().contains(CONFIGURE_HINT), "{e}");
    }

    #[cfg(not(feature = "local"))]
    #[test]
    fn without_the_local_feature_the_local_choice_says_how_to_rebuild() {
        let e = build(&config(&[]), &inputs(None)).unwrap_err();
        assert!(
            matches!(&e, ProviderError::LocalNotBuilt { implicit: true, .. }),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(text.starts_with("no provider is configured, and this papayu was built without the in-process local provider: rebuild it with `cargo install --path crates/papayu-cli --features local`"), "{text}");
        assert!(text.ends_with(CONFIGURE_HINT), "{text}");
        let c = config(&[("PAPAYU_LLM_PROVIDER", "local")]);
        let e = build(&c, &inputs(Some("/models/mine.gguf"))).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "the local provider (model /models/mine.gguf) is not part of this build: rebuild it"
            ),
            "{e}"
        );
    }
}
