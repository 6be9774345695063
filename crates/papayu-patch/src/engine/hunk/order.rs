//! Deciding hunks that match at several places by the order of the patch's other hunks.

use super::matching::Cmp;
use super::{EngineError, HunkFailure, ParsedPatch, Placed, plus1};

/// A hunk whose old lines match at several places (not at its stated line), kept until every
/// other hunk is placed.
pub(super) struct Deferred<'a> {
    pub(super) index: usize,
    /// Places still consistent with the other hunks.
    pub(super) candidates: Vec<usize>,
    /// Every place it matches (for the error message).
    pub(super) all: Vec<usize>,
    pub(super) old: Vec<&'a str>,
    pub(super) cmp: Cmp,
    pub(super) stated: usize,
    pub(super) adjusted: usize,
}

/// Narrow each deferred hunk's places to those consistent with the patch's hunk order: hunks
/// of an in-order patch do not overlap and appear in the file in the order they appear in the
/// patch, so a place before the end of an earlier hunk (or past the start of a later one) is
/// impossible. This is deduction, not a guess: a hunk is placed only when exactly one place
/// remains; otherwise the ambiguity is reported as before.
pub(super) fn resolve_by_order(
    patch: &ParsedPatch,
    deferred: &mut [Deferred<'_>],
    placed: &[Placed],
) -> Result<(), EngineError> {
    loop {
        let mut changed = false;
        for k in 0..deferred.len() {
            let i = deferred[k].index;
            let len = deferred[k].old.len();
            let fixed_before = placed
                .iter()
                .filter(|p| p.index < i)
                .map(|p| p.pos + p.old_len);
            let deferred_before = deferred
                .iter()
                .filter(|d| d.index < i)
                .filter_map(|d| d.candidates.iter().min().map(|m| m + d.old.len()));
            let lower = fixed_before.chain(deferred_before).max().unwrap_or(0);
            let fixed_after = placed.iter().filter(|p| p.index > i).map(|p| p.pos);
            let deferred_after = deferred
                .iter()
                .filter(|d| d.index > i)
                .filter_map(|d| d.candidates.iter().max().copied());
            let upper = fixed_after
                .chain(deferred_after)
                .min()
                .unwrap_or(usize::MAX);
            let before = deferred[k].candidates.len();
            deferred[k]
                .candidates
                .retain(|&c| c >= lower && c.saturating_add(len) <= upper);
            changed |= deferred[k].candidates.len() != before;
        }
        if !changed {
            break;
        }
    }
    match deferred.iter().find(|d| d.candidates.len() != 1) {
        None => Ok(()),
        Some(d) => Err(EngineError::HunkFailed {
            index: d.index,
            header: patch.hunks[d.index].header.clone(),
            reason: HunkFailure::Ambiguous {
                candidates: plus1(&d.all),
            },
            nearest: Vec::new(),
        }),
    }
}
