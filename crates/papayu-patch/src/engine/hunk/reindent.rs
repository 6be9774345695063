//! Re-indenting a hunk's added lines after an indentation-tolerant match.

use std::borrow::Cow;

use super::{Hunk, HunkLine};

/// How `+` lines are re-indented after an indentation-tolerant match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Reindent {
    Keep,
    Add(String),
    Remove(String),
    /// patch indent → file indent, functional.
    Table(Vec<(String, String)>),
}

fn leading_ws(s: &str) -> &str {
    &s[..s.len() - s.trim_start().len()]
}

/// How to re-indent the `+` lines after an indentation-tolerant match, or `None` (reject) when
/// the matched lines give no trustworthy answer. A delta is evidence only when several matched
/// lines agree on it: one drifted context line says nothing about the block (a patch whose
/// context line gained a space must not strip a space from every added line).
pub(super) fn reindent_for(region: &[&str], old: &[&str], h: &Hunk) -> Option<Reindent> {
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
            Some((_, tf, _)) if tf != f => return kept_by_majority(&pairs),
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

/// Matched lines that disagree on a mapping: when most of them (at least two) kept their
/// indentation, the others are lines the model copied with drifted whitespace, not a moved
/// block, and the `+` lines are kept as written; otherwise there is no trustworthy answer.
fn kept_by_majority(pairs: &[(&str, &str)]) -> Option<Reindent> {
    let same = pairs.iter().filter(|(p, f)| p == f).count();
    (same >= 2 && same * 2 > pairs.len()).then_some(Reindent::Keep)
}

pub(super) fn reindent_line<'a>(t: &'a str, r: &Reindent) -> Cow<'a, str> {
    // An empty line gains no trailing whitespace; a whitespace-only line is indentation the
    // model wrote at the block's depth, so it moves with the block.
    if t.is_empty() {
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
