//! What `papayu doctor` and `papayu ask` call.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use papayu_protocol::schema::{SchemaVariant, schema_value, strip_meta};
use papayu_protocol::{ErrorCode, ProtocolVersion, RequestShape, Response, Violation};
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
    system_prompt_with(
        version,
        &strip_meta(schema_value(version, SchemaVariant::Strict)),
    )
}

/// The system prompt of an `ask` narrowed to `shape`: its compact schema instead of the whole
/// one (a shorter prompt, and the schema the server decodes under).
pub fn shaped_system_prompt(version: ProtocolVersion, shape: &RequestShape) -> String {
    system_prompt_with(version, &papayu_protocol::compact_schema(shape))
}

fn system_prompt_with(version: ProtocolVersion, schema: &serde_json::Value) -> String {
    let schema = serde_json::to_string(schema).unwrap_or_default();
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
    /// Narrow the answer to this shape: in strict mode an HTTP provider sends its compact schema
    /// and sizes `max_tokens` to it, and the default system prompt shows that schema.
    pub shape: Option<RequestShape>,
}

impl Default for AskOptions {
    fn default() -> Self {
        Self {
            protocol: ProtocolVersion::default(),
            strict_json: true,
            system: None,
            max_tokens: None,
            stream: None,
            shape: None,
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
    let system = options.system.unwrap_or_else(|| match &options.shape {
        Some(shape) => shaped_system_prompt(options.protocol, shape),
        None => default_system_prompt(options.protocol),
    });
    let mut request = ChatRequest::new(vec![Message::system(system), Message::user(prompt)])
        .protocol(options.protocol)
        .strict(options.strict_json);
    if let Some(shape) = options.shape {
        request = request.shaped(shape);
    }
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
    /// After a successful probe, measure the server's decode speed without a schema, under the
    /// version's whole schema and under a compact one, and recommend a strict mode
    /// (`papayu doctor --speed`; three more requests).
    pub measure_decode: bool,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        Self {
            probe: true,
            protocol: ProtocolVersion::default(),
            max_tokens: 256,
            measure_decode: false,
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
    /// Decode speed per structured-output form (empty unless measured).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decode: Vec<DecodeSpeed>,
    /// The strict mode the decode speeds point to (`None` unless measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict_advice: Option<StrictAdvice>,
}

/// What a request is constrained by, in a decode-speed measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecodeForm {
    /// No structured output at all (`PAPAYU_LLM_STRICT_JSON=0`).
    Plain,
    /// The protocol version's whole strict schema, down the capability ladder.
    FullSchema,
    /// A request's compact schema ([`papayu_protocol::compact_schema`]), down the ladder.
    CompactSchema,
}

/// One decode-speed measurement: a streamed answer, timed from its first token to its last
/// (prompt reading left out).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecodeSpeed {
    /// What constrained the answer.
    pub form: DecodeForm,
    /// Reads of the stream that brought text: one per token on llama.cpp-class servers, which
    /// flush every token as its own event.
    pub tokens: usize,
    /// Tokens per second between the first and the last token (`None` under two tokens).
    pub tokens_per_s: Option<f64>,
    /// Wall time of the whole request in seconds.
    pub seconds: f64,
    /// Whether the answer passed the protocol checks.
    pub answer_valid: bool,
    /// What went wrong, if the request failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorReport>,
}

/// The strict mode `papayu doctor --speed` recommends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StrictAdvice {
    /// Strict JSON with the whole schema: valid answers at close to the plain speed.
    On,
    /// Strict JSON with a request's compact schema: the whole schema is slow or gives no valid
    /// answer, the compact one does.
    Compact,
    /// Strict JSON off, answers repaired: neither schema decodes at a usable speed.
    OffWithRepair,
}

/// A schema-constrained decode at least this fraction of the plain speed counts as fast.
const FAST_ENOUGH: f64 = 0.5;

/// The strict mode `speeds` point to: the strongest form whose answer was valid at no less than
/// half of the plain speed; off with repair when none is, `None` without a plain
/// speed to compare with.
pub fn strict_advice(speeds: &[DecodeSpeed]) -> Option<StrictAdvice> {
    let rate = |form| {
        speeds
            .iter()
            .find(|s| s.form == form && s.error.is_none())
            .and_then(|s| Some((s.tokens_per_s?, s.answer_valid)))
    };
    let (plain, _) = rate(DecodeForm::Plain)?;
    let fast = |form| rate(form).is_some_and(|(tps, valid)| valid && tps >= FAST_ENOUGH * plain);
    Some(if fast(DecodeForm::FullSchema) {
        StrictAdvice::On
    } else if fast(DecodeForm::CompactSchema) {
        StrictAdvice::Compact
    } else {
        StrictAdvice::OffWithRepair
    })
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
            decode: Vec::new(),
            strict_advice: None,
        };
        if options.probe && check.config_problems.is_empty() {
            probe(config, cache, options, &mut check).await;
            if options.measure_decode && check.reachable == Some(true) {
                check.decode = measure_decode(config, cache, options).await;
                check.strict_advice = strict_advice(&check.decode);
            }
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

/// The prompt of a decode-speed measurement: long enough an answer to time its tokens.
const SPEED_PROMPT: &str = "Plan only, no actions: in the summary, explain in about 60 words \
     how to add a `--verbose` flag to a command-line tool.";

/// Decode speed without a schema, under the whole schema and under a compact one.
async fn measure_decode(
    config: &ProviderConfig,
    cache: &CapabilityCache,
    options: &DoctorOptions,
) -> Vec<DecodeSpeed> {
    let Ok(provider) = HttpProvider::new(config.clone()) else {
        return Vec::new();
    };
    let provider = provider.with_cache(cache.clone());
    // What a PLAN answer may hold: a summary and no actions.
    let plan = RequestShape {
        apply: false,
        context_requests: false,
        ..RequestShape::default()
    };
    let mut speeds = Vec::new();
    for form in [
        DecodeForm::Plain,
        DecodeForm::FullSchema,
        DecodeForm::CompactSchema,
    ] {
        let mut request = ChatRequest::new(vec![
            Message::system(default_system_prompt(options.protocol)),
            Message::user(SPEED_PROMPT),
        ])
        .protocol(options.protocol)
        .strict(form != DecodeForm::Plain)
        .max_tokens(options.max_tokens);
        if form == DecodeForm::CompactSchema {
            request = request.shaped(plan.clone());
        }
        speeds.push(timed(&provider, request, form, options.protocol).await);
    }
    speeds
}

/// When the first and the last token of a stream arrived, and how many arrived.
type Marks = (Option<Instant>, Option<Instant>, usize);

/// One streamed request, timed token by token.
async fn timed(
    provider: &HttpProvider,
    request: ChatRequest,
    form: DecodeForm,
    protocol: ProtocolVersion,
) -> DecodeSpeed {
    let marks: Arc<Mutex<Marks>> = Arc::default();
    let seen = Arc::clone(&marks);
    let request = request.streaming(Some(Arc::new(move |_| {
        if let Ok(mut m) = seen.lock() {
            let now = Instant::now();
            m.0.get_or_insert(now);
            m.1 = Some(now);
            m.2 += 1;
        }
    })));
    let started = Instant::now();
    let result = provider.complete(&request).await;
    let seconds = started.elapsed().as_secs_f64();
    let (first, last, tokens) = marks.lock().map(|m| *m).unwrap_or((None, None, 0));
    let tokens_per_s = match (first, last) {
        (Some(first), Some(last)) if tokens >= 2 && last > first => {
            Some((tokens - 1) as f64 / (last - first).as_secs_f64())
        }
        _ => None,
    };
    let (answer_valid, error) = match &result {
        Ok(c) => (check_answer(&c.text, protocol, None).is_ok(), None),
        Err(e) => (false, Some(ErrorReport::from(e))),
    };
    DecodeSpeed {
        form,
        tokens,
        tokens_per_s,
        seconds,
        answer_valid,
        error,
    }
}
