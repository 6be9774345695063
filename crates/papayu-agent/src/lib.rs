#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod agent;
mod config;
mod error;
pub mod layered;

pub mod git;
pub mod golden;
mod mode;
pub mod project_root;
pub mod prompt;
pub mod report;
mod state;
pub mod trace;
pub mod verify;

pub use agent::{
    ActionView, AddedView, Agent, AgentEvent, AgentObserver, ApplyOutcome, ApplyPreview,
    AttemptError, AttemptView, BaselineView, ChatTurn, ConfirmFn, ContextReport, DEFAULT_ATTEMPTS,
    DEFAULT_MUTANTS, DEFAULT_PARTS, DEFAULT_RETRY_TEMPERATURE, DEFAULT_TEST_TIMEOUT, DroppedBlock,
    EARLY_MUTANTS, FALLBACK_V2_CODES, FALLBACK_V3_CODES, FallbackInfo, LOCAL_DRAWS,
    MAX_CONTEXT_ROUNDS, MovedView, MutantView, PartView, PlanOutcome, Progress, ProgressFn,
    REPEAT_REDRAWS, RenamedView, Round, SolveOptions, SolveOutcome, SolveReport, Stage, Usage,
    WHOLE_FILE_MAX_BYTES, fallback_target, new_trace_id, no_progress, strip_mode_prefix,
};
pub use config::{AgentConfig, ConfigError, ENV_VARIABLES, LlmMode, parse_bool};
pub use error::AgentError;
pub use mode::{APPLY_TRIGGERS, ModeDecision, ModeReason, mode_name, resolve_mode};
pub use papayu_context::is_tool_selector;
pub use papayu_validate::Mode;
pub use state::{
    PreviewedAnswer, STATE_FILE, SavedPlan, load_previewed, load_saved_plan, store_saved_plan,
};
pub use verify::{TestCommand, TestCommandSource, Verdict};
