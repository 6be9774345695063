#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod content;
mod formats;
mod path;
mod plan;
mod policy;
mod rules;
mod unified;

pub use content::{find_placeholder, pseudo_binary_reason};
pub use formats::{
    CODEX_BEGIN, CODEX_END, CODEX_EOF, EnvelopeReason, PatchFormat, PatchShapeError, SR_DIVIDER,
    SR_REPLACE, SR_SEARCH, check_patch_shape,
};
pub use papayu_protocol::{ErrorCode, Violation};
pub use path::{MAX_PATH_BYTES, MAX_SEGMENT_BYTES, PathError, RelPath};
pub use plan::{Rejected, Report, SelectError, ValidatedAction, ValidatedPlan};
pub use policy::{
    BUILTIN_PROTECTED, DEFAULT_EXTENSIONS, DEFAULT_FORBIDDEN_DIRS, DEFAULT_MAX_ACTIONS,
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, DEFAULT_NAMES, Policy, PolicyConfig,
    PolicyError,
};
pub use rules::{
    Context, MAX_EDIT_BYTES, MAX_EDITS, Mode, check_text, validate, validate_actions,
    validate_document,
};
pub use unified::{DiffShapeError, DiffShapeReason, Hunk, HunkLine, parse_unified_diff};
