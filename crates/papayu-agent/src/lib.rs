#![doc = include_str!("../README.md")]
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
    ProgressFn, Round, Stage, fallback_target, new_trace_id, no_progress,
};
pub use config::{AgentConfig, ConfigError, ENV_VARIABLES, LlmMode, parse_bool};
pub use error::AgentError;
pub use mode::{APPLY_TRIGGERS, ModeDecision, ModeReason, mode_name, resolve_mode};
pub use papayu_validate::Mode;
pub use state::{STATE_FILE, SavedPlan, load_saved_plan, store_saved_plan, write_atomic};
