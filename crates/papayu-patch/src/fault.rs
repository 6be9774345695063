//! I/O fault injection, a test seam: make the Nth write, fsync or rename fail.
//!
//! Compiled into the public API only with the `fault-injection` feature (papayu-patch's own
//! tests turn it on); without it [`Faults`] is an empty type whose checks compile away.

use std::cell::Cell;

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
#[derive(Debug, Default)]
pub(crate) struct Faults {
    plan: Cell<Option<FaultPlan>>,
    armed: Cell<bool>,
    seen: Cell<usize>,
    fired: Cell<bool>,
}

impl Faults {
    #[allow(dead_code)]
    pub(crate) fn set(&self, plan: Option<FaultPlan>) {
        self.plan.set(plan);
        self.seen.set(0);
        self.fired.set(false);
    }

    pub(crate) fn arm(&self, on: bool) {
        self.armed.set(on);
    }

    /// Whether the injected fault fired during this transaction.
    #[allow(dead_code)]
    pub(crate) fn fired(&self) -> bool {
        self.fired.get()
    }

    pub(crate) fn hit(&self, kind: FaultKind) -> std::io::Result<()> {
        let Some(plan) = self.plan.get() else {
            return Ok(());
        };
        if !self.armed.get() || plan.kind != kind || self.fired.get() {
            return Ok(());
        }
        let n = self.seen.get() + 1;
        self.seen.set(n);
        if n == plan.nth {
            self.fired.set(true);
            return Err(std::io::Error::other(format!(
                "injected {kind:?} fault #{n}"
            )));
        }
        Ok(())
    }
}
