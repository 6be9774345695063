//! papayu's LLM layer (SPEC §7): providers, strict JSON with capability fallback, retries,
//! timeouts, streaming, multi-provider fan-out and secret redaction.
//!
//! * [`Provider`] is the one trait; [`HttpProvider`] implements it for the four dialects of
//!   [`ProviderKind`]: `openai` (Chat Completions), `openai-compatible` (llama.cpp, vLLM,
//!   LM Studio, OpenRouter, Ollama's `/v1`), `ollama` (native `/api/chat`) and `anthropic`
//!   (Messages API, structured output through a forced tool).
//! * Strict mode ([`ChatRequest::strict_json`]) sends the provider-strict schema of
//!   papayu-protocol and walks down [`ResponseFormat::ladder`] when the provider refuses a form;
//!   the form that worked is remembered in a [`CapabilityCache`].
//! * [`request_plan`] parses and checks an answer (with a caller-supplied validator, such as
//!   papayu-validate's rules) and runs the single repair round built by [`repair_request`];
//!   [`fan_out`] does that for several providers and merges.
//! * [`doctor`] and [`ask`] are what `papayu doctor` and `papayu ask` call.
//! * With the cargo feature `local`, `LocalProvider` runs a GGUF model in-process through
//!   llama.cpp, its decoding constrained by a grammar made from the provider-strict schema, so
//!   papayu works with no server, key or network. [`check_gguf`], [`verify_model`] and the
//!   `DEFAULT_MODEL_*` constants (the model `papayu model fetch` installs) need no feature.
//!
//! The crate never reads environment variables: the caller builds a [`ProviderConfig`].
//!
//! # Events
//!
//! Every `tracing` event carries its SPEC §10 name in an `event` field, with the other
//! details as structured fields, e.g.
//! `tracing::info!(event = "LLM_RESPONSE_FORMAT_FALLBACK", provider, model, from, to, status, reason)`.
//! Emitted here: `LLM_REQUEST_SENT`, `LLM_RESPONSE_OK`, `LLM_RETRY`, `LLM_REQUEST_TIMEOUT` (warn),
//! `LLM_RESPONSE_FORMAT_FALLBACK`, `LLM_RESPONSE_REPAIR`, `VALIDATION_FAILED` and
//! `LLM_PROVIDER_FAILED` (warn). Provider bodies and violation texts in events are redacted;
//! API keys never appear.
//!
//! # Example
//!
//! ```no_run
//! use papayu_llm::{ChatRequest, HttpProvider, Message, Provider, ProviderConfig, ProviderKind};
//! use papayu_protocol::ProtocolVersion;
//!
//! # async fn run() -> Result<(), papayu_llm::LlmError> {
//! let config = ProviderConfig::new(ProviderKind::OpenAiCompatible, "http://127.0.0.1:8080/v1", "smollm2");
//! let provider = HttpProvider::new(config)?;
//! let request = ChatRequest::new(vec![
//!     Message::system(papayu_llm::default_system_prompt(ProtocolVersion::V2)),
//!     Message::user("Create an empty README.md"),
//! ])
//! .protocol(ProtocolVersion::V2)
//! .strict(true);
//! let outcome = papayu_llm::request_plan(&provider, &request, None).await;
//! for attempt in &outcome.attempts {
//!     println!("{} via {}", attempt.completion.text, attempt.completion.format);
//! }
//! # Ok(()) }
//! ```
//!
//! Pure parts need no server:
//!
//! ```
//! use papayu_llm::{check_answer, ResponseFormat, ProviderKind};
//! use papayu_protocol::ProtocolVersion;
//!
//! let plan = check_answer(r#"{"actions": [], "summary": "nothing to do"}"#, ProtocolVersion::V2, None).unwrap();
//! assert_eq!(plan.summary.as_deref(), Some("nothing to do"));
//! assert_eq!(ResponseFormat::JsonSchema.weaker(ProviderKind::OpenAiCompatible), Some(ResponseFormat::JsonObjectWithSchema));
//! assert_eq!(papayu_llm::redact("key=ghp_0123456789abcdefghijABCDEFGHIJ012345"), "key=[REDACTED:github_token]");
//! ```
#![warn(missing_docs)]

mod capability;
mod config;
mod dialect;
mod doctor;
mod error;
mod fanout;
#[cfg(feature = "local")]
mod local;
mod model_file;
mod plan;
mod provider;
mod redact;
mod request;

pub use capability::{CapabilityCache, CapabilityKey, ResponseFormat, mentions_format_refusal};
pub use config::{
    ANTHROPIC_VERSION, ApiKey, DEFAULT_LOCAL_MAX_TOKENS, DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT,
    LARGE_INPUT_CHARS, LARGE_INPUT_MAX_TOKENS, ProviderConfig, ProviderEntry, ProviderKind,
    RetryPolicy,
};
pub use doctor::{
    AskOptions, AskOutcome, DoctorOptions, DoctorReport, ErrorReport, ProviderCheck, ask,
    default_system_prompt, doctor,
};
pub use error::LlmError;
pub use fanout::{
    FanOutProvider, FanOutReport, MergeMethod, MergePolicy, fan_out, merge_deterministic,
};
#[cfg(feature = "local")]
pub use local::{
    DEFAULT_LOCAL_CONTEXT, GrammarBounds, LocalConfig, LocalProvider, LocalStats,
    MAX_GRAMMAR_REPETITION, PROMPT_CACHE_FILES, default_threads, gbnf, grammar_schema,
};
pub use model_file::{
    DEFAULT_MODEL_NAME, DEFAULT_MODEL_PACKAGE, DEFAULT_MODEL_RELATIVE_PATH, DEFAULT_MODEL_SHA256,
    DEFAULT_MODEL_SIZE, GgufInfo, check_gguf, default_model_path, model_cache_dir, sha256_file,
    verify_model,
};
pub use plan::{
    PlanAttempt, PlanOutcome, PlanValidator, REPAIR_INSTRUCTION, SharedValidator, check_answer,
    check_value, repair_request, request_plan,
};
pub use provider::{BoxFuture, HttpProvider, Provider, ProviderInfo, parse_retry_after};
pub use redact::{SecretFamily, find_secrets, redact};
pub use request::{ChatRequest, Completion, FormatFallback, Message, Progress, Role, Usage};
