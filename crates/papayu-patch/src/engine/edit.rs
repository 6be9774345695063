//! EDIT_FILE: anchored search/replace on the evolving text, char-safe.

use papayu_protocol::Edit;

use super::text::{Doc, Line};
use super::{EngineError, EngineOptions};

/// How far after the start of the anchor `before` may start, in characters.
pub(crate) const BEFORE_WINDOW_CHARS: usize = 4000;

/// Apply `edits` in order. A file whose line endings are all CRLF is edited as LF text (edit
/// strings are LF-normalised too) and converted back, so models writing `\n` still match.
pub(crate) fn apply(
    doc: &Doc<'_>,
    edits: &[Edit],
    opts: &EngineOptions,
) -> Result<Vec<u8>, EngineError> {
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
        let anchors = occurrences(&text, &anchor, 0, text.len());
        let start = match e.occurrence {
            None => match anchors.as_slice() {
                [one] => *one,
                [] => {
                    return Err(EngineError::EditAnchorNotFound {
                        index,
                        anchor: e.anchor.clone(),
                        occurrence: None,
                        found: 0,
                    });
                }
                many => {
                    return Err(EngineError::EditAmbiguous {
                        index,
                        what: "anchor",
                        count: many.len(),
                    });
                }
            },
            Some(o) => match anchors.get(o as usize - 1) {
                Some(p) => *p,
                None => {
                    return Err(EngineError::EditAnchorNotFound {
                        index,
                        anchor: e.anchor.clone(),
                        occurrence: Some(o),
                        found: anchors.len(),
                    });
                }
            },
        };
        // `before` must start within the window; it may end past it.
        let window_end = text[start..]
            .char_indices()
            .nth(BEFORE_WINDOW_CHARS)
            .map_or(text.len(), |(i, _)| start + i);
        let befores = occurrences(&text, &before, start, window_end);
        let at = match (befores.as_slice(), e.occurrence) {
            ([], _) => {
                let anchor_line = text[..start].matches('\n').count() + 1;
                return Err(EngineError::EditBeforeNotFound {
                    index,
                    before: e.before.clone(),
                    anchor_line,
                    window: BEFORE_WINDOW_CHARS,
                });
            }
            ([one], _) => *one,
            ([first, ..], Some(_)) => *first,
            (many, None) => {
                return Err(EngineError::EditAmbiguous {
                    index,
                    what: "before",
                    count: many.len(),
                });
            }
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
        return Ok(target.render(&lines, opts));
    }
    let mut bytes = Vec::with_capacity(out.len() + 3);
    if doc.bom {
        bytes.extend_from_slice("\u{feff}".as_bytes());
    }
    bytes.extend_from_slice(out.as_bytes());
    Ok(bytes)
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
