//! [`AgentConfig`]: every SPEC §12 variable, parsed from a map the frontend reads once.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use camino::Utf8PathBuf;
use papayu_context::ContextConfig;
use papayu_llm::{ProviderConfig, ProviderEntry, ProviderKind};
use papayu_protocol::{ErrorCode, ProtocolVersion, schema_hash};
use serde::Serialize;
use serde_json::{Value, json};

/// The system-prompt family (`PAPAYU_LLM_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum LlmMode {
    /// An engineering colleague answering with actions (default).
    #[default]
    #[serde(rename = "chat")]
    Chat,
    /// Must return a fix and how to check it.
    #[serde(rename = "fixit")]
    Fixit,
    /// One JSON document with a plan, proposed changes and verification.
    #[serde(rename = "fix-plan")]
    FixPlan,
}

impl LlmMode {
    /// The name used in `PAPAYU_LLM_MODE`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Fixit => "fixit",
            Self::FixPlan => "fix-plan",
        }
    }

    /// Every family.
    pub const ALL: [LlmMode; 3] = [Self::Chat, Self::Fixit, Self::FixPlan];
}

impl FromStr for LlmMode {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s.trim().to_ascii_lowercase().as_str() {
            "chat" => Ok(Self::Chat),
            "fixit" => Ok(Self::Fixit),
            "fix-plan" | "fix_plan" | "fixplan" => Ok(Self::FixPlan),
            _ => Err(()),
        }
    }
}

/// A configuration value that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A variable holds a value of the wrong shape.
    #[error("ERR_INVALID_CONFIG: {variable}={value:?}: {message}")]
    Invalid {
        /// The variable's name, e.g. `PAPAYU_TRACE`.
        variable: String,
        /// The value as given (never an API key).
        value: String,
        /// What was expected.
        message: String,
    },
    /// Something needed is not configured.
    #[error("ERR_INVALID_CONFIG: {variable} is not set: {message}")]
    Missing {
        /// The variable that would provide it.
        variable: String,
        /// What it is needed for.
        message: String,
    },
    /// A config file holds a value of the wrong shape.
    #[error("ERR_INVALID_CONFIG: {path}: {key} = {value:?}: {message}")]
    InFile {
        /// The file.
        path: Utf8PathBuf,
        /// The dotted key, e.g. `llm.temperature`.
        key: String,
        /// The value as written.
        value: String,
        /// What was expected.
        message: String,
    },
    /// A config file cannot be read, is not TOML, or cannot be written.
    #[error("ERR_INVALID_CONFIG: {path}: {message}")]
    File {
        /// The file.
        path: Utf8PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A key papayu does not know (`papayu config show` lists them).
    #[error("ERR_INVALID_CONFIG: {}unknown key `{key}` (`papayu config show` lists every key)", .path.as_ref().map(|p| format!("{p}: ")).unwrap_or_default())]
    UnknownKey {
        /// The file that holds it, if it came from one.
        path: Option<Utf8PathBuf>,
        /// The key.
        key: String,
    },
    /// A config file holds a secret: API keys stay in the environment.
    #[error(
        "ERR_SECRET_IN_CONFIG: {path}: `{key}` must not be in a config file; API keys stay in the environment: put the key in a variable and name it with llm.api_key_env = \"OPENAI_API_KEY\""
    )]
    SecretInFile {
        /// The file.
        path: Utf8PathBuf,
        /// The key.
        key: String,
    },
    /// A value to be written to a config file looks like an API key or another secret.
    #[error(
        "ERR_SECRET_IN_CONFIG: refusing to write `{key}`: the value looks like an API key or another secret, and config files never hold one; put it in an environment variable and name that variable with llm.api_key_env"
    )]
    SecretInValue {
        /// The key.
        key: String,
    },
}

impl ConfigError {
    /// [`ErrorCode::SecretInConfig`] for a secret in (or on its way to) a file, else
    /// [`ErrorCode::InvalidConfig`].
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::SecretInFile { .. } | Self::SecretInValue { .. } => ErrorCode::SecretInConfig,
            _ => ErrorCode::InvalidConfig,
        }
    }

    /// The variable (or config key) the error is about; for a file error, the file.
    pub fn variable(&self) -> &str {
        match self {
            Self::Invalid { variable, .. } | Self::Missing { variable, .. } => variable,
            Self::InFile { key, .. }
            | Self::UnknownKey { key, .. }
            | Self::SecretInFile { key, .. }
            | Self::SecretInValue { key } => key,
            Self::File { path, .. } => path.as_str(),
        }
    }

    /// The same error about `name` (a config key or a flag) instead of the variable.
    pub fn renamed(self, name: &str) -> ConfigError {
        match self {
            Self::Invalid { value, message, .. } => Self::Invalid {
                variable: name.to_owned(),
                value,
                message,
            },
            Self::Missing { message, .. } => Self::Missing {
                variable: name.to_owned(),
                message,
            },
            other => other,
        }
    }
}

/// Everything the agent needs to know, with SPEC defaults.
///
/// Libraries never read the environment: a frontend collects it into a map once and calls
/// [`AgentConfig::from_env_map`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentConfig {
    /// `PAPAYU_LLM_PROVIDER` (inferred from the URL when unset).
    pub provider: Option<ProviderKind>,
    /// `PAPAYU_LLM_API_URL`.
    pub api_url: Option<String>,
    /// `PAPAYU_LLM_API_KEY` (never in snapshots or traces).
    pub api_key: Option<String>,
    /// `PAPAYU_LLM_MODEL`.
    pub model: Option<String>,
    /// `PAPAYU_LLM_MODE`.
    pub llm_mode: LlmMode,
    /// `PAPAYU_LLM_STRICT_JSON`.
    pub strict_json: bool,
    /// `PAPAYU_LLM_TEMPERATURE` (0).
    pub temperature: f32,
    /// `PAPAYU_LLM_MAX_TOKENS`. Unset (`None`): each provider's own default
    /// ([`papayu_llm::ProviderKind::default_max_tokens`]: 16 384 over the network, 2 048 for the
    /// in-process model).
    pub max_tokens: Option<u32>,
    /// `PAPAYU_LLM_TIMEOUT_SEC` (90).
    pub timeout: Duration,
    /// `PAPAYU_LLM_PROVIDERS`, with `api_key_env` resolved from the same map.
    pub providers: Vec<ProviderConfig>,
    /// `PAPAYU_LLM_AGGREGATOR_URL|KEY|MODEL`.
    pub aggregator: Option<ProviderConfig>,
    /// `PAPAYU_PROTOCOL_VERSION`: forces the version.
    pub protocol_version: Option<ProtocolVersion>,
    /// `PAPAYU_PROTOCOL_DEFAULT` (2).
    pub protocol_default: ProtocolVersion,
    /// `PAPAYU_PROTOCOL_FALLBACK_TO_V1` (on).
    pub fallback_to_v1: bool,
    /// `PAPAYU_TRACE`.
    pub trace: bool,
    /// `PAPAYU_TRACE_RAW`.
    pub trace_raw: bool,
    /// `PAPAYU_NORMALIZE_EOL=lf`.
    pub normalize_eol_lf: bool,
    /// `PAPAYU_MEMORY_AUTOPATCH`.
    pub memory_autopatch: bool,
    /// `PAPAYU_CONTEXT_MAX_FILES` (8).
    pub context_max_files: usize,
    /// `PAPAYU_CONTEXT_MAX_FILE_CHARS` (20 000).
    pub context_max_file_chars: usize,
    /// `PAPAYU_CONTEXT_MAX_TOTAL_CHARS` (120 000).
    pub context_max_total_chars: usize,
    /// `PAPAYU_CONTEXT_MAX_LOG_CHARS` (12 000).
    pub context_max_log_chars: usize,
    /// `PAPAYU_CONTEXT_SMALL_PROJECT_BYTES` (16 000): a project whose text files come to at
    /// most this much is sent whole in the base context; 0 turns that off.
    pub context_small_project_bytes: usize,
    /// Stream answers so progress reports characters received (not an environment variable:
    /// the frontend decides).
    pub stream: bool,
    /// `PAPAYU_LOCAL_EDIT_STYLE` (`search_replace`, `whole_file` or `unified_diff`): how the
    /// in-process model changes existing files; its answers are narrowed to that form (a grammar
    /// made for each request) and validated under the style's protocol version unless
    /// `PAPAYU_PROTOCOL_VERSION` forces one.
    pub local_edit_style: papayu_protocol::EditStyle,
    /// `PAPAYU_SANDBOX` (`auto`, the default, or `off`): whether check and test commands run
    /// confined when the machine can confine them.
    pub sandbox_enabled: bool,
    /// How check and test commands are confined (not an environment variable: the frontend
    /// knows how to launch its sandbox, and sets it when `sandbox_enabled`).
    pub sandbox: papayu_patch::Sandbox,
    /// The active virtual environment (`VIRTUAL_ENV`, read by the frontend), shown to the model
    /// in the `env` block.
    pub virtual_env: Option<String>,
    /// The original papa-yu app's `preferences.json` (not an environment variable: the frontend
    /// knows the platform's data directory); its values fill the user preferences papayu's own
    /// file leaves unset (`Memory::fill_from_original_user_prefs`).
    pub original_user_prefs: Option<Utf8PathBuf>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        let ctx = ContextConfig::default();
        Self {
            provider: None,
            api_url: None,
            api_key: None,
            model: None,
            llm_mode: LlmMode::Chat,
            strict_json: false,
            temperature: 0.0,
            max_tokens: None,
            timeout: papayu_llm::DEFAULT_TIMEOUT,
            providers: Vec::new(),
            aggregator: None,
            protocol_version: None,
            protocol_default: ProtocolVersion::V2,
            fallback_to_v1: true,
            trace: false,
            trace_raw: false,
            normalize_eol_lf: false,
            memory_autopatch: false,
            context_max_files: ctx.max_files,
            context_max_file_chars: ctx.max_file_chars,
            context_max_total_chars: ctx.max_total_chars,
            context_max_log_chars: ctx.max_log_chars,
            context_small_project_bytes: ctx.small_project_bytes as usize,
            stream: false,
            local_edit_style: papayu_protocol::EditStyle::default(),
            sandbox_enabled: true,
            sandbox: papayu_patch::Sandbox::default(),
            virtual_env: None,
            original_user_prefs: None,
        }
    }
}

/// Every variable [`AgentConfig::from_env_map`] reads (SPEC §12).
pub const ENV_VARIABLES: &[&str] = &[
    "PAPAYU_LLM_API_URL",
    "PAPAYU_LLM_API_KEY",
    "PAPAYU_LLM_MODEL",
    "PAPAYU_LLM_PROVIDER",
    "PAPAYU_LLM_MODE",
    "PAPAYU_LLM_STRICT_JSON",
    "PAPAYU_LLM_TEMPERATURE",
    "PAPAYU_LLM_MAX_TOKENS",
    "PAPAYU_LLM_TIMEOUT_SEC",
    "PAPAYU_LLM_PROVIDERS",
    "PAPAYU_LLM_AGGREGATOR_URL",
    "PAPAYU_LLM_AGGREGATOR_KEY",
    "PAPAYU_LLM_AGGREGATOR_MODEL",
    "PAPAYU_PROTOCOL_VERSION",
    "PAPAYU_PROTOCOL_DEFAULT",
    "PAPAYU_PROTOCOL_FALLBACK_TO_V1",
    "PAPAYU_TRACE",
    "PAPAYU_TRACE_RAW",
    "PAPAYU_NORMALIZE_EOL",
    "PAPAYU_MEMORY_AUTOPATCH",
    "PAPAYU_CONTEXT_MAX_FILES",
    "PAPAYU_CONTEXT_MAX_FILE_CHARS",
    "PAPAYU_CONTEXT_MAX_TOTAL_CHARS",
    "PAPAYU_CONTEXT_MAX_LOG_CHARS",
    "PAPAYU_CONTEXT_SMALL_PROJECT_BYTES",
    "PAPAYU_SANDBOX",
    "PAPAYU_LOCAL_EDIT_STYLE",
];

/// Parse a SPEC §12 boolean: `1|true|yes` (any case) is on, `0|false|no` or empty is off,
/// anything else is an error naming `variable`.
pub fn parse_bool(variable: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "" | "0" | "false" | "no" => Ok(false),
        _ => Err(invalid(
            variable,
            value,
            "expected 1|true|yes or 0|false|no",
        )),
    }
}

fn invalid(variable: &str, value: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        variable: variable.to_owned(),
        value: value.to_owned(),
        message: message.into(),
    }
}

/// The range of a numeric variable and what its error says is expected: one check whether the
/// value comes from the environment or is laid over it typed (the UI's settings).
struct Limit<T> {
    min: T,
    max: T,
    what: &'static str,
}

impl<T: PartialOrd> Limit<T> {
    /// `n` if it is in range; else an error naming `variable` and showing `shown`.
    fn check(&self, variable: &str, n: T, shown: &str) -> Result<T, ConfigError> {
        if n >= self.min && n <= self.max {
            Ok(n)
        } else {
            Err(self.error(variable, shown))
        }
    }

    fn error(&self, variable: &str, shown: &str) -> ConfigError {
        invalid(variable, shown, format!("expected {}", self.what))
    }
}

const TEMPERATURE: Limit<f32> = Limit {
    min: 0.0,
    max: 2.0,
    what: "a number in 0..=2",
};
const MAX_TOKENS: Limit<u32> = Limit {
    min: 1,
    max: u32::MAX,
    what: "a positive integer",
};
const TIMEOUT_SECS: Limit<u64> = Limit {
    min: 1,
    max: 86_400,
    what: "a whole number of seconds in 1..=86400",
};
const POSITIVE: Limit<usize> = Limit {
    min: 1,
    max: usize::MAX,
    what: "a positive integer",
};
const NON_NEGATIVE: Limit<usize> = Limit {
    min: 0,
    max: usize::MAX,
    what: "a whole number (0 or more)",
};

/// `PAPAYU_LLM_PROVIDER`'s value as a provider kind.
fn parse_provider(value: &str) -> Result<ProviderKind, ConfigError> {
    ProviderKind::from_str(value).map_err(|_| {
        invalid(
            "PAPAYU_LLM_PROVIDER",
            value,
            "expected openai, openai-compatible, ollama, anthropic or local",
        )
    })
}

/// `PAPAYU_LLM_API_URL` must be an http(s) URL.
fn check_api_url(url: &str) -> Result<(), ConfigError> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(invalid(
            "PAPAYU_LLM_API_URL",
            url,
            "expected an http:// or https:// URL",
        ))
    }
}

/// A protocol version number, for `variable`.
fn protocol_version(variable: &str, n: u8, shown: &str) -> Result<ProtocolVersion, ConfigError> {
    ProtocolVersion::from_number(n).ok_or_else(|| invalid(variable, shown, "expected 1, 2 or 3"))
}

struct Env<'a>(&'a BTreeMap<String, String>);

impl Env<'_> {
    /// A set, non-blank value.
    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    fn bool(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        self.get(name).map_or(Ok(default), |v| parse_bool(name, v))
    }

    /// The variable's number within `limit`, or `None` when it is not set.
    fn number<T: FromStr + PartialOrd>(
        &self,
        name: &str,
        limit: &Limit<T>,
    ) -> Result<Option<T>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let n = v.parse::<T>().map_err(|_| limit.error(name, v))?;
        limit.check(name, n, v).map(Some)
    }

    fn version(&self, name: &str) -> Result<Option<ProtocolVersion>, ConfigError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let n = v
            .parse::<u8>()
            .map_err(|_| invalid(name, v, "expected 1, 2 or 3"))?;
        protocol_version(name, n, v).map(Some)
    }
}

impl AgentConfig {
    /// Parse every SPEC §12 variable from `env` (the frontend passes `std::env::vars()`).
    /// Unset or blank variables take their defaults; an invalid value is an error naming the
    /// variable. `api_key_env` entries of `PAPAYU_LLM_PROVIDERS` are looked up in `env` too.
    pub fn from_env_map(env: &BTreeMap<String, String>) -> Result<AgentConfig, ConfigError> {
        let e = Env(env);
        let d = AgentConfig::default();
        let provider = e
            .get("PAPAYU_LLM_PROVIDER")
            .map(parse_provider)
            .transpose()?;
        let api_url = e.get("PAPAYU_LLM_API_URL").map(str::to_owned);
        if let Some(url) = &api_url {
            check_api_url(url)?;
        }
        let llm_mode = match e.get("PAPAYU_LLM_MODE") {
            None => d.llm_mode,
            Some(v) => v
                .parse()
                .map_err(|()| invalid("PAPAYU_LLM_MODE", v, "expected chat, fixit or fix-plan"))?,
        };
        let temperature = e
            .number("PAPAYU_LLM_TEMPERATURE", &TEMPERATURE)?
            .unwrap_or(d.temperature);
        let max_tokens = e
            .number("PAPAYU_LLM_MAX_TOKENS", &MAX_TOKENS)?
            .or(d.max_tokens);
        let timeout_secs = e
            .number("PAPAYU_LLM_TIMEOUT_SEC", &TIMEOUT_SECS)?
            .unwrap_or(d.timeout.as_secs());
        let providers = match e.get("PAPAYU_LLM_PROVIDERS") {
            None => Vec::new(),
            Some(v) => {
                let entries = ProviderEntry::parse_list(v)
                    .map_err(|err| invalid("PAPAYU_LLM_PROVIDERS", "<json>", err.to_string()))?;
                let mut out = Vec::with_capacity(entries.len());
                for entry in entries {
                    let key = match &entry.api_key_env {
                        None => None,
                        Some(var) => Some(e.get(var).map(str::to_owned).ok_or_else(|| {
                            ConfigError::Missing {
                                variable: var.clone(),
                                message: format!(
                                    "PAPAYU_LLM_PROVIDERS names it as the API key of {}",
                                    entry.url
                                ),
                            }
                        })?),
                    };
                    out.push(entry.into_config(key));
                }
                out
            }
        };
        let aggregator = match e.get("PAPAYU_LLM_AGGREGATOR_URL") {
            None => None,
            Some(url) => {
                let model =
                    e.get("PAPAYU_LLM_AGGREGATOR_MODEL")
                        .ok_or_else(|| ConfigError::Missing {
                            variable: "PAPAYU_LLM_AGGREGATOR_MODEL".into(),
                            message: "PAPAYU_LLM_AGGREGATOR_URL is set".into(),
                        })?;
                let mut c = ProviderConfig::new(ProviderKind::infer_from_url(url), url, model);
                if let Some(k) = e.get("PAPAYU_LLM_AGGREGATOR_KEY") {
                    c = c.with_api_key(k);
                }
                Some(c)
            }
        };
        let normalize_eol_lf = match e.get("PAPAYU_NORMALIZE_EOL") {
            None => false,
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "lf" => true,
                "keep" | "none" | "0" | "false" | "no" => false,
                _ => return Err(invalid("PAPAYU_NORMALIZE_EOL", v, "expected lf")),
            },
        };
        let usize_var =
            |name: &str, default: usize| e.number(name, &POSITIVE).map(|n| n.unwrap_or(default));
        Ok(AgentConfig {
            provider,
            api_url,
            api_key: e.get("PAPAYU_LLM_API_KEY").map(str::to_owned),
            model: e.get("PAPAYU_LLM_MODEL").map(str::to_owned),
            llm_mode,
            strict_json: e.bool("PAPAYU_LLM_STRICT_JSON", d.strict_json)?,
            temperature,
            max_tokens,
            timeout: Duration::from_secs(timeout_secs),
            providers,
            aggregator,
            protocol_version: e.version("PAPAYU_PROTOCOL_VERSION")?,
            protocol_default: e
                .version("PAPAYU_PROTOCOL_DEFAULT")?
                .unwrap_or(d.protocol_default),
            fallback_to_v1: e.bool("PAPAYU_PROTOCOL_FALLBACK_TO_V1", d.fallback_to_v1)?,
            trace: e.bool("PAPAYU_TRACE", d.trace)?,
            trace_raw: e.bool("PAPAYU_TRACE_RAW", d.trace_raw)?,
            normalize_eol_lf,
            memory_autopatch: e.bool("PAPAYU_MEMORY_AUTOPATCH", d.memory_autopatch)?,
            context_max_files: usize_var("PAPAYU_CONTEXT_MAX_FILES", d.context_max_files)?,
            context_max_file_chars: usize_var(
                "PAPAYU_CONTEXT_MAX_FILE_CHARS",
                d.context_max_file_chars,
            )?,
            context_max_total_chars: usize_var(
                "PAPAYU_CONTEXT_MAX_TOTAL_CHARS",
                d.context_max_total_chars,
            )?,
            context_max_log_chars: usize_var(
                "PAPAYU_CONTEXT_MAX_LOG_CHARS",
                d.context_max_log_chars,
            )?,
            context_small_project_bytes: e
                .number("PAPAYU_CONTEXT_SMALL_PROJECT_BYTES", &NON_NEGATIVE)?
                .unwrap_or(d.context_small_project_bytes),
            stream: d.stream,
            local_edit_style: match e.get("PAPAYU_LOCAL_EDIT_STYLE") {
                None => d.local_edit_style,
                Some(v) => {
                    papayu_protocol::EditStyle::parse(&v.to_ascii_lowercase()).ok_or_else(|| {
                        invalid(
                            "PAPAYU_LOCAL_EDIT_STYLE",
                            v,
                            "expected search_replace, whole_file or unified_diff",
                        )
                    })?
                }
            },
            sandbox_enabled: match e.get("PAPAYU_SANDBOX").map(str::to_ascii_lowercase) {
                None => d.sandbox_enabled,
                Some(v) if v == "auto" || v == "on" => true,
                Some(v) if v == "off" => false,
                Some(v) => return Err(invalid("PAPAYU_SANDBOX", &v, "expected auto or off")),
            },
            sandbox: d.sandbox,
            virtual_env: d.virtual_env,
            original_user_prefs: d.original_user_prefs,
        })
    }

    /// Set the provider kind by name, checked as `PAPAYU_LLM_PROVIDER` is (a typed overlay
    /// such as the UI's settings replaces what the variable gave).
    pub fn set_provider(&mut self, name: &str) -> Result<(), ConfigError> {
        self.provider = Some(parse_provider(name)?);
        Ok(())
    }

    /// Set the provider's base URL, checked as `PAPAYU_LLM_API_URL` is.
    pub fn set_api_url(&mut self, url: &str) -> Result<(), ConfigError> {
        check_api_url(url)?;
        self.api_url = Some(url.to_owned());
        Ok(())
    }

    /// Force the protocol version, checked as `PAPAYU_PROTOCOL_VERSION` is.
    pub fn set_protocol_version(&mut self, n: u8) -> Result<(), ConfigError> {
        let variable = "PAPAYU_PROTOCOL_VERSION";
        self.protocol_version = Some(protocol_version(variable, n, &n.to_string())?);
        Ok(())
    }

    /// Set the sampling temperature, checked as `PAPAYU_LLM_TEMPERATURE` is.
    pub fn set_temperature(&mut self, t: f32) -> Result<(), ConfigError> {
        self.temperature = TEMPERATURE.check("PAPAYU_LLM_TEMPERATURE", t, &t.to_string())?;
        Ok(())
    }

    /// Set the answer limit, checked as `PAPAYU_LLM_MAX_TOKENS` is.
    pub fn set_max_tokens(&mut self, n: u32) -> Result<(), ConfigError> {
        self.max_tokens = Some(MAX_TOKENS.check("PAPAYU_LLM_MAX_TOKENS", n, &n.to_string())?);
        Ok(())
    }

    /// Set the request timeout in seconds, checked as `PAPAYU_LLM_TIMEOUT_SEC` is.
    pub fn set_timeout_secs(&mut self, secs: u64) -> Result<(), ConfigError> {
        let secs = TIMEOUT_SECS.check("PAPAYU_LLM_TIMEOUT_SEC", secs, &secs.to_string())?;
        self.timeout = Duration::from_secs(secs);
        Ok(())
    }

    /// The protocol version a new plan starts with: `PAPAYU_PROTOCOL_VERSION`, else
    /// `PAPAYU_PROTOCOL_DEFAULT`.
    pub fn effective_protocol(&self) -> ProtocolVersion {
        self.protocol_version.unwrap_or(self.protocol_default)
    }

    /// The protocol version of a call to a provider of `kind`: forced by
    /// `PAPAYU_PROTOCOL_VERSION`, else the in-process model's edit style decides, else
    /// [`effective_protocol`](Self::effective_protocol).
    pub fn protocol_for(&self, kind: ProviderKind) -> ProtocolVersion {
        match (self.protocol_version, kind) {
            (Some(v), _) => v,
            (None, ProviderKind::Local) => self.local_edit_style.protocol(),
            (None, _) => self.protocol_default,
        }
    }

    /// The provider kind in effect: `PAPAYU_LLM_PROVIDER`, else inferred from the URL, else
    /// `openai-compatible`.
    pub fn effective_provider(&self) -> ProviderKind {
        self.provider.unwrap_or_else(|| {
            self.api_url
                .as_deref()
                .map_or(ProviderKind::OpenAiCompatible, ProviderKind::infer_from_url)
        })
    }

    /// The answer limit for a provider of `kind`: `PAPAYU_LLM_MAX_TOKENS` if set, else that
    /// kind's default.
    pub fn max_tokens_for(&self, kind: ProviderKind) -> u32 {
        self.max_tokens.unwrap_or(kind.default_max_tokens())
    }

    /// The single-provider configuration (`PAPAYU_LLM_API_URL|KEY|MODEL|PROVIDER`, temperature,
    /// max tokens, timeout). `PAPAYU_LLM_MODEL` is required.
    pub fn provider_config(&self) -> Result<ProviderConfig, ConfigError> {
        let model = self.model.clone().ok_or_else(|| ConfigError::Missing {
            variable: "PAPAYU_LLM_MODEL".into(),
            message: "papayu needs a model to ask".into(),
        })?;
        let kind = self.effective_provider();
        let mut c = ProviderConfig::new(kind, self.api_url.clone().unwrap_or_default(), model)
            .with_timeout(self.timeout)
            .with_max_tokens(self.max_tokens_for(kind));
        c.temperature = self.temperature;
        if let Some(k) = &self.api_key {
            c = c.with_api_key(k.clone());
        }
        Ok(c)
    }

    /// The context limits as papayu-context's configuration (other fields default).
    pub fn context_config(&self) -> ContextConfig {
        ContextConfig {
            max_files: self.context_max_files,
            max_file_chars: self.context_max_file_chars,
            max_total_chars: self.context_max_total_chars,
            max_log_chars: self.context_max_log_chars,
            virtual_env: self.virtual_env.clone(),
            small_project_bytes: self.context_small_project_bytes as u64,
            ..ContextConfig::default()
        }
    }

    /// The **effective** value of every setting, for traces and `papayu doctor`: defaults
    /// filled in, protocol resolved, and secrets omitted (an API key appears only as
    /// `api_key_set: true|false`).
    pub fn config_snapshot(&self) -> BTreeMap<String, Value> {
        let protocol = self.effective_protocol();
        let providers: Vec<Value> = self
            .providers
            .iter()
            .map(|p| json!({"kind": p.kind.as_str(), "url": p.url, "model": p.model, "api_key_set": p.api_key.is_some()}))
            .collect();
        let mut m = BTreeMap::new();
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_owned(), v);
        };
        put("provider", json!(self.effective_provider().as_str()));
        put(
            "api_url",
            json!(
                self.api_url
                    .clone()
                    .unwrap_or_else(|| self.effective_provider().default_url().to_owned())
            ),
        );
        put("api_key_set", json!(self.api_key.is_some()));
        put("model", json!(self.model));
        put("llm_mode", json!(self.llm_mode.as_str()));
        put("strict_json", json!(self.strict_json));
        put("temperature", json!(self.temperature));
        put("max_tokens", json!(self.max_tokens));
        put("timeout_sec", json!(self.timeout.as_secs()));
        put("providers", Value::Array(providers));
        put(
            "aggregator",
            self.aggregator.as_ref().map_or(
                Value::Null,
                |a| json!({"url": a.url, "model": a.model, "api_key_set": a.api_key.is_some()}),
            ),
        );
        put("protocol_version", json!(protocol.number()));
        put(
            "protocol_forced",
            json!(self.protocol_version.map(ProtocolVersion::number)),
        );
        put("protocol_default", json!(self.protocol_default.number()));
        put("protocol_fallback_to_v1", json!(self.fallback_to_v1));
        put("schema_hash", json!(schema_hash(protocol)));
        put("trace", json!(self.trace));
        put("trace_raw", json!(self.trace_raw));
        put(
            "normalize_eol",
            json!(if self.normalize_eol_lf { "lf" } else { "keep" }),
        );
        put("memory_autopatch", json!(self.memory_autopatch));
        put("context_max_files", json!(self.context_max_files));
        put("context_max_file_chars", json!(self.context_max_file_chars));
        put(
            "context_max_total_chars",
            json!(self.context_max_total_chars),
        );
        put("context_max_log_chars", json!(self.context_max_log_chars));
        put("local_edit_style", json!(self.local_edit_style.as_str()));
        put(
            "sandbox",
            json!(if self.sandbox_enabled { "auto" } else { "off" }),
        );
        put(
            "context_small_project_bytes",
            json!(self.context_small_project_bytes),
        );
        put("max_context_rounds", json!(crate::MAX_CONTEXT_ROUNDS));
        put("stream", json!(self.stream));
        m
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn from_var(variable: &str, value: &str) -> Result<AgentConfig, ConfigError> {
        AgentConfig::from_env_map(&BTreeMap::from([(variable.to_owned(), value.to_owned())]))
    }

    /// A typed overlay is checked as the variable it replaces, with the same error.
    #[test]
    fn setters_reject_what_the_variable_rejects_with_the_same_error() {
        type Set = fn(&mut AgentConfig) -> Result<(), ConfigError>;
        let cases: [(&str, &str, Set); 6] = [
            ("PAPAYU_LLM_PROVIDER", "skynet", |c| {
                c.set_provider("skynet")
            }),
            ("PAPAYU_LLM_API_URL", "ftp://x", |c| {
                c.set_api_url("ftp://x")
            }),
            ("PAPAYU_PROTOCOL_VERSION", "4", |c| {
                c.set_protocol_version(4)
            }),
            ("PAPAYU_LLM_TEMPERATURE", "2.5", |c| c.set_temperature(2.5)),
            ("PAPAYU_LLM_MAX_TOKENS", "0", |c| c.set_max_tokens(0)),
            ("PAPAYU_LLM_TIMEOUT_SEC", "86401", |c| {
                c.set_timeout_secs(86_401)
            }),
        ];
        for (variable, value, set) in cases {
            let from_env = from_var(variable, value).unwrap_err();
            let mut config = AgentConfig::default();
            assert_eq!(set(&mut config).unwrap_err(), from_env, "{variable}");
            assert_eq!(from_env.variable(), variable);
        }
    }

    #[test]
    fn setters_set_what_the_variable_sets() {
        let mut typed = AgentConfig::default();
        typed.set_provider("anthropic").unwrap();
        typed.set_api_url("http://127.0.0.1:9/v1").unwrap();
        typed.set_protocol_version(3).unwrap();
        typed.set_temperature(0.5).unwrap();
        typed.set_max_tokens(77).unwrap();
        typed.set_timeout_secs(86_400).unwrap();
        let env = AgentConfig::from_env_map(&BTreeMap::from(
            [
                ("PAPAYU_LLM_PROVIDER", "anthropic"),
                ("PAPAYU_LLM_API_URL", "http://127.0.0.1:9/v1"),
                ("PAPAYU_PROTOCOL_VERSION", "3"),
                ("PAPAYU_LLM_TEMPERATURE", "0.5"),
                ("PAPAYU_LLM_MAX_TOKENS", "77"),
                ("PAPAYU_LLM_TIMEOUT_SEC", "86400"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
        ))
        .unwrap();
        assert_eq!(typed.config_snapshot(), env.config_snapshot());
        assert_eq!(typed.provider, Some(ProviderKind::Anthropic));
        assert_eq!(typed.timeout, Duration::from_secs(86_400));
    }
}
