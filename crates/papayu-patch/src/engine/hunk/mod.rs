//! Placing hunks: stated line, unique relocation, whitespace-tolerant tiers; ambiguity is an error.
//! Touches only one document's lines and one parsed patch, in memory; never the disk.

mod guards;
mod matching;
mod nearest;
mod order;
mod realign;
mod reindent;

use super::parse::{Hunk, HunkLine, ParsedPatch};
use super::text::{Doc, Eol, Line, key};
use super::{EngineError, HunkFailure, HunkReport, HunkTier, OpenSide, SimilarLine};
use guards::{at_own_edge, moved, open_side, weak_lookalike, zero_context_lookalikes};
use matching::{Cmp, conflicts_at, find_all, matches_at};
use nearest::{nearest, window};
use order::{Deferred, below_heading, resolve_by_order};
use realign::{Realign, Realigned, realign};
use reindent::{Reindent, reindent_for, reindent_line};

/// The patched lines, per-hunk reports and the resulting final-newline state.
pub(crate) struct Patched<'a> {
    pub(crate) lines: Vec<Line<'a>>,
    pub(crate) reports: Vec<HunkReport>,
    pub(crate) final_newline: bool,
}

struct Placed {
    index: usize,
    pos: usize,
    old_len: usize,
    tier: HunkTier,
    reindent: Reindent,
    realign: Realign,
    /// Placed away from both its stated line and the line the drift predicts.
    moved: bool,
    /// Matched exactly (every byte) at the line the patch states.
    at_stated: bool,
}

/// At most this many candidate places are considered for a deferred hunk.
const AMBIGUITY_LIMIT: usize = 8;

/// Apply every hunk to `doc`; all hunks are placed in the original file before anything is built,
/// so either all apply or none does.
pub(crate) fn apply<'a>(doc: &Doc<'a>, patch: &'a ParsedPatch) -> Result<Patched<'a>, EngineError> {
    let file: Vec<&str> = doc.lines.iter().map(|l| key(&l.text)).collect();
    let n = file.len();
    let out_of_order = patch
        .hunks
        .windows(2)
        .any(|w| w[1].old_start < w[0].old_start);
    let mut drift: isize = 0;
    // Pure insertions are placed after every other hunk: they carry no text to verify, so they
    // are only trusted when other hunks proved the patch's line numbers exact.
    let mut insertions: Vec<(usize, usize)> = Vec::new();
    let mut line_numbers_proven = false;
    let mut any_drift = false;
    let mut placed: Vec<Placed> = Vec::with_capacity(patch.hunks.len());
    let mut deferred: Vec<Deferred<'a>> = Vec::new();
    for (index, h) in patch.hunks.iter().enumerate() {
        let old = old_lines(h);
        let fail = |reason: HunkFailure, near: Vec<SimilarLine>| EngineError::HunkFailed {
            index,
            header: h.header.clone(),
            reason,
            nearest: near,
        };
        if old.is_empty() {
            let at = if h.old_count == 0 {
                h.old_start
            } else {
                h.old_start.saturating_sub(1)
            };
            insertions.push((index, at));
            continue;
        }
        let zero_context = !h.lines.iter().any(|l| matches!(l, HunkLine::Context(_)));
        let stated = if h.at_eof {
            n.saturating_sub(old.len())
        } else {
            h.old_start.saturating_sub(1)
        };
        let adjusted = if out_of_order || h.at_eof {
            stated
        } else {
            shift(stated, drift)
        };
        let mut found = None;
        for cmp in [Cmp::Exact, Cmp::TrailingWs, Cmp::Indent, Cmp::Punct] {
            let at_stated = [adjusted, stated]
                .into_iter()
                .find(|&p| matches_at(&file, &old, p, cmp));
            // A zero-context hunk carries too little text to trust a match at its stated line
            // alone. Out-of-order hunks lose the drift check, so only an exact match at the
            // stated line (the line numbers are then right, whatever the order) is trusted.
            let must_be_unique = zero_context || (out_of_order && cmp != Cmp::Exact);
            if let Some(p) = at_stated {
                if must_be_unique {
                    // Unique, or the only place below the hunk's heading.
                    let all = find_all(&file, &old, cmp, AMBIGUITY_LIMIT);
                    if all.len() > 1
                        && (all.len() >= AMBIGUITY_LIMIT
                            || below_heading(&file, &h.header, &all) != Some(p))
                    {
                        return Err(fail(
                            HunkFailure::Ambiguous {
                                candidates: plus1(&all),
                            },
                            Vec::new(),
                        ));
                    }
                }
                found = Some((p, cmp.tier(false), cmp));
                break;
            }
            // A hunk marked as reaching the end of the file (`*** End of File`) belongs there
            // or nowhere: a copy of its lines elsewhere is not its place.
            if h.at_eof {
                continue;
            }
            let mut all = find_all(&file, &old, cmp, AMBIGUITY_LIMIT);
            // Out of order, the other hunks cannot narrow the places down; the heading still can.
            if out_of_order
                && (2..AMBIGUITY_LIMIT).contains(&all.len())
                && let Some(one) = below_heading(&file, &h.header, &all)
            {
                all = vec![one];
            }
            match all.len() {
                0 => continue,
                1 => {
                    let p = all[0];
                    let edge = cmp == Cmp::Exact && at_own_edge(h, p, old.len(), n);
                    if !edge && {
                        let seen = others_blanked(&file, &placed);
                        conflicts_at(&seen, &old, adjusted)
                            || (adjusted != stated && conflicts_at(&seen, &old, stated))
                            || weak_lookalike(&seen, &old, zero_context, p, [stated, adjusted])
                    } {
                        return Err(fail(
                            HunkFailure::Conflict,
                            window(&file, stated, old.len()),
                        ));
                    }
                    found = Some((p, cmp.tier(true), cmp));
                    break;
                }
                // Several places: defer; the order of the other hunks may leave only one. A
                // zero-context hunk too: its lines matched exactly, and the order is the patch's
                // own structure, not its (here unreliable) line numbers.
                k if k < AMBIGUITY_LIMIT && !out_of_order => {
                    deferred.push(Deferred {
                        index,
                        candidates: all.clone(),
                        all,
                        old: old.clone(),
                        cmp,
                        stated,
                        adjusted,
                    });
                    found = None;
                    break;
                }
                _ => {
                    return Err(fail(
                        HunkFailure::Ambiguous {
                            candidates: plus1(&all),
                        },
                        Vec::new(),
                    ));
                }
            }
        }
        if deferred.last().is_some_and(|d| d.index == index) {
            continue;
        }
        let (pos, tier, cmp, realigned) = match found {
            Some((pos, tier, cmp)) => (pos, tier, cmp, Realign::default()),
            None if h.at_eof => {
                return Err(fail(HunkFailure::NoMatch, window(&file, stated, old.len())));
            }
            None => match realign(&file, h) {
                Realigned::One(pos, r) => {
                    let far = |q: usize| pos.abs_diff(q) > 2;
                    let seen = others_blanked(&file, &placed);
                    if (far(adjusted)
                        && far(stated)
                        && (conflicts_at(&seen, &old, adjusted)
                            || conflicts_at(&seen, &old, stated)))
                        || weak_lookalike(&seen, &old, false, pos, [stated, adjusted])
                    {
                        return Err(fail(
                            HunkFailure::Conflict,
                            window(&file, stated, old.len()),
                        ));
                    }
                    (pos, HunkTier::Realigned, Cmp::Exact, r)
                }
                Realigned::Many(all) => {
                    return Err(fail(
                        HunkFailure::Ambiguous {
                            candidates: plus1(&all),
                        },
                        Vec::new(),
                    ));
                }
                Realigned::None => {
                    return Err(fail(HunkFailure::NoMatch, nearest(&file, &old)));
                }
            },
        };
        let old_len = old.len() + usize::from(realigned.omitted.is_some())
            - usize::from(realigned.phantom.is_some());
        let reindent = if cmp.ignores_indentation() {
            reindent_for(&file[pos..pos + old.len()], &old, h)
                .ok_or_else(|| fail(HunkFailure::Reindent, window(&file, pos, old.len())))?
        } else {
            Reindent::Keep
        };
        if !out_of_order {
            drift = isize::try_from(pos)
                .ok()
                .zip(isize::try_from(stated).ok())
                .map_or(0, |(a, b)| a - b);
        }
        any_drift |= pos != stated;
        line_numbers_proven |= pos == stated && tier == HunkTier::Exact;
        placed.push(Placed {
            index,
            pos,
            old_len,
            tier,
            reindent,
            realign: realigned,
            moved: moved(pos, [stated, adjusted]),
            at_stated: pos == stated && tier == HunkTier::Exact,
        });
    }

    resolve_by_order(&file, patch, &mut deferred, &placed)?;
    for d in deferred {
        let h = &patch.hunks[d.index];
        let fail = |reason: HunkFailure, near: Vec<SimilarLine>| EngineError::HunkFailed {
            index: d.index,
            header: h.header.clone(),
            reason,
            nearest: near,
        };
        let pos = d.candidates[0];
        let zero_context = !h.lines.iter().any(|l| matches!(l, HunkLine::Context(_)));
        let edge = d.cmp == Cmp::Exact && at_own_edge(h, pos, d.old.len(), n);
        if !edge && {
            let seen = others_blanked(&file, &placed);
            conflicts_at(&seen, &d.old, d.adjusted)
                || (d.adjusted != d.stated && conflicts_at(&seen, &d.old, d.stated))
                || weak_lookalike(&seen, &d.old, zero_context, pos, [d.stated, d.adjusted])
        } {
            return Err(fail(
                HunkFailure::Conflict,
                window(&file, d.stated, d.old.len()),
            ));
        }
        let tier = d.cmp.tier(true);
        let reindent = if d.cmp.ignores_indentation() {
            reindent_for(&file[pos..pos + d.old.len()], &d.old, h)
                .ok_or_else(|| fail(HunkFailure::Reindent, window(&file, pos, d.old.len())))?
        } else {
            Reindent::Keep
        };
        any_drift |= pos != d.stated;
        placed.push(Placed {
            index: d.index,
            pos,
            old_len: d.old.len(),
            tier,
            reindent,
            realign: Realign::default(),
            moved: moved(pos, [d.stated, d.adjusted]),
            at_stated: false,
        });
    }

    for (index, at) in insertions {
        // Out of order is fine when every other hunk sat exactly at its stated line.
        let trusted = n == 0 || (line_numbers_proven && !any_drift);
        if !trusted || at > n {
            let h = &patch.hunks[index];
            return Err(EngineError::HunkFailed {
                index,
                header: h.header.clone(),
                reason: HunkFailure::InsertionNotAnchored,
                nearest: Vec::new(),
            });
        }
        placed.push(Placed {
            index,
            pos: at,
            old_len: 0,
            tier: HunkTier::Exact,
            reindent: Reindent::Keep,
            realign: Realign::default(),
            moved: false,
            at_stated: false,
        });
    }

    zero_context_lookalikes(&file, patch, &placed, out_of_order)?;
    if let Some((p, side)) = placed.iter().find_map(|p| {
        let side = open_side(&patch.hunks[p.index])?;
        let inside = match side {
            OpenSide::End => p.pos + p.old_len < n,
            // A diff's hunk that starts the file states line 1; one left without the context
            // line before its additions (`+x`, ` d`, `+y` sent as `+x`, `+y`) then matches one
            // line further down. A hunk matched exactly at a later line it states has not lost
            // a line before it: its additions go where it says.
            OpenSide::Start => p.pos > 0 && !p.at_stated,
        };
        inside.then_some((p, side))
    }) {
        let h = &patch.hunks[p.index];
        return Err(EngineError::HunkFailed {
            index: p.index,
            header: h.header.clone(),
            reason: HunkFailure::OpenEnded { side },
            nearest: window(&file, p.pos, p.old_len),
        });
    }

    placed.sort_by_key(|p| (p.pos, p.index));
    for w in placed.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let overlap =
            b.pos < a.pos + a.old_len || (b.pos == a.pos && (a.old_len == 0 || b.old_len == 0));
        if overlap {
            let h = &patch.hunks[b.index];
            return Err(EngineError::HunkFailed {
                index: b.index,
                header: h.header.clone(),
                reason: HunkFailure::Overlap { other: a.index },
                nearest: Vec::new(),
            });
        }
    }

    let mut out: Vec<Line<'a>> = Vec::with_capacity(n + 16);
    let mut cursor = 0usize;
    let mut final_newline = doc.final_newline;
    for p in &placed {
        out.extend(doc.lines[cursor..p.pos].iter().cloned());
        let h = &patch.hunks[p.index];
        let own_eol = patch_eol_intended(doc, p, h);
        let mut old_i = 0usize;
        for (li, l) in h.lines.iter().enumerate() {
            if p.realign.omitted == Some(li) {
                out.push(doc.lines[p.pos + old_i].clone());
                old_i += 1;
            }
            if p.realign.phantom == Some(li) {
                continue;
            }
            match l {
                HunkLine::Context(_) => {
                    out.push(doc.lines[p.pos + old_i].clone());
                    old_i += 1;
                }
                HunkLine::Remove(_) => old_i += 1,
                HunkLine::Add(t) => {
                    let mut line = Line::new(reindent_line(t, &p.reindent));
                    if own_eol {
                        let crlf = h.crlf.get(li).copied().unwrap_or(false);
                        line.eol = Some(if crlf { Eol::CrLf } else { Eol::Lf });
                    }
                    out.push(line);
                }
            }
        }
        cursor = p.pos + p.old_len;
        if cursor == n && (h.old_no_newline || h.new_no_newline) {
            final_newline = !h.new_no_newline;
        }
    }
    out.extend(doc.lines[cursor.min(n)..].iter().cloned());

    let mut reports: Vec<HunkReport> = placed
        .iter()
        .map(|p| HunkReport {
            index: p.index,
            header: patch.hunks[p.index].header.clone(),
            tier: p.tier,
            old_start: p.pos + 1,
        })
        .collect();
    reports.sort_by_key(|r| r.index);
    Ok(Patched {
        lines: out,
        reports,
        final_newline,
    })
}

/// Whether the hunk's added lines keep the patch's own line endings: when every old-side line
/// of the patch ends exactly like the file line it matched, the patch was made from this file's
/// bytes and its endings are the intent (a commit converting CRLF to LF); otherwise (an LF patch
/// on a CRLF file) the file's endings win.
fn patch_eol_intended(doc: &Doc<'_>, p: &Placed, h: &Hunk) -> bool {
    let mut old_i = 0usize;
    let mut compared = false;
    for (li, l) in h.lines.iter().enumerate() {
        if p.realign.omitted == Some(li) {
            old_i += 1;
        }
        if p.realign.phantom == Some(li) || matches!(l, HunkLine::Add(_)) {
            continue;
        }
        let crlf = h.crlf.get(li).copied().unwrap_or(false);
        match doc.lines.get(p.pos + old_i).and_then(|f| f.eol) {
            Some(Eol::CrLf) if !crlf => return false,
            Some(Eol::Lf) if crlf => return false,
            Some(Eol::CrLf | Eol::Lf) => compared = true,
            // The file's unterminated last line has no ending to compare.
            _ => {}
        }
        old_i += 1;
    }
    compared
}

/// The hunk's old side: its context and `-` lines.
fn old_lines(h: &Hunk) -> Vec<&str> {
    h.lines
        .iter()
        .filter_map(|l| match l {
            HunkLine::Context(t) | HunkLine::Remove(t) => Some(t.as_str()),
            HunkLine::Add(_) => None,
        })
        .collect()
}

/// The file with the regions other hunks already matched blanked out, for the checks that look
/// for an edited original near a stated line: hunks never overlap, so text another hunk has
/// proven its own is not this hunk's intended place, however alike it reads.
fn others_blanked<'f>(file: &[&'f str], placed: &[Placed]) -> Vec<&'f str> {
    let mut seen = file.to_vec();
    for p in placed {
        for line in seen.iter_mut().skip(p.pos).take(p.old_len) {
            *line = "";
        }
    }
    seen
}

fn plus1(v: &[usize]) -> Vec<usize> {
    v.iter().map(|p| p + 1).collect()
}

fn shift(p: usize, d: isize) -> usize {
    p.checked_add_signed(d).unwrap_or(0)
}
