//! Placing hunks: stated line, unique relocation, whitespace-tolerant tiers; ambiguity is an error.

use std::borrow::Cow;

use super::parse::{Hunk, HunkLine, ParsedPatch};
use super::text::{Doc, Eol, Line, key};
use super::{EngineError, HunkFailure, HunkReport, HunkTier, SimilarLine};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Exact,
    TrailingWs,
    Indent,
    /// Indentation ignored and typographic punctuation read as ASCII.
    Punct,
}

impl Cmp {
    fn norm(self, s: &str) -> Cow<'_, str> {
        let s = key(s);
        match self {
            Self::Exact => Cow::Borrowed(s),
            Self::TrailingWs => Cow::Borrowed(s.trim_end()),
            Self::Indent => Cow::Borrowed(s.trim()),
            Self::Punct => ascii_punctuation(s.trim()),
        }
    }

    /// The tier a match under this comparison reports (`moved`: not at the stated line).
    fn tier(self, moved: bool) -> HunkTier {
        match self {
            Self::Exact if moved => HunkTier::Offset,
            Self::Exact => HunkTier::Exact,
            Self::TrailingWs => HunkTier::TrailingWhitespace,
            Self::Indent => HunkTier::Indentation,
            Self::Punct => HunkTier::Punctuation,
        }
    }

    fn ignores_indentation(self) -> bool {
        matches!(self, Self::Indent | Self::Punct)
    }
}

/// Typographic dashes, quotes and spaces as their ASCII forms (what a model types for what an
/// editor or a word processor wrote); borrowed when there are none.
fn ascii_punctuation(s: &str) -> Cow<'_, str> {
    fn ascii(c: char) -> Option<char> {
        match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => Some('-'),
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => Some('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => Some('"'),
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
                Some(' ')
            }
            _ => None,
        }
    }
    if !s.chars().any(|c| ascii(c).is_some()) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.chars().map(|c| ascii(c).unwrap_or(c)).collect())
}

/// How `+` lines are re-indented after an indentation-tolerant match.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reindent {
    Keep,
    Add(String),
    Remove(String),
    /// patch indent → file indent, functional.
    Table(Vec<(String, String)>),
}

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
}

/// How a hunk's body is read against the file when it is one line off (see [`realign`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Realign {
    /// Index in `Hunk::lines` of a context line the file does not have.
    phantom: Option<usize>,
    /// Index in `Hunk::lines` before which one file line the hunk omits is kept.
    omitted: Option<usize>,
}

fn leading_ws(s: &str) -> &str {
    &s[..s.len() - s.trim_start().len()]
}

/// A line that carries enough text to be evidence of a location (not `}` or blank).
fn significant(s: &str) -> bool {
    s.trim().chars().filter(|c| c.is_alphanumeric()).count() >= 3
}

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
        let old: Vec<&str> = h
            .lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(t) | HunkLine::Remove(t) => Some(t.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect();
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
                    let all = find_all(&file, &old, cmp, 2);
                    if all.len() > 1 {
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
            let all = find_all(&file, &old, cmp, 8);
            match all.len() {
                0 => continue,
                1 => {
                    let p = all[0];
                    if conflicts_at(&file, &old, adjusted)
                        || (adjusted != stated && conflicts_at(&file, &old, stated))
                    {
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
            None => match realign(&file, h) {
                Realigned::One(pos, r) => {
                    let far = |q: usize| pos.abs_diff(q) > 2;
                    if far(adjusted)
                        && far(stated)
                        && (conflicts_at(&file, &old, adjusted)
                            || conflicts_at(&file, &old, stated))
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
        });
    }

    resolve_by_order(patch, &mut deferred, &placed)?;
    for d in deferred {
        let h = &patch.hunks[d.index];
        let fail = |reason: HunkFailure, near: Vec<SimilarLine>| EngineError::HunkFailed {
            index: d.index,
            header: h.header.clone(),
            reason,
            nearest: near,
        };
        let pos = d.candidates[0];
        if conflicts_at(&file, &d.old, d.adjusted)
            || (d.adjusted != d.stated && conflicts_at(&file, &d.old, d.stated))
        {
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

/// The result of [`realign`].
enum Realigned {
    None,
    One(usize, Realign),
    /// 0-based starts of several distinct alignments.
    Many(Vec<usize>),
}

/// Place a hunk that is one line off the file, the two commonest shapes of hand- or model-written
/// hunks: a context line the file does not have (a phantom blank line, a line copied from
/// elsewhere), or one file line between two of the hunk's old lines left out. Every other old
/// line, every `-` line included, must match exactly, and the whole file must admit exactly one
/// such alignment with one outcome; anything else is not evidence and is rejected.
fn realign(file: &[&str], h: &Hunk) -> Realigned {
    // (index in `h.lines`, text, is context)
    let olds: Vec<(usize, &str, bool)> = h
        .lines
        .iter()
        .enumerate()
        .filter_map(|(li, l)| match l {
            HunkLine::Context(t) => Some((li, t.as_str(), true)),
            HunkLine::Remove(t) => Some((li, t.as_str(), false)),
            HunkLine::Add(_) => None,
        })
        .collect();
    let mut found: Vec<(usize, Realign)> = Vec::new();
    // A hunk without context has nothing to align by.
    if !olds.iter().any(|o| o.2) {
        return Realigned::None;
    }
    let enough = |lines: &mut dyn Iterator<Item = &str>| {
        let v: Vec<&str> = lines.collect();
        v.len() >= 2 && v.iter().any(|t| significant(t))
    };
    // A phantom interior context line: drop it; a run of identical context lines is one choice.
    // An edge line is never phantom: a changed first or last context line is a conflicting
    // edit, and dropping it would only shrink the evidence.
    for (k, &(li, text, is_context)) in olds.iter().enumerate() {
        let interior = k > 0 && k + 1 < olds.len();
        if !is_context || !interior || olds[k - 1] == (li - 1, text, true) {
            continue;
        }
        let rest: Vec<&str> = olds
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .map(|(_, o)| o.1)
            .collect();
        if !enough(&mut rest.iter().copied()) {
            continue;
        }
        for pos in find_all(file, &rest, Cmp::Exact, AMBIGUITY_LIMIT) {
            found.push((
                pos,
                Realign {
                    phantom: Some(li),
                    omitted: None,
                },
            ));
        }
    }
    // An omitted file line between old lines `g - 1` and `g`.
    let old_text: Vec<&str> = olds.iter().map(|o| o.1).collect();
    if enough(&mut old_text.iter().copied()) {
        for pos in 0..file.len() {
            let prefix = old_text
                .iter()
                .zip(&file[pos..])
                .take_while(|(o, f)| key(o) == key(f))
                .count();
            for g in 1..old_text.len().min(prefix + 1) {
                let tail = pos + g + 1;
                if !matches_at(file, &old_text[g..], tail, Cmp::Exact) {
                    continue;
                }
                let (before, after) = (olds[g - 1], olds[g]);
                // Beside a context line, and with no `+` line between (the file line's place
                // among them would be a guess): else both outcomes are possible, ambiguous.
                if after.0 - before.0 > 1 || !(before.2 || after.2) {
                    found.push((pos, Realign::default()));
                    found.push((pos, Realign::default()));
                    continue;
                }
                let at = after.0;
                found.push((
                    pos,
                    Realign {
                        phantom: None,
                        omitted: Some(at),
                    },
                ));
            }
            if found.len() > AMBIGUITY_LIMIT {
                break;
            }
        }
    }
    match found.as_slice() {
        [] => Realigned::None,
        [(pos, r)] => Realigned::One(*pos, *r),
        _ => Realigned::Many(found.iter().map(|f| f.0).collect()),
    }
}

/// At most this many candidate places are considered for a deferred hunk.
const AMBIGUITY_LIMIT: usize = 8;

/// A hunk whose old lines match at several places (not at its stated line), kept until every
/// other hunk is placed.
struct Deferred<'a> {
    index: usize,
    /// Places still consistent with the other hunks.
    candidates: Vec<usize>,
    /// Every place it matches (for the error message).
    all: Vec<usize>,
    old: Vec<&'a str>,
    cmp: Cmp,
    stated: usize,
    adjusted: usize,
}

/// Narrow each deferred hunk's places to those consistent with the patch's hunk order: hunks
/// of an in-order patch do not overlap and appear in the file in the order they appear in the
/// patch, so a place before the end of an earlier hunk (or past the start of a later one) is
/// impossible. This is deduction, not a guess: a hunk is placed only when exactly one place
/// remains; otherwise the ambiguity is reported as before.
fn resolve_by_order(
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

fn plus1(v: &[usize]) -> Vec<usize> {
    v.iter().map(|p| p + 1).collect()
}

fn shift(p: usize, d: isize) -> usize {
    p.checked_add_signed(d).unwrap_or(0)
}

fn matches_at(file: &[&str], old: &[&str], p: usize, cmp: Cmp) -> bool {
    let Some(region) = p.checked_add(old.len()).and_then(|end| file.get(p..end)) else {
        return false;
    };
    region
        .iter()
        .zip(old)
        .all(|(f, o)| cmp.norm(f) == cmp.norm(o))
}

/// Start positions where `old` matches, stopping after `limit`.
fn find_all(file: &[&str], old: &[&str], cmp: Cmp, limit: usize) -> Vec<usize> {
    let mut out = Vec::new();
    if old.len() > file.len() {
        return out;
    }
    let first = cmp.norm(old[0]);
    for p in 0..=file.len() - old.len() {
        if cmp.norm(file[p]) == first && matches_at(file, old, p, cmp) {
            out.push(p);
            if out.len() >= limit {
                break;
            }
        }
    }
    out
}

/// The region at `p` mostly matches the hunk's significant old lines but not all of them:
/// someone else edited the hunk's intended place, so a look-alike elsewhere must not be used.
fn conflicts_at(file: &[&str], old: &[&str], p: usize) -> bool {
    let (mut total, mut hit) = (0usize, 0usize);
    for (i, o) in old.iter().enumerate() {
        if !significant(o) {
            continue;
        }
        total += 1;
        if p.checked_add(i)
            .and_then(|j| file.get(j))
            .is_some_and(|f| f.trim() == o.trim())
        {
            hit += 1;
        }
    }
    total >= 2 && hit * 2 >= total
}

/// How to re-indent the `+` lines after an indentation-tolerant match, or `None` (reject) when
/// the matched lines give no trustworthy answer. A delta is evidence only when several matched
/// lines agree on it: one drifted context line says nothing about the block (a patch whose
/// context line gained a space must not strip a space from every added line).
fn reindent_for(region: &[&str], old: &[&str], h: &Hunk) -> Option<Reindent> {
    let pairs: Vec<(&str, &str)> = region
        .iter()
        .zip(old)
        .filter(|(f, _)| !f.trim().is_empty())
        .map(|(f, o)| (leading_ws(o), leading_ws(f)))
        .collect();
    let adds: Vec<&str> = h
        .lines
        .iter()
        .filter_map(|l| match l {
            HunkLine::Add(t) if !t.trim().is_empty() => Some(t.as_str()),
            _ => None,
        })
        .collect();
    if pairs.iter().all(|(p, f)| p == f) {
        return Some(Reindent::Keep);
    }
    if let [(p0, f0), _, ..] = pairs.as_slice() {
        if let Some(x) = f0.strip_suffix(p0)
            && pairs.iter().all(|(p, f)| f.strip_suffix(p) == Some(x))
        {
            return Some(Reindent::Add(x.to_owned()));
        }
        if let Some(x) = p0.strip_suffix(f0)
            && pairs.iter().all(|(p, f)| p.strip_suffix(f) == Some(x))
            && adds.iter().all(|a| a.starts_with(x))
        {
            return Some(Reindent::Remove(x.to_owned()));
        }
    }
    // No single delta: map each `+` line's indentation through the matched lines. When every
    // matched line differs the whole block was re-indented (e.g. spaces to tabs) and every `+`
    // line needs an established mapping; otherwise the differing lines may be drift, so only
    // mappings confirmed by two matched lines are used and other `+` lines stay as written.
    let block = pairs.len() >= 2 && pairs.iter().all(|(p, f)| p != f);
    let mut table: Vec<(String, String, usize)> = Vec::new();
    for (p, f) in &pairs {
        match table.iter_mut().find(|(tp, _, _)| tp == p) {
            Some((_, tf, _)) if tf != f => return None,
            Some((_, _, seen)) => *seen += 1,
            None => table.push(((*p).to_owned(), (*f).to_owned(), 1)),
        }
    }
    let trusted = |a: &&str| match table.iter().find(|(p, _, _)| p == leading_ws(a)) {
        Some((p, f, seen)) => block || p == f || *seen >= 2,
        // An indentation no matched line shares: kept as written, unless the block moved.
        None => !block,
    };
    if adds.iter().all(trusted) {
        Some(Reindent::Table(
            table.into_iter().map(|(p, f, _)| (p, f)).collect(),
        ))
    } else {
        None
    }
}

fn reindent_line<'a>(t: &'a str, r: &Reindent) -> Cow<'a, str> {
    if t.trim().is_empty() {
        return Cow::Borrowed(t);
    }
    match r {
        Reindent::Keep => Cow::Borrowed(t),
        Reindent::Add(x) => Cow::Owned(format!("{x}{t}")),
        Reindent::Remove(x) => Cow::Borrowed(t.strip_prefix(x.as_str()).unwrap_or(t)),
        Reindent::Table(table) => {
            let ws = leading_ws(t);
            match table.iter().find(|(p, _)| p == ws) {
                Some((_, f)) => Cow::Owned(format!("{f}{}", &t[ws.len()..])),
                None => Cow::Borrowed(t),
            }
        }
    }
}

fn window(file: &[&str], p: usize, len: usize) -> Vec<SimilarLine> {
    let end = p.saturating_add(len.clamp(1, 5)).min(file.len());
    (p.min(end)..end)
        .map(|i| SimilarLine {
            line: i + 1,
            text: file[i].to_owned(),
        })
        .collect()
}

/// The file window where most of the hunk's old lines match ignoring whitespace, or else the
/// lines most similar to its first significant old line.
fn nearest(file: &[&str], old: &[&str]) -> Vec<SimilarLine> {
    if file.is_empty() {
        return Vec::new();
    }
    let budget = 4_000_000usize;
    if file.len().saturating_mul(old.len()) <= budget {
        let mut best = (0usize, 0usize);
        for p in 0..file.len() {
            let score = old
                .iter()
                .enumerate()
                .filter(|(i, o)| {
                    significant(o) && file.get(p + i).is_some_and(|f| f.trim() == o.trim())
                })
                .count();
            if score > best.1 {
                best = (p, score);
            }
        }
        if best.1 > 0 {
            return window(file, best.0, old.len());
        }
    }
    let Some(probe) = old.iter().find(|o| significant(o)).or(old.first()) else {
        return Vec::new();
    };
    let grams = bigrams(probe.trim());
    let mut scored: Vec<(usize, usize)> = file
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let g = bigrams(f.trim());
            (g.iter().filter(|b| grams.contains(b)).count(), i)
        })
        .filter(|(s, _)| *s > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, i)| SimilarLine {
            line: i + 1,
            text: file[i].to_owned(),
        })
        .collect()
}

fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().take(200).collect();
    let mut v: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    v.sort_unstable();
    v.dedup();
    v
}
