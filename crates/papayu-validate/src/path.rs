//! Path rules (SPEC §4 "Paths") and the [`RelPath`] newtype.
//!
//! Every check runs on the raw string, before any `Path` type is involved: Rust's `Path` on
//! Linux treats `C:\x` or `a\..\b` as one harmless file name, which is exactly how a path that
//! is harmless here becomes an escape on Windows or in a zip.

use std::fmt;

use camino::Utf8Path;
use papayu_protocol::ErrorCode;

/// Longest accepted path, in bytes, after normalisation.
pub const MAX_PATH_BYTES: usize = 240;
/// Longest accepted path segment, in bytes.
pub const MAX_SEGMENT_BYTES: usize = 255;

/// Why a path string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct PathError {
    /// `ERR_INVALID_PATH` or `ERR_PATH_TOO_LONG`; `ERR_PROTECTED_PATH` when the path breaks a
    /// path rule *and* names a protected entry the way macOS or Windows would read it
    /// (`.g\u{200c}it/config`, `.git./config`, `.git::$INDEX_ALLOCATION/config`).
    pub code: ErrorCode,
    /// What is wrong, naming the offending part.
    pub message: String,
}

impl PathError {
    fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::InvalidPath,
            message: message.into(),
        }
    }
}

/// A validated, normalised, project-relative path.
///
/// Invariants: non-empty; `/`-separated; no empty, `.` or `..` segment; no leading `/`, drive,
/// UNC or `~`; no control, bidi-override, zero-width or lookalike-separator character; no `:`;
/// no segment ending in `.` or space; no Windows device name; at most 240 bytes with segments of
/// at most 255 bytes. The only way to get one is [`RelPath::parse`], so code that takes a
/// `RelPath` (papayu-patch's engine) cannot be handed an unchecked path.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(String);

impl RelPath {
    /// Check `raw` against every path rule and normalise it (`\` → `/`, one leading `./`
    /// stripped).
    ///
    /// ```
    /// use papayu_validate::RelPath;
    /// assert_eq!(RelPath::parse(r".\docs\guide.md").unwrap().as_str(), "docs/guide.md");
    /// assert!(RelPath::parse("../etc/passwd").is_err());
    /// assert!(RelPath::parse("notes/a..b.txt").is_ok());
    /// ```
    pub fn parse(raw: &str) -> Result<Self, PathError> {
        normalize(raw)
            .map(RelPath)
            .map_err(|e| protected_alias(raw).unwrap_or(e))
    }

    /// The normalised path, `/`-separated.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// As a `camino` path (relative).
    pub fn as_path(&self) -> &Utf8Path {
        Utf8Path::new(&self.0)
    }

    /// The `/`-separated segments.
    pub fn segments(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.0.split('/')
    }

    /// The last segment.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The extension of the last segment, without the dot (`None` for `Makefile` or `.gitignore`).
    pub fn extension(&self) -> Option<&str> {
        let name = self.file_name();
        match name.rfind('.') {
            Some(0) | None => None,
            Some(i) => Some(&name[i + 1..]),
        }
    }

    /// The parent directory, or `None` for a top-level entry.
    pub fn parent(&self) -> Option<RelPath> {
        self.0.rfind('/').map(|i| RelPath(self.0[..i].to_owned()))
    }

    /// Every proper ancestor, nearest first (`a/b/c` → `a/b`, `a`).
    pub fn ancestors(&self) -> impl Iterator<Item = &str> {
        self.0.match_indices('/').rev().map(|(i, _)| &self.0[..i])
    }

    /// Number of segments.
    pub fn depth(&self) -> usize {
        self.0.split('/').count()
    }

    /// Whether `self` is `dir` or lies inside it, comparing case-insensitively.
    pub fn is_within(&self, dir: &RelPath) -> bool {
        let (me, d) = (self.folded(), dir.folded());
        me == d || (me.starts_with(&d) && me.as_bytes().get(d.len()) == Some(&b'/'))
    }

    /// The case-folded form used to compare paths for conflicts (so `README.md` and
    /// `readme.md` collide, as they do on macOS and Windows).
    pub fn folded(&self) -> String {
        self.0.to_lowercase()
    }

    /// Join a further relative path onto this one, re-validating the result.
    pub fn join(&self, rest: &str) -> Result<RelPath, PathError> {
        RelPath::parse(&format!("{}/{rest}", self.0))
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RelPath({:?})", self.0)
    }
}

impl AsRef<str> for RelPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<Utf8Path> for RelPath {
    fn as_ref(&self) -> &Utf8Path {
        self.as_path()
    }
}

impl AsRef<std::path::Path> for RelPath {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&self.0)
    }
}

/// Characters that are not controls but still have no business in a file name a model writes:
/// bidi overrides (names that display differently from what they are), zero-width characters
/// and BOM (invisible differences), and separator lookalikes that Windows' "best fit" code-page
/// mapping turns into `/`, `\` or `:`.
fn forbidden_char_name(c: char) -> Option<&'static str> {
    match c {
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => Some("a bidirectional-text control character"),
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => Some("a zero-width character"),
        '\u{206A}'..='\u{206F}' => Some("a deprecated invisible format character"),
        '\u{2028}' | '\u{2029}' => Some("a line or paragraph separator"),
        '\u{FFFD}' => Some("the replacement character (the name was mangled by a lossy decode)"),
        '\u{FF0E}' | '\u{2024}' | '\u{FE52}' => Some("a dot lookalike that Windows can map to `.`"),
        '\u{FF0F}' | '\u{FF3C}' | '\u{2215}' | '\u{2216}' | '\u{29F5}' | '\u{29F8}'
        | '\u{29F9}' | '\u{FE68}' | '\u{2044}' | '\u{FF1A}' | '\u{A789}' | '\u{FE55}'
        | '\u{FE13}' => Some("a character that Windows can map to a path separator or ':'"),
        _ => None,
    }
}

/// Any `%XX` hex escape or IIS-style `%uXXXX` escape. Encoded dots, separators, NUL, double
/// encoding (`%252e`) and overlong UTF-8 (`%c0%ae`) are how traversal hides from naive checks
/// in URL-decoding tools downstream; listing only the dangerous ones invites a bypass through
/// the next encoding, and real project files are not named with escapes.
fn has_encoded_traversal(raw: &str) -> bool {
    let b = raw.as_bytes();
    let hex = |w: &[u8]| w.iter().all(u8::is_ascii_hexdigit);
    b.windows(3).any(|w| w[0] == b'%' && hex(&w[1..]))
        || b.windows(6)
            .any(|w| w[0] == b'%' && matches!(w[1], b'u' | b'U') && hex(&w[2..]))
}

const DEVICE_NAMES: &[&str] = &["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"];

fn is_device_name(segment: &str) -> bool {
    let stem = segment
        .split('.')
        .next()
        .unwrap_or(segment)
        .trim_end_matches(' ');
    let upper = stem.to_uppercase();
    if DEVICE_NAMES.contains(&upper.as_str()) {
        return true;
    }
    for prefix in ["COM", "LPT"] {
        if let Some(rest) = upper.strip_prefix(prefix) {
            let mut chars = rest.chars();
            if let (Some(c), None) = (chars.next(), chars.next())
                && (c.is_ascii_digit() || matches!(c, '\u{00B9}' | '\u{00B2}' | '\u{00B3}'))
            {
                return true;
            }
        }
    }
    false
}

/// A path that the path rules refuse may still be a protected entry under another file
/// system's reading of it (invisible code points HFS+ drops, NTFS's trailing dots and spaces
/// and `:` streams): then the refusal says so, with the stronger code.
fn protected_alias(raw: &str) -> Option<PathError> {
    let unified = raw.replace('\\', "/").to_lowercase();
    let aliased = unified.contains(|c| crate::policy::is_hfs_ignorable(c) || c == ':')
        || unified
            .split('/')
            .any(|s| s.ends_with(['.', ' ']) && s != "." && s != "..");
    if !aliased {
        return None;
    }
    let body = unified.trim_start_matches("./");
    let pattern = crate::policy::builtin_protected(body)?;
    Some(PathError {
        code: ErrorCode::ProtectedPath,
        message: format!(
            "`{}` names a protected entry (`{pattern}`) once macOS or Windows reads it; papayu never touches it",
            raw.escape_debug()
        ),
    })
}

fn normalize(raw: &str) -> Result<String, PathError> {
    if raw.trim().is_empty() {
        return Err(PathError::invalid("the path is empty"));
    }
    if let Some(c) = raw.chars().find(|c| c.is_control()) {
        return Err(PathError::invalid(format!(
            "the path contains the control character U+{:04X}; file names must be printable",
            u32::from(c)
        )));
    }
    if let Some((c, what)) = raw
        .chars()
        .find_map(|c| forbidden_char_name(c).map(|w| (c, w)))
    {
        return Err(PathError::invalid(format!(
            "the path contains U+{:04X}, {what}",
            u32::from(c)
        )));
    }
    let bytes = raw.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(PathError::invalid(format!(
            "`{}` starts with a drive letter; use a path relative to the project root",
            raw
        )));
    }
    if raw.starts_with("\\\\") || raw.starts_with("//") {
        return Err(PathError::invalid(
            "UNC and network paths (`\\\\server\\share`) are not allowed; use a path relative to the project root",
        ));
    }
    if raw.starts_with(['/', '\\']) {
        return Err(PathError::invalid(
            "absolute paths are not allowed; use a path relative to the project root",
        ));
    }
    if raw.contains(':') {
        return Err(PathError::invalid(
            "`:` is not allowed in a path (drive letters, NTFS alternate data streams)",
        ));
    }
    if has_encoded_traversal(raw) {
        return Err(PathError::invalid(
            "the path contains a percent-encoded escape (`%2e`, `%c0%af`, `%u002e`, …); write the real characters",
        ));
    }
    let unified = raw.replace('\\', "/");
    let body = unified.strip_prefix("./").unwrap_or(&unified);
    if body.is_empty() {
        return Err(PathError::invalid("the path names the project root itself"));
    }
    // Checked after `./` is stripped, so `./~` and `~` get the same answer (idempotence).
    if body.starts_with('~') {
        return Err(PathError::invalid(
            "`~` (home directory) paths are not allowed; use a path relative to the project root",
        ));
    }
    for segment in body.split('/') {
        match segment {
            "" => {
                return Err(PathError::invalid(
                    "the path has an empty segment (`//` or a trailing `/`)",
                ));
            }
            "." => {
                return Err(PathError::invalid(
                    "the path has a `.` segment; write it without `./`",
                ));
            }
            ".." => {
                return Err(PathError::invalid(
                    "`..` segments are not allowed: the path must stay inside the project",
                ));
            }
            s if s.ends_with('.') || s.ends_with(' ') => {
                return Err(PathError::invalid(format!(
                    "segment `{s}` ends in a dot or space, which Windows silently strips"
                )));
            }
            s if is_device_name(s) => {
                return Err(PathError::invalid(format!(
                    "`{s}` is a reserved Windows device name"
                )));
            }
            _ => {}
        }
    }
    if let Some(s) = body.split('/').find(|s| s.len() > MAX_SEGMENT_BYTES) {
        return Err(PathError {
            code: ErrorCode::PathTooLong,
            message: format!(
                "a path segment is {} bytes long; the limit is {MAX_SEGMENT_BYTES}",
                s.len()
            ),
        });
    }
    if body.len() > MAX_PATH_BYTES {
        return Err(PathError {
            code: ErrorCode::PathTooLong,
            message: format!(
                "the path is {} bytes long; the limit is {MAX_PATH_BYTES}",
                body.len()
            ),
        });
    }
    Ok(body.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_separators_and_leading_dot_slash() {
        assert_eq!(
            RelPath::parse(r"src\main.rs").unwrap().as_str(),
            "src/main.rs"
        );
        assert_eq!(
            RelPath::parse("./src/main.rs").unwrap().as_str(),
            "src/main.rs"
        );
        assert!(RelPath::parse("././src").is_err());
    }

    #[test]
    fn helpers() {
        let p = RelPath::parse("a/b/c.tar.gz").unwrap();
        assert_eq!(p.file_name(), "c.tar.gz");
        assert_eq!(p.extension(), Some("gz"));
        assert_eq!(p.parent().unwrap().as_str(), "a/b");
        assert_eq!(p.ancestors().collect::<Vec<_>>(), ["a/b", "a"]);
        assert!(p.is_within(&RelPath::parse("A").unwrap()));
        assert!(!p.is_within(&RelPath::parse("a/bb").unwrap()));
        assert_eq!(RelPath::parse(".gitignore").unwrap().extension(), None);
    }
}
