//! Context gathering for papayu (SPEC §6): what the model gets to read before it proposes a
//! change.
//!
//! - **Requests** ([`Project`]): `read_file`, `search`, `logs`, `env`, each answered with a
//!   [`Block`]. Every path passes papayu-validate's path rules, the protected-path list and
//!   symlink confinement; a refused, missing or non-UTF-8 file is a short note in the block,
//!   never silence and never a file from outside the project. FILE headers carry the sha256 of
//!   the whole file. Search uses the ripgrep crates, honours `.gitignore` and `.papayuignore`
//!   (also outside a git repository), is literal, skips binary files and returns at most 50
//!   hits sorted by path then line.
//! - **Cache** ([`ContextEngine`]): requests are cached within a plan cycle by their SPEC §6.2
//!   key ([`cache_key`]), with per-type [`CacheStats`].
//! - **Diet** ([`apply_diet`]): per-block caps with a character-safe 60/40
//!   [`truncate_middle`], then the drop order search → logs → env → auto-gathered files →
//!   requested files (which keep at least 4 000 characters).
//! - **Auto-gathering** ([`parse_frames`], [`ContextEngine::auto_gather`]): stack frames,
//!   import errors and failing tests in the goal text.
//! - **Sent files** ([`SentFiles`]): which files' content actually reached the model, with
//!   their sha256 — the input of `ERR_UPDATE_WITHOUT_BASE`.
//!
//! The crate reads no environment variable and prints nothing: limits come in
//! [`ContextConfig`] (defaults are the SPEC values).
//!
//! # Events
//!
//! `tracing` events carry their SPEC §10 name in the `event` field:
//! `CONTEXT_CACHE_HIT` / `CONTEXT_CACHE_MISS` (debug, field `key`) and
//! `CONTEXT_DIET_APPLIED` (info, fields `files`, `dropped`, `truncated`, `total_chars`; the
//! message reads `CONTEXT_DIET_APPLIED files=N dropped=M truncated=T total_chars=C`).
//!
//! # Example
//!
//! ```
//! use camino::Utf8Path;
//! use papayu_context::{ContextConfig, ContextEngine};
//! use papayu_protocol::ContextRequest;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir(dir.path().join("src"))?;
//! std::fs::write(dir.path().join("src/lib.rs"), "pub fn answer() -> u32 {\n    42\n}\n")?;
//! let root = Utf8Path::from_path(dir.path()).expect("temp dirs are UTF-8 here");
//!
//! let mut engine = ContextEngine::new(root, ContextConfig::default())?;
//! let requests = [
//!     ContextRequest::ReadFile { path: "src/lib.rs".into(), start_line: None, end_line: None },
//!     ContextRequest::ReadFile { path: "../etc/passwd".into(), start_line: None, end_line: None },
//! ];
//! let ctx = engine.assemble(&requests, Some("thread 'main' panicked at src/lib.rs:2:5"));
//!
//! assert!(ctx.text.starts_with("FILE[src/lib.rs] (sha256="));
//! assert!(ctx.text.contains("2|    42"));
//! assert!(ctx.text.contains("refused: invalid path"));
//! let lib = papayu_validate::RelPath::parse("src/lib.rs")?;
//! assert!(ctx.sent_files.contains(&lib));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod auto;
mod block;
mod config;
mod confine;
mod diet;
mod engine;
mod env;
mod error;
mod project;
mod search;

pub use auto::{
    FailingTest, Language, MANIFESTS, TraceFrame, mentions_import_error, parse_failing_tests,
    parse_frames,
};
pub use block::{Block, BlockKind, DietState, FileRef, Origin, render_blocks};
pub use config::{ContextConfig, ToolProbe};
pub use confine::Refusal;
pub use diet::{
    AUTO_MIN_KEEP_CHARS, ContextStats, Truncated, apply_diet, total_chars, truncate_middle,
};
pub use engine::{AssembledContext, CacheStats, ContextEngine, HitMiss, SentFiles, assemble};
pub use error::ContextError;
pub use project::{Project, cache_key};
pub use search::{Hit, SearchMode, SearchRefusal, SearchResult};
