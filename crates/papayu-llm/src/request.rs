//! What goes to a provider and what comes back.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use papayu_protocol::{ProtocolVersion, RequestShape};
use serde::Serialize;

use crate::capability::ResponseFormat;
use crate::config::ProviderKind;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions (Anthropic: the top-level `system` field).
    System,
    /// The user or papayu on their behalf.
    User,
    /// An earlier model answer (used by the repair round).
    Assistant,
}

impl Role {
    /// The role name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// The text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
        }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// Sampling for one request instead of the configured temperature: a retry that should not
/// answer as the greedy one did draws at `temperature` from a generator seeded with `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sampling {
    /// 0..=2; 0 is greedy.
    pub temperature: f32,
    /// The draw's seed (the in-process provider, OpenAI-compatible servers and Ollama honour
    /// it; Anthropic has none), so a run can be repeated.
    pub seed: u32,
}

/// Called while a streamed answer arrives, with the number of characters received so far.
pub type Progress = Arc<dyn Fn(usize) + Send + Sync>;

/// One request to a model.
#[derive(Clone)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// The protocol version whose schema structured output uses.
    pub protocol: ProtocolVersion,
    /// Ask for structured output with the provider-strict schema (`PAPAYU_LLM_STRICT_JSON`),
    /// walking down the capability ladder when the provider refuses. Off: best-effort, no
    /// `response_format` at all.
    pub strict_json: bool,
    /// Override the configured `max_tokens` (the large-input cap still applies).
    pub max_tokens: Option<u32>,
    /// Stream the answer (SSE for OpenAI-style and Anthropic, NDJSON for Ollama).
    pub stream: bool,
    /// Progress callback for streamed answers.
    pub progress: Option<Progress>,
    /// The longest answer text accepted, in bytes (default
    /// [`papayu_protocol::MAX_ANSWER_BYTES`]); the provider stops reading past it and the call
    /// fails with [`LlmError::AnswerTooLarge`](crate::LlmError::AnswerTooLarge).
    pub max_answer_bytes: usize,
    /// The schema of this request's answer ([`papayu_protocol::request_schema`]), when the
    /// caller narrowed it: the in-process provider decodes under a grammar made from it instead
    /// of the protocol version's whole schema. Other providers ignore it.
    pub answer_schema: Option<Arc<serde_json::Value>>,
    /// What this request's answer may contain, when the caller knows
    /// ([`ChatRequest::shaped`]): an HTTP provider sends its [`papayu_protocol::compact_schema`]
    /// on the schema rungs of the strict ladder instead of the version's whole schema, and sizes
    /// `max_tokens` to it ([`papayu_protocol::answer_tokens`]).
    pub answer_shape: Option<Arc<RequestShape>>,
    /// Sample this request at its own temperature and seed ([`ChatRequest::sampled`]); `None`
    /// keeps the provider's configured temperature.
    pub sampling: Option<Sampling>,
}

impl ChatRequest {
    /// A request with the given messages: protocol v2, best-effort, not streamed.
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            messages,
            protocol: ProtocolVersion::default(),
            strict_json: false,
            max_tokens: None,
            stream: false,
            progress: None,
            max_answer_bytes: papayu_protocol::MAX_ANSWER_BYTES,
            answer_schema: None,
            answer_shape: None,
            sampling: None,
        }
    }

    /// Sample this request at `sampling`'s temperature and seed instead of the configured
    /// temperature.
    pub fn sampled(mut self, sampling: Sampling) -> Self {
        self.sampling = Some(sampling);
        self
    }

    /// Narrow the answer to `schema` (see [`ChatRequest::answer_schema`]).
    pub fn answer_schema(mut self, schema: serde_json::Value) -> Self {
        self.answer_schema = Some(Arc::new(schema));
        self
    }

    /// Narrow the answer to `shape`: the in-process provider decodes under its bounded
    /// [`papayu_protocol::request_schema`], an HTTP provider sends its compact form.
    pub fn shaped(mut self, shape: RequestShape) -> Self {
        self.answer_schema = Some(Arc::new(papayu_protocol::request_schema(&shape)));
        self.answer_shape = Some(Arc::new(shape));
        self
    }

    /// Accept answers of at most `bytes` bytes.
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// Set the protocol version.
    pub fn protocol(mut self, protocol: ProtocolVersion) -> Self {
        self.protocol = protocol;
        self
    }

    /// Turn strict structured output on or off.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict_json = strict;
        self
    }

    /// Override `max_tokens`.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Stream the answer, reporting progress to `progress` if given.
    pub fn streaming(mut self, progress: Option<Progress>) -> Self {
        self.stream = true;
        self.progress = progress;
        self
    }

    /// Characters over all messages (what the `max_tokens` cap looks at).
    pub fn input_chars(&self) -> usize {
        self.messages
            .iter()
            .map(|m| m.content.chars().count())
            .sum()
    }
}

impl fmt::Debug for ChatRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatRequest")
            .field("messages", &self.messages.len())
            .field("protocol", &self.protocol)
            .field("strict_json", &self.strict_json)
            .field("max_tokens", &self.max_tokens)
            .field("stream", &self.stream)
            .field("progress", &self.progress.is_some())
            .field("max_answer_bytes", &self.max_answer_bytes)
            .field("answer_schema", &self.answer_schema.is_some())
            .field("answer_shape", &self.answer_shape)
            .field("sampling", &self.sampling)
            .finish()
    }
}

/// Token usage as reported by the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Usage {
    /// Tokens in the prompt.
    pub input_tokens: Option<u64>,
    /// Tokens in the answer.
    pub output_tokens: Option<u64>,
}

impl Usage {
    /// Input plus output, when both are known.
    pub fn total(&self) -> Option<u64> {
        Some(self.input_tokens? + self.output_tokens?)
    }
}

/// A step down the structured-output ladder taken during one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FormatFallback {
    /// The form the provider refused.
    pub from: ResponseFormat,
    /// The form tried next.
    pub to: ResponseFormat,
    /// HTTP status of the refusal.
    pub status: u16,
    /// The refusal body (redacted, shortened).
    pub reason: String,
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completion {
    /// The provider kind.
    pub provider: ProviderKind,
    /// The model that was asked.
    pub model: String,
    /// The answer text. For Anthropic's forced tool this is the tool input as JSON text.
    pub text: String,
    /// Token usage, when the provider reports it.
    pub usage: Option<Usage>,
    /// Why the model stopped (`stop`, `length`, `end_turn`, `tool_use`, …), when given.
    pub finish_reason: Option<String>,
    /// The structured-output form the successful call used.
    pub format: ResponseFormat,
    /// Fallbacks taken during this call (empty when the first form was accepted).
    pub fallbacks: Vec<FormatFallback>,
    /// Retries spent on network errors, 429 and 5xx.
    pub retries: u32,
    /// Whether the answer was streamed.
    pub streamed: bool,
    /// Wall time of the whole call, retries and fallbacks included.
    #[serde(serialize_with = "ser_millis")]
    pub elapsed: Duration,
}

fn ser_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}
