//! Private-key blocks, the one multi-line secret.
//!
//! A block is found from its `-----BEGIN … PRIVATE KEY-----` header forward, and — when a
//! cut (truncation, the context diet's middle cut) left only the tail — from its
//! `-----END … PRIVATE KEY-----` footer backward. Lines are read the way papayu shows them:
//! a FILE block numbers them (`12|MIIE…`), a JSON string escapes the breaks (`\n`), YAML
//! indents them. The block becomes one marker on the header's line, and every line break
//! inside it is kept, with its `N|` prefix, so line numbers stay right.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

use super::{SecretFamily, marker};

// private-key (gitleaks): the header and footer of PEM, OpenSSH and PGP private keys.
const HEADER: &str = r"(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----";
const FOOTER: &str = r"(?i)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----";

struct Patterns {
    header: Regex,
    footer: Regex,
    /// The footer at the start of a (bounded) slice.
    footer_here: Regex,
    /// A numbered line's prefix, `  12|`.
    line_number: Regex,
}

fn patterns() -> Option<&'static Patterns> {
    static PATTERNS: OnceLock<Option<Patterns>> = OnceLock::new();
    PATTERNS
        .get_or_init(|| {
            let build = |p: &str| RegexBuilder::new(p).unicode(false).build().ok();
            Some(Patterns {
                header: build(HEADER)?,
                footer: build(FOOTER)?,
                footer_here: build(&format!("^[ \t]*{FOOTER}"))?,
                line_number: build(r"^[ \t]*[0-9]+\|")?,
            })
        })
        .as_ref()
}

/// Whether `text` holds a private-key header or footer.
pub(super) fn contains_private_key(text: &str) -> bool {
    patterns().is_some_and(|p| p.header.is_match(text) || p.footer.is_match(text))
}

/// `text` with every private-key block replaced (see the module docs).
pub(super) fn redact(text: &str) -> Cow<'_, str> {
    let Some(p) = patterns() else {
        return Cow::Borrowed(text);
    };
    if !contains_private_key(text) {
        return Cow::Borrowed(text);
    }
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut at = 0;
    while let Some(h) = p.header.find_at(text, at) {
        let end = forward(p, text, h.end());
        spans.push(h.start()..end);
        at = end.max(h.end());
    }
    let mut covered = 0;
    for f in p.footer.find_iter(text) {
        while covered < spans.len() && spans[covered].end < f.end() {
            covered += 1;
        }
        if spans.get(covered).is_some_and(|s| s.start <= f.start()) {
            continue;
        }
        spans.push(backward(p, text, f.start())..f.end());
    }
    spans.sort_by_key(|s| s.start);
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for span in spans {
        let start = span.start.max(done);
        if span.end <= start {
            continue;
        }
        out.push_str(&text[done..start]);
        out.push_str(&marker(SecretFamily::PemPrivateKey));
        // Keep every line break of the block, and the line number that follows it.
        let inside = &text[start..span.end];
        for (i, _) in inside.match_indices('\n') {
            out.push('\n');
            if let Some(n) = p.line_number.find(&inside[i + 1..]) {
                out.push_str(n.as_str());
            }
        }
        done = span.end;
    }
    out.push_str(&text[done..]);
    Cow::Owned(out)
}

/// A line break as a block can contain it: a real one, or one escaped in a string literal
/// (`\n`, `\r\n`, `\\n`). Returns its length at `i`.
fn line_break(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i..) {
        Some([b'\n', ..]) => Some(1),
        Some([b'\\', b'r', b'\\', b'n', ..]) => Some(4),
        Some([b'\\', b'n' | b'r', ..]) => Some(2),
        Some([b'\\', b'\\', b'n', ..]) => Some(3),
        _ => None,
    }
}

/// What a line of a block looks like, after its `N|` prefix and indentation.
enum Line {
    /// Base64, or a PEM/PGP header line (`Proc-Type: 4,ENCRYPTED`, `Version: …`).
    Body,
    /// Nothing (PEM puts an empty line after its header lines).
    Empty,
    /// The footer; the block ends this many bytes into the line.
    Footer(usize),
    /// Anything else: the block ended before this line.
    Other,
}

fn classify(p: &Patterns, line: &str) -> Line {
    let content = line.trim_matches([' ', '\t', '\r']);
    if content.is_empty() {
        return Line::Empty;
    }
    let mut cut = line.len().min(256);
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(m) = p.footer_here.find(&line[..cut]) {
        return Line::Footer(m.end());
    }
    let header_line = content.split_once(": ").is_some_and(|(name, _)| {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-')
    });
    if base64_len(content) == content.len() || header_line {
        Line::Body
    } else {
        Line::Other
    }
}

/// Length of the base64 run at the start of `s`.
fn base64_len(s: &str) -> usize {
    s.bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        .count()
}

/// The end of the block whose header ends at `from`: through the footer, or through the last
/// body line before something that is not part of a key.
fn forward(p: &Patterns, text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    // On the header's own line only a base64 run may follow (`-----BEGIN…-----MIIE…`).
    let mut end = from + base64_len(&text[from..]);
    let Some(mut brk) = line_break(bytes, end) else {
        return end;
    };
    let mut line_start = end + brk;
    loop {
        let real_break = bytes[line_start - 1] == b'\n';
        let mut next = line_start;
        let found = loop {
            if next >= bytes.len() {
                break None;
            }
            if let Some(len) = line_break(bytes, next) {
                break Some(len);
            }
            next += 1;
        };
        let mut body_start = line_start;
        if real_break && let Some(n) = p.line_number.find(&text[line_start..next]) {
            body_start += n.end();
        }
        let line = &text[body_start..next];
        match classify(p, line) {
            Line::Footer(len) => return body_start + len,
            Line::Body => end = next,
            Line::Empty => {}
            Line::Other => {
                // A cut-off body line followed by something else (`MIIE…"}` where a JSON
                // string was truncated): its base64 run is still key material.
                let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
                let run = base64_len(&line[indent..]);
                if run >= 16 {
                    end = body_start + indent + run;
                }
                return end;
            }
        }
        match found {
            Some(len) => {
                brk = len;
                line_start = next + brk;
            }
            None => return end,
        }
    }
}

/// The start of the block whose footer starts at `footer` and whose header was cut away: the
/// body lines directly above it (real line breaks only; a cut keeps whole lines of a file).
fn backward(p: &Patterns, text: &str, footer: usize) -> usize {
    let line_start = |at: usize| text[..at].rfind('\n').map_or(0, |i| i + 1);
    let body_start =
        |from: usize, to: usize| from + p.line_number.find(&text[from..to]).map_or(0, |n| n.end());
    let own = line_start(footer);
    let own_body = body_start(own, footer);
    let mut begin = match classify(p, &text[own_body..footer]) {
        Line::Empty => footer,
        Line::Body => own_body,
        _ => return footer,
    };
    let mut cursor = own;
    while cursor > 0 {
        let prev = line_start(cursor - 1);
        let body = body_start(prev, cursor - 1);
        match classify(p, &text[body..cursor - 1]) {
            Line::Body => begin = body,
            _ => break,
        }
        cursor = prev;
    }
    begin
}
