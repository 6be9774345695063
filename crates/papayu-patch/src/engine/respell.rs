//! Placing an EDIT_FILE edit whose text differs from the file only in spelling: quote style,
//! whitespace (including line breaks) and a string literal's `\n` — what a model's copy of code
//! changes when it writes it inside JSON. The text the edit keeps takes the file's spelling.

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// A `before` with fewer non-blank characters than this is too little to place by a loose
/// reading.
const MIN_SIGNIFICANT: usize = 8;

/// Texts longer than this (bytes) are not searched loosely.
const MAX_TEXT: usize = 512 * 1024;

/// At most this many characters are compared in all: a search that would take longer (a long
/// `before` against a repetitive text) gives up instead, as if nothing fit.
const MAX_STEPS: usize = 20_000_000;

/// Place `before` in `text[from..]` reading it loosely, at the one place it fits; return that
/// region (byte range) and what replaces it: `after`, with every run of characters it shares
/// with `before` (by a character diff) spelled as the file spells them there, and the rest as
/// written. `None` when no place or several places fit.
///
/// Read alike: `'` and `"` (and typographic quotes, and `-` with en and em dashes); any two
/// runs of whitespace; whitespace and none beside a character that is not part of a word
/// (`f(a,b)` and `f(a, b)`, never `ab` and `a b`); a line break (tab) and the two characters
/// `\n` (`\t`).
pub(super) fn respell(
    text: &str,
    before: &str,
    after: &str,
    from: usize,
) -> Option<(usize, usize, String)> {
    let b: Vec<char> = before.chars().collect();
    if b.iter().filter(|c| !c.is_whitespace()).count() < MIN_SIGNIFICANT || text.len() > MAX_TEXT {
        return None;
    }
    let first = b.iter().position(|c| !c.is_whitespace())?;
    let mut found: Option<(usize, Vec<(usize, usize)>)> = None;
    let mut steps = 0usize;
    for (at, c) in text.get(from..)?.char_indices() {
        let at = from + at;
        if !alike(b[first], c) {
            continue;
        }
        // The match starts at `before`'s first visible character; its leading blanks map to
        // the file's blanks just before it, if any.
        let Some((end, mut map)) = matches_at(text, &b[first..], at, &mut steps) else {
            if steps > MAX_STEPS {
                return None;
            }
            continue;
        };
        if found.is_some() {
            return None;
        }
        let lead = at - text[..at].trim_end_matches([' ', '\t']).len();
        let mut full = vec![(at, at); first];
        if let Some(m) = full.first_mut() {
            *m = (at - lead, at);
        }
        full.append(&mut map);
        found = Some((end, full));
    }
    let (end, map) = found?;
    let start = map.first().map_or(end, |m| m.0);
    let a: Vec<char> = after.chars().collect();
    let mut out = String::with_capacity(after.len() + 16);
    for op in capture_diff_slices(Algorithm::Myers, &b, &a) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                for &(s, e) in &map[old_index..old_index + len] {
                    out.push_str(&text[s..e]);
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => out.extend(&a[new_index..new_index + new_len]),
            DiffOp::Delete { .. } => {}
        }
    }
    Some((start, end, out))
}

/// Match `b` (starting with a visible character) at byte `at` of `text`: the end of the match
/// and, per character of `b`, the byte range of `text` it stands for. Counts its comparisons
/// in `steps`.
fn matches_at(
    text: &str,
    b: &[char],
    at: usize,
    steps: &mut usize,
) -> Option<(usize, Vec<(usize, usize)>)> {
    let mut map: Vec<(usize, usize)> = Vec::new();
    let (mut i, mut j) = (0usize, at);
    while i < b.len() {
        *steps += 1;
        let c = b[i];
        if c.is_whitespace() {
            // A line break or tab written for a string literal's escape.
            let escape = match c {
                '\n' => Some("\\n"),
                '\t' => Some("\\t"),
                _ => None,
            };
            if let Some(esc) = escape.filter(|e| text[j..].starts_with(e)) {
                map.push((j, j + esc.len()));
                i += 1;
                j += esc.len();
                continue;
            }
            let i2 = i + b[i..].iter().take_while(|c| c.is_whitespace()).count();
            let j2 = j + blank_len(&text[j..]);
            if j2 == j {
                let prev = i.checked_sub(1).map(|k| b[k]);
                let next = b.get(i2).copied();
                if prev.is_some_and(is_word) && next.is_some_and(is_word) {
                    return None;
                }
            }
            map.push((j, j2));
            map.extend(std::iter::repeat_n((j2, j2), i2 - i - 1));
            i = i2;
            j = j2;
            continue;
        }
        let mut f = text[j..].chars().next()?;
        if f.is_whitespace() {
            // Blanks in the file that `before` leaves out: only beside a non-word character;
            // they belong to the character before them.
            let prev = i.checked_sub(1).map(|k| b[k]);
            if prev.is_none_or(is_word) && is_word(c) {
                return None;
            }
            let j2 = j + blank_len(&text[j..]);
            if let Some(last) = map.last_mut() {
                last.1 = j2;
            }
            j = j2;
            f = text[j..].chars().next()?;
        }
        if !alike(c, f) {
            return None;
        }
        map.push((j, j + f.len_utf8()));
        i += 1;
        j += f.len_utf8();
    }
    Some((j, map))
}

/// Bytes of whitespace at the start of `s`.
fn blank_len(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether a model's character stands for the file's.
fn alike(model: char, file: char) -> bool {
    model == file || (class(model) != 0 && class(model) == class(file))
}

fn class(c: char) -> u8 {
    match c {
        '\'' | '"' | '\u{2018}' | '\u{2019}' | '\u{201c}' | '\u{201d}' => 1,
        '-' | '\u{2013}' | '\u{2014}' => 2,
        _ => 0,
    }
}
