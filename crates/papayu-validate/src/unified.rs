//! A small, strict parser for the shape of a unified diff (SPEC §4, `ERR_PATCH_NOT_UNIFIED`).
//!
//! It checks shape only — headers, hunk headers, line prefixes — and never looks at the file
//! being patched; applying is the engine's job.

use std::fmt;

/// One line of a hunk body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HunkLine<'a> {
    /// ` text`: present before and after.
    Context(&'a str),
    /// `-text`: removed.
    Removed(&'a str),
    /// `+text`: added.
    Added(&'a str),
    /// `\ No newline at end of file`: the previous line has no trailing newline.
    NoNewline,
}

/// One `@@ -a,b +c,d @@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk<'a> {
    /// First old line (1-based; 0 for an empty old side).
    pub old_start: u64,
    /// Old line count from the header (1 when omitted).
    pub old_count: u64,
    /// First new line.
    pub new_start: u64,
    /// New line count from the header (1 when omitted).
    pub new_count: u64,
    /// Text after the closing `@@` (often the enclosing function), trimmed.
    pub section: &'a str,
    /// The body lines.
    pub lines: Vec<HunkLine<'a>>,
    /// 1-based line of the `@@` header within the patch text.
    pub header_line: usize,
}

impl Hunk<'_> {
    /// Lines the body actually holds on the old side (context + removed).
    pub fn body_old_count(&self) -> u64 {
        self.lines
            .iter()
            .filter(|l| matches!(l, HunkLine::Context(_) | HunkLine::Removed(_)))
            .count() as u64
    }

    /// Lines the body actually holds on the new side (context + added).
    pub fn body_new_count(&self) -> u64 {
        self.lines
            .iter()
            .filter(|l| matches!(l, HunkLine::Context(_) | HunkLine::Added(_)))
            .count() as u64
    }

    /// Whether the header's counts match the body (models often get them wrong; the engine
    /// decides whether to recount).
    pub fn counts_match(&self) -> bool {
        self.body_old_count() == self.old_count && self.body_new_count() == self.new_count
    }
}

/// Why a text is not a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct DiffShapeError {
    /// 1-based line in the patch text (0 when the whole text is at fault).
    pub line: usize,
    /// What is wrong, in words a model can act on.
    pub reason: DiffShapeReason,
}

/// The kinds of [`DiffShapeError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiffShapeReason {
    /// No `@@` hunk at all.
    NoHunk,
    /// A line starting with `@@` that is not `@@ -a[,b] +c[,d] @@`.
    BadHunkHeader(String),
    /// A hunk with no `+`, `-` or context line.
    EmptyHunk,
    /// A hunk body line with another first character (an empty line included).
    BadBodyLine(String),
    /// A line before the first hunk that is not a diff header (`diff`, `index`, `---`, `+++`, mode).
    BadPreamble(String),
}

impl fmt::Display for DiffShapeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoHunk => {
                f.write_str("no hunk: a unified diff needs at least one `@@ -a,b +c,d @@` header")
            }
            Self::BadHunkHeader(l) => {
                write!(f, "malformed hunk header {l:?}; expected `@@ -a,b +c,d @@`")
            }
            Self::EmptyHunk => f.write_str("hunk has no body lines"),
            Self::BadBodyLine(l) if l.is_empty() => f.write_str(
                "empty line inside a hunk; an empty context line must be a single space",
            ),
            Self::BadBodyLine(l) => {
                write!(
                    f,
                    "hunk body line {l:?} does not start with ' ', '+', '-' or '\\'"
                )
            }
            Self::BadPreamble(l) => write!(f, "unexpected line {l:?} before the first hunk"),
        }
    }
}

pub(crate) fn shorten(line: &str) -> String {
    let mut s: String = line.chars().take(60).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

fn parse_range(s: &str, sign: char) -> Option<(u64, u64)> {
    let s = s.strip_prefix(sign)?;
    let (start, count) = match s.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(start) || !count.is_none_or(digits) {
        return None;
    }
    Some((
        start.parse().ok()?,
        count.map_or(Some(1), |c| c.parse().ok())?,
    ))
}

/// Parse a hunk header `@@ -a[,b] +c[,d] @@[ section]`.
fn parse_header(line: &str) -> Option<(u64, u64, u64, u64, &str)> {
    let rest = line.strip_prefix("@@ ")?;
    let (ranges, section) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(' ')?;
    let (old_start, old_count) = parse_range(old, '-')?;
    let (new_start, new_count) = parse_range(new, '+')?;
    Some((old_start, old_count, new_start, new_count, section.trim()))
}

const PREAMBLE: &[&str] = &[
    "diff ",
    "index ",
    "--- ",
    "+++ ",
    "old mode ",
    "new mode ",
    "new file mode ",
    "deleted file mode ",
];

/// Parse the shape of a unified diff: optional file headers, then one or more hunks whose
/// body lines start with ` `, `+`, `-` or `\`. Trailing empty lines are ignored; header line
/// counts are recorded but not enforced (see [`Hunk::counts_match`]).
///
/// ```
/// use papayu_validate::parse_unified_diff;
/// let hunks = parse_unified_diff("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n").unwrap();
/// assert_eq!(hunks.len(), 1);
/// assert!(hunks[0].counts_match());
/// assert!(parse_unified_diff("replace b with c").is_err());
/// ```
pub fn parse_unified_diff(text: &str) -> Result<Vec<Hunk<'_>>, DiffShapeError> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let mut hunks: Vec<Hunk<'_>> = Vec::new();
    for (i, &line) in lines[..end].iter().enumerate() {
        let number = i + 1;
        let err = |reason| {
            Err(DiffShapeError {
                line: number,
                reason,
            })
        };
        if line.starts_with("@@") {
            if let Some(h) = hunks.last()
                && h.lines.iter().all(|l| matches!(l, HunkLine::NoNewline))
            {
                return Err(DiffShapeError {
                    line: h.header_line,
                    reason: DiffShapeReason::EmptyHunk,
                });
            }
            let Some((old_start, old_count, new_start, new_count, section)) = parse_header(line)
            else {
                return err(DiffShapeReason::BadHunkHeader(shorten(line)));
            };
            hunks.push(Hunk {
                old_start,
                old_count,
                new_start,
                new_count,
                section,
                lines: Vec::new(),
                header_line: number,
            });
            continue;
        }
        let Some(hunk) = hunks.last_mut() else {
            if PREAMBLE.iter().any(|p| line.starts_with(p)) {
                continue;
            }
            return err(DiffShapeReason::BadPreamble(shorten(line)));
        };
        let body = match line.chars().next() {
            Some(' ') => HunkLine::Context(&line[1..]),
            Some('-') => HunkLine::Removed(&line[1..]),
            Some('+') => HunkLine::Added(&line[1..]),
            Some('\\') => HunkLine::NoNewline,
            _ => return err(DiffShapeReason::BadBodyLine(shorten(line))),
        };
        hunk.lines.push(body);
    }
    match hunks.last() {
        None => Err(DiffShapeError {
            line: 0,
            reason: DiffShapeReason::NoHunk,
        }),
        Some(h) if h.lines.iter().all(|l| matches!(l, HunkLine::NoNewline)) => {
            Err(DiffShapeError {
                line: h.header_line,
                reason: DiffShapeReason::EmptyHunk,
            })
        }
        Some(_) => Ok(hunks),
    }
}
