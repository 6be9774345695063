//! Provider configuration. The caller builds it (from environment variables, a settings file or
//! flags); this crate never reads the environment.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// Default `max_tokens` (SPEC §7).
pub const DEFAULT_MAX_TOKENS: u32 = 16_384;
/// Default answer limit of the in-process local provider, in tokens. The grammar bounds every
/// answer (8 actions of at most 1 200 characters, …), so a longer one is a small model looping
/// inside those bounds; 2 048 tokens take about 35 s on 2 cores, within the default 90 s timeout,
/// and keep the KV cache (sized prompt + answer) near 80 MB instead of the 190 MB of a full
/// 8 192-token window.
pub const DEFAULT_LOCAL_MAX_TOKENS: u32 = 2_048;
/// `max_tokens` is capped to this when the input is larger than [`LARGE_INPUT_CHARS`].
pub const LARGE_INPUT_MAX_TOKENS: u32 = 4_096;
/// Input size (characters over all messages) above which the `max_tokens` cap applies.
pub const LARGE_INPUT_CHARS: usize = 80_000;
/// Default request timeout (`PAPAYU_LLM_TIMEOUT_SEC`): the total budget of one attempt.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);
/// Default silence limit of a streamed answer: once the first token has arrived, an answer with
/// no new token for this long is abandoned. A server that still decodes sends a token every
/// fraction of a second even on 2 cores; 20 s of nothing is a stuck or overloaded server.
pub const DEFAULT_SILENCE_TIMEOUT: Duration = Duration::from_secs(20);
/// `anthropic-version` header sent to the Messages API.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Which wire dialect a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ProviderKind {
    /// OpenAI Chat Completions (`https://api.openai.com/v1`).
    #[serde(rename = "openai")]
    OpenAi,
    /// Any server speaking the Chat Completions dialect: llama.cpp, vLLM, LM Studio, OpenRouter,
    /// Ollama's `/v1`.
    #[serde(rename = "openai-compatible")]
    OpenAiCompatible,
    /// Ollama's native `/api/chat`.
    Ollama,
    /// Anthropic Messages API.
    Anthropic,
    /// A GGUF model run in-process by llama.cpp (`LocalProvider`, cargo feature `local`); no URL,
    /// no key, no network.
    Local,
}

impl ProviderKind {
    /// Every network kind (the dialects [`crate::HttpProvider`] speaks; [`ProviderKind::Local`]
    /// is not one of them).
    pub const ALL: [ProviderKind; 4] = [
        Self::OpenAi,
        Self::OpenAiCompatible,
        Self::Ollama,
        Self::Anthropic,
    ];

    /// The name used in configuration (`openai`, `openai-compatible`, `ollama`, `anthropic`,
    /// `local`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::OpenAiCompatible => "openai-compatible",
            Self::Ollama => "ollama",
            Self::Anthropic => "anthropic",
            Self::Local => "local",
        }
    }

    /// The answer limit used when the configuration sets none: [`DEFAULT_LOCAL_MAX_TOKENS`]
    /// for the in-process model, [`DEFAULT_MAX_TOKENS`] for every network provider.
    pub const fn default_max_tokens(self) -> u32 {
        match self {
            Self::Local => DEFAULT_LOCAL_MAX_TOKENS,
            _ => DEFAULT_MAX_TOKENS,
        }
    }

    /// The base URL used when the configuration names none.
    pub const fn default_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::OpenAiCompatible => "http://127.0.0.1:8080/v1",
            Self::Ollama => "http://127.0.0.1:11434",
            Self::Anthropic => "https://api.anthropic.com",
            Self::Local => "in-process",
        }
    }

    /// Guess the kind from a URL when the configuration does not say (multi-provider entries
    /// may omit `kind`): `api.openai.com` → openai, `anthropic.com` → anthropic, `/api/chat` or
    /// port 11434 without `/v1` → ollama, anything else → openai-compatible.
    pub fn infer_from_url(url: &str) -> Self {
        let lower = url.to_ascii_lowercase();
        if lower.contains("api.openai.com") {
            Self::OpenAi
        } else if lower.contains("anthropic.com")
            || lower.trim_end_matches('/').ends_with("/v1/messages")
        {
            Self::Anthropic
        } else if lower.contains("/api/chat")
            || (lower.contains(":11434") && !lower.contains("/v1"))
        {
            Self::Ollama
        } else {
            Self::OpenAiCompatible
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = LlmError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(Self::OpenAi),
            "openai-compatible" | "openai_compatible" | "compatible" => Ok(Self::OpenAiCompatible),
            "ollama" => Ok(Self::Ollama),
            "anthropic" | "claude" => Ok(Self::Anthropic),
            "local" => Ok(Self::Local),
            other => Err(LlmError::config(format!(
                "unknown provider kind `{other}` (expected openai, openai-compatible, ollama, anthropic or local)"
            ))),
        }
    }
}

/// An API key. Its `Debug` and `Display` never show the value.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wrap a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the one place that puts it in a header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Retry behaviour for network errors, 429 and 5xx (SPEC §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 2).
    pub max_retries: u32,
    /// Base of the exponential backoff (backon's): retry `n` waits `base · 2ⁿ` plus a random
    /// jitter of up to as much again, capped by `max_delay`.
    pub base_delay: Duration,
    /// Upper bound of any wait, including one asked for by `Retry-After`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
        }
    }
}

/// Everything needed to talk to one provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// The wire dialect.
    pub kind: ProviderKind,
    /// Base URL (`https://api.openai.com/v1`, `http://127.0.0.1:11434`) or the full endpoint.
    pub url: String,
    /// Model name.
    pub model: String,
    /// API key, if the provider needs one.
    pub api_key: Option<ApiKey>,
    /// Sampling temperature (default 0).
    pub temperature: f32,
    /// `max_tokens` before the large-input cap (default 16 384).
    pub max_tokens: u32,
    /// Total budget of one attempt, streaming included (default 90 s).
    pub timeout: Duration,
    /// A streamed answer whose next token takes longer than this, once the first has arrived,
    /// is abandoned (default [`DEFAULT_SILENCE_TIMEOUT`]).
    pub silence_timeout: Duration,
    /// Retry behaviour.
    pub retry: RetryPolicy,
    /// Pass every outgoing message through [`crate::redact`] (default on, SPEC §7).
    pub redact_outgoing: bool,
}

impl ProviderConfig {
    /// A configuration with the SPEC §7 defaults. An empty `url` means the kind's default URL.
    pub fn new(kind: ProviderKind, url: impl Into<String>, model: impl Into<String>) -> Self {
        let url = url.into();
        Self {
            kind,
            url: if url.trim().is_empty() {
                kind.default_url().to_owned()
            } else {
                url
            },
            model: model.into(),
            api_key: None,
            temperature: 0.0,
            max_tokens: DEFAULT_MAX_TOKENS,
            timeout: DEFAULT_TIMEOUT,
            silence_timeout: DEFAULT_SILENCE_TIMEOUT,
            retry: RetryPolicy::default(),
            redact_outgoing: true,
        }
    }

    /// Set the API key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(ApiKey::new(key));
        self
    }

    /// Set the timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Set the silence limit of streamed answers.
    pub fn with_silence_timeout(mut self, silence: Duration) -> Self {
        self.silence_timeout = silence;
        self
    }

    /// Set the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Set the default `max_tokens`.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Problems that make this configuration unusable, in words for `papayu doctor`.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.kind == ProviderKind::Local {
            problems.push(
                "provider local runs in-process: build a LocalProvider (cargo feature `local`), not an HTTP provider"
                    .to_owned(),
            );
        }
        if self.model.trim().is_empty() {
            problems.push("no model configured".to_owned());
        }
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            problems.push(format!(
                "URL `{}` must start with http:// or https://",
                self.url
            ));
        }
        if self.api_key.is_none()
            && matches!(self.kind, ProviderKind::OpenAi | ProviderKind::Anthropic)
        {
            problems.push(format!("provider {} needs an API key", self.kind));
        }
        if self.timeout.is_zero() {
            problems.push("timeout must be greater than zero".to_owned());
        }
        if self.silence_timeout.is_zero() {
            problems.push("silence timeout must be greater than zero".to_owned());
        }
        if self.max_tokens == 0 {
            problems.push("max_tokens must be greater than zero".to_owned());
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            problems.push(format!("temperature {} is outside 0..=2", self.temperature));
        }
        problems
    }

    /// The endpoint the request goes to: the base URL plus the dialect's path, unless the URL
    /// already ends with it.
    pub fn endpoint(&self) -> String {
        let base = self.url.trim_end_matches('/');
        let (suffix, short) = match self.kind {
            ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Local => {
                ("/chat/completions", None)
            }
            ProviderKind::Ollama => ("/api/chat", None),
            ProviderKind::Anthropic => ("/v1/messages", Some("/messages")),
        };
        if base.ends_with(suffix) {
            base.to_owned()
        } else if let Some(short) = short {
            if base.ends_with(short) {
                base.to_owned()
            } else if base.ends_with("/v1") {
                format!("{base}{short}")
            } else {
                format!("{base}{suffix}")
            }
        } else {
            format!("{base}{suffix}")
        }
    }

    /// `max_tokens` for an input of `input_chars` characters (SPEC §7 cap rule).
    pub fn max_tokens_for(&self, input_chars: usize) -> u32 {
        if input_chars > LARGE_INPUT_CHARS {
            self.max_tokens.min(LARGE_INPUT_MAX_TOKENS)
        } else {
            self.max_tokens
        }
    }
}

/// One entry of `PAPAYU_LLM_PROVIDERS` (`[{kind?, url, model, api_key_env?}]`), as written by the
/// user. The caller resolves `api_key_env` to a key and calls [`ProviderEntry::into_config`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    /// The dialect; inferred from the URL when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ProviderKind>,
    /// Base URL.
    pub url: String,
    /// Model name.
    pub model: String,
    /// Name of the environment variable holding the key (read by the caller, never here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

impl ProviderEntry {
    /// Parse the JSON array of `PAPAYU_LLM_PROVIDERS`.
    pub fn parse_list(json: &str) -> Result<Vec<ProviderEntry>, LlmError> {
        let entries: Vec<ProviderEntry> = serde_json::from_str(json).map_err(|e| {
            LlmError::config(format!(
                "PAPAYU_LLM_PROVIDERS is not a valid provider list: {e}"
            ))
        })?;
        if entries.is_empty() {
            return Err(LlmError::config("PAPAYU_LLM_PROVIDERS is an empty list"));
        }
        Ok(entries)
    }

    /// The effective kind.
    pub fn kind(&self) -> ProviderKind {
        self.kind
            .unwrap_or_else(|| ProviderKind::infer_from_url(&self.url))
    }

    /// Build a configuration with the given key (resolved by the caller from `api_key_env`).
    pub fn into_config(self, api_key: Option<String>) -> ProviderConfig {
        let mut config = ProviderConfig::new(self.kind(), self.url, self.model);
        config.api_key = api_key.map(ApiKey::new);
        config
    }
}

/// Whether `endpoint` is a server on this machine (a loopback address or `localhost`): a local
/// model server (llama.cpp, llama-cpp-python, LM Studio, Ollama, vLLM) rather than a hosted API.
/// Such a server turns a JSON schema into a decoding grammar whose speed depends on the schema's
/// shape, so papayu narrows what it asks of one (DECISIONS, issue #22).
pub fn is_loopback_endpoint(endpoint: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(endpoint) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod loopback_tests {
    use super::is_loopback_endpoint;

    #[test]
    fn loopback_endpoints_are_local_servers() {
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://127.1.2.3/v1",
            "http://localhost:11434",
            "http://[::1]:8000/v1",
        ] {
            assert!(is_loopback_endpoint(local), "{local}");
        }
        for remote in [
            "https://api.openai.com/v1",
            "http://192.168.1.5:8080/v1",
            "http://localhost.example.com/v1",
            "not a url",
        ] {
            assert!(!is_loopback_endpoint(remote), "{remote}");
        }
    }
}
