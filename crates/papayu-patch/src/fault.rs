//! I/O fault injection, a test seam: make the Nth write, fsync or rename fail.
//!
//! Compiled into the public API only with the `fault-injection` feature (papayu-patch's own
//! tests turn it on); without it [`Faults`] is an empty type whose checks compile away.

use std::sync::Mutex;

/// Which kind of I/O operation a fault targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A `write(2)` of file content (journal copies, manifests, new files).
    Write,
    /// An `fsync(2)` of a file or a directory.
    Fsync,
    /// A `rename(2)` of a temp file onto its target.
    Rename,
}

/// "Fail the `nth` (1-based) operation of `kind`": exactly one injected failure per apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultPlan {
    /// The operation kind.
    pub kind: FaultKind,
    /// Which occurrence fails, counting from 1.
    pub nth: usize,
}

/// Per-root counters. Armed only during the forward part of a transaction (journal, writes,
/// commit), so rollback and recovery run on a healthy disk as they would after a real fault.
/// Shared by the threads that stage a transaction's files, hence the mutex; the order in which
/// parallel operations are counted varies, but exactly one of them fails.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    state: Mutex<FaultState>,
}

#[derive(Debug, Default)]
struct FaultState {
    plan: Option<FaultPlan>,
    armed: bool,
    seen: usize,
    fired: bool,
}

impl Faults {
    fn with<T>(&self, f: impl FnOnce(&mut FaultState) -> T) -> T {
        // A panic while holding this lock cannot leave the counters inconsistent: recover them.
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    #[allow(dead_code)]
    pub(crate) fn set(&self, plan: Option<FaultPlan>) {
        self.with(|s| {
            s.plan = plan;
            s.seen = 0;
            s.fired = false;
        });
    }

    pub(crate) fn arm(&self, on: bool) {
        self.with(|s| s.armed = on);
    }

    /// Whether the injected fault fired during this transaction.
    #[allow(dead_code)]
    pub(crate) fn fired(&self) -> bool {
        self.with(|s| s.fired)
    }

    pub(crate) fn hit(&self, kind: FaultKind) -> std::io::Result<()> {
        self.with(|s| {
            let Some(plan) = s.plan else {
                return Ok(());
            };
            if !s.armed || plan.kind != kind || s.fired {
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
        })
    }
}
