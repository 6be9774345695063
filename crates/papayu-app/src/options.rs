//! [`AppOptions`]: what the frontend binary gives the app — its configuration directory, the
//! `PAPAYU_*` map and key lookup it read once, and how to build a provider.

use std::collections::BTreeMap;
use std::sync::Arc;

use camino::Utf8PathBuf;
use papayu_agent::AgentConfig;
use papayu_llm::Provider;

use crate::api::Transport;
use crate::error::ApiError;
use crate::provider::build_provider;

/// Looks an environment variable up by name (the frontend's access to its environment).
pub type KeyLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Builds the provider for a configuration (default: [`build_provider`]).
pub type ProviderFactory =
    Arc<dyn Fn(&AgentConfig) -> Result<Arc<dyn Provider>, ApiError> + Send + Sync>;

/// What the frontend binary gives the app.
#[derive(Clone)]
pub struct AppOptions {
    pub(crate) config_dir: Utf8PathBuf,
    pub(crate) transport: Transport,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) key_lookup: KeyLookup,
    pub(crate) home_dir: Option<Utf8PathBuf>,
    pub(crate) cache_dir: Option<Utf8PathBuf>,
    pub(crate) project: Option<Utf8PathBuf>,
    pub(crate) lang: Option<String>,
    pub(crate) original_user_prefs: Option<Utf8PathBuf>,
    pub(crate) tool_search_path: Option<std::ffi::OsString>,
    pub(crate) tool_selectors: BTreeMap<String, String>,
    pub(crate) provider_factory: ProviderFactory,
}

impl std::fmt::Debug for AppOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppOptions")
            .field("config_dir", &self.config_dir)
            .field("transport", &self.transport)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("home_dir", &self.home_dir)
            .field("cache_dir", &self.cache_dir)
            .field("project", &self.project)
            .field("lang", &self.lang)
            .field("original_user_prefs", &self.original_user_prefs)
            .finish_non_exhaustive()
    }
}

impl AppOptions {
    /// Options with the user's configuration directory (`~/.config`), an empty environment,
    /// no keys, and the default provider factory.
    pub fn new(config_dir: impl Into<Utf8PathBuf>, transport: Transport) -> Self {
        Self {
            config_dir: config_dir.into(),
            transport,
            env: BTreeMap::new(),
            key_lookup: Arc::new(|_| None),
            home_dir: None,
            cache_dir: None,
            project: None,
            lang: None,
            original_user_prefs: None,
            tool_search_path: None,
            tool_selectors: BTreeMap::new(),
            provider_factory: Arc::new(|c| build_provider(c).map_err(ApiError::from)),
        }
    }

    /// The `PAPAYU_*` variables, read once by the frontend.
    pub fn env(mut self, env: BTreeMap<String, String>) -> Self {
        self.env = env;
        self
    }

    /// How to read the variable a setting's `api_key_env` names.
    pub fn key_lookup(
        mut self,
        f: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.key_lookup = Arc::new(f);
        self
    }

    /// Where `list_dir` starts.
    pub fn home_dir(mut self, dir: impl Into<Utf8PathBuf>) -> Self {
        self.home_dir = Some(dir.into());
        self
    }

    /// The user's cache directory (`~/.cache`): online research caches fetched pages under
    /// `<cache_dir>/papayu/research` (without it, in memory only).
    pub fn cache_dir(mut self, dir: impl Into<Utf8PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// The project the frontend was started for (`app_info` hands it to the UI, which opens
    /// it first).
    pub fn project(mut self, root: impl Into<Utf8PathBuf>) -> Self {
        self.project = Some(root.into());
        self
    }

    /// The language the frontend chose for people (`app_info` hands it to the UI).
    pub fn lang(mut self, tag: impl Into<String>) -> Self {
        self.lang = Some(tag.into());
        self
    }

    /// The original papa-yu app's user preferences file (seed 000:
    /// `<data dir>/papa-yu/preferences.json`, DECISIONS D42): read, never written, for what
    /// papayu's own preferences leave unset. The frontend computes the path.
    pub fn original_user_prefs(mut self, path: impl Into<Utf8PathBuf>) -> Self {
        self.original_user_prefs = Some(path.into());
        self
    }

    /// The `PATH` the frontend runs tools with: the context's `env` block finds each probed
    /// tool on it, to remember its version under `<cache_dir>/papayu/tool-versions.json`
    /// (without it, or without a cache directory, tools are probed on every request).
    pub fn tool_search_path(mut self, path: impl Into<std::ffi::OsString>) -> Self {
        self.tool_search_path = Some(path.into());
        self
    }

    /// The frontend's variables that choose a toolchain
    /// ([`is_tool_selector`](crate::is_tool_selector)): part of each remembered tool version's key.
    pub fn tool_selectors(mut self, selectors: BTreeMap<String, String>) -> Self {
        self.tool_selectors = selectors;
        self
    }

    /// Lay what only the frontend knows of this machine over an agent configuration: the
    /// original app's preferences, and where and how the context's `env` block finds tools and
    /// remembers their versions (`<cache_dir>/papayu/tool-versions.json`).
    pub(crate) fn lay_machine_over(&self, config: &mut AgentConfig) {
        config.original_user_prefs = self.original_user_prefs.clone();
        config.env_probe_memory = self.cache_dir.as_ref().map(|c| {
            c.join("papayu")
                .join("tool-versions.json")
                .into_std_path_buf()
        });
        config.tool_search_path = self.tool_search_path.clone();
        config.tool_selectors = self.tool_selectors.clone();
    }

    /// Replace the provider factory (tests, embedders).
    pub fn provider_factory(
        mut self,
        f: impl Fn(&AgentConfig) -> Result<Arc<dyn Provider>, ApiError> + Send + Sync + 'static,
    ) -> Self {
        self.provider_factory = Arc::new(f);
        self
    }
}
