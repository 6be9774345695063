//! Placing a hunk that is one line off the file (a phantom context line or an omitted file line).

use super::super::text::key;
use super::matching::{Cmp, alike, find_all, matches_at, significant};
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
    // An alignment that exists but whose outcome is a guess: never the only one.
    let mut refused = false;
    // A hunk without context has nothing to align by.
    if !olds.iter().any(|o| o.2) {
        return Realigned::None;
    }
    let enough = |lines: &mut dyn Iterator<Item = &str>| {
        let v: Vec<&str> = lines.collect();
        v.len() >= 2 && v.iter().any(|t| significant(t))
    };
    // A phantom context line: drop it; a run of identical context lines is one choice. An
    // edge line (first or last) is phantom only when the rest keeps two significant lines and
    // the file line beside the match does not read like it: a changed edge line is a
    // conflicting edit, an unrelated one (a blank, a line copied from elsewhere) is not.
    for (k, &(li, text, is_context)) in olds.iter().enumerate() {
        let edge = k == 0 || k + 1 == olds.len();
        if !is_context || (k > 0 && olds[k - 1] == (li - 1, text, true)) {
            continue;
        }
        let rest: Vec<&str> = olds
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .map(|(_, o)| o.1)
            .collect();
        if !enough(&mut rest.iter().copied())
            || (edge && rest.iter().filter(|t| significant(t)).count() < 2)
        {
            continue;
        }
        for pos in find_all(file, &rest, Cmp::Exact, AMBIGUITY_LIMIT) {
            let beside = if k == 0 {
                pos.checked_sub(1).and_then(|j| file.get(j))
            } else {
                file.get(pos + rest.len())
            };
            let r = Realign {
                phantom: Some(li),
                omitted: None,
            };
            // an edited edge line is as good as a conflicting edit
            refused |= edge && beside.is_some_and(|b| edited(b, text));
            found.push((pos, r));
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
                // Except `+` lines followed by a `-` line: a diff writes a change's `-` lines
                // first, so a `-` after `+` lines starts another change and a context line
                // stood between them — the omitted one.
                let adds_between = after.0 - before.0 > 1;
                if (adds_between && after.2) || !(adds_between || before.2 || after.2) {
                    found.push((pos, Realign::default()));
                    refused = true;
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
    let starts = || found.iter().map(|f| f.0).collect();
    match found.as_slice() {
        [] => Realigned::None,
        _ if refused => Realigned::Many(starts()),
        [(pos, r)] => Realigned::One(*pos, *r),
        // Several readings that all produce the same text (a phantom last line or an omitted
        // line after the last change) are one outcome.
        [(pos, r), rest @ ..] => {
            let start = found.iter().map(|f| f.0).min().unwrap_or(*pos);
            let end = found
                .iter()
                .map(|(p, r)| p + old_len(h, r))
                .max()
                .unwrap_or(*pos);
            let first = outcome(file, h, *pos, *r, start, end);
            if rest
                .iter()
                .all(|(p, r)| outcome(file, h, *p, *r, start, end) == first)
            {
                Realigned::One(*pos, *r)
            } else {
                Realigned::Many(starts())
            }
        }
    }
}

/// How many file lines the hunk covers when read with `r`.
pub(super) fn old_len(h: &Hunk, r: &Realign) -> usize {
    let old = h
        .lines
        .iter()
        .filter(|l| !matches!(l, HunkLine::Add(_)))
        .count();
    old + usize::from(r.omitted.is_some()) - usize::from(r.phantom.is_some())
}

/// The lines `start..end` of the file become when the hunk is applied at `pos` read with `r`.
fn outcome<'a>(
    file: &[&'a str],
    h: &'a Hunk,
    pos: usize,
    r: Realign,
    start: usize,
    end: usize,
) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = file[start.min(pos)..pos].to_vec();
    let mut at = pos;
    for (li, l) in h.lines.iter().enumerate() {
        if r.omitted == Some(li) {
            out.extend(file.get(at).copied());
            at += 1;
        }
        if r.phantom == Some(li) {
            continue;
        }
        match l {
            HunkLine::Context(_) => {
                out.extend(file.get(at).copied());
                at += 1;
            }
            HunkLine::Remove(_) => at += 1,
            HunkLine::Add(t) => out.push(t.as_str()),
        }
    }
    out.extend(
        file.get(at..end.max(at))
            .unwrap_or_default()
            .iter()
            .copied(),
    );
    out
}

/// The file line `file_line` reads as an edited copy of the hunk's line `patch_line`.
fn edited(file_line: &str, patch_line: &str) -> bool {
    let (f, p) = (key(file_line).trim(), key(patch_line).trim());
    !p.is_empty() && f != p && alike(f, p)
}
