//! Pure validation rules for file actions proposed by a language model (SPEC §4).
#![warn(missing_docs)]

mod path;
mod plan;

pub use path::{MAX_PATH_BYTES, MAX_SEGMENT_BYTES, PathError, RelPath};
pub use plan::{ValidatedAction, ValidatedPlan};
