//! What `papayu doctor` and `papayu ask` call.

use std::time::Instant;

use papayu_protocol::schema::{SchemaVariant, schema_value, strip_meta};
use papayu_protocol::{ErrorCode, ProtocolVersion, Response, Violation};
use serde::Serialize;

use crate::capability::{CapabilityCache, ResponseFormat};
use crate::config::{ProviderConfig, ProviderKind};
use crate::error::LlmError;
use crate::plan::check_answer;
use crate::provider::{HttpProvider, Provider};
use crate::request::{ChatRequest, Completion, FormatFallback, Message, Progress, Usage};

/// The system prompt `ask` and `doctor` use: the protocol version and its provider-strict schema.
/// The agent builds its own, richer prompts.
pub fn default_system_prompt(version: ProtocolVersion) -> String {
    let schema = serde_json::to_string(&strip_meta(schema_value(version, SchemaVariant::Strict)))
        .unwrap_or_default();
    format!(
        "You are the planning model of papayu, a tool that applies code changes. \
         LLM_PLAN_SCHEMA_VERSION={v}. Answer with exactly one JSON object and nothing else, \
         following this JSON schema (protocol v{v}): {schema}",
        v = version.number()
    )
}

/// Options of [`ask`].
#[derive(Clone)]
pub struct AskOptions {
    /// Protocol version of the answer (`--protocol N`).
    pub protocol: ProtocolVersion,
    /// Strict structured output with capability fallback.
    pub strict_json: bool,
    /// System prompt; [`default_system_prompt`] when `None`.
    pub system: Option<String>,
    /// Override `max_tokens`.
    pub max_tokens: Option<u32>,
    /// Stream, reporting characters received to this callback.
    pub stream: Option<Progress>,
}

impl Default for AskOptions {
    fn default() -> Self {
        Self {
            protocol: ProtocolVersion::default(),
            strict_json: true,
            system: None,
            max_tokens: None,
            stream: None,
        }
    }
}

/// The raw and the parsed answer of [`ask`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskOutcome {
    /// The provider's answer (raw text, usage, format used, fallbacks, timing).
    pub completion: Completion,
    /// The parsed response, when it passed the protocol checks.
    pub parsed: Option<Response>,
    /// Every protocol violation (empty when `parsed` is `Some`).
    pub violations: Vec<Violation>,
}

/// `papayu ask <prompt>`: one call, no repair, the raw answer and what papayu makes of it.
pub async fn ask(
    provider: &dyn Provider,
    prompt: &str,
    options: AskOptions,
) -> Result<AskOutcome, LlmError> {
    let system = options
        .system
        .unwrap_or_else(|| default_system_prompt(options.protocol));
    let mut request = ChatRequest::new(vec![Message::system(system), Message::user(prompt)])
        .protocol(options.protocol)
        .strict(options.strict_json);
    request.max_tokens = options.max_tokens;
    if let Some(progress) = options.stream {
        request = request.streaming(Some(progress));
    }
    let completion = provider.complete(&request).await?;
    let (parsed, violations) = match check_answer(&completion.text, options.protocol, None) {
        Ok(r) => (Some(r), Vec::new()),
        Err(v) => (None, v),
    };
    Ok(AskOutcome {
        completion,
        parsed,
        violations,
    })
}

/// Options of [`doctor`].
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// Send a probe request to each provider (off: configuration checks only).
    pub probe: bool,
    /// Protocol version of the probe.
    pub protocol: ProtocolVersion,
    /// `max_tokens` of the probe (small: the probe is about the transport, not the answer).
    pub max_tokens: u32,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        Self {
            probe: true,
            protocol: ProtocolVersion::default(),
            max_tokens: 256,
        }
    }
}

/// An error in a report: stable code plus message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorReport {
    /// The stable code.
    pub code: ErrorCode,
    /// The message (already redacted).
    pub message: String,
}

impl From<&LlmError> for ErrorReport {
    fn from(e: &LlmError) -> Self {
        Self {
            code: e.code(),
            message: crate::redact(&e.to_string()).into_owned(),
        }
    }
}

/// One provider's line in the doctor report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderCheck {
    /// The dialect.
    pub kind: ProviderKind,
    /// The configured URL.
    pub url: String,
    /// The endpoint requests go to.
    pub endpoint: String,
    /// The model.
    pub model: String,
    /// Whether an API key is configured (never the key).
    pub api_key_set: bool,
    /// Timeout in seconds.
    pub timeout_s: f64,
    /// Configuration problems.
    pub config_problems: Vec<String>,
    /// Whether the server answered at all (`None`: not probed).
    pub reachable: Option<bool>,
    /// The strongest structured-output form the provider accepted.
    pub structured_output: Option<ResponseFormat>,
    /// Fallbacks walked to find it.
    pub fallbacks: Vec<FormatFallback>,
    /// Wall time of the probe in milliseconds (fallbacks included).
    pub latency_ms: Option<f64>,
    /// Token usage of the probe.
    pub usage: Option<Usage>,
    /// Whether the probe's answer passed the protocol checks.
    pub answer_valid: Option<bool>,
    /// What went wrong, if anything.
    pub error: Option<ErrorReport>,
}

impl ProviderCheck {
    /// Whether this provider is usable: no configuration problem and, if probed, an answer.
    pub fn ok(&self) -> bool {
        self.config_problems.is_empty() && self.error.is_none() && self.reachable != Some(false)
    }
}

/// The `papayu doctor` report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DoctorReport {
    /// One entry per configured provider.
    pub providers: Vec<ProviderCheck>,
}

impl DoctorReport {
    /// Whether every provider is usable.
    pub fn ok(&self) -> bool {
        !self.providers.is_empty() && self.providers.iter().all(ProviderCheck::ok)
    }
}

/// `papayu doctor`: check each configuration and, when `options.probe`, send a small strict
/// request to learn reachability, the structured-output form accepted and the latency.
/// Providers are probed one after another so latencies do not disturb each other.
pub async fn doctor(
    configs: &[ProviderConfig],
    cache: &CapabilityCache,
    options: &DoctorOptions,
) -> DoctorReport {
    let mut providers = Vec::with_capacity(configs.len());
    for config in configs {
        let mut check = ProviderCheck {
            kind: config.kind,
            url: config.url.clone(),
            endpoint: config.endpoint(),
            model: config.model.clone(),
            api_key_set: config.api_key.is_some(),
            timeout_s: config.timeout.as_secs_f64(),
            config_problems: config.problems(),
            reachable: None,
            structured_output: None,
            fallbacks: Vec::new(),
            latency_ms: None,
            usage: None,
            answer_valid: None,
            error: None,
        };
        if options.probe && check.config_problems.is_empty() {
            probe(config, cache, options, &mut check).await;
        }
        providers.push(check);
    }
    DoctorReport { providers }
}

async fn probe(
    config: &ProviderConfig,
    cache: &CapabilityCache,
    options: &DoctorOptions,
    check: &mut ProviderCheck,
) {
    let provider = match HttpProvider::new(config.clone()) {
        Ok(p) => p.with_cache(cache.clone()),
        Err(e) => {
            check.error = Some(ErrorReport::from(&e));
            return;
        }
    };
    let request = ChatRequest::new(vec![
        Message::system(default_system_prompt(options.protocol)),
        Message::user("Health check: answer with an empty plan whose summary is \"ok\"."),
    ])
    .protocol(options.protocol)
    .strict(true)
    .max_tokens(options.max_tokens);
    let started = Instant::now();
    match provider.complete(&request).await {
        Ok(c) => {
            check.reachable = Some(true);
            check.structured_output = Some(c.format);
            check.latency_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
            check.usage = c.usage;
            check.answer_valid = Some(check_answer(&c.text, options.protocol, None).is_ok());
            check.fallbacks = c.fallbacks;
        }
        Err(e) => {
            check.reachable = Some(!matches!(
                e,
                LlmError::Network { .. } | LlmError::Timeout { .. }
            ));
            check.latency_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
            check.error = Some(ErrorReport::from(&e));
        }
    }
}
