//! Reading every SPEC §12 variable from the map the frontend collected.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Duration;

use papayu_llm::{ProviderConfig, ProviderEntry, ProviderKind};
use papayu_protocol::ProtocolVersion;

use super::checks::{
    Limit, MAX_TOKENS, NON_NEGATIVE, POSITIVE, TEMPERATURE, TIMEOUT_SECS, check_api_url,
    parse_bool, parse_provider, protocol_version,
};
use super::error::{ConfigError, invalid};
use super::settings::AgentConfig;

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
            env_probe_memory: d.env_probe_memory,
            tool_search_path: d.tool_search_path,
            tool_selectors: d.tool_selectors,
            original_user_prefs: d.original_user_prefs,
        })
    }
}
