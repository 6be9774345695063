//! The edit formats models are trained on, read into the engine's hunks so that they share its
//! placement rules (uniqueness, tiers, no guessing) and its EOL/BOM/final-newline fidelity:
//! unified diffs, the Codex CLI `apply_patch` envelope and Aider SEARCH/REPLACE blocks.

use super::EngineError;
use super::parse::{Hunk, HunkLine, ParsedPatch, parse_patch};
pub use papayu_validate::PatchFormat;
use papayu_validate::{CODEX_BEGIN, CODEX_END, CODEX_EOF, SR_DIVIDER, SR_REPLACE, SR_SEARCH};

/// Stated lines for hunks that carry none: far past any real file, and far apart, so that no
/// hunk is ever trusted at a stated line and the previous hunk's drift cannot carry the next
/// one onto a real line. They are placed only where their old lines match uniquely.
pub(crate) const NOWHERE: usize = 1 << 40;

/// What one file section of a Codex envelope does.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodexOp {
    /// `*** Add File:` with the new file's complete text.
    Add {
        /// The new file's text (every `+` line, each ended with `\n`).
        content: String,
    },
    /// `*** Delete File:`.
    Delete,
    /// `*** Update File:`, optionally `*** Move to:`, and its chunks as hunks.
    Update {
        /// The new path (`*** Move to:`), if the file moves.
        move_to: Option<String>,
        /// The chunks, as hunks without trusted line numbers.
        patch: ParsedPatch,
    },
}

/// One file section of a Codex envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexFile {
    /// The path as written after `*** Add File:` / `*** Update File:` / `*** Delete File:`.
    pub path: String,
    /// What happens to it.
    pub op: CodexOp,
}

/// Read a patch of the given format as hunks; `Unified` is [`parse_patch`]. A Codex envelope
/// must hold exactly one `*** Update File:` (or `*** Add File:`) section here.
pub(crate) fn parse_as(patch: &str, format: PatchFormat) -> Result<ParsedPatch, EngineError> {
    match format {
        PatchFormat::SearchReplace => parse_search_replace(patch),
        PatchFormat::CodexEnvelope => {
            let files = parse_codex(patch)?;
            let [file] = files.as_slice() else {
                return Err(malformed(
                    format,
                    0,
                    format!(
                        "{} file sections; one file's text takes exactly one",
                        files.len()
                    ),
                ));
            };
            match &file.op {
                CodexOp::Update { patch, .. } => Ok(patch.clone()),
                CodexOp::Add { content } => Ok(addition(content)),
                CodexOp::Delete => Err(malformed(
                    format,
                    0,
                    "a deleted file has no text to compute".to_owned(),
                )),
            }
        }
        // `Unified`, and any format papayu-validate learns before this engine reads it: the
        // unified parser rejects what is not a diff with the stable code.
        _ => parse_patch(patch),
    }
}

fn malformed(format: PatchFormat, line: usize, reason: String) -> EngineError {
    EngineError::PatchMalformed {
        format: format.as_str(),
        line,
        reason,
    }
}

/// A whole new text as one insertion at line 0: it applies only to an empty text.
fn addition(content: &str) -> ParsedPatch {
    let lines: Vec<HunkLine> = content
        .strip_suffix('\n')
        .unwrap_or(content)
        .split('\n')
        .filter(|_| !content.is_empty())
        .map(|l| HunkLine::Add(l.to_owned()))
        .collect();
    ParsedPatch {
        hunks: vec![Hunk {
            header: "*** Add File".to_owned(),
            old_start: 0,
            old_count: 0,
            new_start: 1,
            new_count: lines.len(),
            crlf: vec![false; lines.len()],
            lines,
            old_no_newline: false,
            new_no_newline: false,
            at_eof: false,
        }],
        crlf: false,
    }
}

/// Lines without their CR, and whether each had one (a final empty line dropped).
pub(crate) fn split_cr(patch: &str) -> (Vec<&str>, Vec<bool>) {
    let mut cr = Vec::new();
    let mut lines: Vec<&str> = patch
        .split('\n')
        .map(|l| {
            cr.push(l.ends_with('\r'));
            l.strip_suffix('\r').unwrap_or(l)
        })
        .collect();
    if lines.last() == Some(&"") {
        lines.pop();
        cr.pop();
    }
    (lines, cr)
}

fn finish(hunks: Vec<Hunk>) -> ParsedPatch {
    let (body, with_cr) = hunks.iter().fold((0usize, 0usize), |(b, c), h| {
        (b + h.crlf.len(), c + h.crlf.iter().filter(|&&x| x).count())
    });
    ParsedPatch {
        crlf: with_cr > 0 && with_cr * 2 >= body,
        hunks,
    }
}

fn hunk(header: String, old_start: usize, lines: Vec<HunkLine>, crlf: Vec<bool>) -> Hunk {
    hunk_at(header, old_start, lines, crlf, false)
}

fn hunk_at(
    header: String,
    old_start: usize,
    lines: Vec<HunkLine>,
    crlf: Vec<bool>,
    at_eof: bool,
) -> Hunk {
    let old_count = lines
        .iter()
        .filter(|l| !matches!(l, HunkLine::Add(_)))
        .count();
    let new_count = lines
        .iter()
        .filter(|l| !matches!(l, HunkLine::Remove(_)))
        .count();
    Hunk {
        header,
        old_start,
        old_count,
        new_start: old_start,
        new_count,
        lines,
        old_no_newline: false,
        new_no_newline: false,
        crlf,
        at_eof,
    }
}

/// SEARCH/REPLACE blocks; text outside them (file names, code fences, prose) is ignored. Each
/// SEARCH must occur exactly once (ignoring trailing whitespace or indentation only when the
/// exact text does not occur at all); blocks are not placed by their order.
fn parse_search_replace(patch: &str) -> Result<ParsedPatch, EngineError> {
    let format = PatchFormat::SearchReplace;
    let (lines, cr) = split_cr(patch);
    let mut blocks: Vec<(usize, Vec<HunkLine>, Vec<bool>)> = Vec::new();
    let mut i = 0usize;
    while i < lines.len() {
        if lines[i].trim_end() != SR_SEARCH {
            i += 1;
            continue;
        }
        let start = i;
        let mut search: Vec<(&str, bool)> = Vec::new();
        let mut replace: Vec<(&str, bool)> = Vec::new();
        let mut replacing = false;
        i += 1;
        loop {
            let Some(&l) = lines.get(i) else {
                return Err(malformed(
                    format,
                    start + 1,
                    "block not closed by `>>>>>>> REPLACE`".to_owned(),
                ));
            };
            match l.trim_end() {
                SR_DIVIDER if !replacing => replacing = true,
                SR_REPLACE if replacing => break,
                SR_SEARCH | SR_REPLACE | SR_DIVIDER => {
                    return Err(malformed(
                        format,
                        i + 1,
                        format!("unexpected {l:?} inside a block"),
                    ));
                }
                _ if replacing => replace.push((l, cr[i])),
                _ => search.push((l, cr[i])),
            }
            i += 1;
        }
        let (body, flags) = block_body(&search, &replace);
        blocks.push((start, body, flags));
        i += 1;
    }
    if blocks.is_empty() {
        return Err(malformed(format, 0, "no SEARCH/REPLACE block".to_owned()));
    }
    let count = blocks.len();
    let hunks = blocks
        .into_iter()
        .enumerate()
        .map(|(k, (start, body, flags))| {
            // Only an empty SEARCH: a block that keeps all of its SEARCH text and adds lines
            // around it must still be found uniquely, not trusted at line 0.
            let empty_search = body.iter().all(|l| matches!(l, HunkLine::Add(_)));
            // Stated lines in decreasing order mark the blocks as unordered, so a SEARCH text
            // found at several places is ambiguous rather than placed by the blocks' order. An
            // empty SEARCH (a new file's text) states line 0: it fits only an empty text.
            let stated = if empty_search {
                0
            } else {
                NOWHERE * (count - k)
            };
            hunk(
                format!("SEARCH/REPLACE block #{} (line {})", k + 1, start + 1),
                stated,
                body,
                flags,
            )
        })
        .collect();
    Ok(finish(hunks))
}

/// One EDIT_FILE edit's `before`/`after` text as a SEARCH/REPLACE block's hunk: whole lines,
/// no stated line, so it is placed only where its old lines match uniquely (with the engine's
/// tiers). A final newline on either text ends its last line rather than adding an empty one.
pub(crate) fn edit_block(index: usize, before: &str, after: &str) -> ParsedPatch {
    fn lines(s: &str) -> Vec<(&str, bool)> {
        let (lines, cr) = split_cr(s);
        lines.into_iter().zip(cr).collect()
    }
    let (search, replace) = (lines(before), lines(after));
    let (body, flags) = block_body(&search, &replace);
    finish(vec![hunk(
        format!("EDIT_FILE edit #{}", index + 1),
        NOWHERE,
        body,
        flags,
    )])
}

/// A block's hunk body: lines the SEARCH and REPLACE texts share (their longest common
/// subsequence) become context, so the file keeps its own bytes for lines the block does not
/// change (a model's copy may differ in trailing whitespace or indentation); the rest are `-`
/// and `+` lines, removals first within each change.
fn block_body(search: &[(&str, bool)], replace: &[(&str, bool)]) -> (Vec<HunkLine>, Vec<bool>) {
    let (n, m) = (search.len(), replace.len());
    // Beyond this the table is too large to be worth it: every line is replaced as written.
    let lcs = n.saturating_mul(m) <= 4_000_000;
    let mut table = vec![0u32; if lcs { (n + 1) * (m + 1) } else { 0 }];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    if lcs {
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                table[at(i, j)] = if search[i].0 == replace[j].0 {
                    table[at(i + 1, j + 1)] + 1
                } else {
                    table[at(i + 1, j)].max(table[at(i, j + 1)])
                };
            }
        }
    }
    let (mut body, mut flags) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0usize, 0usize);
    let mut adds: Vec<(&str, bool)> = Vec::new();
    let flush = |adds: &mut Vec<(&str, bool)>, body: &mut Vec<HunkLine>, flags: &mut Vec<bool>| {
        for (t, c) in adds.drain(..) {
            body.push(HunkLine::Add(t.to_owned()));
            flags.push(c);
        }
    };
    while i < n || j < m {
        if lcs && i < n && j < m && search[i].0 == replace[j].0 {
            flush(&mut adds, &mut body, &mut flags);
            body.push(HunkLine::Context(search[i].0.to_owned()));
            flags.push(search[i].1);
            i += 1;
            j += 1;
        } else if i < n && (j == m || !lcs || table[at(i + 1, j)] >= table[at(i, j + 1)]) {
            body.push(HunkLine::Remove(search[i].0.to_owned()));
            flags.push(search[i].1);
            i += 1;
        } else {
            adds.push(replace[j]);
            j += 1;
        }
    }
    flush(&mut adds, &mut body, &mut flags);
    (body, flags)
}

/// Parse a Codex `apply_patch` envelope into its file sections. Each `@@` (optionally followed
/// by a context marker, which only names the place for a reader) starts a chunk; a chunk
/// followed by `*** End of File` is stated at the file's end. Chunks carry no line numbers:
/// each is placed where its old lines match uniquely, or by the order of the others.
pub fn parse_codex(patch: &str) -> Result<Vec<CodexFile>, EngineError> {
    let format = PatchFormat::CodexEnvelope;
    let (lines, cr) = split_cr(patch);
    let begin = lines
        .iter()
        .position(|l| l.trim() == CODEX_BEGIN)
        .ok_or_else(|| malformed(format, 0, format!("no `{CODEX_BEGIN}` line")))?;
    let mut files: Vec<CodexFile> = Vec::new();
    let mut i = begin + 1;
    let mut ended = false;
    while i < lines.len() {
        let l = lines[i].trim_end();
        if l == CODEX_END {
            ended = true;
            break;
        }
        let section = |prefix: &str| l.strip_prefix(prefix).map(|p| p.trim().to_owned());
        if let Some(path) = section("*** Add File: ") {
            let mut content = String::new();
            i += 1;
            while let Some(body) = lines.get(i).and_then(|l| l.strip_prefix('+')) {
                content.push_str(body);
                content.push('\n');
                i += 1;
            }
            files.push(CodexFile {
                path,
                op: CodexOp::Add { content },
            });
        } else if let Some(path) = section("*** Delete File: ") {
            files.push(CodexFile {
                path,
                op: CodexOp::Delete,
            });
            i += 1;
        } else if let Some(path) = section("*** Update File: ") {
            i += 1;
            let move_to = lines
                .get(i)
                .and_then(|l| l.trim_end().strip_prefix("*** Move to: "))
                .map(|p| p.trim().to_owned());
            if move_to.is_some() {
                i += 1;
            }
            let (hunks, next) = codex_chunks(&lines, &cr, i)?;
            i = next;
            if hunks.is_empty() && move_to.is_none() {
                return Err(malformed(
                    format,
                    i,
                    format!("`*** Update File: {path}` has no chunk"),
                ));
            }
            files.push(CodexFile {
                path,
                op: CodexOp::Update {
                    move_to,
                    patch: finish(hunks),
                },
            });
        } else if l.trim().is_empty() {
            i += 1;
        } else {
            return Err(malformed(
                format,
                i + 1,
                format!("expected a `*** Add/Update/Delete File:` line, found {l:?}"),
            ));
        }
    }
    if !ended {
        return Err(malformed(
            format,
            lines.len(),
            format!("no `{CODEX_END}` line"),
        ));
    }
    if files.is_empty() {
        return Err(malformed(format, begin + 1, "no file section".to_owned()));
    }
    Ok(files)
}

/// The chunks of one `*** Update File:` section starting at `lines[at]`; returns them and the
/// index of the first line after the section.
fn codex_chunks(lines: &[&str], cr: &[bool], at: usize) -> Result<(Vec<Hunk>, usize), EngineError> {
    let format = PatchFormat::CodexEnvelope;
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<(String, Vec<HunkLine>, Vec<bool>)> = None;
    let mut close = |c: Option<(String, Vec<HunkLine>, Vec<bool>)>, at_eof: bool| {
        if let Some((header, body, flags)) = c
            && !body.is_empty()
        {
            let stated = NOWHERE * (hunks.len() + 1);
            hunks.push(hunk_at(header, stated, body, flags, at_eof));
        }
    };
    let mut i = at;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim_end();
        if t == CODEX_EOF {
            close(current.take(), true);
            i += 1;
            continue;
        }
        if t.starts_with("*** ") {
            break;
        }
        if t.starts_with("@@") {
            close(current.take(), false);
            current = Some((t.to_owned(), Vec::new(), Vec::new()));
            i += 1;
            continue;
        }
        let entry = current.get_or_insert_with(|| ("@@".to_owned(), Vec::new(), Vec::new()));
        let line = match l.chars().next() {
            // a blank line is a context line whose leading space was lost
            None => HunkLine::Context(String::new()),
            Some(' ') => HunkLine::Context(l[1..].to_owned()),
            Some('-') => HunkLine::Remove(l[1..].to_owned()),
            Some('+') => HunkLine::Add(l[1..].to_owned()),
            Some(_) => {
                return Err(malformed(
                    format,
                    i + 1,
                    format!("chunk line must start with ' ', '+' or '-': {l:?}"),
                ));
            }
        };
        entry.1.push(line);
        entry.2.push(cr[i]);
        i += 1;
    }
    close(current.take(), false);
    Ok((hunks, i))
}
