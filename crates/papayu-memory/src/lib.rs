#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod block;
mod error;
mod memory;
mod prefs;
mod remember;
mod value;

pub use block::MAX_BLOCK_BYTES;
pub use error::MemoryError;
pub use memory::{
    AppliedKey, Memory, ORIGINAL_USER_PREFS_FILE, PROJECT_PREFS_FILE, PatchReport, PatchTrigger,
    RejectedKey, USER_PREFS_FILE,
};
pub use prefs::{OutputFormat, PreferredStyle, ProjectPrefs, RiskTolerance, UserPrefs};
pub use remember::remember_requested;
pub use value::{MAX_LIST_ITEMS, MAX_STRING_CHARS, RejectReason};
