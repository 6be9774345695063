//! Content rules (SPEC §4 "Content"): pseudo-binary text and lazy-elision placeholders.

/// Whether a character counts as "control" for the pseudo-binary rule: any Unicode control
/// other than tab, line feed, carriage return and form feed, plus U+FFFD (the mark a lossy
/// decode leaves where bytes were not text).
fn is_binaryish(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{000C}')) || c == '\u{FFFD}'
}

/// Why text looks binary, if it does: a NUL anywhere, or more than 10 % of its characters
/// being control characters other than `\t \n \r \f` (U+FFFD counts as one). Non-ASCII text is ordinary text.
///
/// ```
/// use papayu_validate::pseudo_binary_reason;
/// assert!(pseudo_binary_reason("# Привет, 世界 🎉\n").is_none());
/// assert!(pseudo_binary_reason("a\0b").is_some());
/// ```
pub fn pseudo_binary_reason(text: &str) -> Option<String> {
    if let Some(i) = text.find('\0') {
        return Some(format!(
            "content holds a NUL byte at byte {i}; send text, not binary data"
        ));
    }
    let (mut total, mut control) = (0usize, 0usize);
    for c in text.chars() {
        total += 1;
        control += usize::from(is_binaryish(c));
    }
    (control * 10 > total).then(|| {
        format!("{control} of {total} characters are control characters or U+FFFD (over 10 %); send text, not binary data")
    })
}

/// Words that, next to an ellipsis in a comment, mean "I left code out".
const ELISION_WORDS: &[&str] = &[
    "rest of",
    "existing",
    "unchanged",
    "remain",
    "same as",
    "as before",
    "previous",
    "omitted",
    "omit ",
    "truncated",
    "snip",
    "code here",
    "other code",
    "other methods",
    "other functions",
    "not shown",
    "as is",
    "stays the same",
    "no changes",
];

/// The stricter subset used when the ellipsis only trails the comment (`// Loading existing
/// config...` is a real comment; `// rest of the code...` is not).
const TRAILING_ELISION_WORDS: &[&str] = &[
    "rest of the code",
    "rest of the file",
    "rest of code",
    "rest of file",
    "unchanged",
    "omitted for brevity",
    "existing code",
    "code remains",
    "same as before",
    "code here",
];

/// Comment phrases that are placeholders even without an ellipsis.
const ELISION_PHRASES: &[&str] = &[
    "rest of the code unchanged",
    "rest of the code remains",
    "rest of the code stays",
    "rest of the code is unchanged",
    "rest of the file unchanged",
    "rest of the file remains",
    "rest of the file is unchanged",
    "rest of the function unchanged",
    "rest of the implementation unchanged",
    "existing code",
    "existing code unchanged",
    "existing code here",
    "existing code remains",
    "existing code remains unchanged",
    "existing code stays the same",
    "existing implementation",
    "existing implementation unchanged",
    "keep existing code",
    "unchanged code",
    "code unchanged",
    "other code unchanged",
    "previous code unchanged",
    "same as before",
];

/// Strip one line comment or block-comment opener this rule understands. Doc comments (`///`,
/// `//!`, `/**`) are left alone: `/// ...` in a doc example is a legitimate elision.
fn comment_body(line: &str, hash_comments: bool) -> Option<&str> {
    let t = line.trim();
    if t.starts_with("///") || t.starts_with("//!") || t.starts_with("/**") {
        return None;
    }
    let openers: &[&str] = if hash_comments {
        &["//", "/*", "<!--", "--", "#", ";", "{/*"]
    } else {
        &["<!--"]
    };
    openers.iter().find_map(|o| t.strip_prefix(o))
}

fn has_ellipsis(s: &str) -> bool {
    s.contains("...") || s.contains('…')
}

/// The first lazy-elision placeholder line in `text`, as `(1-based line, line)`.
///
/// A placeholder is a line that is nothing but a comment (`//`, `#`, `/* */`, `<!-- -->`, `--`,
/// `;`) whose text is only an ellipsis (`// ...`), an ellipsis next to an elision word
/// (`# ... existing code ...`, `/* ... */ unchanged`), or a standard elision phrase
/// (`// rest of the code unchanged`). Code that merely contains `...` — JavaScript spread,
/// Python `...` bodies, variadics, prose — is not a comment line and is never flagged. In
/// documentation formats (`md`, `rst`, `txt`, …) only HTML comments count, since `#` is a
/// heading there.
///
/// ```
/// use papayu_validate::find_placeholder;
/// assert!(find_placeholder("fn a() {}\n// ... rest of the code unchanged ...\n", "rs").is_some());
/// assert!(find_placeholder("const f = (...args) => g(...args);\n", "js").is_none());
/// assert!(find_placeholder("def f(): ...\n", "py").is_none());
/// ```
pub fn find_placeholder<'t>(text: &'t str, extension: &str) -> Option<(usize, &'t str)> {
    let prose = matches!(
        extension.to_ascii_lowercase().as_str(),
        "md" | "markdown"
            | "mdx"
            | "rst"
            | "txt"
            | "adoc"
            | "asciidoc"
            | "org"
            | "tex"
            | "html"
            | "htm"
            | "xml"
            | "svg"
    );
    text.lines().enumerate().find_map(|(i, line)| {
        let body = comment_body(line, !prose)?;
        let cleaned = body
            .replace("*/", " ")
            .replace("-->", " ")
            .replace("*}", " ");
        let lower = cleaned
            .trim()
            .trim_end_matches(['.', '…', ' ', ':', '-'])
            .to_lowercase();
        let stripped: String = cleaned.chars().filter(|c| !c.is_whitespace()).collect();
        let only_dots = !stripped.is_empty()
            && stripped.chars().all(|c| c == '.' || c == '…')
            && has_ellipsis(&stripped);
        let padded = format!("{} ", cleaned.trim().to_lowercase());
        let leading = padded.starts_with("...") || padded.starts_with('…');
        let word = (leading && ELISION_WORDS.iter().any(|w| padded.contains(w)))
            || (has_ellipsis(&padded) && TRAILING_ELISION_WORDS.iter().any(|w| padded.contains(w)));
        let lower = lower.trim_start_matches(['.', '…', ' ']);
        let phrase = ELISION_PHRASES.contains(&lower);
        (only_dots || word || phrase).then_some((i + 1, line))
    })
}
