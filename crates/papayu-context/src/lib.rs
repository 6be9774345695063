#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod auto;
mod base;
mod block;
mod config;
mod confine;
mod diet;
mod engine;
mod env;
mod error;
mod extras;
mod files;
mod focus;
mod project;
mod search;
mod tools;

pub use auto::{
    FailingTest, Language, MANIFESTS, TraceFrame, mentions_import_error, parse_failing_tests,
    parse_frames,
};
pub use base::is_test_path;
pub use block::{Block, BlockKind, DietState, FileRef, Origin, render_blocks};
pub use config::{ContextConfig, ToolProbe};
pub use confine::Refusal;
pub use diet::{
    AUTO_MIN_KEEP_CHARS, ContextStats, Truncated, apply_diet, total_chars, truncate_middle,
};
pub use engine::{AssembledContext, CacheStats, ContextEngine, HitMiss, SentFiles, assemble};
pub use error::ContextError;
pub use extras::{BaseRequest, ContextExtras, WebAnswer};
pub use project::{Project, cache_key};
pub use search::{Hit, SearchMode, SearchRefusal, SearchResult};
pub use tools::is_tool_selector;
