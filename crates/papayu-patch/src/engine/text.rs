//! A file as lines with their own terminators, rendered back byte for byte.

use std::borrow::Cow;

use super::{EngineError, EngineOptions};

const BOM: &str = "\u{feff}";

/// A line terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    /// No terminator (only possible on the last line).
    None,
    Lf,
    CrLf,
}

impl Eol {
    fn as_str(self) -> &'static str {
        match self {
            Self::None => "",
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
        }
    }
}

/// One line of a file: its text (without terminator) and its own terminator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    pub(crate) text: Cow<'a, str>,
    /// `None` for lines the engine created: they take the file's dominant EOL when rendered.
    pub(crate) eol: Option<Eol>,
}

impl<'a> Line<'a> {
    pub(crate) fn new(text: impl Into<Cow<'a, str>>) -> Self {
        Self {
            text: text.into(),
            eol: None,
        }
    }
}

/// A UTF-8 text file split into lines.
#[derive(Debug, Clone)]
pub(crate) struct Doc<'a> {
    pub(crate) bom: bool,
    pub(crate) lines: Vec<Line<'a>>,
    /// The EOL used for new lines: the majority terminator (LF when there is none).
    pub(crate) dominant: Eol,
    pub(crate) final_newline: bool,
}

/// The comparison key of a line: its text without a trailing CR.
pub(crate) fn key(s: &str) -> &str {
    s.strip_suffix('\r').unwrap_or(s)
}

impl<'a> Doc<'a> {
    /// Split raw bytes; fails with `ERR_NON_UTF8_FILE` when they are not UTF-8.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, EngineError> {
        let text = std::str::from_utf8(bytes).map_err(|e| EngineError::NonUtf8 {
            offset: e.valid_up_to(),
        })?;
        Ok(Self::from_str(text))
    }

    pub(crate) fn from_str(text: &'a str) -> Self {
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let mut lines = Vec::new();
        let (mut lf, mut crlf) = (0usize, 0usize);
        let mut rest = body;
        while !rest.is_empty() {
            match rest.find('\n') {
                Some(i) => {
                    let (line, eol) = match rest[..i].strip_suffix('\r') {
                        Some(l) => {
                            crlf += 1;
                            (l, Eol::CrLf)
                        }
                        None => {
                            lf += 1;
                            (&rest[..i], Eol::Lf)
                        }
                    };
                    lines.push(Line {
                        text: Cow::Borrowed(line),
                        eol: Some(eol),
                    });
                    rest = &rest[i + 1..];
                }
                None => {
                    lines.push(Line {
                        text: Cow::Borrowed(rest),
                        eol: Some(Eol::None),
                    });
                    rest = "";
                }
            }
        }
        let final_newline = lines.last().is_none_or(|l| l.eol != Some(Eol::None));
        let dominant = if crlf > lf { Eol::CrLf } else { Eol::Lf };
        Self {
            bom,
            lines,
            dominant,
            final_newline,
        }
    }

    /// A file without any line terminator (empty, or one line) has no EOL style of its own:
    /// take the patch's.
    pub(crate) fn adopt_eol_if_none(&mut self, crlf: bool) {
        if crlf && self.lines.iter().all(|l| l.eol == Some(Eol::None)) {
            self.dominant = Eol::CrLf;
        }
    }

    /// Render `lines` (this file's lines after editing) with this file's BOM, EOLs and
    /// final-newline state.
    pub(crate) fn render(&self, lines: &[Line<'_>], opts: &EngineOptions) -> Vec<u8> {
        self.render_with_final(lines, self.final_newline, opts)
    }

    pub(crate) fn render_with_final(
        &self,
        lines: &[Line<'_>],
        final_newline: bool,
        opts: &EngineOptions,
    ) -> Vec<u8> {
        let cap = lines.iter().map(|l| l.text.len() + 2).sum::<usize>() + 3;
        let mut out = String::with_capacity(cap);
        if self.bom {
            out.push_str(BOM);
        }
        let n = lines.len();
        for (i, line) in lines.iter().enumerate() {
            out.push_str(&line.text);
            let eol = if opts.normalize_eol_lf {
                Eol::Lf
            } else if i + 1 == n && !final_newline {
                Eol::None
            } else {
                match line.eol {
                    Some(Eol::None) | None => self.dominant,
                    Some(e) => e,
                }
            };
            out.push_str(eol.as_str());
        }
        out.into_bytes()
    }

    /// REPLACE_RANGE: lines `start..=end` (1-based) replaced by the lines of `content`.
    pub(crate) fn replace_range(
        &self,
        start: u64,
        end: u64,
        content: &'a str,
    ) -> Result<Vec<Line<'a>>, EngineError> {
        let n = self.lines.len();
        let invalid = || EngineError::RangeInvalid {
            start,
            end,
            lines: n,
        };
        let s = usize::try_from(start).map_err(|_| invalid())?;
        let e = usize::try_from(end).map_err(|_| invalid())?;
        if s == 0 || e < s || e > n {
            return Err(invalid());
        }
        let mut out = Vec::with_capacity(n);
        out.extend(self.lines[..s - 1].iter().cloned());
        out.extend(split_content(content).map(Line::new));
        out.extend(self.lines[e..].iter().cloned());
        Ok(out)
    }
}

/// The lines of model-provided content (a final newline ends the last line, it does not start an
/// empty one; CR before LF dropped).
pub(crate) fn split_content(content: &str) -> impl Iterator<Item = &str> {
    let body = content.strip_suffix('\n').unwrap_or(content);
    let empty = content.is_empty();
    body.split('\n').filter(move |_| !empty).map(key)
}

/// New file content (the model's text as given, or LF-normalised with a final newline).
/// Borrowed when there is nothing to normalise: a new file's bytes are then exactly `content`.
pub(crate) fn fresh<'a>(content: &'a str, opts: &EngineOptions) -> Cow<'a, [u8]> {
    if !opts.normalize_eol_lf {
        return Cow::Borrowed(content.as_bytes());
    }
    let doc = Doc::from_str(content);
    Cow::Owned(doc.render_with_final(&doc.lines, true, opts))
}

/// Whole-content replacement of an existing file, keeping its BOM, dominant EOL and final-newline
/// state. A file that is not UTF-8 is still replaced (its EOL/BOM are detected on bytes).
pub(crate) fn rewrite_like(old: &[u8], content: &str, opts: &EngineOptions) -> Vec<u8> {
    let bom = old.starts_with(BOM.as_bytes());
    let lf = old.iter().filter(|&&b| b == b'\n').count();
    let crlf = old.windows(2).filter(|w| w == b"\r\n").count();
    let dominant = if crlf > lf - crlf.min(lf) {
        Eol::CrLf
    } else {
        Eol::Lf
    };
    let body = if bom { &old[BOM.len()..] } else { old };
    let final_newline = body.is_empty() || body.ends_with(b"\n");
    let new = Doc::from_str(content.strip_prefix(BOM).unwrap_or(content));
    // An empty old file says nothing about the final newline: keep the content's own state.
    let final_newline = if body.is_empty() {
        new.final_newline
    } else {
        final_newline
    };
    let lines: Vec<Line<'_>> = new
        .lines
        .iter()
        .map(|l| Line::new(l.text.clone()))
        .collect();
    let target = Doc {
        bom,
        lines: Vec::new(),
        dominant,
        final_newline,
    };
    target.render(&lines, opts)
}
