//! The executor every apply, undo and redo goes through: journal, run the ops, run the checks,
//! commit — or roll back. It touches the ops' paths, the journal, the check log and, for a
//! forced undo, `.papa-yu/displaced/`.

use std::time::{SystemTime, UNIX_EPOCH};

use super::options::{ApplyOptions, Stage};
use crate::checks::{self, CheckReport, Checks};
use crate::error::{RunFailure, StoreError};
use crate::fault::Phase;
use crate::fsx::Root;
use crate::journal::{
    self, ActionRecord, DISPLACED_DIR, Displaced, JournalKey, MANIFEST_FORMAT, Manifest, PlannedOp,
    RecoveryReport, Snapshot, Stopped, TxKind, TxStatus,
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
    /// What a forced undo or redo replaced, and where it is now.
    pub(super) displaced: Vec<Displaced>,
}

/// Refuse `ops` when one touches a path of a transaction whose rollback did not finish: that
/// rollback, retried by every recovery, must find the path as its transaction left it.
pub(super) fn refuse_unfinished(
    recovery: &RecoveryReport,
    ops: &[PlannedOp<'_>],
) -> Result<(), StoreError> {
    for p in ops {
        if let Some((unfinished, path)) = recovery.blocking(p.op.path()) {
            return Err(StoreError::Unfinished {
                path: path.to_owned(),
                tx_id: unfinished.tx_id.clone(),
                error: unfinished.error.clone(),
            });
        }
    }
    Ok(())
}

/// Run `ops` as one journaled transaction (SPEC §5.2 steps 3–6): on any failure before the
/// commit point it is rolled back, and the error says what the rollback did. `displace` names
/// the ops (by index) whose path holds content the user changed since the transaction a forced
/// undo reverts: it is copied to `.papa-yu/displaced/<tx>/` before anything is written over it.
pub(super) fn execute<E: RunFailure>(
    root: &Root,
    key: &JournalKey,
    options: &mut ApplyOptions<'_>,
    header: Header,
    ops: Vec<PlannedOp<'_>>,
    displace: &[usize],
) -> Result<Committed, E> {
    #[cfg(any(test, feature = "fault-injection"))]
    root.faults.set(options.fault, options.rollback_fault);
    let pending = new_manifest(root, header)?;
    let id = pending.id.clone();
    root.faults.arm(Phase::Forward);
    let manifest = match journal::write_journal(root, key, pending, &ops) {
        Ok(m) => m,
        Err(e) => {
            root.faults.arm(Phase::Rollback);
            let discarded = discard_journal(root, key, &id, ops.len());
            root.faults.arm(Phase::Off);
            return Err(match discarded {
                Ok(()) => e.into(),
                Err(r) => E::from(e).rollback_failed(r),
            });
        }
    };
    let mut touched = vec![false; ops.len()];
    let result = set_displaced(root, &manifest, &ops, displace)
        .map_err(E::from)
        .and_then(|displaced| {
            run::<E>(root, key, options, &manifest, &ops, &mut touched).map(|(manifest, checks)| {
                Committed {
                    manifest,
                    checks,
                    displaced,
                }
            })
        });
    let committed = match result {
        Ok(c) => c,
        Err(e) => {
            tracing::info!(target: "papayu", event = "APPLY_ROLLBACK", code = %e.code(), tx = %id);
            root.faults.arm(Phase::Rollback);
            let known = journal::with_writes_known(&manifest, &ops);
            let rolled = mark_pending(root, key, &manifest)
                .map(|()| journal::rollback(root, &known, Some(&touched)));
            root.faults.arm(Phase::Off);
            return Err(match rolled {
                Ok(rolled) => e.rolled_back(rolled),
                Err(r) => e.rollback_failed(r),
            });
        }
    };
    root.faults.arm(Phase::Off);
    let total = ops.len();
    options.report(Stage::Committed, total, total, &id);
    // After the commit point: a failure here only delays the stack update to the next open.
    if let Err(e) = journal::fold_committed(root, key, options.undo_depth) {
        tracing::warn!(error = %e, "could not update the undo stack; the next papayu run will");
    }
    Ok(committed)
}

/// If the failure came after the commit rename (e.g. its directory fsync), the manifest on disk
/// says committed: mark it pending again first, so no later fold takes it for done. Only then:
/// a full disk may have no room for a new manifest, and most failures come before the commit.
fn mark_pending(root: &Root, key: &JournalKey, manifest: &Manifest) -> Result<(), StoreError> {
    match journal::read_manifest(root, key, &manifest.id) {
        Ok(Some(m)) if m.status == TxStatus::Pending => Ok(()),
        _ => journal::write_manifest(root, key, manifest),
    }
}

/// Copy the content of the ops `displace` names — the user's, about to be replaced — to
/// `.papa-yu/displaced/<tx>/<path>`, durably, before the first write.
fn set_displaced(
    root: &Root,
    manifest: &Manifest,
    ops: &[PlannedOp<'_>],
    displace: &[usize],
) -> Result<Vec<Displaced>, StoreError> {
    let mut out = Vec::new();
    for &i in displace {
        let Some(p) = ops.get(i) else { continue };
        if let Snapshot::File { bytes, mode } = &p.before {
            let path = p.op.path();
            let saved_to =
                journal::set_aside(root, DISPLACED_DIR, &manifest.id, path, bytes, Some(*mode))?;
            out.push(Displaced {
                path: path.to_owned(),
                saved_to,
            });
        }
    }
    Ok(out)
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
        mac: None,
    })
}

/// After a failed journal write nothing was applied: a renamed manifest is rolled back with no
/// op touched (which removes its temp files, reserve and journal), anything less is dropped.
fn discard_journal(root: &Root, key: &JournalKey, id: &str, ops: usize) -> Result<(), StoreError> {
    match journal::read_manifest(root, key, id) {
        Ok(Some(m)) => match journal::rollback(root, &m, Some(&vec![false; ops])).failed {
            None => Ok(()),
            Some(e) => Err(e),
        },
        _ => root.remove_tree(&journal::tx_path(id)),
    }
}

/// The journaled part: run the ops, run the checks, commit.
fn run<E: RunFailure>(
    root: &Root,
    key: &JournalKey,
    options: &mut ApplyOptions<'_>,
    manifest: &Manifest,
    ops: &[PlannedOp<'_>],
    touched: &mut [bool],
) -> Result<(Manifest, Vec<CheckReport>), E> {
    let cancel = options.cancel.clone();
    let committed = journal::apply_ops(
        root,
        key,
        manifest,
        ops,
        touched,
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
    Ok((committed, checks))
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
