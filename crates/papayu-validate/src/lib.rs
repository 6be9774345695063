//! Pure validation rules for file actions proposed by a language model (SPEC §4).
//!
//! A model answers papayu with a JSON plan of file actions. Before anything touches the disk,
//! this crate checks every action against the rules — paths that stay inside the project,
//! protected secrets, the extension allow-list, size limits, content that is text and not an
//! elided placeholder, the shape of patches/edits/ranges, conflicts between actions, and the
//! PLAN/APPLY mode rules — and returns **every** violation with its stable [`ErrorCode`], so a
//! repair prompt can list them all. A plan that passes becomes a [`ValidatedPlan`], the only
//! input the apply engine accepts.
//!
//! The crate does no I/O and reads no environment: what it cannot know (which files were sent
//! to the model, which files exist) the caller passes in a [`Context`].
//!
//! ```
//! use std::collections::BTreeSet;
//! use papayu_protocol::{ErrorCode, ProtocolVersion};
//! use papayu_validate::{check_text, Context, Mode, Policy, RelPath};
//!
//! let answer = r##"{"actions": [
//!     {"kind": "CREATE_FILE", "path": "docs/привет.md", "content": "# Привет\n"},
//!     {"kind": "UPDATE_FILE", "path": "../etc/passwd", "content": "x"},
//!     {"kind": "CREATE_FILE", "path": ".env", "content": "KEY=1"}
//! ], "summary": "demo"}"##;
//! let sent = BTreeSet::from([RelPath::parse("src/lib.rs").unwrap()]);
//! let ctx = Context::new(ProtocolVersion::V2).with_mode(Mode::Apply).with_sent_files(&sent);
//! let report = check_text(answer, &ctx, &Policy::default());
//! assert_eq!(report.codes(), [ErrorCode::InvalidPath, ErrorCode::ProtectedPath]);
//! assert_eq!(report.violations()[0].action_index, Some(1));
//! assert!(report.into_plan().is_err());
//! ```
#![warn(missing_docs)]

mod content;
mod path;
mod plan;
mod policy;
mod rules;
mod unified;

pub use content::{find_placeholder, pseudo_binary_reason};
pub use papayu_protocol::{ErrorCode, Violation};
pub use path::{MAX_PATH_BYTES, MAX_SEGMENT_BYTES, PathError, RelPath};
pub use plan::{ValidatedAction, ValidatedPlan};
pub use policy::{
    BUILTIN_PROTECTED, DEFAULT_EXTENSIONS, DEFAULT_FORBIDDEN_DIRS, DEFAULT_MAX_ACTIONS,
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, DEFAULT_NAMES, Policy, PolicyConfig,
    PolicyError,
};
pub use rules::{
    Context, MAX_EDIT_BYTES, MAX_EDITS, Mode, Report, check_text, validate, validate_actions,
    validate_document,
};
pub use unified::{DiffShapeError, DiffShapeReason, Hunk, HunkLine, parse_unified_diff};
