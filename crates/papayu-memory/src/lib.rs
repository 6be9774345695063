//! papayu engineering memory (SPEC §8): what papayu remembers about its user and a project, and
//! how a model may change it.
//!
//! - **User prefs**, `<config dir>/papayu/preferences.json`: `preferred_style`, `ask_budget`,
//!   `risk_tolerance`, `default_language`, `output_format` ([`UserPrefs`]).
//! - **Project prefs**, `<project>/.papa-yu/project.json` (meant to be committed): test, lint,
//!   format and build commands, package manager, source and test roots, CI notes, log files
//!   ([`ProjectPrefs`]).
//! - **The memory block** ([`Memory::block`]), appended to the system prompt: only the fields
//!   that are set, deterministic, at most [`MAX_BLOCK_BYTES`].
//! - **`memory_patch`** ([`Memory::apply_patch`]): the model's dotted keys, checked against
//!   papayu-protocol's 13-key whitelist ([`papayu_protocol::MEMORY_PATCH_KEYS`]) for type and
//!   range — a wrong value is rejected and reported, never coerced — and applied only when the
//!   user asked papayu to remember something ([`remember_requested`]) or the caller's autopatch
//!   flag is on.
//!
//! The library reads no environment variables and prints nothing: the caller passes the config
//! directory, the project root and the autopatch flag. Every save is atomic (temporary file,
//! fsync, rename, fsync of the directory). Fields of the files that papayu does not know are
//! kept when saving, so an older papayu does not erase what a newer one wrote.
//!
//! ```
//! use std::collections::BTreeMap;
//! use camino::Utf8Path;
//! use papayu_memory::{Memory, RejectReason};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tmp = tempfile::tempdir()?;
//! let root = Utf8Path::from_path(tmp.path()).ok_or("non-UTF-8 temp dir")?;
//! let (config_dir, project) = (root.join("config"), root.join("project"));
//! fs_err::create_dir(&project)?;
//!
//! let mut memory = Memory::load(&config_dir, &project)?;
//! assert_eq!(memory.block(), ""); // nothing set yet
//!
//! memory.set("project.default_test_command", "cargo nextest run")?;
//! memory.save()?;
//!
//! let patch = BTreeMap::from([
//!     ("user.preferred_style".to_owned(), json!("brief")),
//!     ("user.ask_budget".to_owned(), json!(300)),
//!     ("user.favourite_colour".to_owned(), json!("green")),
//! ]);
//! let report = memory.apply_patch(&patch, "Remember: keep answers brief", false)?;
//! assert_eq!(report.applied.len(), 1);
//! assert_eq!(report.rejected.len(), 2);
//! assert!(matches!(report.rejected[0].reason, RejectReason::OutOfRange { .. }));
//!
//! let reloaded = Memory::load(&config_dir, &project)?;
//! assert!(reloaded.block().contains(r#""preferred_style":"brief""#));
//! assert!(reloaded.block().contains("cargo nextest run"));
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod atomic;
mod block;
mod error;
mod memory;
mod prefs;
mod remember;
mod value;

pub use block::MAX_BLOCK_BYTES;
pub use error::MemoryError;
pub use memory::{
    AppliedKey, Memory, PROJECT_PREFS_FILE, PatchReport, PatchTrigger, RejectedKey, USER_PREFS_FILE,
};
pub use prefs::{OutputFormat, PreferredStyle, ProjectPrefs, RiskTolerance, UserPrefs};
pub use remember::remember_requested;
pub use value::{MAX_LIST_ITEMS, MAX_STRING_CHARS, RejectReason};
