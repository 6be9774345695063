//! The UI's files under `<config_dir>/papayu/`: its settings (in the user's config file, which
//! `papayu config` shows and changes too) and recent projects. API keys are never among them:
//! settings name the environment variable that holds a key.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_agent::AgentConfig;
use papayu_agent::layered::{FileEdit, FileLayer, USER_FILE};
use papayu_fs::write_atomic;
use papayu_llm::ProviderKind;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// Where the settings live, under the configuration directory: the user's config file, shared
/// with the CLI.
pub const SETTINGS_FILE: &str = USER_FILE;
/// Where earlier versions kept the settings: read when the config file does not say, and
/// removed once the settings are saved to the config file.
pub const LEGACY_SETTINGS_FILE: &str = "papayu/ui-settings.json";
/// Where the recent projects live, under the configuration directory.
pub const RECENT_FILE: &str = "papayu/ui-recent.json";
/// At most this many recent projects are kept.
pub const MAX_RECENT: usize = 20;

/// The colour theme.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    /// Light.
    Light,
    /// Dark.
    Dark,
    /// Follow the system.
    #[default]
    System,
}

/// The UI's settings: the UI's keys of the user's config file. Like every value of that file
/// they rank under the project's file and the `PAPAYU_*` environment, over the defaults
/// (papayu-agent's layered configuration, as in the CLI).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// `openai`, `openai-compatible`, `ollama` or `anthropic`.
    #[serde(default)]
    pub provider: Option<String>,
    /// The provider's base URL.
    #[serde(default)]
    pub api_url: Option<String>,
    /// The model.
    #[serde(default)]
    pub model: Option<String>,
    /// The name of the environment variable holding the API key (never the key).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Protocol version 1, 2 or 3.
    #[serde(default)]
    pub protocol_version: Option<u8>,
    /// Ask for strict structured output.
    #[serde(default)]
    pub strict_json: Option<bool>,
    /// Sampling temperature, 0..=2.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Answer token budget.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Request timeout in seconds.
    #[serde(default)]
    pub timeout_sec: Option<u64>,
    /// The colour theme.
    #[serde(default)]
    pub theme: Theme,
}

fn blank(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

impl Settings {
    /// Check every field; the error names the field.
    pub fn validate(&self) -> Result<(), ApiError> {
        if let Some(p) = blank(&self.provider) {
            p.parse::<ProviderKind>().map_err(|_| {
                ApiError::bad_request(format!(
                    "provider: unknown provider {p:?}; use openai, openai-compatible, ollama or anthropic"
                ))
            })?;
        }
        if let Some(u) = blank(&self.api_url)
            && !(u.starts_with("http://") || u.starts_with("https://"))
        {
            return Err(ApiError::bad_request(format!(
                "api_url: {u:?} is not an http(s) URL"
            )));
        }
        if let Some(name) = blank(&self.api_key_env)
            && !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(ApiError::bad_request(format!(
                "api_key_env: {name:?} is not an environment variable name (the key itself is never stored; name the variable that holds it)"
            )));
        }
        if let Some(v) = self.protocol_version
            && !(1..=3).contains(&v)
        {
            return Err(ApiError::bad_request(format!(
                "protocol_version: {v} is not 1, 2 or 3"
            )));
        }
        if let Some(t) = self.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(ApiError::bad_request(format!(
                "temperature: {t} is out of range (0 to 2)"
            )));
        }
        if self.max_tokens == Some(0) {
            return Err(ApiError::bad_request("max_tokens: must be at least 1"));
        }
        if self.timeout_sec == Some(0) {
            return Err(ApiError::bad_request("timeout_sec: must be at least 1"));
        }
        Ok(())
    }

    /// Check every field as its `PAPAYU_*` variable would be checked (the error names that
    /// variable); the key variable is looked up only when a model call needs it.
    pub(crate) fn check_fields(&self) -> Result<(), papayu_agent::ConfigError> {
        let mut config = AgentConfig::from_env_map(&BTreeMap::new())?;
        if let Some(p) = blank(&self.provider) {
            config.set_provider(p)?;
        }
        if let Some(u) = blank(&self.api_url) {
            config.set_api_url(u)?;
        }
        if let Some(v) = self.protocol_version {
            config.set_protocol_version(v)?;
        }
        if let Some(t) = self.temperature {
            // The configuration's own precision: the range check sees what the agent would use.
            config.set_temperature(t as f32)?;
        }
        if let Some(n) = self.max_tokens {
            config.set_max_tokens(n)?;
        }
        if let Some(n) = self.timeout_sec {
            config.set_timeout_secs(n)?;
        }
        Ok(())
    }
}

/// A field of [`Settings`], as the config file holds it.
#[derive(Debug, Clone, Copy)]
enum Field {
    Provider,
    ApiUrl,
    Model,
    ApiKeyEnv,
    ProtocolVersion,
    StrictJson,
    Temperature,
    MaxTokens,
    TimeoutSec,
    Theme,
}

/// Each field's key in the config file.
const FIELDS: &[(&str, Field)] = &[
    ("llm.provider", Field::Provider),
    ("llm.api_url", Field::ApiUrl),
    ("llm.model", Field::Model),
    ("llm.api_key_env", Field::ApiKeyEnv),
    ("protocol.version", Field::ProtocolVersion),
    ("llm.strict_json", Field::StrictJson),
    ("llm.temperature", Field::Temperature),
    ("llm.max_tokens", Field::MaxTokens),
    ("llm.timeout_sec", Field::TimeoutSec),
    ("ui.theme", Field::Theme),
];

fn parsed<T: std::str::FromStr>(value: &str) -> Result<Option<T>, String>
where
    T::Err: std::fmt::Display,
{
    value
        .trim()
        .parse::<T>()
        .map(Some)
        .map_err(|e| e.to_string())
}

impl Settings {
    /// `field` as its config file value; `None` when unset (the theme: when `system`).
    fn field(&self, field: Field) -> Option<String> {
        let text = |v: &Option<String>| blank(v).map(str::to_owned);
        match field {
            Field::Provider => text(&self.provider),
            Field::ApiUrl => text(&self.api_url),
            Field::Model => text(&self.model),
            Field::ApiKeyEnv => text(&self.api_key_env),
            Field::ProtocolVersion => self.protocol_version.map(|v| v.to_string()),
            Field::StrictJson => self.strict_json.map(|v| v.to_string()),
            Field::Temperature => self.temperature.map(|v| v.to_string()),
            Field::MaxTokens => self.max_tokens.map(|v| v.to_string()),
            Field::TimeoutSec => self.timeout_sec.map(|v| v.to_string()),
            Field::Theme => match self.theme {
                Theme::System => None,
                Theme::Light => Some("light".to_owned()),
                Theme::Dark => Some("dark".to_owned()),
            },
        }
    }

    /// Set `field` from its config file value.
    fn set_field(&mut self, field: Field, value: &str) -> Result<(), String> {
        let text = Some(value.trim().to_owned());
        match field {
            Field::Provider => self.provider = text,
            Field::ApiUrl => self.api_url = text,
            Field::Model => self.model = text,
            Field::ApiKeyEnv => self.api_key_env = text,
            Field::ProtocolVersion => self.protocol_version = parsed(value)?,
            Field::StrictJson => self.strict_json = parsed(value)?,
            Field::Temperature => self.temperature = parsed(value)?,
            Field::MaxTokens => self.max_tokens = parsed(value)?,
            Field::TimeoutSec => self.timeout_sec = parsed(value)?,
            Field::Theme => {
                self.theme = serde_json::from_value(serde_json::Value::String(value.to_owned()))
                    .map_err(|_| "expected light, dark or system".to_owned())?;
            }
        }
        Ok(())
    }
}

/// One recently opened project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentProject {
    /// The project root.
    pub path: String,
    /// The directory's name.
    pub name: String,
    /// When it was last opened.
    pub opened_unix_ms: u64,
}

fn read_json<T: serde::de::DeserializeOwned + Default>(path: &Utf8Path) -> Result<T, ApiError> {
    match fs_err::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            ApiError::new(
                "ERR_IO",
                format!("{path} is not valid ({e}); fix or delete it"),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(ApiError::new("ERR_IO", e.to_string())),
    }
}

fn write_json<T: Serialize>(path: &Utf8Path, value: &T) -> Result<(), ApiError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| ApiError::internal(e.to_string()))?;
    write_atomic(path, &bytes).map_err(ApiError::from)
}

/// The files of one configuration directory.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    config_dir: Utf8PathBuf,
}

impl Store {
    pub(crate) fn new(config_dir: Utf8PathBuf) -> Self {
        Self { config_dir }
    }

    /// The settings the config file holds, over those of the legacy JSON file.
    pub(crate) fn settings(&self) -> Result<Settings, ApiError> {
        let mut s: Settings = read_json(&self.config_dir.join(LEGACY_SETTINGS_FILE))?;
        if let Some(file) = FileLayer::read(&self.settings_file())? {
            for (key, field) in FIELDS {
                if let Some(value) = file.get(key) {
                    s.set_field(*field, value).map_err(|message| {
                        ApiError::new(
                            "ERR_INVALID_CONFIG",
                            format!("{}: {key} = {value:?}: {message}", file.path()),
                        )
                    })?;
                }
            }
        }
        Ok(s)
    }

    /// The user's config file.
    pub(crate) fn settings_file(&self) -> Utf8PathBuf {
        self.config_dir.join(SETTINGS_FILE)
    }

    /// The user's config file with every field of `s` written (its other keys and comments
    /// kept), not saved yet.
    fn edited(&self, s: &Settings) -> Result<FileEdit, ApiError> {
        let mut file = FileEdit::open(&self.settings_file())?;
        for (key, field) in FIELDS {
            match s.field(*field) {
                Some(value) => file.set(key, &value)?,
                None => {
                    file.unset(key)?;
                }
            }
        }
        Ok(file)
    }

    /// The user layer when it is not the file as saved: the file with `pending` settings
    /// written (a connection test before saving), or with what only the legacy JSON file
    /// holds laid in (until the next save moves it there). `None`: the file as it is.
    pub(crate) fn unsaved_user_layer(
        &self,
        pending: Option<&Settings>,
    ) -> Result<Option<FileLayer>, ApiError> {
        let s = match pending {
            Some(s) => s.clone(),
            None if self.config_dir.join(LEGACY_SETTINGS_FILE).exists() => self.settings()?,
            None => return Ok(None),
        };
        Ok(Some(self.edited(&s)?.layer()?))
    }

    /// Write every field to the config file (keeping its other keys and comments); the legacy
    /// JSON file is then superseded and removed.
    pub(crate) fn save_settings(&self, s: &Settings) -> Result<(), ApiError> {
        self.edited(s)?.save()?;
        match fs_err::remove_file(self.config_dir.join(LEGACY_SETTINGS_FILE)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(ApiError::new("ERR_IO", e.to_string()))
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn recent(&self) -> Result<Vec<RecentProject>, ApiError> {
        read_json(&self.config_dir.join(RECENT_FILE))
    }

    /// Put `path` first, drop duplicates, keep [`MAX_RECENT`].
    pub(crate) fn touch_recent(&self, path: &Utf8Path, now_ms: u64) -> Result<(), ApiError> {
        let mut list = self.recent().unwrap_or_default();
        list.retain(|r| r.path != path.as_str());
        list.insert(
            0,
            RecentProject {
                path: path.to_string(),
                name: path.file_name().unwrap_or(path.as_str()).to_owned(),
                opened_unix_ms: now_ms,
            },
        );
        list.truncate(MAX_RECENT);
        write_json(&self.config_dir.join(RECENT_FILE), &list)
    }
}
