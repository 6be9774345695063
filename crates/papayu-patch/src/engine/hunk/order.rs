//! Deciding hunks that match at several places by the order of the patch's other hunks and by
//! the section heading their `@@` line names.

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
/// impossible. Then the heading: a diff tool writes after the second `@@` a line it found
/// *above* the hunk (git's and GNU diff's "function name"), so a place with no line starting with
/// that text above it is not the hunk's — whichever rule picked the heading line. This is
/// deduction, not a guess: a hunk is placed only when exactly one place remains; otherwise the
/// ambiguity is reported as before.
pub(super) fn resolve_by_order(
    file: &[&str],
    patch: &ParsedPatch,
    deferred: &mut [Deferred<'_>],
    placed: &[Placed],
) -> Result<(), EngineError> {
    loop {
        let mut changed = narrow_by_order(deferred, placed);
        if !changed {
            for d in deferred.iter_mut().filter(|d| d.candidates.len() > 1) {
                if let Some(one) = below_heading(file, &patch.hunks[d.index].header, &d.candidates)
                {
                    d.candidates = vec![one];
                    changed = true;
                }
            }
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

/// The one place among `candidates` (all of a hunk's places, in file order) that has a line
/// starting with the hunk's heading above it. `None` when no place or several do: the heading is
/// then not this file's, or does not tell the places apart.
pub(super) fn below_heading(file: &[&str], header: &str, candidates: &[usize]) -> Option<usize> {
    let h = heading(header)?;
    let first = file.iter().position(|l| l.trim_end().starts_with(h))?;
    let mut below = candidates.iter().copied().filter(|&c| c > first);
    match (below.next(), below.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// The section heading of a `@@ -a,b +c,d @@ heading` line, trailing whitespace dropped (git
/// trims it and cuts the text at 80 bytes, so a file line need only start with it).
fn heading(header: &str) -> Option<&str> {
    let rest = header.strip_prefix("@@")?;
    let end = rest.find("@@")?;
    let text = rest[end + 2..].strip_prefix(' ')?.trim_end();
    (!text.trim().is_empty()).then_some(text)
}

/// One pass of narrowing by the other hunks' places; whether any candidate list shrank.
fn narrow_by_order(deferred: &mut [Deferred<'_>], placed: &[Placed]) -> bool {
    let mut any = false;
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
            return any;
        }
        any = true;
    }
}
