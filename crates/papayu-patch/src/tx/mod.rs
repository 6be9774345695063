//! Projects and transactions: the public face of SPEC §5.2, §5.4–§5.6.
//! It reaches the disk only through the journal, the lock and the filesystem layer.
//!
//! [`Project`] opens a project (running recovery) and hands out [`Transaction`]s, which
//! preview or apply a plan; undo and redo are in `revert`. Applies, undos and redos all run
//! through one executor (`execute`: journal, ops, checks, commit or rollback), configured by
//! [`ApplyOptions`] and reported by the types of `report`.

mod diff;
mod execute;
mod options;
mod project;
mod report;
mod revert;
mod transaction;

pub use options::{ApplyOptions, DEFAULT_CHECK_TIMEOUT, DEFAULT_UNDO_DEPTH, Progress, Stage};
#[cfg(any(test, feature = "fault-injection"))]
pub use project::recover_injecting;
pub use project::{Project, recover, recover_with_key};
pub use report::{
    ActionError, ApplyReport, FileDiff, History, HistoryEntry, HunkPlacement, Preview, Summary,
};
pub use transaction::Transaction;
