//! The edit formats a PATCH_FILE `patch` may be written in, and a shape check for each (SPEC §4,
//! `ERR_PATCH_NOT_UNIFIED`): a unified diff, a single-file Codex `apply_patch` envelope, or
//! Aider-style SEARCH/REPLACE blocks. Shape only: applying is papayu-patch's job, which detects
//! the format with this same [`PatchFormat::detect`].

use std::fmt;

use crate::unified::{DiffShapeError, parse_unified_diff, shorten};

/// The line that opens a Codex `apply_patch` envelope.
pub const CODEX_BEGIN: &str = "*** Begin Patch";
/// The line that closes a Codex envelope.
pub const CODEX_END: &str = "*** End Patch";
/// The line after a Codex chunk that reaches the end of the file.
pub const CODEX_EOF: &str = "*** End of File";
/// The line that opens a SEARCH/REPLACE block.
pub const SR_SEARCH: &str = "<<<<<<< SEARCH";
/// The line between a block's SEARCH and REPLACE texts.
pub const SR_DIVIDER: &str = "=======";
/// The line that closes a SEARCH/REPLACE block.
pub const SR_REPLACE: &str = ">>>>>>> REPLACE";

/// An edit format a PATCH_FILE `patch` (and papayu-patch's `apply_patch_to_text`) reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PatchFormat {
    /// A unified diff (`@@ -a,b +c,d @@` hunks, optional `---`/`+++` headers).
    Unified,
    /// The Codex CLI `apply_patch` envelope (`*** Begin Patch` … `*** End Patch`).
    CodexEnvelope,
    /// Aider-style `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks.
    SearchReplace,
}

impl PatchFormat {
    /// The format of `patch`: a line `*** Begin Patch` (or a first non-blank line that is one
    /// with whitespace around it) makes it a Codex envelope, a line `<<<<<<< SEARCH` SEARCH/REPLACE
    /// blocks, anything else a unified diff. Markers must start their line, so a unified diff
    /// whose context shows one stays a unified diff.
    ///
    /// ```
    /// use papayu_validate::PatchFormat;
    /// assert_eq!(PatchFormat::detect("*** Begin Patch\n"), PatchFormat::CodexEnvelope);
    /// assert_eq!(PatchFormat::detect("@@ -1 +1 @@\n-a\n+b\n"), PatchFormat::Unified);
    /// ```
    pub fn detect(patch: &str) -> Self {
        if patch.lines().map(str::trim).find(|l| !l.is_empty()) == Some(CODEX_BEGIN) {
            return Self::CodexEnvelope;
        }
        patch
            .lines()
            .map(str::trim_end)
            .find_map(|l| match l {
                CODEX_BEGIN => Some(Self::CodexEnvelope),
                SR_SEARCH => Some(Self::SearchReplace),
                _ => None,
            })
            .unwrap_or(Self::Unified)
    }

    /// A stable lowercase name (`unified`, `codex_envelope`, `search_replace`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unified => "unified",
            Self::CodexEnvelope => "codex_envelope",
            Self::SearchReplace => "search_replace",
        }
    }
}

impl fmt::Display for PatchFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a PATCH_FILE `patch` is not one file's edit in any format papayu reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchShapeError {
    /// A unified diff with a shape error.
    #[error("`patch` is not a unified diff: {0}")]
    Unified(DiffShapeError),
    /// A Codex envelope or SEARCH/REPLACE blocks with a shape error.
    #[error("`patch` is not a valid {format} patch: line {line}: {reason}")]
    Envelope {
        /// The detected format.
        format: PatchFormat,
        /// 1-based line in the patch text (0 when the whole text is at fault).
        line: usize,
        /// What is wrong.
        reason: EnvelopeReason,
    },
}

/// The kinds of [`PatchShapeError::Envelope`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopeReason {
    /// No `*** End Patch` line.
    NoEnd,
    /// Not exactly one `*** Update File:` / `*** Add File:` section (the count found).
    FileSections(usize),
    /// A `*** Delete File:` section: a PATCH_FILE edits a file, DELETE_FILE removes one.
    Delete,
    /// A `*** Move to:` line: a PATCH_FILE edits its own `path`.
    Move,
    /// An `*** Update File:` section without a chunk line.
    NoChunk,
    /// A line that belongs nowhere in the envelope.
    BadLine(String),
    /// No SEARCH/REPLACE block at all.
    NoBlock,
    /// A block not closed by `>>>>>>> REPLACE`.
    Unclosed,
    /// A marker out of place inside a block.
    StrayMarker(String),
}

impl fmt::Display for EnvelopeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoEnd => write!(f, "no `{CODEX_END}` line"),
            Self::FileSections(n) => write!(
                f,
                "{n} `*** Update File:`/`*** Add File:` sections; a PATCH_FILE takes exactly one"
            ),
            Self::Delete => f.write_str("`*** Delete File:` in a PATCH_FILE; use DELETE_FILE"),
            Self::Move => {
                f.write_str("`*** Move to:` in a PATCH_FILE; use CREATE_FILE + DELETE_FILE")
            }
            Self::NoChunk => f.write_str("`*** Update File:` has no chunk"),
            Self::BadLine(l) => write!(
                f,
                "{l:?} is not a `*** …` marker, an `@@` line or a chunk line starting with ' ', '+' or '-'"
            ),
            Self::NoBlock => write!(f, "no `{SR_SEARCH}` block"),
            Self::Unclosed => write!(f, "block not closed by `{SR_REPLACE}`"),
            Self::StrayMarker(l) => write!(f, "unexpected {l:?} inside a block"),
        }
    }
}

/// Check that `patch` is one file's edit in a format papayu reads, and say which.
///
/// ```
/// use papayu_validate::{PatchFormat, check_patch_shape};
/// let codex = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n";
/// assert_eq!(check_patch_shape(codex), Ok(PatchFormat::CodexEnvelope));
/// let blocks = "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n";
/// assert_eq!(check_patch_shape(blocks), Ok(PatchFormat::SearchReplace));
/// assert!(check_patch_shape("replace a with b").is_err());
/// ```
pub fn check_patch_shape(patch: &str) -> Result<PatchFormat, PatchShapeError> {
    let format = PatchFormat::detect(patch);
    let at = |line: usize, reason: EnvelopeReason| PatchShapeError::Envelope {
        format,
        line,
        reason,
    };
    let lines: Vec<&str> = patch
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    match format {
        PatchFormat::Unified => parse_unified_diff(patch)
            .map(|_| format)
            .map_err(PatchShapeError::Unified),
        PatchFormat::SearchReplace => check_blocks(&lines)
            .map(|()| format)
            .map_err(|(l, r)| at(l, r)),
        PatchFormat::CodexEnvelope => check_codex(&lines)
            .map(|()| format)
            .map_err(|(l, r)| at(l, r)),
    }
}

/// SEARCH/REPLACE blocks; text outside them (file names, code fences, prose) is allowed.
fn check_blocks(lines: &[&str]) -> Result<(), (usize, EnvelopeReason)> {
    let mut blocks = 0usize;
    // None: outside a block; Some(false): in SEARCH; Some(true): in REPLACE.
    let mut state: Option<(usize, bool)> = None;
    for (i, l) in lines.iter().enumerate() {
        let l = l.trim_end();
        state = match (state, l) {
            (None, SR_SEARCH) => Some((i, false)),
            (None, _) => None,
            (Some((s, false)), SR_DIVIDER) => Some((s, true)),
            (Some((_, true)), SR_REPLACE) => {
                blocks += 1;
                None
            }
            (Some(_), SR_SEARCH | SR_DIVIDER | SR_REPLACE) => {
                return Err((i + 1, EnvelopeReason::StrayMarker(l.to_owned())));
            }
            (s, _) => s,
        };
    }
    match (state, blocks) {
        (Some((s, _)), _) => Err((s + 1, EnvelopeReason::Unclosed)),
        (None, 0) => Err((0, EnvelopeReason::NoBlock)),
        (None, _) => Ok(()),
    }
}

/// A single-file Codex envelope: one `*** Update File:` with chunks, or one `*** Add File:`.
fn check_codex(lines: &[&str]) -> Result<(), (usize, EnvelopeReason)> {
    let begin = lines
        .iter()
        .position(|l| l.trim() == CODEX_BEGIN)
        .unwrap_or_default();
    let mut sections = 0usize;
    // Whether the current section is an Update (chunk lines allowed), an Add (`+` lines), and
    // whether it has a chunk line yet.
    let mut update: Option<bool> = None;
    let mut adding = false;
    let mut end = None;
    for (i, raw) in lines.iter().enumerate().skip(begin + 1) {
        let l = raw.trim_end();
        let no_chunk = |update: Option<bool>| update == Some(false);
        if l == CODEX_END {
            if no_chunk(update) {
                return Err((i + 1, EnvelopeReason::NoChunk));
            }
            end = Some(i);
            break;
        }
        if l.starts_with("*** Update File: ") || l.starts_with("*** Add File: ") {
            if no_chunk(update) {
                return Err((i + 1, EnvelopeReason::NoChunk));
            }
            sections += 1;
            adding = l.starts_with("*** Add");
            update = (!adding).then_some(false);
            continue;
        }
        if l.starts_with("*** Delete File: ") {
            return Err((i + 1, EnvelopeReason::Delete));
        }
        if l.starts_with("*** Move to: ") {
            return Err((i + 1, EnvelopeReason::Move));
        }
        let chunk_line = matches!(raw.chars().next(), None | Some(' ' | '+' | '-'))
            || l.starts_with("@@")
            || l == CODEX_EOF;
        match update {
            Some(_) if chunk_line => {
                if !l.starts_with("@@") && l != CODEX_EOF {
                    update = Some(true);
                }
            }
            None if adding && (raw.starts_with('+') || l.is_empty()) => {}
            None if !adding && l.trim().is_empty() => {}
            _ => return Err((i + 1, EnvelopeReason::BadLine(shorten(l)))),
        }
    }
    if end.is_none() {
        return Err((lines.len(), EnvelopeReason::NoEnd));
    }
    if sections != 1 {
        return Err((begin + 1, EnvelopeReason::FileSections(sections)));
    }
    Ok(())
}
