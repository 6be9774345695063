//! The engine's error type: structured context, one stable [`ErrorCode`] per variant.

use papayu_protocol::ErrorCode;

/// A file line quoted in an error report (1-based line number and its text without EOL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimilarLine {
    /// 1-based line number in the file.
    pub line: usize,
    /// The line's text, without its line ending.
    pub text: String,
}

/// Why a hunk could not be placed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HunkFailure {
    /// The hunk's old lines occur nowhere in the file, under any tolerance.
    NoMatch,
    /// The old lines occur at several places (1-based starts) and the stated line is not one of them
    /// (or the hunk has no context to make the stated line trustworthy).
    Ambiguous {
        /// 1-based start lines of the equally good candidates.
        candidates: Vec<usize>,
    },
    /// The region at the stated line mostly matches but differs: a conflicting edit. The hunk is
    /// not relocated to a look-alike elsewhere.
    Conflict,
    /// A hunk without any old line (no context, only `+` lines) whose stated line does not exist
    /// or is not corroborated: its position is trusted only in an empty file or when every other
    /// hunk matched exactly at its stated line.
    InsertionNotAnchored,
    /// The hunk overlaps the region of another hunk (0-based index of the other hunk).
    Overlap {
        /// Index (0-based) of the hunk it overlaps.
        other: usize,
    },
    /// The indentation of the matched lines differs inconsistently, so the replacement could not
    /// be re-indented safely.
    Reindent,
    /// The hunk has context on one side but only added lines beyond its context on the other,
    /// and the file goes on past that side: diff tools cut context only at the ends of the file,
    /// so a context line between its added lines may have been left out and where the file's
    /// next lines belong among them is unknown.
    OpenEnded {
        /// The side without context.
        side: OpenSide,
    },
}

/// The side of a hunk that has added lines and no context (see [`HunkFailure::OpenEnded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenSide {
    /// The hunk starts with added lines but is not at the start of the file.
    Start,
    /// The hunk ends with added lines but is not at the end of the file.
    End,
}

impl std::fmt::Display for HunkFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoMatch => f.write_str("its old lines were not found"),
            Self::Ambiguous { candidates } => {
                write!(
                    f,
                    "its old lines match at several places (lines {candidates:?}); refusing to guess"
                )
            }
            Self::Conflict => {
                f.write_str("the region at its stated line was changed by a conflicting edit")
            }
            Self::InsertionNotAnchored => f.write_str(
                "it only inserts lines without context, and its stated line does not exist or is not corroborated by other hunks",
            ),
            Self::Overlap { other } => write!(f, "it overlaps hunk #{}", other + 1),
            Self::Reindent => f.write_str("its indentation differs inconsistently from the file"),
            Self::OpenEnded {
                side: OpenSide::End,
            } => f.write_str(
                "it ends with added lines and no context after them, but the file goes on; add the lines that follow",
            ),
            Self::OpenEnded {
                side: OpenSide::Start,
            } => f.write_str(
                "it starts with added lines and no context before them, but the file does not start there; add the lines that precede",
            ),
        }
    }
}

/// An engine failure. [`EngineError::code`] gives the stable code that crosses process boundaries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The action's kind does not write file content (the transaction layer handles it).
    #[error("{kind} does not compute file content")]
    UnsupportedKind {
        /// The action kind's wire name.
        kind: String,
    },
    /// A field the action kind needs is absent.
    #[error("{kind} needs `{field}`")]
    MissingField {
        /// The action kind's wire name.
        kind: String,
        /// The missing field.
        field: &'static str,
    },
    /// The file is missing, or its bytes do not hash to `base_sha256`.
    #[error("{kind}: base mismatch: expected sha256 {expected}, file {}", actual.as_deref().map_or("is missing".to_owned(), |a| format!("has {a}")))]
    BaseMismatch {
        /// The action kind's wire name (EDIT_FILE maps to `ERR_EDIT_BASE_MISMATCH`).
        kind: String,
        /// The `base_sha256` the action carries.
        expected: String,
        /// The file's actual sha256, `None` when the file does not exist.
        actual: Option<String>,
    },
    /// The file to edit is not valid UTF-8.
    #[error("file is not UTF-8 (invalid byte at offset {offset})")]
    NonUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// The patch is not a well-formed unified diff.
    #[error("patch is not a unified diff (line {line}): {reason}")]
    PatchNotUnified {
        /// 1-based line of the patch where parsing failed (0 for the whole patch).
        line: usize,
        /// What was wrong.
        reason: String,
    },
    /// A Codex envelope or SEARCH/REPLACE blocks are malformed.
    #[error("{format} patch is malformed (line {line}): {reason}")]
    PatchMalformed {
        /// The format's stable name (`codex_envelope`, `search_replace`).
        format: &'static str,
        /// 1-based line of the patch where reading failed (0 for the whole patch).
        line: usize,
        /// What was wrong.
        reason: String,
    },
    /// One hunk could not be applied; nothing was applied.
    #[error("hunk #{} `{header}` failed: {reason}{}", index + 1, render_similar(nearest))]
    HunkFailed {
        /// 0-based index of the hunk in the patch.
        index: usize,
        /// The hunk's `@@ … @@` header line.
        header: String,
        /// Why it failed.
        reason: HunkFailure,
        /// The file lines most similar to the hunk's old lines.
        nearest: Vec<SimilarLine>,
    },
    /// An EDIT_FILE edit is malformed (empty anchor or `before`, `occurrence` 0).
    #[error("edit #{}: {reason}", index + 1)]
    EditInvalid {
        /// 0-based index of the edit.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// An EDIT_FILE anchor does not occur (or not `occurrence` times).
    #[error("edit #{}: anchor {anchor:?} not found{}", index + 1, occurrence.map_or(String::new(), |o| format!(" (occurrence {o}, file has {found})")))]
    EditAnchorNotFound {
        /// 0-based index of the edit.
        index: usize,
        /// The anchor text.
        anchor: String,
        /// The requested occurrence, if any.
        occurrence: Option<u32>,
        /// How many occurrences the file has.
        found: usize,
    },
    /// An EDIT_FILE anchor, or its `before` text, occurs more than once where it must be unique.
    #[error("edit #{}: {what} occurs {count} times; it must be unique (or give `occurrence`)", index + 1)]
    EditAmbiguous {
        /// 0-based index of the edit.
        index: usize,
        /// `"anchor"` or `"before"`.
        what: &'static str,
        /// Number of occurrences.
        count: usize,
    },
    /// An EDIT_FILE `before` text does not occur within 4000 characters after its anchor.
    #[error("edit #{}: `before` {before:?} not found within {window} characters after the anchor at line {anchor_line}", index + 1)]
    EditBeforeNotFound {
        /// 0-based index of the edit.
        index: usize,
        /// The `before` text.
        before: String,
        /// 1-based line where the chosen anchor occurrence starts.
        anchor_line: usize,
        /// The window size in characters.
        window: usize,
    },
    /// A REPLACE_RANGE range does not fit the file.
    #[error("line range {start}..={end} is invalid for a file of {lines} lines")]
    RangeInvalid {
        /// `start_line` as given.
        start: u64,
        /// `end_line` as given.
        end: u64,
        /// Number of lines in the file.
        lines: usize,
    },
}

fn render_similar(lines: &[SimilarLine]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut s = String::from("; nearest similar lines in the file:");
    for l in lines {
        s.push_str(&format!("\n  {:>5} | {}", l.line, l.text));
    }
    s
}

impl EngineError {
    /// The stable error code (SPEC §4/§5).
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::UnsupportedKind { .. } => ErrorCode::UnknownKind,
            Self::MissingField { field, .. } => match *field {
                "content" => ErrorCode::ContentRequired,
                "base_sha256" => ErrorCode::BaseSha256Invalid,
                "start_line" | "end_line" => ErrorCode::RangeInvalid,
                _ => ErrorCode::PatchRequired,
            },
            Self::BaseMismatch { kind, .. } if kind == "EDIT_FILE" => ErrorCode::EditBaseMismatch,
            Self::BaseMismatch { .. } => ErrorCode::BaseMismatch,
            Self::NonUtf8 { .. } => ErrorCode::NonUtf8File,
            Self::PatchNotUnified { .. } | Self::PatchMalformed { .. } => {
                ErrorCode::PatchNotUnified
            }
            Self::HunkFailed { .. } => ErrorCode::PatchApplyFailed,
            Self::EditInvalid { .. } => ErrorCode::EditApplyFailed,
            Self::EditAnchorNotFound { .. } => ErrorCode::EditAnchorNotFound,
            Self::EditAmbiguous { .. } => ErrorCode::EditAmbiguous,
            Self::EditBeforeNotFound { .. } => ErrorCode::EditBeforeNotFound,
            Self::RangeInvalid { .. } => ErrorCode::RangeInvalid,
        }
    }
}
