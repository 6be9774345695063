//! EDIT_FILE: anchored search/replace on the evolving text, char-safe; an edit whose text the
//! file lacks as written is placed at its one fitting place (D52) or rejected.

use papayu_protocol::Edit;

use super::text::{Doc, Line};
use super::{EngineError, EngineOptions, HunkReport, HunkTier, formats, hunk, respell};

/// How far after the start of the anchor `before` may start, in characters.
pub(crate) const BEFORE_WINDOW_CHARS: usize = 4000;

/// Apply `edits` in order. A file whose line endings are all CRLF is edited as LF text (edit
/// strings are LF-normalised too) and converted back, so models writing `\n` still match.
///
/// An edit is replaced exactly where its `before` text follows its anchor. When `before` is not
/// in the text as written (after a found anchor, or nowhere when the anchor is `before` itself,
/// as papayu fills it in), it is placed at the one place, not above a found anchor, that the
/// first of these readings finds: its line breaks as a string's `\n` ([`escaped_newlines`]),
/// its lines as a SEARCH/REPLACE block by the patch engine's tiers ([`relocate`]), its spelling
/// read loosely (`respell`); else the exact-match error stands. Each edit placed that way is
/// reported (the other edits are not: they matched as written).
pub(crate) fn apply(
    doc: &Doc<'_>,
    edits: &[Edit],
    opts: &EngineOptions,
) -> Result<(Vec<u8>, Vec<HunkReport>), EngineError> {
    let mut reports = Vec::new();
    let all_crlf = doc.dominant == super::text::Eol::CrLf
        && doc
            .lines
            .iter()
            .all(|l| l.eol != Some(super::text::Eol::Lf));
    let mut text = String::with_capacity(doc.lines.iter().map(|l| l.text.len() + 1).sum());
    for (i, l) in doc.lines.iter().enumerate() {
        text.push_str(&l.text);
        let last = i + 1 == doc.lines.len();
        match l.eol {
            Some(super::text::Eol::CrLf) if !all_crlf => text.push_str("\r\n"),
            _ if last && !doc.final_newline => {}
            _ => text.push('\n'),
        }
    }
    let norm = |s: &str| -> String {
        if all_crlf || !s.contains("\r\n") {
            s.replace("\r\n", "\n")
        } else {
            s.to_owned()
        }
    };
    for (index, e) in edits.iter().enumerate() {
        let anchor = norm(&e.anchor);
        let before = norm(&e.before);
        let after = norm(&e.after);
        if anchor.is_empty() {
            return Err(EngineError::EditInvalid {
                index,
                reason: "`anchor` is empty".into(),
            });
        }
        if before.is_empty() {
            return Err(EngineError::EditInvalid {
                index,
                reason: "`before` is empty".into(),
            });
        }
        if e.occurrence == Some(0) {
            return Err(EngineError::EditInvalid {
                index,
                reason: "`occurrence` is 1-based; 0 is invalid".into(),
            });
        }
        let placed = place(&text, index, e, &anchor, &before);
        let at = match placed {
            Ok(at) => at,
            // An anchor of its own that the file lacks names a place that is not there; an
            // anchor that is the `before` text (as papayu fills it in) is only that text.
            Err(err @ EngineError::EditAnchorNotFound { .. }) if anchor != before => {
                return Err(err);
            }
            Err(
                err @ (EngineError::EditAnchorNotFound { .. }
                | EngineError::EditBeforeNotFound { .. }),
            ) => {
                // `before` is never placed above an anchor that was found.
                let (from_line, from) = match &err {
                    EngineError::EditBeforeNotFound { anchor_line, .. } => {
                        (*anchor_line, line_start(&text, *anchor_line))
                    }
                    _ => (1, 0),
                };
                if let Some((at, before, after)) = escaped_newlines(&text, &before, &after, from) {
                    reports.push(placed_report(&text, index, at, HunkTier::EscapedNewline));
                    text.replace_range(at..at + before.len(), &after);
                    continue;
                }
                if let Some((relocated, report)) =
                    relocate(&text, index, &before, &after, from_line)
                {
                    text = relocated;
                    reports.push(report);
                    continue;
                }
                let Some((start, end, new)) = respell::respell(&text, &before, &after, from) else {
                    return Err(err);
                };
                reports.push(placed_report(&text, index, start, HunkTier::Respelled));
                text.replace_range(start..end, &new);
                continue;
            }
            Err(other) => return Err(other),
        };
        text.replace_range(at..at + before.len(), &after);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    if all_crlf && !opts.normalize_eol_lf {
        for (i, part) in text.split('\n').enumerate() {
            if i > 0 {
                out.push_str("\r\n");
            }
            out.push_str(part);
        }
    } else {
        out = text;
    }
    if opts.normalize_eol_lf {
        let d = Doc::from_str(&out);
        let lines: Vec<Line<'_>> = d.lines.iter().map(|l| Line::new(l.text.clone())).collect();
        let target = Doc {
            bom: doc.bom,
            lines: Vec::new(),
            dominant: d.dominant,
            final_newline: true,
        };
        return Ok((target.render(&lines, opts), reports));
    }
    let mut bytes = Vec::with_capacity(out.len() + 3);
    if doc.bom {
        bytes.extend_from_slice("\u{feff}".as_bytes());
    }
    bytes.extend_from_slice(out.as_bytes());
    Ok((bytes, reports))
}

/// Where the edit's exact `before` text starts: after its anchor (the `occurrence`-th, or the
/// only one), within [`BEFORE_WINDOW_CHARS`] of it.
fn place(
    text: &str,
    index: usize,
    e: &Edit,
    anchor: &str,
    before: &str,
) -> Result<usize, EngineError> {
    let anchors = occurrences(text, anchor, 0, text.len());
    let start = match (e.occurrence, anchors.as_slice()) {
        (None, [one]) => *one,
        (None, []) => {
            return Err(EngineError::EditAnchorNotFound {
                index,
                anchor: e.anchor.clone(),
                occurrence: None,
                found: 0,
            });
        }
        (None, many) => {
            return Err(EngineError::EditAmbiguous {
                index,
                what: "anchor",
                count: many.len(),
            });
        }
        (Some(o), all) => match all.get(o as usize - 1) {
            Some(p) => *p,
            None => {
                return Err(EngineError::EditAnchorNotFound {
                    index,
                    anchor: e.anchor.clone(),
                    occurrence: Some(o),
                    found: all.len(),
                });
            }
        },
    };
    // `before` must start within the window; it may end past it.
    let window_end = text[start..]
        .char_indices()
        .nth(BEFORE_WINDOW_CHARS)
        .map_or(text.len(), |(i, _)| start + i);
    let befores = occurrences(text, before, start, window_end);
    match (befores.as_slice(), e.occurrence) {
        ([], _) => Err(EngineError::EditBeforeNotFound {
            index,
            before: e.before.clone(),
            anchor_line: text[..start].matches('\n').count() + 1,
            window: BEFORE_WINDOW_CHARS,
        }),
        ([one], _) => Ok(*one),
        ([first, ..], Some(_)) => Ok(*first),
        (many, None) => Err(EngineError::EditAmbiguous {
            index,
            what: "before",
            count: many.len(),
        }),
    }
}

/// Place one edit whose text the file lacks as written like a SEARCH/REPLACE block: its lines
/// matched (exactly elsewhere, ignoring trailing whitespace or indentation, one line off, or
/// reading typographic punctuation as ASCII) at the one place in the whole text where they fit,
/// which must not start above line `from_line`; `None` when there is no such place or more
/// than one.
fn relocate(
    text: &str,
    index: usize,
    before: &str,
    after: &str,
    from_line: usize,
) -> Option<(String, HunkReport)> {
    let patch = formats::edit_block(index, before, after);
    let doc = Doc::from_str(text);
    let patched = hunk::apply(&doc, &patch).ok()?;
    let mut report = patched.reports.into_iter().next()?;
    if report.old_start < from_line {
        return None;
    }
    report.index = index;
    let bytes = doc.render_with_final(
        &patched.lines,
        patched.final_newline,
        &EngineOptions::default(),
    );
    Some((String::from_utf8(bytes).ok()?, report))
}

/// The report of edit `index`, placed at byte `at` of `text` by `tier`.
fn placed_report(text: &str, index: usize, at: usize, tier: HunkTier) -> HunkReport {
    HunkReport {
        index,
        header: format!("EDIT_FILE edit #{}", index + 1),
        tier,
        old_start: text[..at].matches('\n').count() + 1,
    }
}

/// Byte offset where 1-based line `line` of `text` starts (the end when it has fewer lines).
fn line_start(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// With at most this many line breaks in `before`, every mix of literal and real ones is
/// tried; beyond it only "all literal".
const ESCAPE_MIXES_UP_TO: usize = 6;

/// An edit written with JSON's `\n` where the file has the two characters `\` `n` (a string
/// literal's escape): the commonest way a model's copy of a line misses. Each line break of
/// `before` may stand for a real one or for those two characters; the reading that occurs
/// exactly once in `text[from..]` (counting every reading's occurrences together) is the edit's
/// text. `after`'s line breaks are read the same way: all literal when all of `before`'s were,
/// else each like the `before` line break with the same text before it on its line (a real
/// one when none has). Returns the start, `before` and `after` as the file spells them.
fn escaped_newlines(
    text: &str,
    before: &str,
    after: &str,
    from: usize,
) -> Option<(usize, String, String)> {
    let breaks = before.matches('\n').count();
    if breaks == 0 || !text.contains("\\n") {
        return None;
    }
    let all = (1u32 << breaks.min(31)) - 1;
    let masks: Vec<u32> = if breaks <= ESCAPE_MIXES_UP_TO {
        (1..=all).collect()
    } else {
        vec![u32::MAX]
    };
    let mut found: Option<(usize, u32)> = None;
    for mask in masks {
        let variant = spell(before, |i| mask & (1 << i.min(31)) != 0);
        for at in occurrences(text, &variant, from, text.len()) {
            if found.is_some() {
                return None;
            }
            found = Some((at, mask));
        }
    }
    let (at, mask) = found?;
    let literal = |i: usize| mask & (1 << i.min(31)) != 0;
    let before_spelled = spell(before, literal);
    let all_literal = (0..breaks).all(literal);
    // The text before each of `before`'s line breaks on its (model-written) line.
    let lefts: Vec<&str> = before.split('\n').take(breaks).collect();
    let after_spelled = spell(after, |j| {
        if all_literal {
            return true;
        }
        let left = after.split('\n').nth(j).unwrap_or("");
        lefts.iter().position(|l| *l == left).is_some_and(literal)
    });
    Some((at, before_spelled, after_spelled))
}

/// `s` with its `i`-th line break written as the two characters `\` `n` when `literal(i)`.
fn spell(s: &str, literal: impl Fn(usize) -> bool) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for (i, part) in s.split('\n').enumerate() {
        if i > 0 {
            out.push_str(if literal(i - 1) { "\\n" } else { "\n" });
        }
        out.push_str(part);
    }
    out
}

/// Start offsets of (possibly overlapping) occurrences of `needle` starting in `from..to`.
fn occurrences(text: &str, needle: &str, from: usize, to: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut pos = from;
    while pos <= to && pos <= text.len() {
        let Some(rel) = text.get(pos..).and_then(|t| t.find(needle)) else {
            break;
        };
        let at = pos + rel;
        if at > to {
            break;
        }
        out.push(at);
        // Step one character forward so overlapping occurrences count too.
        pos = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    out
}
