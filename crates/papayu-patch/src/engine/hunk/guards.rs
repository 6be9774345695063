//! Checks on a placement that say "this is a guess": an edited look-alike of a weakly evidenced
//! hunk's text, or added lines whose neighbours the hunk does not show.

use super::super::formats::NOWHERE;
use super::matching::{conflicts_at, lookalike_nearer, lookalike_within, weak};
use super::{EngineError, Hunk, HunkFailure, HunkLine, OpenSide, ParsedPatch, Placed, old_lines};

/// Whether `pos` is away from both stated lines (those of hunks that state real lines).
pub(super) fn moved(pos: usize, stated: [usize; 2]) -> bool {
    stated
        .into_iter()
        .all(|s| s != pos && s.saturating_add(1) < NOWHERE)
}

/// A zero-context hunk placed away from its stated line has only its `-` lines as evidence, and
/// the stated line says little about where an edited copy of them would be: a look-alike of
/// one of them anywhere the hunk could belong (between its neighbours' places in an in-order
/// patch, else the whole file) makes the exact match one candidate among two.
pub(super) fn zero_context_lookalikes(
    file: &[&str],
    patch: &ParsedPatch,
    placed: &[Placed],
    out_of_order: bool,
) -> Result<(), EngineError> {
    for p in placed.iter().filter(|p| p.moved && p.old_len > 0) {
        let h = &patch.hunks[p.index];
        let old = old_lines(h);
        if h.lines.iter().any(|l| matches!(l, HunkLine::Context(_))) {
            continue;
        }
        let (lo, hi) = if out_of_order {
            (0, file.len())
        } else {
            let lo = placed
                .iter()
                .filter(|q| q.index < p.index)
                .map(|q| q.pos + q.old_len)
                .max()
                .unwrap_or(0);
            let hi = placed
                .iter()
                .filter(|q| q.index > p.index)
                .map(|q| q.pos)
                .min()
                .unwrap_or(file.len());
            (lo, hi)
        };
        // Little text: a look-alike of one line; more: a region that mostly matches the block
        // (an edited copy of it) anywhere the hunk could belong.
        let edited_copy = if weak(&old, true) {
            lookalike_within(file, &old, p.pos, lo, hi)
        } else {
            (lo..hi.min(file.len())).any(|q| q != p.pos && conflicts_at(file, &old, q))
        };
        if edited_copy {
            return Err(EngineError::HunkFailed {
                index: p.index,
                header: h.header.clone(),
                reason: HunkFailure::Conflict,
                nearest: Vec::new(),
            });
        }
    }
    Ok(())
}

/// A hunk placed away from its stated line on little evidence, with a look-alike of its text
/// nearer the stated line (or the line the previous hunk's drift predicts).
pub(super) fn weak_lookalike(
    file: &[&str],
    old: &[&str],
    zero_context: bool,
    pos: usize,
    stated: [usize; 2],
) -> bool {
    // Without context, [`zero_context_lookalikes`] decides once every hunk is placed.
    !zero_context
        && moved(pos, stated)
        && weak(old, false)
        && stated
            .into_iter()
            .any(|s| s != pos && lookalike_nearer(file, old, pos, s))
}

/// Whether an exact match at `pos` puts the hunk against the file edge its shape says the diff
/// was cut at ([`open_side`]). The region there is the hunk's own: had it been edited, it would
/// not match exactly, and a copy elsewhere does not sit at that edge — so look-alikes near a
/// wrong stated line are no evidence against it.
pub(super) fn at_own_edge(h: &Hunk, pos: usize, len: usize, n: usize) -> bool {
    match open_side(h) {
        Some(OpenSide::End) => pos + len == n,
        Some(OpenSide::Start) => pos == 0,
        None => false,
    }
}

/// Which end of the file a hunk must reach, if any: one with real line numbers, at least two
/// context lines on one side and only added lines beyond its context on the other. A diff tool
/// cuts context only at the ends of the file, so elsewhere a context line between its added
/// lines may have been left out (a hunk that adds `x` then `y` reads the same as one that adds
/// `x`, keeps `z`, adds `y`). A hunk whose outer change removes lines is verified by them.
pub(super) fn open_side(h: &Hunk) -> Option<OpenSide> {
    /// From one end: how many context lines come first, and whether the lines before the
    /// first context line are only (and at least one) added lines.
    fn side<'a>(lines: impl Iterator<Item = &'a HunkLine>) -> (usize, bool) {
        let lines: Vec<&HunkLine> = lines.collect();
        let context = lines
            .iter()
            .take_while(|l| matches!(l, HunkLine::Context(_)))
            .count();
        let outer: Vec<_> = lines
            .iter()
            .take_while(|l| !matches!(l, HunkLine::Context(_)))
            .collect();
        let adds_only = !outer.is_empty() && outer.iter().all(|l| matches!(l, HunkLine::Add(_)));
        (context, adds_only)
    }
    if h.old_start >= NOWHERE || h.at_eof {
        return None;
    }
    let (leading, adds_first) = side(h.lines.iter());
    let (trailing, adds_last) = side(h.lines.iter().rev());
    if leading >= 2 && adds_last {
        Some(OpenSide::End)
    } else if trailing >= 2 && adds_first {
        Some(OpenSide::Start)
    } else {
        None
    }
}
