//! Strict, LLM-tolerant unified-diff parser.

use super::EngineError;

/// One line of a hunk body (text without the leading marker and without CR/LF).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// ` ` — present on both sides.
    Context(String),
    /// `-` — old side only.
    Remove(String),
    /// `+` — new side only.
    Add(String),
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The header line as written (`@@ -1,3 +1,4 @@ fn main`).
    pub header: String,
    /// Declared old start line (1-based; for an old count of 0, the line after which to insert).
    pub old_start: usize,
    /// Declared old line count.
    pub old_count: usize,
    /// Declared new start line.
    pub new_start: usize,
    /// Declared new line count.
    pub new_count: usize,
    /// The body.
    pub lines: Vec<HunkLine>,
    /// `\ No newline at end of file` follows the last old-side line.
    pub old_no_newline: bool,
    /// `\ No newline at end of file` follows the last new-side line.
    pub new_no_newline: bool,
    /// Per body line (parallel to `lines`): whether it ended with CRLF in the patch. A commit
    /// that changes a file's line endings is only visible here.
    pub crlf: Vec<bool>,
    /// The old lines end at the file's last line whatever `old_start` says (a Codex chunk
    /// followed by `*** End of File`).
    pub at_eof: bool,
}

impl Hunk {
    /// Old-side line count of the body.
    pub fn body_old_count(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| !matches!(l, HunkLine::Add(_)))
            .count()
    }

    /// New-side line count of the body.
    pub fn body_new_count(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| !matches!(l, HunkLine::Remove(_)))
            .count()
    }

    /// Whether the declared counts agree with the body.
    pub fn counts_consistent(&self) -> bool {
        self.old_count == self.body_old_count() && self.new_count == self.body_new_count()
    }
}

/// A parsed single-file unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPatch {
    /// Hunks in patch order.
    pub hunks: Vec<Hunk>,
    /// Most hunk lines ended with CRLF (used for new lines when the file itself has no line
    /// ending to imitate, e.g. an empty file).
    pub crlf: bool,
}

fn err(line: usize, reason: impl Into<String>) -> EngineError {
    EngineError::PatchNotUnified {
        line,
        reason: reason.into(),
    }
}

/// Parse `---`/`+++` headers (optional), git extended headers (ignored) and `@@` hunks. CRLF line
/// endings in the patch are accepted. Header counts that disagree with a consistent body are
/// tolerated (the body wins); a patch touching several files, a binary patch, or a body line
/// that is not ` `, `+`, `-` or `\` is rejected.
pub fn parse_patch(patch: &str) -> Result<ParsedPatch, EngineError> {
    let (mut body, mut body_cr) = (0usize, 0usize);
    let raw: Vec<&str> = patch.split('\n').collect();
    for (i, l) in raw.iter().enumerate() {
        // a line followed by `\ No newline` has no terminator to learn from
        let terminated = i + 1 < raw.len() && !raw[i + 1].starts_with('\\');
        if terminated
            && l.starts_with([' ', '+', '-'])
            && !l.starts_with("--- ")
            && !l.starts_with("+++ ")
        {
            body += 1;
            body_cr += usize::from(l.ends_with('\r'));
        }
    }
    let crlf = body_cr > 0 && body_cr * 2 >= body;
    let (lines, cr) = super::formats::split_cr(patch);
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut file_headers = 0usize;
    let mut git_headers = 0usize;
    let mut i = 0usize;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with("@@") {
            let (hunk, next, stop) = parse_hunk(&lines, &cr, i)?;
            hunks.push(hunk);
            i = next;
            if stop {
                break;
            }
            continue;
        }
        if l.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) {
            file_headers += 1;
            if file_headers > 1 {
                return Err(err(i + 1, "the patch touches more than one file"));
            }
            i += 2;
            continue;
        }
        if l.starts_with("diff --git ") {
            git_headers += 1;
            if git_headers > 1 {
                return Err(err(i + 1, "the patch touches more than one file"));
            }
        }
        if l.starts_with("Binary files ") || l == "GIT binary patch" {
            return Err(err(i + 1, "binary patches are not supported"));
        }
        if !hunks.is_empty() && !l.trim().is_empty() && !is_git_header(l) {
            return Err(err(i + 1, format!("unexpected line after a hunk: {l:?}")));
        }
        // Anything before the first hunk (mail headers, commit message, `diff --git`, `index`,
        // mode lines) is preamble and ignored.
        i += 1;
    }
    if hunks.is_empty() {
        return Err(err(0, "no `@@ -a,b +c,d @@` hunk found"));
    }
    Ok(ParsedPatch { hunks, crlf })
}

fn is_git_header(l: &str) -> bool {
    const PREFIXES: [&str; 12] = [
        "diff --git ",
        "index ",
        "old mode ",
        "new mode ",
        "new file mode ",
        "deleted file mode ",
        "similarity index ",
        "dissimilarity index ",
        "rename from ",
        "rename to ",
        "copy from ",
        "copy to ",
    ];
    PREFIXES.iter().any(|p| l.starts_with(p))
}

/// `@@ -a[,b] +c[,d] @@[ section]`
fn parse_header(l: &str, at: usize) -> Result<(usize, usize, usize, usize), EngineError> {
    let bad = || err(at, format!("malformed hunk header {l:?}"));
    let rest = l.strip_prefix("@@ ").ok_or_else(bad)?;
    let end = rest.find(" @@").ok_or_else(bad)?;
    let mut parts = rest[..end].split_ascii_whitespace();
    let old = parts
        .next()
        .and_then(|p| p.strip_prefix('-'))
        .ok_or_else(bad)?;
    let new = parts
        .next()
        .and_then(|p| p.strip_prefix('+'))
        .ok_or_else(bad)?;
    if parts.next().is_some() {
        return Err(bad());
    }
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old).ok_or_else(bad)?;
    let (c, d) = range(new).ok_or_else(bad)?;
    Ok((a, b, c, d))
}

fn is_body_like(l: &str) -> bool {
    l.starts_with([' ', '+', '-', '\\'])
}

/// Parse the hunk whose header is `lines[at]`; returns it, the index of the next unread line,
/// and whether the patch ends here (a `-- ` mail signature).
fn parse_hunk(lines: &[&str], cr: &[bool], at: usize) -> Result<(Hunk, usize, bool), EngineError> {
    let header = lines[at];
    let (old_start, old_count, new_start, new_count) = parse_header(header, at + 1)?;
    let mut hunk = Hunk {
        header: header.to_owned(),
        old_start,
        old_count,
        new_start,
        new_count,
        lines: Vec::new(),
        old_no_newline: false,
        new_no_newline: false,
        crlf: Vec::new(),
        at_eof: false,
    };
    let (mut old_seen, mut new_seen) = (0usize, 0usize);
    let mut i = at + 1;
    let mut stop = false;
    while i < lines.len() {
        let l = lines[i];
        let need_more = old_seen < old_count || new_seen < new_count;
        if l.starts_with("@@") || l.starts_with("diff ") {
            break;
        }
        if l.is_empty() {
            // An empty line is a context line whose leading space was stripped — unless only
            // blank lines, a new hunk or a new file follow.
            let next = lines[i..]
                .iter()
                .position(|n| !n.is_empty())
                .map(|p| lines[i + p]);
            match next {
                Some(n) if (need_more || !n.starts_with("--- ")) && is_body_like(n) => {
                    hunk.lines.push(HunkLine::Context(String::new()));
                    hunk.crlf.push(cr[i]);
                    old_seen += 1;
                    new_seen += 1;
                    i += 1;
                    continue;
                }
                _ => break,
            }
        }
        if !need_more {
            if l.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")) {
                break;
            }
            if l == "-- " {
                stop = true;
                break;
            }
        }
        let tag = l.chars().next().unwrap_or(' ');
        let text = l.get(tag.len_utf8()..).unwrap_or_default();
        match tag {
            ' ' => {
                hunk.lines.push(HunkLine::Context(text.to_owned()));
                hunk.crlf.push(cr[i]);
                old_seen += 1;
                new_seen += 1;
            }
            '-' => {
                hunk.lines.push(HunkLine::Remove(text.to_owned()));
                hunk.crlf.push(cr[i]);
                old_seen += 1;
            }
            '+' => {
                hunk.lines.push(HunkLine::Add(text.to_owned()));
                hunk.crlf.push(cr[i]);
                new_seen += 1;
            }
            '\\' => match hunk.lines.last() {
                Some(HunkLine::Context(_)) => {
                    hunk.old_no_newline = true;
                    hunk.new_no_newline = true;
                }
                Some(HunkLine::Remove(_)) => hunk.old_no_newline = true,
                Some(HunkLine::Add(_)) => hunk.new_no_newline = true,
                None => {
                    return Err(err(
                        i + 1,
                        "`\\ No newline at end of file` before any hunk line",
                    ));
                }
            },
            _ => {
                if need_more || is_git_header(l) {
                    if is_git_header(l) {
                        break;
                    }
                    return Err(err(
                        i + 1,
                        format!("hunk line must start with ' ', '+', '-' or '\\': {l:?}"),
                    ));
                }
                break;
            }
        }
        i += 1;
    }
    if hunk.lines.is_empty() {
        return Err(err(at + 1, format!("hunk {header:?} has no lines")));
    }
    Ok((hunk, i, stop))
}
