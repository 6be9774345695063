//! The papayu plan→apply loop (SPEC §9, §10): it turns a user's goal into a validated,
//! previewed, transactional change by composing papayu's libraries.
//!
//! * [`resolve_mode`] decides PLAN or APPLY for a message (English and Russian triggers).
//! * [`Agent`] runs a call: prompt assembly ([`prompt`]) with the memory block and auto-gathered
//!   context (papayu-context), up to [`MAX_CONTEXT_ROUNDS`] rounds of context requests, one
//!   repair round (papayu-llm's repair request, with the right `base_sha256` injected on a base
//!   mismatch), validation (papayu-validate, incl. `ERR_UPDATE_WITHOUT_BASE` from the files
//!   actually sent), the v3→v2→v1 protocol fallback in APPLY, the preview and the transaction
//!   (papayu-patch), and the `memory_patch` (papayu-memory).
//! * The PLAN answer is saved in `.papa-yu/state.json`, so `apply` works in a later process.
//! * [`trace`]: `.papa-yu/traces/<trace_id>.json` (UUID v7, atomic, redacted), and
//!   [`report::report`] computes the SPEC §10 metrics from them.
//! * [`golden`]: golden traces (`golden_traces/v1|v2|v3/`), the trace→golden converter and
//!   the replay.
//!
//! The crate reads no environment variable: the frontend collects it into a map and calls
//! [`AgentConfig::from_env_map`].
//!
//! # Events
//!
//! `tracing` events carry their SPEC §10 name in an `event` field, as in papayu-llm and
//! papayu-context: the agent emits `VALIDATION_FAILED` (`code`, `reason`, `stage`),
//! `LLM_RESPONSE_REPAIR` and `PROTOCOL_FALLBACK` (`from`, `to`, `reason`, `stage`, with the
//! message `PROTOCOL_FALLBACK from=v2 to=v1 reason=… stage=…`) inside a `papayu_call` span
//! carrying `trace_id`; the `LLM_*`, `CONTEXT_*`, `PREVIEW_READY`, `APPLY_SUCCESS` and
//! `APPLY_ROLLBACK` events come from the libraries it calls.
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::sync::Arc;
//! use papayu_agent::{Agent, AgentConfig, no_progress};
//! use papayu_llm::{BoxFuture, ChatRequest, Completion, LlmError, Provider, ProviderInfo, ProviderKind};
//!
//! /// A scripted model: always proposes the same file.
//! struct Scripted;
//! impl Provider for Scripted {
//!     fn info(&self) -> ProviderInfo {
//!         ProviderInfo { kind: ProviderKind::OpenAiCompatible, endpoint: "scripted".into(), model: "demo".into() }
//!     }
//!     fn complete<'a>(&'a self, r: &'a ChatRequest) -> BoxFuture<'a, Result<Completion, LlmError>> {
//!         let text = if r.messages[0].content.contains("CURRENT MODE: PLAN") {
//!             r#"{"actions": [], "summary": "Create hello.txt. Check: cat hello.txt"}"#
//!         } else {
//!             r#"{"actions": [{"kind": "CREATE_FILE", "path": "hello.txt", "content": "hi\n"}], "summary": "done"}"#
//!         };
//!         Box::pin(async move { Ok(Completion {
//!             provider: ProviderKind::OpenAiCompatible, model: "demo".into(), text: text.into(),
//!             usage: None, finish_reason: None, format: papayu_llm::ResponseFormat::None,
//!             fallbacks: vec![], retries: 0, streamed: false, elapsed: Default::default(),
//!         }) })
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let root = camino::Utf8Path::from_path(dir.path()).ok_or("utf-8")?;
//! let config = AgentConfig::from_env_map(&BTreeMap::from([("PAPAYU_TRACE".into(), "1".into())]))?;
//! let mut agent = Agent::new(config, root, root.join("config"), Arc::new(Scripted))?;
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//!
//! let plan = rt.block_on(agent.plan("create hello.txt", &no_progress))?;
//! assert!(plan.summary.unwrap().starts_with("Create"));
//! // Later (even in another process): APPLY the saved plan, preview, confirm, write.
//! let preview = rt.block_on(agent.prepare_apply(None, &no_progress))?;
//! assert_eq!(preview.actions[0].path, "hello.txt");
//! let outcome = agent.apply(&preview, None, false, &no_progress)?;
//! assert!(outcome.applied);
//! assert_eq!(std::fs::read_to_string(root.join("hello.txt"))?, "hi\n");
//! assert!(root.join(".papa-yu/traces").join(format!("{}.json", outcome.trace_id)).exists());
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

mod agent;
mod config;
mod error;

pub mod golden;
mod mode;
pub mod prompt;
pub mod report;
mod state;
pub mod trace;

pub use agent::{
    ActionView, Agent, ApplyOutcome, ApplyPreview, ChatTurn, ContextReport, DroppedBlock,
    FALLBACK_V2_CODES, FALLBACK_V3_CODES, FallbackInfo, MAX_CONTEXT_ROUNDS, PlanOutcome, Progress,
    ProgressFn, fallback_target, new_trace_id, no_progress,
};
pub use config::{AgentConfig, ConfigError, ENV_VARIABLES, LlmMode, parse_bool};
pub use error::AgentError;
pub use mode::{APPLY_TRIGGERS, ModeDecision, ModeReason, mode_name, resolve_mode};
pub use papayu_validate::Mode;
pub use state::{STATE_FILE, SavedPlan, load_saved_plan, store_saved_plan};
