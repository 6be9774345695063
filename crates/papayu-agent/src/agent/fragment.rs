//! A whole-file answer that holds only part of the file: when an UPDATE_FILE's content for a
//! file papayu sent is an edited copy of one stretch of that file — it starts and ends on the
//! file's own lines, and the file goes on before or after it — the content replaces that
//! stretch and the rest of the file is kept. Small models asked for "the whole new file" often
//! answer with the function they changed; read literally, that deletes everything else. Reads
//! the files papayu sent (only while they still hold the sent bytes); writes nothing. A content
//! wrapped in a Markdown code fence (```` ```lang ```` … ```` ``` ````) is unwrapped first,
//! unless the file itself starts with a fence, and `N|` line numbers copied from a FILE block
//! are removed; then a content that is a unified diff is applied as a patch, and one that
//! rewrites a single block of the file (a function on one line) replaces that block (D59). A
//! block's first line may be restated in the model's own words when it still defines the same
//! name (`function f(a) {` as `const f = (a) => {`) and only one block of the file does (D62).
//! A content of one to three lines that are an edited copy of as many consecutive lines of the
//! file, at one place only, replaces those lines (D72). A content written on one line with its
//! line breaks as `\n` escapes is decoded first (D75).

use std::collections::BTreeMap;

use camino::Utf8Path;
use serde_json::Value;

/// Alignments are computed for files and answers up to this many line pairs (a small model's
/// context holds far fewer); larger ones are left as they are.
const MAX_CELLS: usize = 4_000_000;

/// One UPDATE_FILE read as a stretch of its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Widened {
    /// The file.
    pub(crate) path: String,
    /// 1-based first line of the stretch the content replaces.
    pub(crate) first: usize,
    /// 1-based last line of that stretch (`first - 1` for an empty stretch).
    pub(crate) last: usize,
    /// Lines of the file before and after it, kept (0: the content is the whole file).
    pub(crate) kept: usize,
    /// The content came wrapped in a Markdown code fence, which was removed.
    pub(crate) fenced: bool,
    /// Every line of the content carried the `N|` line number of the FILE block it was copied
    /// from; the numbers were removed.
    pub(crate) numbered: bool,
    /// The content was a unified diff of the file (its hunks, with or without headers), applied
    /// as a patch; `first..=last` is then the whole file.
    pub(crate) as_patch: bool,
    /// The content was a new definition, added to the file before line `first` (D66);
    /// nothing of the file is replaced (`last` is `first - 1`).
    pub(crate) added: bool,
}

/// The answer with every UPDATE_FILE that is a fragment of a sent file (see the module docs)
/// widened to the whole file, or `None` when no action is.
pub(crate) fn widen(
    root: &Utf8Path,
    answer: &str,
    sent: &BTreeMap<String, String>,
) -> Option<(String, Vec<Widened>)> {
    let mut doc = papayu_protocol::extract_json(answer).ok()?;
    let count = doc.get("actions")?.as_array()?.len();
    let mut widened = Vec::new();
    for index in 0..count {
        let slot = doc.pointer_mut(&format!("/actions/{index}"))?;
        let (Some("UPDATE_FILE"), Some(path), Some(content)) = (
            slot.get("kind").and_then(Value::as_str),
            slot.get("path").and_then(Value::as_str),
            slot.get("content").and_then(Value::as_str),
        ) else {
            continue;
        };
        let Some(bytes) = sent
            .get(path)
            .and_then(|sha| super::sent_bytes(root, path, sha))
        else {
            continue;
        };
        let Ok(file) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let Some(r) = read(path, file, content) else {
            continue;
        };
        let n = file.split_inclusive('\n').count();
        let path = path.to_owned();
        slot.as_object_mut()?
            .insert("content".into(), Value::String(r.whole));
        widened.push(Widened {
            path,
            first: r.region.start + 1,
            last: r.region.end,
            kept: n - r.region.len(),
            fenced: r.fenced,
            numbered: r.numbered,
            as_patch: r.as_patch,
            added: r.added,
        });
    }
    (!widened.is_empty()).then(|| (doc.to_string(), widened))
}

/// A whole-file answer read as what it means for its file (see [`read`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reading {
    /// The whole new file.
    pub(crate) whole: String,
    /// 0-based range of the file's lines the content replaces.
    pub(crate) region: std::ops::Range<usize>,
    /// A Markdown code fence was removed.
    pub(crate) fenced: bool,
    /// `N|` line numbers were removed.
    pub(crate) numbered: bool,
    /// The content was a diff, applied as a patch.
    pub(crate) as_patch: bool,
    /// The content was a new definition, added.
    pub(crate) added: bool,
}

/// `content`, an UPDATE_FILE's content for `file` (the text at `path`), read with the module's
/// readings: the whole new file it means and the lines it replaces, or `None` when it is to be
/// taken literally (a whole file as it is).
pub(crate) fn read(path: &str, file: &str, content: &str) -> Option<Reading> {
    let unfenced = unfence(file, content);
    let content = unfenced.unwrap_or(content);
    let unnumbered = unnumber(content);
    let content = unnumbered.as_deref().unwrap_or(content);
    let unflattened = unflatten(file, content);
    let content = unflattened.as_deref().unwrap_or(content);
    let n = file.split_inclusive('\n').count();
    // A diff is read as it is; the other readings see the file's own lines whole again and
    // the content at the file's depth.
    let rejoined = rejoin(file, content);
    let content_rejoined = rejoined.as_deref().unwrap_or(content);
    let shifted = reindent(file, content_rejoined);
    let moved = shifted.as_deref().unwrap_or(content_rejoined);
    let (whole, region, as_patch, added) = if let Some(patched) = as_diff(path, file, content) {
        (patched, 0..n, true, false)
    } else if let Some((whole, region)) = splice(file, moved)
        .or_else(|| block(file, moved))
        .or_else(|| restated(file, moved))
    {
        (whole, region, false, false)
    } else if let Some((whole, region)) = elided(path, file, content_rejoined) {
        (whole, region, false, false)
    } else if let Some((whole, region)) = super::addition::addition(path, file, moved) {
        (whole, region, false, true)
    } else if unfenced.is_some()
        || unnumbered.is_some()
        || unflattened.is_some()
        || shifted.is_some()
        || rejoined.is_some()
    {
        (moved.to_owned(), 0..n, false, false)
    } else {
        return None;
    };
    Some(Reading {
        whole,
        region,
        fenced: unfenced.is_some(),
        numbered: unnumbered.is_some(),
        as_patch,
        added,
    })
}

/// `content` read as the file's changed pieces with the rest elided (D70): the model wrote `...`
/// or `// ... existing code ...` for the lines it left as they are. The content is cut at those
/// lines, and each piece is read in turn against the file as the pieces before it left it — as
/// an edited stretch, a rewritten block or a new definition, at the file's depth — and every
/// piece must be (a piece of the file's own lines only changes nothing); the file outside them
/// stays. Not when the file itself has such lines (a
/// Python stub's `...`). The range is from the first piece's start to the last one's end.
fn elided(path: &str, file: &str, content: &str) -> Option<(String, std::ops::Range<usize>)> {
    if !content.lines().any(is_elision) || file.lines().any(is_elision) {
        return None;
    }
    let mut pieces: Vec<String> = Vec::new();
    let mut piece = String::new();
    for l in content.split_inclusive('\n') {
        if is_elision(l) {
            if !piece.trim().is_empty() {
                pieces.push(std::mem::take(&mut piece));
            }
            piece.clear();
        } else {
            piece.push_str(l);
        }
    }
    if !piece.trim().is_empty() {
        pieces.push(piece);
    }
    let mut text = file.to_owned();
    let (mut start, mut end) = (usize::MAX, 0);
    for piece in &pieces {
        // A piece of the file's own lines only (a class header kept for orientation) changes
        // nothing.
        let own: std::collections::HashSet<&str> = text.lines().map(str::trim).collect();
        if piece
            .lines()
            .all(|l| l.trim().is_empty() || own.contains(l.trim()))
        {
            continue;
        }
        let shifted = reindent(&text, piece);
        let c = shifted.as_deref().unwrap_or(piece);
        let (next, region) = splice(&text, c)
            .or_else(|| block(&text, c))
            .or_else(|| restated(&text, c))
            .or_else(|| super::addition::addition(path, &text, c))?;
        start = start.min(region.start);
        end = end.max(region.end);
        text = next;
    }
    (text != file && !pieces.is_empty()).then(|| (text, start..end.max(start)))
}

/// A line that stands for lines left out: `...` or `…` alone, or a comment that is one
/// (`// ...`, `# …`) or says so (`// ... existing code ...`, `/* rest unchanged */`).
fn is_elision(line: &str) -> bool {
    let t = line.trim();
    let comment = ["//", "#", "/*", "<!--"].iter().any(|p| t.starts_with(p));
    let inner = t
        .trim_start_matches(['/', '#', '*', '<', '!', '-'])
        .trim_end_matches(['/', '*', '>', '-'])
        .trim();
    if matches!(inner, "..." | "…") {
        return true;
    }
    let dots = inner.starts_with("...") || inner.starts_with('…') || inner.ends_with("...");
    let says = [
        "existing",
        "unchanged",
        "rest of",
        "remaining",
        "same as before",
        "omitted",
    ]
    .iter()
    .any(|w| inner.to_lowercase().contains(w));
    comment && (says && (dots || inner.split_whitespace().count() <= 6))
}

/// `content` written on one line with its line breaks as `\n` escapes — the model escaped the
/// JSON string twice, so the file arrived as one line of `def f():\n    return 1\n…` — decoded
/// (D75): when the content has no line break of its own (a final one aside), holds at least two
/// `\n` escapes, and its file has more than one line. `\n`, `\t`, `\"` and `\\` are decoded
/// (so a `"\n"` in the code, written `\\n`, stays an escape in the code); other escapes stay as
/// written. The other readings then read the decoded text.
fn unflatten(file: &str, content: &str) -> Option<String> {
    let body = content.strip_suffix('\n').unwrap_or(content);
    if body.contains('\n') || body.matches("\\n").count() < 2 || file.lines().nth(1).is_none() {
        return None;
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(ch) = chars.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    if file.ends_with('\n') && !out.ends_with('\n') {
        out.push('\n');
    }
    Some(out)
}

/// `content` with each line of `file` that holds a `\n` escape joined back where the model wrote
/// the escape as a line break (the JSON string's `\n` instead of `\\n`): consecutive content
/// lines equal to the parts of such a file line, split at its escapes, become that line again
/// (D68). Only the file's own lines are rejoined; a line break inside a new line stays.
fn rejoin(file: &str, content: &str) -> Option<String> {
    let escaped: Vec<Vec<&str>> = file
        .lines()
        .filter(|l| l.contains("\\n"))
        .map(|l| l.split("\\n").collect())
        .collect();
    if escaped.is_empty() {
        return None;
    }
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let bare = |l: &str| l.trim_end_matches('\n').trim_end_matches('\r').to_owned();
    let mut out = String::with_capacity(content.len());
    let mut joined = false;
    let mut i = 0;
    while i < lines.len() {
        let hit = escaped.iter().find(|parts| {
            i + parts.len() <= lines.len()
                && parts
                    .iter()
                    .zip(&lines[i..])
                    .all(|(part, line)| bare(line) == *part)
        });
        match hit {
            Some(parts) => {
                let last = lines[i + parts.len() - 1];
                out.push_str(&parts.join("\\n"));
                out.push_str(&last[bare(last).len()..]);
                i += parts.len();
                joined = true;
            }
            None => {
                out.push_str(lines[i]);
                i += 1;
            }
        }
    }
    joined.then_some(out)
}

/// `content` moved right or left as a whole to the depth its lines have in `file`, when it was
/// written at another one (a method copied out of its class, at column 0): every content line
/// whose trimmed text is a line the file has exactly once (with at least three letters or
/// digits) is compared with its place there; when at least two and at least two thirds of them
/// sit the same number of columns shallower (or deeper), the content moves by that much, if the
/// shift keeps every line's own indentation (D67). (A new line may equal a line elsewhere in the
/// file at another depth, so one disagreeing line does not stop it.)
fn reindent(file: &str, content: &str) -> Option<String> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut once: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    for l in file.lines() {
        let t = l.trim();
        if t.chars().filter(|ch| ch.is_alphanumeric()).count() >= 3 {
            once.entry(t)
                .and_modify(|seen| *seen = None)
                .or_insert(Some(l));
        }
    }
    // The shift of each content line the file has once; the commonest one is the content's.
    let mut shifts: BTreeMap<isize, usize> = BTreeMap::new();
    let mut pad = ' ';
    for l in content.lines() {
        let Some(Some(there)) = once.get(l.trim()) else {
            continue;
        };
        *shifts
            .entry(indent(there) as isize - indent(l) as isize)
            .or_default() += 1;
        if let Some(ch) = there.chars().next().filter(|ch| ch.is_whitespace()) {
            pad = ch;
        }
    }
    let known: usize = shifts.values().sum();
    let (&d, &agreeing) = shifts.iter().max_by_key(|(_, n)| **n)?;
    if d == 0 || agreeing < 2 || agreeing * 3 < known * 2 {
        return None;
    }
    let mut out = String::with_capacity(content.len() + 8 * content.lines().count());
    for l in content.split_inclusive('\n') {
        if l.trim().is_empty() {
            out.push_str(l);
        } else if d > 0 {
            if !pad.is_ascii() || l.starts_with(|ch: char| ch.is_whitespace() && ch != pad) {
                return None;
            }
            (0..d).for_each(|_| out.push(pad));
            out.push_str(l);
        } else {
            let cut = d.unsigned_abs();
            match l.get(cut..) {
                Some(rest) if indent(l) >= cut => out.push_str(rest),
                _ => return None,
            }
        }
    }
    Some(out)
}

/// The inside of a content wrapped in a Markdown code fence (a first line ```` ``` ```` with an
/// optional language, a last line ```` ``` ````), when the file does not start with a fence.
fn unfence<'a>(file: &str, content: &'a str) -> Option<&'a str> {
    if file.trim_start().starts_with("```") {
        return None;
    }
    let (first, rest) = content.trim_start().split_once('\n')?;
    let first = first.trim_end();
    let lang = first.strip_prefix("```")?;
    if !lang
        .chars()
        .all(|ch| ch.is_alphanumeric() || "+-_.".contains(ch))
    {
        return None;
    }
    let inner = rest.trim_end().strip_suffix("```")?;
    (!inner.contains("\n```")).then_some(inner)
}

/// `content` without the `N|` prefixes of a FILE block, when every line has one and the
/// numbers count up by one (a model that copied the lines as papayu showed them).
fn unnumber(content: &str) -> Option<String> {
    let body = content.strip_suffix('\n').unwrap_or(content);
    let mut out = String::with_capacity(content.len());
    let mut expected: Option<u64> = None;
    for line in body.split('\n') {
        let (number, text) = line.split_once('|')?;
        let number: u64 = number.trim_start().parse().ok()?;
        if expected.is_some_and(|e| e != number) {
            return None;
        }
        expected = Some(number + 1);
        out.push_str(text);
        out.push('\n');
    }
    if !content.ends_with('\n') {
        out.pop();
    }
    Some(out)
}

/// `content` read as a unified diff of `file`, applied through papayu-patch's engine (same
/// tiers and uniqueness rules as a PATCH_FILE): the patched text, when `content` has an
/// `@@ -a,b +c,d @@` hunk header and `path` is not a patch file itself.
fn as_diff(path: &str, file: &str, content: &str) -> Option<String> {
    if [".diff", ".patch"].iter().any(|e| path.ends_with(e)) {
        return None;
    }
    let start = content
        .find("\n@@ -")
        .map(|i| i + 1)
        .or_else(|| content.starts_with("@@ -").then_some(0))?;
    let hunks = &content[start..];
    let patch = if hunks.ends_with('\n') {
        hunks.to_owned()
    } else {
        format!("{hunks}\n")
    };
    papayu_patch::engine::apply_patch_to_text(file, &patch)
        .ok()
        .map(|p| p.text)
        .filter(|t| t != file)
}

/// `content` read as a new version of one block of `file` — a function, a method, a class — when
/// the alignment of [`splice`] finds no stretch (a body rewritten on one line, a block that ends
/// differently): its first line is, equal or edited, exactly one line of the file that opens a
/// block (more `{` than `}`, or a line ending in `:`), the content is itself one whole block of
/// that kind (braces balanced and closed only at its end, or every later line indented deeper
/// than its first), and the file goes on outside that block. The block in the file runs to its
/// closing brace, or to the last line indented deeper than its first.
fn block(file: &str, content: &str) -> Option<(String, std::ops::Range<usize>)> {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let f: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    let body = content.trim_matches('\n');
    let c: Vec<&str> = body.split('\n').map(str::trim_end).collect();
    let first = c.first()?.trim();
    let equal: Vec<usize> = (0..f.len()).filter(|&i| f[i].trim() == first).collect();
    let a = match equal.as_slice() {
        [one] => *one,
        [] => {
            let alike: Vec<usize> = (0..f.len())
                .filter(|&i| pair_score(f[i], c[0]) == Some(ALIKE))
                .collect();
            match alike.as_slice() {
                [one] => *one,
                _ => return None,
            }
        }
        _ => return None,
    };
    let braces = |l: &str| {
        l.chars().filter(|&ch| ch == '{').count() as i64
            - l.chars().filter(|&ch| ch == '}').count() as i64
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let end = if braces(f[a]) > 0 {
        // The content: balanced, open until its last line.
        let mut depth = 0;
        for (k, l) in c.iter().enumerate() {
            depth += braces(l);
            if depth < 0
                || (depth == 0
                    && k + 1 < c.len()
                    && c[k + 1..].iter().any(|l| !l.trim().is_empty()))
            {
                return None;
            }
        }
        if depth != 0 {
            return None;
        }
        let mut depth = 0;
        (a..f.len()).find(|&i| {
            depth += braces(f[i]);
            depth <= 0
        })? + 1
    } else if f[a].ends_with(':') {
        let deeper = |l: &&str| l.trim().is_empty() || indent(l) > indent(c[0]);
        if !c[0].ends_with(':') || c.len() < 2 || !c[1..].iter().all(deeper) {
            return None;
        }
        let last = (a + 1..f.len())
            .take_while(|&i| f[i].trim().is_empty() || indent(f[i]) > indent(f[a]))
            .filter(|&i| !f[i].trim().is_empty())
            .last()?;
        last + 1
    } else {
        return None;
    };
    let region = a..end;
    if region.len() == f.len() || f[region.clone()] == c[..] {
        return None;
    }
    Some((joined(file, &lines, region.clone(), body), region))
}

/// The most lines a content read by [`restated`] may have.
const MAX_RESTATED: usize = 3;

/// `content` read as an edited copy of a few consecutive lines of `file` (D72): one to
/// [`MAX_RESTATED`] non-blank lines, each equal or alike to its file line (an edited copy: the
/// same line with a name, a number or a pattern changed, and not more than about twice as
/// long), at exactly one place in the file, changing at least one line — and the file longer
/// than the content by two lines or more. A small model asked for the whole new file of a
/// module whose import moved answers `from money import format_money` alone; read literally,
/// that deletes the module. [`splice`] needs two equal lines and cannot place it.
fn restated(file: &str, content: &str) -> Option<(String, std::ops::Range<usize>)> {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let f: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    let body = content.trim_matches('\n');
    let c: Vec<&str> = body.split('\n').map(str::trim_end).collect();
    let m = c.len();
    if m > MAX_RESTATED || c.iter().any(|l| l.trim().is_empty()) || f.len() < m + 2 {
        return None;
    }
    let copy =
        |f: &str, c: &str| pair_score(f, c).is_some() && c.trim().len() <= 2 * f.trim().len() + 16;
    let mut places = (0..=f.len() - m)
        .filter(|&i| (0..m).all(|j| copy(f[i + j], c[j])) && (0..m).any(|j| f[i + j] != c[j]));
    let at = places.next()?;
    // The content is lines the file already has (read literally: a deletion of the rest).
    let own = (0..=f.len() - m).any(|i| (0..m).all(|j| f[i + j].trim() == c[j].trim()));
    if places.next().is_some() || own {
        return None;
    }
    let region = at..at + m;
    Some((joined(file, &lines, region.clone(), body), region))
}

/// `file` with the lines `region` replaced by `body`'s lines, in the file's line endings, its
/// final-newline state kept when the region reaches its end.
fn joined(file: &str, lines: &[&str], region: std::ops::Range<usize>, body: &str) -> String {
    let eol = if lines.first().is_some_and(|l| l.ends_with("\r\n")) {
        "\r\n"
    } else {
        "\n"
    };
    let mut out = String::with_capacity(file.len() + body.len());
    for l in &lines[..region.start] {
        out.push_str(l);
    }
    let final_newline = region.end < lines.len() || file.ends_with('\n');
    let m = body.split('\n').count();
    for (i, l) in body.split('\n').enumerate() {
        out.push_str(l.strip_suffix('\r').unwrap_or(l));
        if i + 1 < m || final_newline {
            out.push_str(eol);
        }
    }
    for l in &lines[region.end..] {
        out.push_str(l);
    }
    out
}

/// `content` read as a replacement of one stretch of `file`: the whole new file and the
/// stretch's 0-based line range, or `None` when `content` is not such a fragment.
///
/// The content's lines are aligned to a stretch of the file (free to start and end anywhere;
/// equal lines score, lines that read alike — one edited copy of the other — score less, and
/// a line on one side only costs). It is a fragment when the best alignment is the only one
/// with its score, it leaves at least one file line out, its first and last lines are the
/// file's own (equal or alike), at least half the content's lines and at least two are equal
/// to their file lines, the stretch's lines the content drops are no more than those it keeps,
/// and it changes something: a content equal to a stretch of its file is a deletion of the
/// rest and stays literal.
pub(crate) fn splice(file: &str, content: &str) -> Option<(String, std::ops::Range<usize>)> {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let f: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    let body = content.strip_suffix('\n').unwrap_or(content);
    let c: Vec<&str> = body.split('\n').map(str::trim_end).collect();
    let (n, m) = (f.len(), c.len());
    if m < 2 || m >= n || n.saturating_mul(m) > MAX_CELLS {
        return None;
    }
    let (region, equal) = align(&f, &c)?;
    if region.len() == n || equal < 2 || equal * 2 < m || region.len() > 2 * equal {
        return None;
    }
    if f[region.clone()] == c[..] {
        return None;
    }
    Some((joined(file, &lines, region.clone(), body), region))
}

const EQUAL: i32 = 2;
const ALIKE: i32 = 1;
const GAP: i32 = -1;

/// Semi-global alignment of all of `c` against a stretch of `f`: the stretch and the number of
/// equal line pairs, when the best score is reached at exactly one stretch end and the
/// alignment starts and ends on a paired line.
fn align(f: &[&str], c: &[&str]) -> Option<(std::ops::Range<usize>, usize)> {
    let (n, m) = (f.len(), c.len());
    let w = m + 1;
    // score[i * w + j]: the best alignment of c[..j] ending at file line i (exclusive).
    let mut score = vec![0i32; (n + 1) * w];
    for j in 1..=m {
        score[j] = score[j - 1] + GAP;
    }
    for i in 1..=n {
        for j in 1..=m {
            let pair = pair_score(f[i - 1], c[j - 1])
                .map_or(i32::MIN, |s| score[(i - 1) * w + j - 1].saturating_add(s));
            let up = score[(i - 1) * w + j] + GAP;
            let left = score[i * w + j - 1] + GAP;
            score[i * w + j] = pair.max(up).max(left);
        }
    }
    let best = (1..=n).map(|i| score[i * w + m]).max()?;
    let mut ends = (1..=n).filter(|&i| score[i * w + m] == best);
    let end = ends.next()?;
    if ends.next().is_some() || best <= 0 {
        return None;
    }
    // Trace back, preferring pairs, so the stretch starts at the content's first paired line.
    let (mut i, mut j, mut equal) = (end, m, 0usize);
    let mut last_paired = false;
    let mut first_paired = false;
    while j > 0 {
        let here = score[i * w + j];
        let paired = i > 0
            && pair_score(f[i - 1], c[j - 1])
                .is_some_and(|s| score[(i - 1) * w + j - 1].saturating_add(s) == here);
        if paired {
            if j == m {
                last_paired = true;
            }
            if j == 1 {
                first_paired = true;
            }
            equal += usize::from(f[i - 1] == c[j - 1]);
            i -= 1;
            j -= 1;
        } else if i > 0 && score[(i - 1) * w + j] + GAP == here {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    (first_paired && last_paired).then_some((i..end, equal))
}

/// How well a file line and a content line pair up: equal, alike (one an edited copy of the
/// other, and not blank), or not at all.
fn pair_score(f: &str, c: &str) -> Option<i32> {
    if f == c {
        return Some(EQUAL);
    }
    let (a, b) = (f.trim(), c.trim());
    if a == b && !a.is_empty() {
        return Some(EQUAL - 1);
    }
    ((a.chars().filter(|ch| ch.is_alphanumeric()).count() >= 3 && alike(a, b))
        || same_definition(a, b))
    .then_some(ALIKE)
}

/// Both lines start a block (a `{`, or a trailing `:`) that defines the same name:
/// `function transfer(ledger, from, to, amount, memo = '') {` rewritten as
/// `const transfer = (ledger, from, to, amount, memo) => {`, or `def add(a, b):` as
/// `def add(a: int, b: int) -> int:` — a signature the model restated in its own words.
fn same_definition(a: &str, b: &str) -> bool {
    let opens = |l: &str| l.contains('{') || l.trim_end().ends_with(':');
    opens(a) && opens(b) && defined_name(a).is_some_and(|name| defined_name(b) == Some(name))
}

/// The name a line defines: the last word before its first `(`, `=`, `<` or `:`, when the words
/// before it are declaration keywords or types (`export async function parse(`, `pub fn
/// page<T>(`, `const transfer = (`, `def add(`, `class Account(`), and none of them is a
/// statement keyword (`if (`, `match x(`, `return f(`). An `impl` line names no one thing.
pub(super) fn defined_name(line: &str) -> Option<&str> {
    const STATEMENTS: &[&str] = &[
        "if", "else", "elif", "for", "while", "loop", "do", "match", "switch", "case", "return",
        "yield", "await", "new", "throw", "try", "catch", "except", "finally", "with", "not",
        "and", "or", "in", "is", "lambda", "impl", "assert", "raise", "del",
    ];
    const DECLARATIONS: &[&str] = &[
        "function",
        "async",
        "export",
        "default",
        "const",
        "let",
        "var",
        "def",
        "class",
        "fn",
        "pub",
        "static",
        "public",
        "private",
        "protected",
        "unsafe",
        "extern",
        "struct",
        "enum",
        "trait",
        "mod",
        "func",
        "final",
        "override",
        "abstract",
        "type",
        "interface",
        "get",
        "set",
        "crate",
        "self",
        "super",
        "mut",
        "void",
    ];
    let head = line.trim_start();
    let head = match head.strip_prefix("pub(") {
        Some(rest) => rest.split_once(')')?.1,
        None => head,
    };
    let cut = head.find(['(', '=', '<', ':'])?;
    if head[cut..].starts_with("::") || head[cut..].starts_with("==") {
        return None;
    }
    // A macro's call (`write!(f, "{}", x)?;`) defines nothing, nor does a match arm's pattern
    // (`Some(c) => {`): the `(…)` after the name is followed by `=>`.
    if head[..cut].trim_end().ends_with('!') || (head[cut..].starts_with('(') && arm(&head[cut..]))
    {
        return None;
    }
    // Called for line pairs of the alignment's inner loop: no allocation.
    let words = head[..cut]
        .split(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '$'))
        .filter(|w| !w.is_empty());
    let mut name = None;
    for w in words {
        if STATEMENTS.contains(&w) {
            return None;
        }
        name = Some(w);
    }
    let name = name?;
    let starts_like_a_name = name
        .chars()
        .next()
        .is_some_and(|ch| ch.is_alphabetic() || ch == '_' || ch == '$');
    (starts_like_a_name && !DECLARATIONS.contains(&name)).then_some(name)
}

/// `rest` (starting at a `(`) closes that bracket and then goes on with `=>`: a pattern.
fn arm(rest: &str) -> bool {
    let mut depth = 0usize;
    for (i, ch) in rest.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return rest[i + 1..].trim_start().starts_with("=>");
                }
            }
            _ => {}
        }
    }
    false
}

/// One line reads as an edited copy of the other: they share a prefix and a suffix covering
/// most of the longer one, or one extends the other, or they start the same for at least 12
/// bytes and half the shorter one (`const VERSION = /^v?(\d+)…` rewritten as `… ([0-9]+)…`).
fn alike(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
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
    let shortest = a.len().min(b.len());
    (prefix + suffix).min(longest) * 10 >= longest * 6 || (prefix >= 12 && prefix * 2 >= shortest)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LRU: &str = "class LRU:\n    def __init__(self):\n        self._entries = {}\n\n    def get(self, key):\n        value = self._entries.get(key)\n        return value\n\n    def put(self, key, value):\n        self._entries[key] = value\n";

    const ACCOUNT: &str = "\"\"\"A bank account.\"\"\"\n\nfrom utils import format_money, parse_money\n\n\nclass Account:\n    def deposit(self, text):\n        return parse_money(text)\n";

    #[test]
    fn a_file_written_on_one_line_with_escaped_line_breaks_is_decoded() {
        let file = "import time\n\n\ndef retry(fn):\n    return fn()\n\n\ndef log(x):\n    print(\"a\\n\" + x)\n";
        // The function alone, escaped twice: decoded, then read as the block it rewrites.
        let content = "def retry(fn):\\n    time.sleep(0)\\n    return fn()";
        assert_eq!(
            unflatten(file, content).as_deref(),
            Some("def retry(fn):\n    time.sleep(0)\n    return fn()\n")
        );
        let decoded = unflatten(file, content).unwrap();
        let (whole, _) = block(file, &decoded).unwrap();
        assert_eq!(
            whole,
            file.replace("    return fn()", "    time.sleep(0)\n    return fn()")
        );
        // A `"\n"` in the code (`\\n` once decoded) and other escapes stay escapes.
        let whole = "import time\\n\\ndef log(x):\\n    print(\\\"a\\\\n\\\" + x)\\n    y = '\\d'";
        assert_eq!(
            unflatten(file, whole).as_deref(),
            Some("import time\n\ndef log(x):\n    print(\"a\\n\" + x)\n    y = '\\d'\n")
        );
        // Not: a content with line breaks of its own, one escape only, a one-line file.
        assert_eq!(unflatten(file, "a\\nb\nc\\nd"), None);
        assert_eq!(unflatten(file, "x = '\\n'"), None);
        assert_eq!(unflatten("x = 1\n", "a\\nb\\nc"), None);
    }

    #[test]
    fn an_edited_copy_of_one_line_replaces_that_line() {
        let content = "from money import format_money, parse_money\n";
        let (whole, region) = restated(ACCOUNT, content).unwrap();
        assert_eq!(whole, ACCOUNT.replace("from utils", "from money"));
        assert_eq!(region, 2..3);
        // Through the whole reading, as the answer's UPDATE_FILE.
        let js = "const NUMBER = /\\d+/y;\nconst SPACE = /\\s+/y;\n\nfunction tokens(text) {\n  return [];\n}\n";
        let (whole, _) = restated(js, "const NUMBER = /-?\\d+(\\.\\d+)?/y;").unwrap();
        assert_eq!(whole, js.replace("/\\d+/y", "/-?\\d+(\\.\\d+)?/y"));
    }

    #[test]
    fn a_restatement_that_could_be_two_places_or_no_edit_is_not_read() {
        // Alike two import lines.
        let two = "from utils import a\nfrom utils import b\n\nx = 1\ny = 2\n";
        assert_eq!(restated(two, "from money import c"), None);
        // The file's own line: read literally (the rest deleted), as the model wrote it.
        assert_eq!(
            restated(ACCOUNT, "from utils import format_money, parse_money"),
            None
        );
        // A line much longer than the one it starts like (a whole function on one line).
        let long = format!(
            "from utils import format_money, parse_money; {}",
            "x = 1; ".repeat(20)
        );
        assert_eq!(restated(ACCOUNT, &long), None);
        // More lines than a restatement, a blank line, or a file too short to tell.
        assert_eq!(restated(ACCOUNT, "a\nb\nc\nd"), None);
        assert_eq!(
            restated(ACCOUNT, "from money import x\n\nclass Account:"),
            None
        );
        assert_eq!(restated("import os\nx = 1\n", "import sys"), None);
    }

    #[test]
    fn pieces_between_elisions_replace_their_stretches_and_the_rest_stays() {
        let file = "class Cache:\n    def __init__(self):\n        self.items = {}\n        self.hits = 0\n\n    def get(self, key):\n        value = self.items.get(key)\n        self.hits += 1\n        return value\n\n    def put(self, key, value):\n        self.items[key] = value\n        self.trim()\n";
        let content = "class Cache:\n    # ... existing code ...\n\n    def get(self, key):\n        value = self.items.get(key)\n        self.touch(key)\n        self.hits += 1\n        return value\n\n    ...\n";
        let (whole, _) = elided("cache.py", file, content).unwrap();
        assert_eq!(
            whole,
            file.replace(
                "        value = self.items.get(key)\n",
                "        value = self.items.get(key)\n        self.touch(key)\n"
            )
        );
        assert!(is_elision("  // ... rest of the code unchanged ..."));
        assert!(is_elision("..."));
        assert!(is_elision("# existing code"));
        assert!(!is_elision("// the rest of the lines are parsed below"));
        assert!(!is_elision("const rest = [...items];"));
        // A file with a stub's `...` of its own: not read as elided.
        assert_eq!(
            elided(
                "s.py",
                "def f():\n    ...\n",
                "def f():\n    return 1\n...\n"
            ),
            None
        );
    }

    #[test]
    fn a_newline_escape_written_as_a_line_break_is_joined_back() {
        let file = "function count(text) {\n  const lines = text.split('\\n');\n  return lines.length;\n}\n";
        let broken = "function count(text) {\n  const lines = text.split('\n');\n  console.log(lines);\n  return lines.length;\n}\n";
        assert_eq!(
            rejoin(file, broken).unwrap(),
            "function count(text) {\n  const lines = text.split('\\n');\n  console.log(lines);\n  return lines.length;\n}\n"
        );
        assert_eq!(rejoin(file, file), None);
        // A break inside a new line is not the file's: left alone.
        assert_eq!(rejoin(file, "x('\n')\n"), None);
    }

    #[test]
    fn a_method_written_at_column_zero_is_read_at_its_class_depth() {
        let content = "def get(self, key):\n    value = self._entries.get(key)\n    self._entries.move_to_end(key)\n    return value\n";
        let moved = reindent(LRU, content).unwrap();
        assert_eq!(
            moved,
            "    def get(self, key):\n        value = self._entries.get(key)\n        self._entries.move_to_end(key)\n        return value\n"
        );
        let (whole, _) = splice(LRU, &moved).unwrap();
        assert_eq!(
            whole,
            LRU.replace(
                "        value = self._entries.get(key)\n",
                "        value = self._entries.get(key)\n        self._entries.move_to_end(key)\n"
            )
        );
        // Deeper than the file: moved left.
        let deeper: String = content.lines().map(|l| format!("        {l}\n")).collect();
        assert_eq!(reindent(LRU, &deeper).unwrap(), moved);
    }

    #[test]
    fn content_at_the_right_depth_or_with_disagreeing_lines_is_not_moved() {
        assert_eq!(reindent(LRU, LRU), None);
        // One line two columns off, another four: no one shift.
        let mixed = "      def get(self, key):\n    value = self._entries.get(key)\n";
        assert_eq!(reindent(LRU, mixed), None);
        // A new line that equals a line elsewhere at another depth does not stop the shift.
        let with_known = "def get(self, key):\n    value = self._entries.get(key)\n    if value:\n        self._entries[key] = value\n    return value\n";
        assert_eq!(
            reindent(LRU, with_known).unwrap(),
            "    def get(self, key):\n        value = self._entries.get(key)\n        if value:\n            self._entries[key] = value\n        return value\n"
        );
        // A single known line is not enough.
        assert_eq!(reindent(LRU, "def get(self, key):\n    return 1\n"), None);
    }
    use papayu_protocol::sha256_hex;

    const SEMVER: &str = "// Versions.\nconst VERSION = /^v?(\\d+)$/;\n\nexport function parseVersion(text) {\n  const match = VERSION.exec(text.trim());\n  if (!match) {\n    throw new Error('bad');\n  }\n  return match.slice(1, 4);\n}\n\nexport function compareVersions(a, b) {\n  const left = parseVersion(a);\n  return left[0] - parseVersion(b)[0];\n}\n";

    #[test]
    fn a_changed_function_alone_replaces_that_function_only() {
        let answer = "export function parseVersion(text) {\n  const match = VERSION.exec(text.trim());\n  if (!match) {\n    throw new Error('bad');\n  }\n  return match.slice(1, 4).map(Number);\n}\n";
        let (whole, region) = splice(SEMVER, answer).unwrap();
        assert_eq!(region, 3..10);
        assert_eq!(
            whole,
            SEMVER.replace("match.slice(1, 4);", "match.slice(1, 4).map(Number);")
        );
    }

    #[test]
    fn a_fragment_ending_on_its_changed_line_keeps_what_follows() {
        let file = "\"\"\"Calc.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a - b\n\n\ndef mean(values):\n    return sum(values) / len(values)\n";
        let answer = "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n";
        let (whole, region) = splice(file, answer).unwrap();
        assert_eq!(region, 3..6);
        assert_eq!(whole, file.replace("a - b", "a + b"));
    }

    #[test]
    fn a_prefix_of_the_file_unchanged_is_a_deletion_and_stays_literal() {
        let answer = "// Versions.\nconst VERSION = /^v?(\\d+)$/;\n\nexport function parseVersion(text) {\n  const match = VERSION.exec(text.trim());\n";
        assert_eq!(splice(SEMVER, answer), None);
    }

    #[test]
    fn a_whole_file_answer_is_not_a_fragment() {
        let answer = SEMVER.replace("return left[0]", "return 0 + left[0]");
        assert_eq!(splice(SEMVER, &answer), None);
    }

    #[test]
    fn content_that_matches_two_stretches_equally_is_left_alone() {
        let file = "fn a() {\n    let x = 1;\n    x + 1\n}\n\nfn b() {\n    let x = 1;\n    x + 1\n}\n\nfn c() {}\n";
        let answer = "    let x = 1;\n    x + 2\n";
        assert_eq!(splice(file, answer), None);
    }

    #[test]
    fn unrelated_short_content_is_not_a_fragment() {
        assert_eq!(splice(SEMVER, "import mean\n"), None);
        assert_eq!(
            splice(SEMVER, "const a = 1;\nconst b = 2;\nconst c = 3;\n"),
            None
        );
    }

    #[test]
    fn crlf_files_keep_crlf_and_a_missing_final_newline_stays_missing() {
        let file = "a line\r\nfn f() {\r\n    one();\r\n    two();\r\n}\r\nlast line";
        let answer = "    one();\n    three();\n}\nlast line\n";
        let (whole, region) = splice(file, answer).unwrap();
        assert_eq!(region, 2..6);
        assert_eq!(
            whole,
            "a line\r\nfn f() {\r\n    one();\r\n    three();\r\n}\r\nlast line"
        );
    }

    #[test]
    fn a_fenced_answer_is_unwrapped_and_then_read_as_a_fragment() {
        let fenced = "```javascript\n  if (!match) {\n    throw new Error('bad');\n  }\n  return match.slice(1, 4).map(Number);\n}\n```\n";
        let inner = unfence(SEMVER, fenced).unwrap();
        assert!(inner.starts_with("  if (!match)") && inner.ends_with("}\n"));
        assert_eq!(unfence("```md\nx\n```\n", fenced), None);
        assert_eq!(unfence(SEMVER, "```\na\n```\nb\n```\n"), None);
        assert_eq!(unfence(SEMVER, "plain\n"), None);

        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fs_err::write(root.join("semver.js"), SEMVER).unwrap();
        let mut sent = BTreeMap::new();
        sent.insert("semver.js".to_owned(), sha256_hex(SEMVER.as_bytes()));
        let whole = format!(
            "```js\n{}```\n",
            SEMVER.replace("left[0] -", "left[0] + 0 -")
        );
        for (content, expected, kept) in [
            (
                fenced.to_owned(),
                SEMVER.replace("(1, 4);", "(1, 4).map(Number);"),
                10,
            ),
            (whole, SEMVER.replace("left[0] -", "left[0] + 0 -"), 0),
        ] {
            let answer = serde_json::json!({"summary": "s", "actions": [
                {"kind": "UPDATE_FILE", "path": "semver.js", "content": content}]})
            .to_string();
            let (text, widened) = widen(root, &answer, &sent).unwrap();
            let doc: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(doc["actions"][0]["content"], expected);
            assert!(widened[0].fenced);
            assert_eq!(widened[0].kept, kept);
        }
    }

    const TEMP: &str = "//! Conversions.\n\npub fn c_to_f(c: f64) -> f64 {\n    c * 9.0 / 5.0 + 32.0\n}\n\npub fn f_to_c(f: f64) -> f64 {\n    (f - 32.0) * 9.0 / 5.0\n}\n\n#[cfg(test)]\nmod tests {}\n";

    #[test]
    fn a_function_rewritten_on_one_line_replaces_the_whole_function() {
        let (whole, region) = block(
            TEMP,
            "pub fn f_to_c(f: f64) -> f64 { (f - 32.0) * 5.0 / 9.0 }",
        )
        .unwrap();
        assert_eq!(region, 6..9);
        assert_eq!(
            whole,
            TEMP.replace(
                "pub fn f_to_c(f: f64) -> f64 {\n    (f - 32.0) * 9.0 / 5.0\n}\n",
                "pub fn f_to_c(f: f64) -> f64 { (f - 32.0) * 5.0 / 9.0 }\n"
            )
        );
        // Not one whole block: unbalanced, or two blocks, or a line that opens none.
        assert_eq!(
            block(TEMP, "pub fn f_to_c(f: f64) -> f64 {\n    1.0\n"),
            None
        );
        assert_eq!(
            block(TEMP, "pub fn f_to_c(f: f64) -> f64 { 1.0 }\nfn g() {}\n"),
            None
        );
        assert_eq!(block(TEMP, "//! Conversions, fixed.\n"), None);
    }

    #[test]
    fn a_python_function_rewritten_replaces_its_indented_body() {
        let file = "def add(a, b):\n    x = a\n\n    return x - b\n\n\ndef mean(v):\n    return sum(v) / len(v)\n";
        let (whole, region) = block(file, "def add(a, b):\n    return a + b\n").unwrap();
        assert_eq!(region, 0..4);
        assert_eq!(
            whole,
            "def add(a, b):\n    return a + b\n\n\ndef mean(v):\n    return sum(v) / len(v)\n"
        );
        assert_eq!(block(file, "def add(a, b):\nreturn a + b\n"), None);
    }

    const TRANSFER: &str = "'use strict';\n\n// Move money.\nfunction transfer(ledger, from, to, amount, memo = '') {\n  if (from.id === to.id) {\n    throw new Error('same account');\n  }\n  to.withdraw(amount);\n  from.deposit(amount);\n  return ledger.record(from.id, to.id, amount, memo);\n}\n\nmodule.exports = { transfer };\n";

    #[test]
    fn a_function_whose_signature_the_model_restated_replaces_that_function() {
        // The fix, written as an arrow function: the file keeps its header and its export.
        let arrow = "const transfer = (ledger, from, to, amount, memo) => {\n  if (from.id === to.id) {\n    throw new Error('same account');\n  }\n  from.withdraw(amount);\n  to.deposit(amount);\n  return ledger.record(from.id, to.id, amount, memo);\n}";
        let (whole, region) = splice(TRANSFER, arrow).unwrap();
        assert_eq!(region, 3..11);
        assert!(whole.starts_with("'use strict';\n\n// Move money.\nconst transfer = ("));
        assert!(whole.contains("  from.withdraw(amount);\n  to.deposit(amount);\n"));
        assert!(whole.ends_with("}\n\nmodule.exports = { transfer };\n"));
        // Rewritten on one line, it is read as that block.
        let (whole, region) = block(
            TRANSFER,
            "const transfer = (ledger, from, to, amount) => { from.withdraw(amount); to.deposit(amount); }",
        )
        .unwrap();
        assert_eq!(region, 3..11);
        assert!(whole.ends_with("to.deposit(amount); }\n\nmodule.exports = { transfer };\n"));
        // A Python signature given type hints.
        let py = "import math\n\n\ndef add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a - b\n\n\ndef mean(v):\n    return sum(v) / len(v)\n";
        let (whole, region) =
            block(py, "def add(a: int, b: int) -> int:\n    return a + b\n").unwrap();
        assert_eq!(region, 3..6);
        assert_eq!(
            whole,
            py.replace(
                "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a - b",
                "def add(a: int, b: int) -> int:\n    return a + b"
            )
        );
    }

    #[test]
    fn a_name_defined_twice_or_a_statement_is_no_signature() {
        // Two blocks define `area`: which one the answer restates is not known.
        let file = "class Square {\n  area(s) {\n    return s * s;\n  }\n}\n\nclass Circle {\n  area(r) {\n    return 3 * r;\n  }\n}\n";
        assert_eq!(block(file, "area = (x) => {\n  return x;\n}"), None);
        for (line, name) in [
            (
                "export async function parseVersion(text) {",
                Some("parseVersion"),
            ),
            (
                "pub(crate) fn page<T>(items: &[T]) -> usize {",
                Some("page"),
            ),
            ("const transfer = (a, b) => {", Some("transfer")),
            ("    def add(self, a: int) -> int:", Some("add")),
            ("class Account(Base):", Some("Account")),
            ("if (ready) {", None),
            ("} else if (x == 1) {", None),
            ("match parse(text) {", None),
            ("impl fmt::Display for Money {", None),
            ("return compute(a, b) {", None),
            ("fn (x) {", None),
            // A match arm's pattern and a macro's call are no definitions.
            ("            Some(c) => {", None),
            ("Ok((a, b)) => {", None),
            ("    write!(f, \"{}\", self.0)?;", None),
            ("    println!(\"{{x}}\");", None),
            // A class method's body follows its `(…)` with `{`, not `=>`.
            ("  area(s) {", Some("area")),
            ("    raise IniError(f\"[{self.name}] {key}\")", None),
        ] {
            assert_eq!(defined_name(line), name, "{line}");
        }
        assert!(!same_definition("def add(a, b):", "add(1, 2)"));
        assert!(same_definition(
            "function transfer(ledger, from) {",
            "const transfer = (ledger, from) => {"
        ));
    }

    #[test]
    fn line_numbers_copied_from_the_file_block_are_removed() {
        assert_eq!(
            unnumber("4|def add(a, b):\n5|    return a + b\n").unwrap(),
            "def add(a, b):\n    return a + b\n"
        );
        assert_eq!(unnumber("1|a\n2|b").unwrap(), "a\nb");
        assert_eq!(unnumber("1|a\n3|b\n"), None, "not consecutive");
        assert_eq!(unnumber("1|a\nb\n"), None, "a line without a number");
        assert_eq!(unnumber("x = a | b\n"), None);
    }

    #[test]
    fn a_diff_as_content_is_applied_as_a_patch() {
        let file = "import re\n\n\ndef slug(t):\n    t = t.lower()\n    t = re.sub(\"-\", \"-\", t)\n    return t\n";
        let content = "Index: slug.py\n---\n@@ -4,4 +4,4 @@\n def slug(t):\n     t = t.lower()\n-    t = re.sub(\"-\", \"-\", t)\n+    t = re.sub(\"-+\", \"-\", t)\n     return t";
        assert_eq!(
            as_diff("slug.py", file, content).unwrap(),
            file.replace("re.sub(\"-\"", "re.sub(\"-+\"")
        );
        assert_eq!(as_diff("fix.patch", file, content), None);
        assert_eq!(
            as_diff("slug.py", file, "def slug(t):\n    return t\n"),
            None
        );
        // A diff whose lines are not in the file is not a reading of it.
        assert_eq!(
            as_diff("slug.py", file, "@@ -1,1 +1,1 @@\n-nothing\n+else\n"),
            None
        );
    }

    #[test]
    fn widen_rewrites_only_updates_of_sent_unchanged_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fs_err::write(root.join("semver.js"), SEMVER).unwrap();
        let mut sent = BTreeMap::new();
        sent.insert("semver.js".to_owned(), sha256_hex(SEMVER.as_bytes()));
        let fragment = "  if (!match) {\n    throw new Error('bad');\n  }\n  return match.slice(1, 4).map(Number);\n}\n";
        let answer = serde_json::json!({"summary": "s", "actions": [
            {"kind": "UPDATE_FILE", "path": "semver.js", "content": fragment},
            {"kind": "UPDATE_FILE", "path": "other.js", "content": fragment},
        ]})
        .to_string();
        let (text, widened) = widen(root, &answer, &sent).unwrap();
        assert_eq!(
            widened,
            vec![Widened {
                path: "semver.js".into(),
                first: 6,
                last: 10,
                kept: 10,
                fenced: false,
                numbered: false,
                as_patch: false,
                added: false,
            }]
        );
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            doc["actions"][0]["content"],
            SEMVER.replace("match.slice(1, 4);", "match.slice(1, 4).map(Number);")
        );
        assert_eq!(doc["actions"][1]["content"], fragment);

        // The file changed since it was sent: its fragment is not read against new bytes.
        fs_err::write(root.join("semver.js"), format!("{SEMVER}// more\n")).unwrap();
        assert_eq!(widen(root, &answer, &sent), None);
    }

    mod props {
        use proptest::prelude::*;

        /// Code-like lines: indentation (with a non-ASCII space now and then), words, quotes,
        /// braces, colons and `\\n` escapes.
        fn code() -> impl Strategy<Value = String> {
            let line = "[ \u{a0}\t]{0,6}(def |fn |function |class |return |x = |[a-z]{1,6})[a-z('\")\\\\n{}:,. ]{0,24}";
            proptest::collection::vec(line, 0..14).prop_map(|v| v.join("\n"))
        }

        proptest! {
            #[test]
            fn readings_never_panic_and_keep_their_promises(file in code(), content in code()) {
                if let Some(moved) = super::reindent(&file, &content) {
                    let trimmed = |t: &str| t.lines().map(str::trim).collect::<Vec<_>>().join("\n");
                    prop_assert_eq!(trimmed(&moved), trimmed(&content));
                }
                if let Some(joined) = super::rejoin(&file, &content) {
                    prop_assert!(joined.len() <= content.len() + content.matches('\n').count());
                }
                let _ = super::splice(&file, &content);
                let _ = super::block(&file, &content);
                let _ = super::elided("a.py", &file, &format!("...\n{content}\n# ... existing code"));
                let _ = crate::agent::addition::addition("a.py", &file, &content);
                let _ = crate::agent::addition::addition("a.js", &file, &content);
            }

            #[test]
            fn a_window_of_the_file_at_another_depth_is_read_whole(
                file in code(),
                from in 0usize..14,
                len in 0usize..14,
                shift in 0usize..8,
                extra in "[ ]{0,4}[a-z]{1,8}",
            ) {
                let lines: Vec<&str> = file.lines().collect();
                let from = from.min(lines.len());
                let to = (from + len).min(lines.len());
                let mut window: Vec<String> =
                    lines[from..to].iter().map(|l| format!("{}{l}", " ".repeat(shift))).collect();
                window.insert(window.len() / 2, extra);
                let content = window.join("\n");
                if let Some(moved) = super::reindent(&file, &content) {
                    let trimmed = |t: &str| t.lines().map(str::trim).collect::<Vec<_>>().join("\n");
                    prop_assert_eq!(trimmed(&moved), trimmed(&content));
                }
                let _ = super::splice(&file, &content);
                let _ = super::block(&file, &content);
                let _ = crate::agent::addition::addition("a.rs", &file, &content);
            }
        }
    }
}
