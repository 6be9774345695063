//! I/O fault injection, a test seam: make the Nth write, fsync or rename of a transaction fail,
//! or those of its rollback (or of a recovery) with a chosen OS error — once, or from then on,
//! like a disk that filled up.
//!
//! Compiled into the public API only with the `fault-injection` feature (papayu-patch's own
//! tests turn it on); without it [`Faults`] is an empty type whose checks compile away.

use std::sync::Mutex;

/// Which kind of I/O operation a fault targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A `write(2)` of file content (journal copies, manifests, new files), or the allocation
    /// of a journal's reserve.
    Write,
    /// An `fsync(2)` of a file or a directory.
    Fsync,
    /// A `rename(2)` of a temp file onto its target.
    Rename,
}

/// "Fail the `nth` (1-based) operation of `kind`": exactly one injected failure per apply, in
/// its forward part (journal, writes, commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultPlan {
    /// The operation kind.
    pub kind: FaultKind,
    /// Which occurrence fails, counting from 1.
    pub nth: usize,
}

/// "During the rollback (or a recovery), fail the `nth` operation of `kind` — and, when
/// `sticky`, every later one — with the OS error `errno`": a disk that fills up (`ENOSPC`), a
/// file made read-only (`EACCES`), a failing device (`EIO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollbackFault {
    /// The operation kind.
    pub kind: FaultKind,
    /// The first occurrence that fails, counting from 1.
    pub nth: usize,
    /// The `errno` it fails with.
    pub errno: i32,
    /// Whether every later occurrence fails too.
    pub sticky: bool,
}

/// Which part of a transaction runs, for the faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Phase {
    /// Nothing is injected.
    #[default]
    Off,
    /// The journal, the writes and the commit: [`FaultPlan`].
    Forward,
    /// A rollback or a recovery: [`RollbackFault`].
    Rollback,
}

/// Per-root counters. Shared by the threads that stage a transaction's files, hence the mutex;
/// the order in which parallel operations are counted varies, but exactly one of them fails.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    state: Mutex<FaultState>,
}

#[derive(Debug, Default)]
struct FaultState {
    plan: Option<FaultPlan>,
    rollback: Option<RollbackFault>,
    phase: Phase,
    seen: usize,
    seen_rollback: usize,
    fired: bool,
}

impl Faults {
    fn with<T>(&self, f: impl FnOnce(&mut FaultState) -> T) -> T {
        // A panic while holding this lock cannot leave the counters inconsistent: recover them.
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    #[allow(dead_code)]
    pub(crate) fn set(&self, plan: Option<FaultPlan>, rollback: Option<RollbackFault>) {
        self.with(|s| {
            s.plan = plan;
            s.rollback = rollback;
            s.seen = 0;
            s.seen_rollback = 0;
            s.fired = false;
        });
    }

    pub(crate) fn arm(&self, phase: Phase) {
        self.with(|s| s.phase = phase);
    }

    pub(crate) fn hit(&self, kind: FaultKind) -> std::io::Result<()> {
        self.with(|s| match s.phase {
            Phase::Off => Ok(()),
            Phase::Forward => {
                let Some(plan) = s.plan else {
                    return Ok(());
                };
                if plan.kind != kind || s.fired {
                    return Ok(());
                }
                s.seen += 1;
                if s.seen == plan.nth {
                    s.fired = true;
                    return Err(std::io::Error::other(format!(
                        "injected {kind:?} fault #{}",
                        s.seen
                    )));
                }
                Ok(())
            }
            Phase::Rollback => {
                let Some(fault) = s.rollback else {
                    return Ok(());
                };
                if fault.kind != kind {
                    return Ok(());
                }
                s.seen_rollback += 1;
                if s.seen_rollback == fault.nth || (fault.sticky && s.seen_rollback > fault.nth) {
                    return Err(std::io::Error::from_raw_os_error(fault.errno));
                }
                Ok(())
            }
        })
    }
}
