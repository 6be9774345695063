//! [`ApplyOptions`]: what an apply, undo or redo runs besides its writes (checks, progress,
//! cancellation); plain data, no I/O.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::checks::{CheckReport, Checks, Sandbox};
use crate::engine::EngineOptions;

/// Default depth of the undo stack.
pub const DEFAULT_UNDO_DEPTH: usize = 50;
/// Default timeout of one check command.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(120);

/// Where a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Stage {
    /// The journal is durable; files are being written.
    Writing,
    /// Running check commands.
    Checking,
    /// Committed.
    Committed,
}

/// A progress event, given to the callback of [`ApplyOptions::on_progress`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress<'a> {
    /// The stage.
    pub stage: Stage,
    /// Steps done in this stage.
    pub done: usize,
    /// Steps in this stage.
    pub total: usize,
    /// The path (or check command) just finished.
    pub item: &'a str,
    /// In the [`Stage::Checking`] stage: the report of the check just finished (its status and
    /// the tail of its output).
    pub check: Option<&'a CheckReport>,
}

type ProgressFn<'a> = Box<dyn FnMut(&Progress<'_>) + 'a>;
type JudgeFn<'a> = Box<dyn Fn(&CheckReport) -> Result<(), String> + 'a>;

/// Options of one apply (or undo/redo).
#[non_exhaustive]
pub struct ApplyOptions<'a> {
    /// Checks to run before committing.
    pub checks: Checks,
    /// Timeout of each check command.
    pub check_timeout: Duration,
    /// Engine options (`normalize_eol_lf`).
    pub engine: EngineOptions,
    /// Undo stack depth (oldest transactions beyond it are pruned).
    pub undo_depth: usize,
    /// How check commands are confined.
    pub sandbox: Sandbox,
    progress: Option<ProgressFn<'a>>,
    pub(super) judge: Option<JudgeFn<'a>>,
    pub(super) cancel: Option<Arc<AtomicBool>>,
    #[cfg(any(test, feature = "fault-injection"))]
    pub(super) fault: Option<crate::fault::FaultPlan>,
    #[cfg(any(test, feature = "fault-injection"))]
    pub(super) rollback_fault: Option<crate::fault::RollbackFault>,
}

impl Default for ApplyOptions<'_> {
    fn default() -> Self {
        Self {
            checks: Checks::None,
            check_timeout: DEFAULT_CHECK_TIMEOUT,
            engine: EngineOptions::default(),
            undo_depth: DEFAULT_UNDO_DEPTH,
            sandbox: Sandbox::None,
            progress: None,
            judge: None,
            cancel: None,
            #[cfg(any(test, feature = "fault-injection"))]
            fault: None,
            #[cfg(any(test, feature = "fault-injection"))]
            rollback_fault: None,
        }
    }
}

impl std::fmt::Debug for ApplyOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApplyOptions")
            .field("checks", &self.checks)
            .field("check_timeout", &self.check_timeout)
            .field("engine", &self.engine)
            .field("undo_depth", &self.undo_depth)
            .field("sandbox", &self.sandbox)
            .field("judge", &self.judge.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> ApplyOptions<'a> {
    /// Run these checks before committing.
    pub fn checks(mut self, checks: Checks) -> Self {
        self.checks = checks;
        self
    }

    /// Timeout of each check command (default 120 s).
    pub fn check_timeout(mut self, timeout: Duration) -> Self {
        self.check_timeout = timeout;
        self
    }

    /// Write LF line endings and a final newline (`PAPAYU_NORMALIZE_EOL=lf`).
    pub fn normalize_eol_lf(mut self, on: bool) -> Self {
        self.engine.normalize_eol_lf = on;
        self
    }

    /// Undo stack depth (default 50).
    pub fn undo_depth(mut self, depth: usize) -> Self {
        self.undo_depth = depth.max(1);
        self
    }

    /// Confine check commands with `sandbox` (they run code the model wrote).
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Let `judge` decide whether a check run passes, instead of its exit status: the
    /// transaction commits only when it returns `Ok` for every check; an `Err` is why the
    /// change is rolled back (the [`CheckReport::rejected`] of the failure). papayu-agent judges
    /// the project's tests against their run before the change this way.
    pub fn judge(mut self, judge: impl Fn(&CheckReport) -> Result<(), String> + 'a) -> Self {
        self.judge = Some(Box::new(judge));
        self
    }

    /// Call `f` after each file written and each check run.
    pub fn on_progress(mut self, f: impl FnMut(&Progress<'_>) + 'a) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Cancel from another thread: once `flag` is set, the transaction stops at its next step
    /// (a running check command's process group is killed), rolls back and returns
    /// [`ApplyError::Cancelled`](crate::ApplyError::Cancelled). Setting it after the commit
    /// point has no effect.
    pub fn cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    pub(super) fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Test seam: make one write, fsync or rename fail (`fault-injection` feature only).
    #[cfg(any(test, feature = "fault-injection"))]
    #[doc(hidden)]
    pub fn inject_fault(mut self, plan: crate::fault::FaultPlan) -> Self {
        self.fault = Some(plan);
        self
    }

    /// Test seam: make the rollback's I/O fail (`fault-injection` feature only).
    #[cfg(any(test, feature = "fault-injection"))]
    #[doc(hidden)]
    pub fn inject_rollback_fault(mut self, fault: crate::fault::RollbackFault) -> Self {
        self.rollback_fault = Some(fault);
        self
    }

    pub(super) fn report(&mut self, stage: Stage, done: usize, total: usize, item: &str) {
        self.report_check(stage, done, total, item, None);
    }

    pub(super) fn report_check(
        &mut self,
        stage: Stage,
        done: usize,
        total: usize,
        item: &str,
        check: Option<&CheckReport>,
    ) {
        if let Some(f) = self.progress.as_mut() {
            f(&Progress {
                stage,
                done,
                total,
                item,
                check,
            });
        }
    }
}
