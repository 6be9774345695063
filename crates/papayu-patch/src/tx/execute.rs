//! The executor every apply, undo and redo goes through: journal, run the ops, run the checks,
//! commit — or roll back. It touches the ops' paths, the journal and the check log.

use std::time::{SystemTime, UNIX_EPOCH};

use super::options::{ApplyOptions, Stage};
use crate::checks::{self, CheckReport, Checks};
use crate::error::{RunFailure, StoreError};
use crate::fsx::Root;
use crate::journal::{
    self, ActionRecord, MANIFEST_FORMAT, Manifest, PlannedOp, Stopped, TxKind, TxStatus,
};

/// What a new transaction records about itself besides its entries.
pub(super) struct Header {
    pub(super) kind: TxKind,
    /// The transaction an undo or redo reverts.
    pub(super) reverts: Option<String>,
    pub(super) actions: Vec<ActionRecord>,
    pub(super) protocol: Option<u8>,
}

/// A committed transaction.
pub(super) struct Committed {
    pub(super) manifest: Manifest,
    /// The checks that ran before the commit.
    pub(super) checks: Vec<CheckReport>,
}

/// Run `ops` as one journaled transaction (SPEC §5.2 steps 3–6): on any failure before the
/// commit point it is rolled back, and the error says whether the rollback finished.
pub(super) fn execute<E: RunFailure>(
    root: &Root,
    options: &mut ApplyOptions<'_>,
    header: Header,
    ops: Vec<PlannedOp<'_>>,
) -> Result<Committed, E> {
    #[cfg(any(test, feature = "fault-injection"))]
    root.faults.set(options.fault);
    let pending = new_manifest(root, header)?;
    let id = pending.id.clone();
    root.faults.arm(true);
    let manifest = match journal::write_journal(root, pending, &ops) {
        Ok(m) => m,
        Err(e) => {
            root.faults.arm(false);
            return Err(match discard_journal(root, &id) {
                Ok(()) => e.into(),
                Err(r) => E::from(e).rollback_failed(r),
            });
        }
    };
    let result = run::<E>(root, options, &manifest, &ops);
    root.faults.arm(false);
    let committed = match result {
        Ok(c) => c,
        Err(e) => {
            tracing::info!(target: "papayu", event = "APPLY_ROLLBACK", code = %e.code(), tx = %id);
            // If the failure came after the commit rename (e.g. its directory fsync), the
            // manifest on disk may say committed: mark it pending again first so no later fold
            // sees it as done.
            let rb = journal::write_manifest(root, &manifest)
                .and_then(|()| journal::rollback(root, &manifest));
            return Err(match rb {
                Ok(()) => e,
                Err(r) => e.rollback_failed(r),
            });
        }
    };
    let total = ops.len();
    options.report(Stage::Committed, total, total, &id);
    // After the commit point: a failure here only delays the stack update to the next open.
    if let Err(e) = journal::fold_committed(root, options.undo_depth) {
        tracing::warn!(error = %e, "could not update the undo stack; the next papayu run will");
    }
    Ok(committed)
}

/// The pending manifest of a new transaction: the next sequence number, a fresh id.
fn new_manifest(root: &Root, header: Header) -> Result<Manifest, StoreError> {
    let seq = journal::next_seq(root)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let id = format!("{seq:010}-{:08x}", now.subsec_nanos() ^ std::process::id());
    Ok(Manifest {
        format: MANIFEST_FORMAT,
        id,
        seq,
        kind: header.kind,
        reverts: header.reverts,
        status: TxStatus::Pending,
        created_unix_ms: now.as_millis() as u64,
        protocol: header.protocol,
        actions: header.actions,
        entries: Vec::new(),
    })
}

/// After a failed journal write: no manifest (or an unrenamed one) means nothing was applied,
/// so the partial journal is dropped; a renamed one is rolled back like any other.
fn discard_journal(root: &Root, id: &str) -> Result<(), StoreError> {
    match journal::read_manifest(root, id) {
        Ok(Some(m)) => journal::rollback(root, &m),
        _ => root.remove_tree(&journal::tx_path(id)),
    }
}

/// The journaled part: run the ops, run the checks, commit.
fn run<E: RunFailure>(
    root: &Root,
    options: &mut ApplyOptions<'_>,
    manifest: &Manifest,
    ops: &[PlannedOp<'_>],
) -> Result<Committed, E> {
    let cancel = options.cancel.clone();
    let committed = journal::apply_ops(
        root,
        manifest,
        ops,
        cancel.as_deref(),
        &mut |done, total, item| {
            options.report(Stage::Writing, done, total, item);
        },
    )
    .map_err(|stopped| match stopped {
        Stopped::Cancelled => E::cancelled(),
        Stopped::Failed(e) => E::from(e),
    })?;
    let checks = run_checks::<E>(root, options)?;
    if options.cancelled() {
        return Err(E::cancelled());
    }
    journal::commit(root, &committed)?;
    Ok(Committed {
        manifest: committed,
        checks,
    })
}

/// Run the options' checks in order, stopping at the first failure, and save their output as
/// the check log.
fn run_checks<E: RunFailure>(
    root: &Root,
    options: &mut ApplyOptions<'_>,
) -> Result<Vec<CheckReport>, E> {
    let commands = match &options.checks {
        Checks::None => Vec::new(),
        Checks::Commands(c) => c.clone(),
        Checks::Detect => checks::detect(root),
    };
    if commands.is_empty() {
        return Ok(Vec::new());
    }
    let mut reports = Vec::new();
    let total = commands.len();
    let mut failed = None;
    for (i, c) in commands.iter().enumerate() {
        let mut r = checks::run_check(
            root.path(),
            c,
            options.check_timeout,
            options.cancel.as_deref(),
            &options.sandbox,
        );
        // A judge decides what a run means; without one, exit status 0 passes.
        let passed = match &options.judge {
            Some(judge) => match judge(&r) {
                Ok(()) => true,
                Err(why) => {
                    r.rejected = Some(why);
                    false
                }
            },
            None => r.success,
        };
        options.report_check(Stage::Checking, i + 1, total, c, Some(&r));
        if !passed {
            failed = Some(r.clone());
        }
        reports.push(r);
        if failed.is_some() {
            break;
        }
    }
    checks::save_log(root, &reports);
    if options.cancelled() {
        return Err(E::cancelled());
    }
    if let Some(r) = failed {
        return Err(E::check_failed(r));
    }
    Ok(reports)
}
