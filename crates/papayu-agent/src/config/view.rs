//! What the settings resolve to: effective provider and protocol, the provider and context configurations, the snapshot traces show.

use std::collections::BTreeMap;

use papayu_context::ContextConfig;
use papayu_llm::{ProviderConfig, ProviderKind};
use papayu_protocol::{ProtocolVersion, schema_hash};
use serde_json::{Value, json};

use super::error::ConfigError;
use super::settings::AgentConfig;

impl AgentConfig {
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
            env_probe_memory: self.env_probe_memory.clone(),
            tool_search_path: self.tool_search_path.clone(),
            tool_selectors: self.tool_selectors.clone(),
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
