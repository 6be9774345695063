//! papayu's transactional apply engine (SPEC §5): apply a validated plan of file actions
//! all-or-nothing, crash-safe and undoable.
//!
//! * [`Project::open`] recovers any unfinished transaction, then
//!   [`Project::transaction`] → [`Transaction::preview`] (unified diffs, counts, the errors apply
//!   would hit — computed by the same code as apply, writing nothing) → [`Transaction::apply`].
//! * Apply takes the project lock (`.papa-yu/lock`), computes every new content in memory,
//!   writes an fsync'd journal of the originals (`.papa-yu/tx/<id>/`), writes each file as
//!   temp → fsync → rename → directory fsync without ever following a symlink, runs the
//!   [`Checks`], and commits by an atomic rename of the manifest. Any failure — a refused hunk,
//!   a failed fsync, a failed check — rolls back from the journal; a crash is rolled back by
//!   the next [`recover`].
//! * [`Project::undo`] / [`Project::redo`] (hash-checked, `ERR_UNDO_CONFLICT`) and
//!   [`Project::history`].
//! * [`engine`]: the PATCH_FILE / EDIT_FILE / REPLACE_RANGE engines, and
//!   [`engine::apply_patch_to_text`] for one diff onto one text.
//!
//! ```
//! use papayu_patch::{ApplyOptions, Project};
//! use papayu_protocol::{Action, ActionKind, ProtocolVersion};
//! use papayu_validate::{RelPath, ValidatedAction, ValidatedPlan};
//!
//! let dir = tempfile::tempdir()?;
//! let mut action = Action::new(ActionKind::CreateFile, "src/hello.txt");
//! action.content = Some("hello\n".into());
//! let plan = ValidatedPlan {
//!     version: ProtocolVersion::V2,
//!     actions: vec![ValidatedAction { index: 0, path: RelPath::parse("src/hello.txt")?, action }],
//! };
//! let project = Project::open(dir.path())?;
//! let preview = project.transaction(&plan).preview()?;
//! assert_eq!(preview.summary.create, 1);
//! let report = project.transaction(&plan).options(ApplyOptions::default()).apply()?;
//! assert_eq!(std::fs::read_to_string(dir.path().join("src/hello.txt"))?, "hello\n");
//! project.undo(false)?;
//! assert!(!dir.path().join("src/hello.txt").exists());
//! # let _ = report;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod checks;
pub mod engine;
mod error;
mod fault;
mod fsx;
mod journal;
mod lock;
mod plan;
mod tx;

pub use checks::{CHECK_LOG, CheckReport, Checks, OUTPUT_TAIL_BYTES, Sandbox, run_check};
pub use error::PatchError;
pub use journal::{ActionRecord, RecoveryReport, TxKind};
pub use tx::{
    ActionError, ApplyOptions, ApplyReport, DEFAULT_CHECK_TIMEOUT, DEFAULT_UNDO_DEPTH, FileDiff,
    History, HistoryEntry, HunkPlacement, Preview, Progress, Project, Stage, Summary, Transaction,
    recover,
};

/// Test seam for I/O fault injection (only with the `fault-injection` feature).
#[cfg(any(test, feature = "fault-injection"))]
#[doc(hidden)]
pub mod faults {
    pub use crate::fault::{FaultKind, FaultPlan};
}
