#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod checks;
#[cfg(target_os = "linux")]
mod confine;
pub mod engine;
mod error;
mod fault;
mod fsx;
mod journal;
mod lock;
mod plan;
mod state;
mod tx;

pub use checks::{
    CHECK_LOG, CheckReport, CheckStatus, Checks, OUTPUT_TAIL_BYTES, Sandbox, run_check,
};
#[cfg(target_os = "linux")]
pub use confine::{ConfineError, Confinement, confine_current_process, landlock_abi, probe};
pub use error::{
    ApplyError, Direction, EscapeReason, HistoryError, InvalidAction, IoOp, JournalFault,
    OpenError, RecoverError, StoreError, UndoError,
};
pub use journal::{
    ActionRecord, Displaced, FOREIGN_LISTED, Found, JournalKey, KeyError, LeftAlone,
    RecoveryReport, RollbackConflict, TxKind, Unfinished, use_journal_key_file,
};
pub use state::read_state_file;
pub use tx::{
    ActionError, ApplyOptions, ApplyReport, DEFAULT_CHECK_TIMEOUT, DEFAULT_UNDO_DEPTH, FileDiff,
    History, HistoryEntry, HunkPlacement, Preview, Progress, Project, Stage, Summary, Transaction,
    recover, recover_with_key,
};

/// Test seam for I/O fault injection (only with the `fault-injection` feature).
#[cfg(any(test, feature = "fault-injection"))]
#[doc(hidden)]
pub mod faults {
    pub use crate::fault::{FaultKind, FaultPlan, RollbackFault};
    pub use crate::tx::recover_injecting;
}
