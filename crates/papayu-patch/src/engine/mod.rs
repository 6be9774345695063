//! The editing engines (SPEC §5.3): compute a file's new bytes for one write action, in memory.
//!
//! * [`compute`] / [`compute_with_base`] — CREATE_FILE / UPDATE_FILE / PATCH_FILE / EDIT_FILE /
//!   REPLACE_RANGE, including the `base_sha256` check. Nothing here touches the disk.
//! * [`apply_patch_to_text`] — one single-file patch (unified diff, Codex `apply_patch` envelope
//!   or SEARCH/REPLACE blocks, see [`PatchFormat`]) onto one text, reporting each hunk's tier.
//!
//! Guarantees: never panics on any input; keeps each file's line endings (per line, new lines
//! take the file's dominant EOL), BOM and final-newline state; a hunk is placed at its stated
//! line, else at the **unique** place its old lines match (exact, then ignoring trailing
//! whitespace, then ignoring indentation with the replacement re-indented) — several candidates
//! are an error, never a guess.
//!
//! ```
//! use papayu_patch::engine::{apply_patch_to_text, HunkTier};
//! let text = "a\nb\nc\n";
//! let patch = "@@ -2,1 +2,1 @@\n-b\n+B\n";
//! let out = apply_patch_to_text(text, patch).unwrap();
//! assert_eq!(out.text, "a\nB\nc\n");
//! assert_eq!(out.hunks[0].tier, HunkTier::Exact);
//! ```

mod edit;
mod error;
mod formats;
mod hunk;
mod parse;
mod respell;
mod text;

use std::borrow::Cow;

use papayu_protocol::{Action, ActionKind, sha256_hex};

pub use error::{EngineError, HunkFailure, OpenSide, SimilarLine};
pub use formats::{CodexFile, CodexOp, PatchFormat, parse_codex};
pub use parse::{Hunk, HunkLine, ParsedPatch, parse_patch};

/// Engine configuration (a value, never read from the environment by this crate).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// `PAPAYU_NORMALIZE_EOL=lf`: write LF line endings and ensure a final newline instead of
    /// preserving the file's EOL style and final-newline state.
    pub normalize_eol_lf: bool,
}

/// How a hunk found its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HunkTier {
    /// Exact match (ignoring CR) at the stated line, adjusted by the previous hunk's offset.
    Exact,
    /// Exact match at the unique place the old lines occur elsewhere.
    Offset,
    /// Matched ignoring trailing whitespace.
    TrailingWhitespace,
    /// Matched ignoring indentation; the replacement was re-indented by the detected delta.
    Indentation,
    /// Matched exactly but one line off: the hunk has one context line the file lacks, or omits
    /// one file line between its old lines; the only such alignment in the file.
    Realigned,
    /// Matched ignoring indentation and reading typographic dashes, quotes and spaces as ASCII
    /// (the replacement re-indented as for `Indentation`).
    Punctuation,
    /// An EDIT_FILE edit whose `\n` stands, where the file has them, for the two characters
    /// `\` `n` of a string literal's escape (matched exactly otherwise).
    EscapedNewline,
    /// An EDIT_FILE edit matched reading quote styles, whitespace and string escapes loosely, at
    /// the only place it fits; the text it keeps takes the file's spelling.
    Respelled,
}

impl HunkTier {
    /// A stable lowercase name (`exact`, `offset`, `trailing_whitespace`, `indentation`,
    /// `realigned`, `punctuation`, `escaped_newline`, `respelled`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Offset => "offset",
            Self::TrailingWhitespace => "trailing_whitespace",
            Self::Indentation => "indentation",
            Self::Realigned => "realigned",
            Self::Punctuation => "punctuation",
            Self::EscapedNewline => "escaped_newline",
            Self::Respelled => "respelled",
        }
    }
}

impl serde::Serialize for HunkTier {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for HunkTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where and how one hunk applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkReport {
    /// 0-based index of the hunk in the patch.
    pub index: usize,
    /// The hunk's `@@ … @@` header line.
    pub header: String,
    /// The matching tier used.
    pub tier: HunkTier,
    /// 1-based line of the original file where the hunk's old lines start (for a pure insertion:
    /// the line the new lines were inserted before).
    pub old_start: usize,
}

/// The result of [`compute`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOutput {
    /// The file's complete new bytes.
    pub new_bytes: Vec<u8>,
    /// Per-hunk reports: PATCH_FILE's hunks, and the EDIT_FILE edits whose text the file lacked
    /// as written and which were placed like SEARCH/REPLACE blocks; empty otherwise.
    pub hunks: Vec<HunkReport>,
}

/// The result of [`apply_patch_to_text`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchedText {
    /// The patched text.
    pub text: String,
    /// Per-hunk reports, in patch order.
    pub hunks: Vec<HunkReport>,
}

/// Compute the new bytes of one file for a write action, without touching the disk.
///
/// `old` is the file's current raw bytes (`None` when it does not exist). CREATE_FILE and
/// UPDATE_FILE take `content` (an existing file's EOL style, BOM and final-newline state are kept;
/// whether CREATE_FILE on an existing file is an error depends on the protocol version and is the
/// caller's decision). PATCH_FILE, EDIT_FILE and REPLACE_RANGE first check `base_sha256` against
/// `old`. Equivalent to `compute_with_base(old, old, action, opts)`.
pub fn compute(
    old: Option<&[u8]>,
    action: &Action,
    opts: &EngineOptions,
) -> Result<EngineOutput, EngineError> {
    compute_with_base(old, old, action, opts)
}

/// Like [`compute`], but checks `base_sha256` against `base` instead of `old`.
///
/// Used when several actions of one plan edit the same file: the caller runs them in sequence on
/// the evolving bytes (`old`), while every action's `base_sha256` names the file as it was before
/// the plan (`base`, the original bytes). `base = None` means the file did not exist originally.
pub fn compute_with_base(
    old: Option<&[u8]>,
    base: Option<&[u8]>,
    action: &Action,
    opts: &EngineOptions,
) -> Result<EngineOutput, EngineError> {
    let (new_bytes, hunks) = compute_borrowing(old, base, action, opts)?;
    Ok(EngineOutput {
        new_bytes: new_bytes.into_owned(),
        hunks,
    })
}

/// [`compute_with_base`], borrowing the new bytes from `action` when they are its `content`
/// unchanged (a new file): papayu-patch's own plans then copy no content before writing it.
pub(crate) fn compute_borrowing<'a>(
    old: Option<&[u8]>,
    base: Option<&[u8]>,
    action: &'a Action,
    opts: &EngineOptions,
) -> Result<(Cow<'a, [u8]>, Vec<HunkReport>), EngineError> {
    let kind = &action.kind;
    match kind {
        ActionKind::CreateFile | ActionKind::UpdateFile => {
            let content = action
                .content
                .as_deref()
                .ok_or_else(|| missing(kind, "content"))?;
            let new_bytes = match old {
                Some(old) => Cow::Owned(text::rewrite_like(old, content, opts)),
                None => text::fresh(content, opts),
            };
            Ok((new_bytes, Vec::new()))
        }
        ActionKind::PatchFile | ActionKind::EditFile | ActionKind::ReplaceRange => {
            check_base(kind, base, action.base_sha256.as_deref())?;
            // The base matched, so a missing `old` can only mean the caller passed an
            // inconsistent pair; report it as a base mismatch rather than inventing a file.
            let old = old.ok_or_else(|| EngineError::BaseMismatch {
                kind: kind.as_str().to_owned(),
                expected: action.base_sha256.clone().unwrap_or_default(),
                actual: None,
            })?;
            let mut doc = text::Doc::parse(old)?;
            match kind {
                ActionKind::PatchFile => {
                    let patch = action
                        .patch
                        .as_deref()
                        .ok_or_else(|| missing(kind, "patch"))?;
                    let parsed = formats::parse_as(patch, PatchFormat::detect(patch))?;
                    doc.adopt_eol_if_none(parsed.crlf);
                    let p = hunk::apply(&doc, &parsed)?;
                    let new_bytes = doc.render_with_final(&p.lines, p.final_newline, opts);
                    Ok((Cow::Owned(new_bytes), p.reports))
                }
                ActionKind::EditFile => {
                    let edits = action
                        .edits
                        .as_deref()
                        .ok_or_else(|| missing(kind, "edits"))?;
                    let (new_bytes, relocated) = edit::apply(&doc, edits, opts)?;
                    Ok((Cow::Owned(new_bytes), relocated))
                }
                _ => {
                    let start = action
                        .start_line
                        .ok_or_else(|| missing(kind, "start_line"))?;
                    let end = action.end_line.ok_or_else(|| missing(kind, "end_line"))?;
                    let content = action
                        .content
                        .as_deref()
                        .ok_or_else(|| missing(kind, "content"))?;
                    let lines = doc.replace_range(start, end, content)?;
                    Ok((Cow::Owned(doc.render(&lines, opts)), Vec::new()))
                }
            }
        }
        other => Err(EngineError::UnsupportedKind {
            kind: other.as_str().to_owned(),
        }),
    }
}

/// Apply one single-file patch to a text and report the tier each hunk used.
///
/// The format is detected ([`PatchFormat::detect`]): a unified diff, a Codex `apply_patch`
/// envelope with one file section, or SEARCH/REPLACE blocks. The text's line endings and
/// final-newline state are kept exactly as in [`compute`].
pub fn apply_patch_to_text(text: &str, patch: &str) -> Result<PatchedText, EngineError> {
    apply_patch_to_text_as(text, patch, PatchFormat::detect(patch))
}

/// [`apply_patch_to_text`] with the patch's format named instead of detected.
pub fn apply_patch_to_text_as(
    text: &str,
    patch: &str,
    format: PatchFormat,
) -> Result<PatchedText, EngineError> {
    let mut doc = text::Doc::parse(text.as_bytes())?;
    let parsed = formats::parse_as(patch, format)?;
    doc.adopt_eol_if_none(parsed.crlf);
    let p = hunk::apply(&doc, &parsed)?;
    let bytes = doc.render_with_final(&p.lines, p.final_newline, &EngineOptions::default());
    let hunks = p.reports;
    // Rendering only concatenates pieces of valid UTF-8 strings, so this cannot fail; map the
    // impossible case to an error rather than panicking.
    let text = String::from_utf8(bytes).map_err(|e| EngineError::NonUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })?;
    Ok(PatchedText { text, hunks })
}

fn missing(kind: &ActionKind, field: &'static str) -> EngineError {
    EngineError::MissingField {
        kind: kind.as_str().to_owned(),
        field,
    }
}

fn check_base(
    kind: &ActionKind,
    base: Option<&[u8]>,
    expected: Option<&str>,
) -> Result<(), EngineError> {
    let expected = expected.ok_or_else(|| missing(kind, "base_sha256"))?;
    let actual = base.map(sha256_hex);
    if actual.as_deref() == Some(expected) {
        return Ok(());
    }
    Err(EngineError::BaseMismatch {
        kind: kind.as_str().to_owned(),
        expected: expected.to_owned(),
        actual,
    })
}
