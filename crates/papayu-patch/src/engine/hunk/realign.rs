//! Placing a hunk that is one line off the file (a phantom context line or an omitted file line).

use super::super::text::key;
use super::matching::{Cmp, find_all, matches_at, significant};
use super::{AMBIGUITY_LIMIT, Hunk, HunkLine};

/// How a hunk's body is read against the file when it is one line off (see [`realign`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Realign {
    /// Index in `Hunk::lines` of a context line the file does not have.
    pub(super) phantom: Option<usize>,
    /// Index in `Hunk::lines` before which one file line the hunk omits is kept.
    pub(super) omitted: Option<usize>,
}

/// The result of [`realign`].
pub(super) enum Realigned {
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
pub(super) fn realign(file: &[&str], h: &Hunk) -> Realigned {
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
