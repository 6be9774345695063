//! Comparing old lines with file lines: the tolerance tiers and where a hunk's old lines match.

use std::borrow::Cow;

use super::super::text::key;
use super::HunkTier;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cmp {
    Exact,
    TrailingWs,
    Indent,
    /// Indentation ignored and typographic punctuation read as ASCII.
    Punct,
}

impl Cmp {
    pub(super) fn norm(self, s: &str) -> Cow<'_, str> {
        let s = key(s);
        match self {
            Self::Exact => Cow::Borrowed(s),
            Self::TrailingWs => Cow::Borrowed(s.trim_end()),
            Self::Indent => Cow::Borrowed(s.trim()),
            Self::Punct => ascii_punctuation(s.trim()),
        }
    }

    /// The tier a match under this comparison reports (`moved`: not at the stated line).
    pub(super) fn tier(self, moved: bool) -> HunkTier {
        match self {
            Self::Exact if moved => HunkTier::Offset,
            Self::Exact => HunkTier::Exact,
            Self::TrailingWs => HunkTier::TrailingWhitespace,
            Self::Indent => HunkTier::Indentation,
            Self::Punct => HunkTier::Punctuation,
        }
    }

    pub(super) fn ignores_indentation(self) -> bool {
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

/// A line that carries enough text to be evidence of a location (not `}` or blank).
pub(super) fn significant(s: &str) -> bool {
    s.trim().chars().filter(|c| c.is_alphanumeric()).count() >= 3
}

pub(super) fn matches_at(file: &[&str], old: &[&str], p: usize, cmp: Cmp) -> bool {
    let Some(region) = p.checked_add(old.len()).and_then(|end| file.get(p..end)) else {
        return false;
    };
    region
        .iter()
        .zip(old)
        .all(|(f, o)| cmp.norm(f) == cmp.norm(o))
}

/// Start positions where `old` matches, stopping after `limit`.
pub(super) fn find_all(file: &[&str], old: &[&str], cmp: Cmp, limit: usize) -> Vec<usize> {
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
pub(super) fn conflicts_at(file: &[&str], old: &[&str], p: usize) -> bool {
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

/// Few enough significant old lines that a match elsewhere is weak evidence of the place: at
/// most one (context included), or at most three in a hunk without context (its `-` lines are
/// all it has; a longer removed block matching exactly elsewhere is evidence enough).
pub(super) fn weak(old: &[&str], zero_context: bool) -> bool {
    let significant = old.iter().filter(|o| significant(o)).count();
    significant <= if zero_context { 3 } else { 1 }
}

/// A weakly evidenced hunk found at `found` away from its stated line: some line nearer the
/// stated line than `found` reads like one of its significant old lines (the same text, one
/// extending the other, or the same but for a short middle). Someone else may have edited the
/// intended place, and the exact match is a look-alike.
pub(super) fn lookalike_nearer(file: &[&str], old: &[&str], found: usize, stated: usize) -> bool {
    let d = found.abs_diff(stated);
    lookalike_within(
        file,
        old,
        found,
        stated.saturating_sub(d),
        stated.saturating_add(d),
    )
}

/// A line in `lo..hi + old.len()`, outside the match at `found`, that reads like one of the
/// significant old lines (see [`lookalike_nearer`]).
pub(super) fn lookalike_within(
    file: &[&str],
    old: &[&str],
    found: usize,
    lo: usize,
    hi: usize,
) -> bool {
    let hi = hi.saturating_add(old.len()).min(file.len());
    let probes: Vec<&str> = old
        .iter()
        .map(|o| o.trim())
        .filter(|o| significant(o))
        .collect();
    (lo..hi)
        .filter(|j| !(found..found + old.len()).contains(j))
        .any(|j| {
            let f = file[j].trim();
            significant(f) && probes.iter().any(|o| alike(f, o))
        })
}

pub(super) fn alike(a: &str, b: &str) -> bool {
    if a.starts_with(b) || b.starts_with(a) {
        return true;
    }
    let prefix = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let suffix = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let longest = a.len().max(b.len());
    (prefix + suffix).min(longest) * 10 >= longest * 8
}
