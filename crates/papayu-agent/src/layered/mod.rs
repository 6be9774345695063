//! One layered configuration for every frontend: defaults < user file < project file <
//! environment < flags, each value remembering where it came from.
//! It reads the two config files it is pointed at and writes one on `set`; never the environment.
//!
//! The layers are merged into the `PAPAYU_*` map [`AgentConfig::from_env_map`] parses, so a
//! value is checked the same way wherever it comes from; an error names the file and key, or the
//! variable, or the flag that gave the bad value. API keys never come from a file: a file names
//! the variable that holds one (`llm.api_key_env = "OPENAI_API_KEY"`).
//!
//! ```
//! use std::collections::BTreeMap;
//! use camino::Utf8Path;
//! use papayu_agent::layered::{FileLayer, Layers, Source};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let user = FileLayer::parse(
//!     Utf8Path::new("/home/u/.config/papayu/config.toml"),
//!     "[llm]\nmodel = \"gpt-4.1\"\napi_key_env = \"OPENAI_API_KEY\"\ntemperature = 0.5\n",
//! )?;
//! let project = FileLayer::parse(
//!     Utf8Path::new("/p/.papa-yu/config.toml"),
//!     "[llm]\nmodel = \"m-project\"\n",
//! )?;
//! let env = BTreeMap::from([("PAPAYU_LLM_TEMPERATURE".to_owned(), "0.25".to_owned())]);
//! let layered = Layers::new()
//!     .user(Some(user))
//!     .project(Some(project))
//!     .env(env)
//!     .flag("llm.provider", "--provider", "openai")?
//!     .resolve();
//! assert_eq!(layered.get("llm.model").map(|s| s.source), Some(Source::Project));
//! assert_eq!(layered.value("llm.temperature"), Some("0.25"));
//! let config = layered.agent_config(&|var| (var == "OPENAI_API_KEY").then(|| "sk-x".to_owned()))?;
//! assert_eq!(config.model.as_deref(), Some("m-project"));
//! assert_eq!(config.api_key.as_deref(), Some("sk-x"));
//! assert_eq!(config.temperature, 0.25);
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::fmt;

use camino::Utf8Path;
use serde::Serialize;
use serde_json::Value;

use crate::config::{AgentConfig, ConfigError};

mod file;
pub mod keys;

pub use file::{FileEdit, FileLayer, checked_value, looks_secret};
pub use keys::{KEYS, Key, Kind};

/// The user's config file, beneath the user configuration directory.
pub const USER_FILE: &str = "papayu/config.toml";
/// The project's config file, beneath the project root.
pub const PROJECT_FILE: &str = ".papa-yu/config.toml";

/// The most CPU threads `local.threads` may ask for.
pub const MAX_LOCAL_THREADS: usize = 512;

/// Where a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Nothing set it: papayu's default.
    Default,
    /// The user file (`~/.config/papayu/config.toml`).
    User,
    /// The project file (`.papa-yu/config.toml`).
    Project,
    /// An environment variable.
    Env,
    /// A command-line flag.
    Flag,
}

impl Source {
    /// `default`, `user`, `project`, `env` or `flag`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::User => "user",
            Source::Project => "project",
            Source::Env => "env",
            Source::Flag => "flag",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One key's winning value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// The dotted key.
    pub key: &'static str,
    /// The value as its variable would hold it; `None` for a default.
    pub value: Option<String>,
    /// Which layer gave it.
    pub source: Source,
    /// The file, variable or flag that gave it.
    pub origin: Option<String>,
}

/// The layers before they are merged.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    user: Option<FileLayer>,
    project: Option<FileLayer>,
    env: BTreeMap<String, String>,
    flags: BTreeMap<&'static str, (String, String)>,
}

impl Layers {
    /// No layers: every key at its default.
    pub fn new() -> Layers {
        Layers::default()
    }

    /// The user's config file at `user_file` and the config file ([`PROJECT_FILE`]) of the
    /// project at `project_root`, read (a missing file is no layer): the layers every frontend
    /// lays its environment and flags over, so `papayu` and the UI rank values the same way.
    ///
    /// # Errors
    ///
    /// The errors of [`FileLayer::read`], naming the file.
    pub fn read(
        user_file: &Utf8Path,
        project_root: Option<&Utf8Path>,
    ) -> Result<Layers, ConfigError> {
        let project = match project_root {
            Some(root) => FileLayer::read(&root.join(PROJECT_FILE))?,
            None => None,
        };
        Ok(Layers::new()
            .user(FileLayer::read(user_file)?)
            .project(project))
    }

    /// The user file, if there is one.
    pub fn user(mut self, layer: Option<FileLayer>) -> Layers {
        self.user = layer;
        self
    }

    /// The project file, if there is one.
    pub fn project(mut self, layer: Option<FileLayer>) -> Layers {
        self.project = layer;
        self
    }

    /// The `PAPAYU_*` variables the frontend read.
    pub fn env(mut self, env: BTreeMap<String, String>) -> Layers {
        self.env = env;
        self
    }

    /// A flag's value for `key` (`flag` names it in errors and in `config show`).
    ///
    /// # Errors
    ///
    /// [`ConfigError::UnknownKey`] for a key that does not exist.
    pub fn flag(
        mut self,
        key: &str,
        flag: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Layers, ConfigError> {
        let k = keys::find(key).ok_or_else(|| ConfigError::UnknownKey {
            path: None,
            key: key.to_owned(),
        })?;
        self.flags.insert(k.name, (flag.into(), value.into()));
        Ok(self)
    }

    /// Merge: for each key the flag, else its variable, else the project file, else the user
    /// file, else the default.
    pub fn resolve(&self) -> Layered {
        let set = |v: &str| !v.trim().is_empty();
        let settings = KEYS
            .iter()
            .map(|k| {
                let found = self
                    .flags
                    .get(k.name)
                    .filter(|(_, v)| set(v))
                    .map(|(flag, v)| (v.clone(), Source::Flag, flag.clone()))
                    .or_else(|| {
                        let var = k.var?;
                        let v = self.env.get(var).filter(|v| set(v))?;
                        Some((v.clone(), Source::Env, var.to_owned()))
                    })
                    .or_else(|| {
                        [(&self.project, Source::Project), (&self.user, Source::User)]
                            .into_iter()
                            .find_map(|(layer, source)| {
                                let layer = layer.as_ref()?;
                                let v = layer.get(k.name).filter(|v| set(v))?;
                                Some((v.to_owned(), source, layer.path().to_string()))
                            })
                    });
                match found {
                    Some((value, source, origin)) => Setting {
                        key: k.name,
                        value: Some(value),
                        source,
                        origin: Some(origin),
                    },
                    None => Setting {
                        key: k.name,
                        value: None,
                        source: Source::Default,
                        origin: None,
                    },
                }
            })
            .collect();
        Layered {
            settings,
            env: self.env.clone(),
        }
    }
}

/// The merged configuration: every key's winning value with its source.
#[derive(Debug, Clone)]
pub struct Layered {
    settings: Vec<Setting>,
    env: BTreeMap<String, String>,
}

impl Layered {
    /// Every key, in [`KEYS`] order.
    pub fn settings(&self) -> &[Setting] {
        &self.settings
    }

    /// The setting of `key`.
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.key == key)
    }

    /// The value of `key`, unless it is at its default.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(|s| s.value.as_deref())
    }

    /// `key` as a boolean (`1|true|yes`), `false` at its default.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] naming where a value that is not a boolean came from.
    pub fn bool(&self, key: &str) -> Result<bool, ConfigError> {
        match self.get(key) {
            Some(s @ Setting { value: Some(v), .. }) => {
                crate::config::parse_bool(key, v).map_err(|e| self.attribute(e, s))
            }
            _ => Ok(false),
        }
    }

    /// `local.threads`: the in-process model's CPU threads, 1 to 512; `None` at its default
    /// (every core). Only a frontend that loads the in-process model asks, so a bad value never
    /// fails a network run.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] naming the file and key, the variable or the flag of a value that is not
    /// such a number.
    pub fn local_threads(&self) -> Result<Option<usize>, ConfigError> {
        let Some(s @ Setting { value: Some(v), .. }) = self.get(keys::LOCAL_THREADS) else {
            return Ok(None);
        };
        match v.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_LOCAL_THREADS).contains(&n) => Ok(Some(n)),
            _ => Err(self.attribute(
                ConfigError::Invalid {
                    variable: "PAPAYU_LOCAL_THREADS".to_owned(),
                    value: v.clone(),
                    message: format!("expected a number of threads from 1 to {MAX_LOCAL_THREADS}"),
                },
                s,
            )),
        }
    }

    /// The `PAPAYU_*` map of the winning values (what [`AgentConfig::from_env_map`] parses),
    /// with the other variables the frontend passed (such as `PAPAYU_LLM_AGGREGATOR_KEY`).
    pub fn var_map(&self) -> BTreeMap<String, String> {
        let mut map: BTreeMap<String, String> = self
            .env
            .iter()
            .filter(|(k, _)| keys::by_var(k).is_none())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for s in &self.settings {
            if let (Some(var), Some(v)) = (keys::find(s.key).and_then(|k| k.var), &s.value) {
                map.insert(var.to_owned(), v.clone());
            }
        }
        map
    }

    /// The agent configuration. The API key is `PAPAYU_LLM_API_KEY`, else the variable
    /// `llm.api_key_env` names, read with `key_lookup` (the frontend's access to its
    /// environment); so are the `api_key_env` variables of `llm.providers`.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] naming the file and key, the variable, or the flag of a bad value, or the
    /// key variable that is not set.
    pub fn agent_config(
        &self,
        key_lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<AgentConfig, ConfigError> {
        let mut map = self.var_map();
        if let Some(providers) = map.get("PAPAYU_LLM_PROVIDERS").cloned()
            && let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(&providers)
        {
            for name in entries
                .iter()
                .filter_map(|e| e.get("api_key_env").and_then(Value::as_str))
            {
                if !map.contains_key(name)
                    && let Some(key) = key_lookup(name)
                {
                    map.insert(name.to_owned(), key);
                }
            }
        }
        let mut config = AgentConfig::from_env_map(&map).map_err(|e| {
            match keys::by_var(e.variable()).and_then(|k| self.get(k.name)) {
                Some(s) => self.attribute(e, s),
                None => e,
            }
        })?;
        if config.api_key.is_none()
            && let Some(s) = self.get(keys::API_KEY_ENV)
            && let Some(name) = s.value.as_deref()
        {
            let key = key_lookup(name.trim())
                .map(|k| k.trim().to_owned())
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ConfigError::Missing {
                    variable: name.trim().to_owned(),
                    message: format!(
                        "llm.api_key_env names it as the variable holding the API key ({}); set it, or change llm.api_key_env",
                        s.origin.as_deref().unwrap_or("config")
                    ),
                })?;
            config.api_key = Some(key);
        }
        Ok(config)
    }

    /// An error about `setting`'s value, told where that value came from.
    fn attribute(&self, e: ConfigError, setting: &Setting) -> ConfigError {
        match (setting.source, &setting.origin) {
            (Source::User | Source::Project, Some(path)) => match e {
                ConfigError::Invalid { value, message, .. } => ConfigError::InFile {
                    path: path.into(),
                    key: setting.key.to_owned(),
                    value,
                    message,
                },
                other => other,
            },
            (Source::Flag, Some(flag)) => e.renamed(flag),
            _ => e,
        }
    }

    /// Every key with the value in effect — the configuration's own for what it parses (the
    /// default filled in), else the winning text — and its source; secrets are never shown.
    pub fn shown(&self, config: &AgentConfig) -> Vec<Shown> {
        let snapshot = config.config_snapshot();
        self.settings
            .iter()
            .map(|s| {
                let effective = match s.key {
                    keys::API_KEY => Value::String(
                        if config.api_key.is_some() {
                            "(set)"
                        } else {
                            "(not set)"
                        }
                        .into(),
                    ),
                    key => snapshot_value(&snapshot, key)
                        .or_else(|| s.value.clone().map(Value::String))
                        .unwrap_or(Value::Null),
                };
                let source = if s.key == keys::API_KEY
                    && s.source == Source::Default
                    && config.api_key.is_some()
                {
                    // The key came through the variable `llm.api_key_env` names.
                    self.get(keys::API_KEY_ENV).map_or(s.source, |e| e.source)
                } else {
                    s.source
                };
                Shown {
                    key: s.key,
                    value: effective,
                    source,
                    origin: s.origin.clone(),
                }
            })
            .collect()
    }
}

/// A key as `papayu config show` and `doctor` print it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    /// The dotted key.
    pub key: &'static str,
    /// The value in effect (a secret only as `(set)`).
    pub value: Value,
    /// Where it came from.
    pub source: Source,
    /// The file, variable or flag.
    pub origin: Option<String>,
}

/// The effective value of `key` from [`AgentConfig::config_snapshot`], for the keys it covers.
fn snapshot_value(snapshot: &BTreeMap<String, Value>, key: &str) -> Option<Value> {
    let name = match key {
        "llm.provider" => "provider",
        "llm.api_url" => "api_url",
        "llm.model" => "model",
        "llm.mode" => "llm_mode",
        "llm.strict_json" => "strict_json",
        "llm.temperature" => "temperature",
        "llm.max_tokens" => "max_tokens",
        "llm.timeout_sec" => "timeout_sec",
        "llm.providers" => "providers",
        "protocol.version" => "protocol_forced",
        "protocol.default" => "protocol_default",
        "protocol.fallback_to_v1" => "protocol_fallback_to_v1",
        "trace.enabled" => "trace",
        "trace.raw" => "trace_raw",
        "apply.normalize_eol" => "normalize_eol",
        "memory.autopatch" => "memory_autopatch",
        "context.max_files" => "context_max_files",
        "context.max_file_chars" => "context_max_file_chars",
        "context.max_total_chars" => "context_max_total_chars",
        "context.max_log_chars" => "context_max_log_chars",
        "context.small_project_bytes" => "context_small_project_bytes",
        "checks.sandbox" => "sandbox",
        "local.edit_style" => "local_edit_style",
        _ => return None,
    };
    snapshot.get(name).cloned()
}

#[cfg(test)]
mod tests;
