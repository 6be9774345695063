//! papayu's own small edits of the code the failing tests exercise (D81). A small model often
//! finds the function a bug is in and then copies it unchanged, or rewrites the wrong line; the
//! commonest bugs of that kind are one token wrong — a comparison the wrong way round, `+` for
//! `-`, one variable or field for another, a number off by one. When the model's first attempt
//! did not verify, papayu tries such small edits ("mutants") of the definitions the goal
//! names, that the model's rejected changes touched, and that the failing tests call (then what
//! those call), each tested as its own transaction, and keeps one only when the project's tests
//! verify it, like any change. This room finds the definitions and writes the mutants; it reads
//! the project's files and writes nothing.
//!
//! One body line (strings and comments aside) changes in one small way: a comparison into its
//! neighbours (`<` into `<=` and `>`, `==` into `!=`, …), `+=`/`-=` and `*=`/`/=` swapped, the
//! target of a compound assignment or an operand of a comparison or of arithmetic replaced by
//! another name of its kind (a field `self.a`/`this.a` by another field the file uses, a plain
//! name by another the definition uses), `+`/`-` and `*`/`/` swapped, `and`/`or`, `&&`/`||`,
//! `min`/`max`, a negation (`not`, a prefix `!`) dropped, `true`/`false`, an integer one up or
//! down — in that order across all definitions, the definitions in the order above (D81); then
//! (D82) text compared or cut out where numbers were meant (`Number(a[i]) < Number(b[i])`,
//! `int(…)`; `.slice(…)`/`.split(…)` → `….map(Number)`, `list(map(int, …))`), a division
//! rounded up (`a.div_ceil(b)`, `-(-a // b)`, `floor` ↔ `ceil`), and a condition guarded by a
//! flag the definition sets (`if c == '"' && !escaped`). The edits of lines the model's rejected
//! changes touched come before all others, in the same order; within each of those two tiers,
//! the edits that bring in a name the goal speaks of ("escaped quote" → `escaped`) first. The definitions a test reaches are
//! found through the tests' own helpers (`kinds(text)` → `tokenize(text)`) and through calls,
//! breadth first. The top-level constants they read (`_INLINE_COMMENT = re.compile(…)`,
//! `MAX_PAGE = 50`) are sites too, after them, and a pattern among them or in a body — a string
//! given to `re.compile(`, `Regex::new(`, `RegExp(`, or a `/…/` literal — gains a character the
//! goal quotes (`'; comments'`: `\s#.*$` → `\s[#;].*$`), first of its tier (D84).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use camino::Utf8Path;
use serde_json::json;

use super::rename::{declares, is_word, read};

/// Names of a different kind than a variable: keywords of the languages read.
const KEYWORDS: &[&str] = &[
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "crate",
    "def",
    "default",
    "del",
    "delete",
    "do",
    "elif",
    "else",
    "enum",
    "except",
    "export",
    "extends",
    "false",
    "finally",
    "fn",
    "for",
    "from",
    "function",
    "global",
    "if",
    "impl",
    "import",
    "in",
    "instanceof",
    "is",
    "lambda",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "new",
    "None",
    "nonlocal",
    "not",
    "null",
    "of",
    "or",
    "pass",
    "pub",
    "raise",
    "ref",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "super",
    "switch",
    "this",
    "throw",
    "trait",
    "true",
    "True",
    "False",
    "try",
    "type",
    "typeof",
    "undefined",
    "unsafe",
    "use",
    "var",
    "void",
    "where",
    "while",
    "with",
    "yield",
];

/// Calls in a test that are the test framework's, not the project's.
const FRAMEWORK: &[&str] = &[
    "assert",
    "assertEqual",
    "assertEquals",
    "assertTrue",
    "assertFalse",
    "assertRaises",
    "assertIn",
    "assertIsNone",
    "assertAlmostEqual",
    "assert_eq",
    "assert_ne",
    "deepEqual",
    "deepStrictEqual",
    "strictEqual",
    "equal",
    "ok",
    "throws",
    "expect",
    "toBe",
    "toEqual",
    "test",
    "it",
    "describe",
    "unwrap",
    "expect_err",
    "unwrap_err",
    "to_owned",
    "to_string",
    "into",
    "clone",
    "len",
    "push",
    "map",
    "collect",
    "iter",
    "print",
    "println",
    "format",
    "vec",
    "Some",
    "Ok",
    "Err",
    "list",
    "dict",
    "set",
    "str",
    "int",
    "range",
    "require",
];

/// At most this many other names replace one operand.
const MAX_SWAPS: usize = 6;
/// At most this many definitions are read for mutants (half at most from touched lines).
const MAX_SITES: usize = 16;
/// A file whose lines a rejected change touched more often than this was rewritten, not edited.
const MAX_TOUCHED: usize = 40;
/// Top-level constants the sites read, mutated after them (a few lines each).
const MAX_CONSTANTS: usize = 4;
/// A constant's statement longer than this many lines is a table, not a setting.
const MAX_CONSTANT_LINES: usize = 40;

/// A definition whose body is mutated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    /// Its file.
    pub(crate) path: String,
    /// Its name.
    pub(crate) name: String,
    /// 0-based line of its signature.
    start: usize,
    /// 0-based end (exclusive) of its block.
    end: usize,
    /// 1-based lines of it the model's rejected changes touched: its edits there come first.
    touched: Vec<usize>,
    /// A top-level constant's statement (`_COMMENT = re.compile(…)`), whose own lines are
    /// edited; a definition's signature line is not.
    whole: bool,
}

impl Site {
    /// 0-based first line its edits may change: the body's, or a constant's own.
    fn first(&self) -> usize {
        if self.whole {
            self.start
        } else {
            self.start + 1
        }
    }
}

/// One small edit of one line of a definition's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mutant {
    /// The file.
    pub(crate) path: String,
    /// The definition.
    pub(crate) name: String,
    /// 1-based line.
    pub(crate) line: usize,
    /// The line as it is (trimmed).
    pub(crate) from: String,
    /// The line as the mutant has it (trimmed).
    pub(crate) to: String,
    /// The plan: one UPDATE_FILE of the file.
    pub(crate) document: String,
}

impl Mutant {
    /// Words for the trace: `roman.py:31 (from_roman): `a > b` → `a < b``.
    pub(crate) fn describe(&self) -> String {
        format!(
            "papayu's own edit of {}:{} ({}): `{}` -> `{}`",
            self.path, self.line, self.name, self.from, self.to
        )
    }
}

/// The language family of a source file: how its comments and strings are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Rust,
    /// JavaScript, TypeScript, Go: `//` comments, backtick strings.
    Curly,
}

fn lang(path: &str) -> Option<Lang> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    match ext {
        "py" => Some(Lang::Python),
        "rs" => Some(Lang::Rust),
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" | "go" => Some(Lang::Curly),
        _ => None,
    }
}

/// The definitions to mutate, in order: those `goal` names as code (a name followed by `(`,
/// holding `_`, in camelCase or in backticks), the ones enclosing the `touched` lines (path,
/// 1-based line) of changes the tests rejected, those the failing `tests` call, then what all of
/// those call; only in code files that are not tests (`is_test` says which are), at most
/// [`MAX_SITES`]. `users(name)` lists the project's files whose text holds `name`.
pub(crate) fn sites(
    root: &Utf8Path,
    goal: &str,
    tests: &[String],
    touched: &[(String, usize)],
    users: &dyn Fn(&str) -> Vec<String>,
    is_test: &dyn Fn(&str, &str) -> bool,
) -> Vec<Site> {
    let mut out: Vec<Site> = Vec::new();
    let push = |out: &mut Vec<Site>, s: Site| {
        if !out.iter().any(|o| o.path == s.path && o.start == s.start) {
            out.push(s);
        }
    };
    // Each file is read once however many names lead to it.
    let files: RefCell<BTreeMap<String, Option<Rc<str>>>> = RefCell::new(BTreeMap::new());
    let text_of = |path: &str| -> Option<Rc<str>> {
        files
            .borrow_mut()
            .entry(path.to_owned())
            .or_insert_with(|| read(root, path).map(Rc::from))
            .clone()
    };
    let defs = |name: &str| -> Vec<Site> {
        let mut found = Vec::new();
        for path in users(name) {
            if lang(&path).is_none() {
                continue;
            }
            let Some(text) = text_of(&path) else {
                continue;
            };
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                if declares(l, name)
                    && !is_test(&path, &text[..offset_of(&text, i)])
                    && let Some(end) = block_end(&lines, i)
                {
                    found.push(Site {
                        path: path.clone(),
                        name: name.to_owned(),
                        start: i,
                        end,
                        touched: Vec::new(),
                        whole: false,
                    });
                }
            }
        }
        found
    };
    for name in code_names(goal) {
        for s in defs(&name) {
            push(&mut out, s);
        }
    }
    // A change that rewrote most of a file says nothing about where the bug is: its lines are
    // no lead, and they must not crowd out what the tests reach.
    let touched: Vec<(String, usize)> = touched
        .iter()
        .filter(|(p, _)| touched.iter().filter(|(q, _)| q == p).count() <= MAX_TOUCHED)
        .cloned()
        .collect();
    let before = out.len();
    for (path, line) in &touched {
        if out.len() - before >= MAX_SITES / 2 {
            break;
        }
        if let Some(text) = text_of(path)
            && let Some(s) = enclosing(path, &text, *line, is_test)
        {
            push(&mut out, s);
        }
    }
    for test in tests {
        for body in test_bodies(root, test, users, is_test) {
            for callee in callees(&body) {
                let found = defs(&callee);
                if found.is_empty() {
                    // A helper of the tests' own (`kinds(text)` → `tokenize(text)`): what it calls.
                    for helper in test_bodies(root, &callee, users, is_test) {
                        for c in callees(&helper) {
                            for s in defs(&c) {
                                push(&mut out, s);
                            }
                        }
                    }
                }
                for s in found {
                    push(&mut out, s);
                }
            }
        }
    }
    // What those call, and what that calls, breadth first.
    let mut k = 0;
    while k < out.len() && out.len() < MAX_SITES {
        let s = out[k].clone();
        k += 1;
        let Some(text) = text_of(&s.path) else {
            continue;
        };
        let body: String = text
            .lines()
            .skip(s.start + 1)
            .take(s.end.saturating_sub(s.start + 1))
            .collect::<Vec<_>>()
            .join("\n");
        for callee in callees(&body) {
            for d in defs(&callee) {
                push(&mut out, d);
            }
        }
    }
    out.truncate(MAX_SITES);
    // The top-level constants those read (`_INLINE_COMMENT = re.compile(…)`, `MAX_PAGE = 50`):
    // a pattern or a limit is code too. Those whose names speak of the goal first, then in the
    // sites' order.
    let words = goal_words(goal);
    let mut constants: Vec<Site> = Vec::new();
    // Each file's constants, (name, start, end), read once.
    let mut declared: BTreeMap<String, Vec<(String, usize, usize)>> = BTreeMap::new();
    for s in &out {
        let (Some(text), Some(l)) = (text_of(&s.path), lang(&s.path)) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let here = declared.entry(s.path.clone()).or_insert_with(|| {
            (0..lines.len())
                .filter_map(|i| constant_at(&lines, i, l).map(|(n, end)| (n.to_owned(), i, end)))
                .collect()
        });
        let body = lines.get(s.first()..s.end).unwrap_or_default();
        for name in read_names(body, l) {
            let found = here
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, start, end)| (*start, *end));
            if let Some((start, end)) = found
                && !out
                    .iter()
                    .chain(&constants)
                    .any(|o| o.path == s.path && o.start == start)
                && !is_test(&s.path, &text[..offset_of(&text, start)])
            {
                constants.push(Site {
                    path: s.path.clone(),
                    name,
                    start,
                    end,
                    touched: Vec::new(),
                    whole: true,
                });
            }
        }
    }
    constants.sort_by_key(|c| !speaks_of(&words, &c.name));
    out.extend(constants.into_iter().take(MAX_CONSTANTS));
    for s in &mut out {
        s.touched = touched
            .iter()
            .filter(|(p, l)| *p == s.path && *l + usize::from(s.whole) > s.start && *l <= s.end)
            .map(|(_, l)| *l)
            .collect();
    }
    out
}

/// The byte offset of 0-based line `line` in `text`.
fn offset_of(text: &str, line: usize) -> usize {
    text.split_inclusive('\n').take(line).map(str::len).sum()
}

/// The end (exclusive) of the block opened at `lines[at]`: its braces balanced again (code
/// only; a `;` before the first `{` makes it a statement, not a block), or the last line
/// indented deeper than it for a Python block.
fn block_end(lines: &[&str], at: usize) -> Option<usize> {
    let curly = !lines[at].trim_end().ends_with(':');
    if curly {
        let mut depth: i64 = 0;
        let mut opened = false;
        for (k, l) in lines.iter().enumerate().skip(at) {
            for ch in code_of(l, Lang::Curly).chars() {
                match ch {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    ';' if !opened => return None,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                return (k > at).then_some(k + 1);
            }
            if k > at + 400 {
                return None;
            }
        }
        return None;
    }
    let indent = |l: &str| l.len() - l.trim_start().len();
    let base = indent(lines[at]);
    let mut end = at + 1;
    for (k, l) in lines.iter().enumerate().skip(at + 1) {
        if l.trim().is_empty() {
            continue;
        }
        if indent(l) <= base {
            break;
        }
        end = k + 1;
    }
    (end > at + 1).then_some(end)
}

/// Words common in any sentence, which name nothing in code.
const PLAIN: &[&str] = &[
    "the", "and", "for", "not", "but", "with", "when", "should", "that", "this", "from", "into",
    "instead", "also", "make", "does", "doesn", "isn", "fails", "fail", "returns", "return",
    "says", "gives", "give", "like", "than", "then", "only", "each", "every", "after", "before",
];

/// The words of `goal` (lower case, three letters or more, common words aside).
fn goal_words(goal: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in goal.split(|c: char| !c.is_alphabetic()) {
        let w = w.to_lowercase();
        if w.chars().count() >= 3 && !PLAIN.contains(&w.as_str()) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Whether identifier `name` (its `_`/camelCase parts) speaks of one of `words`: a part equal
/// to one, or one a prefix of the other with four letters or more (`escape`, `escaped`).
fn speaks_of(words: &[String], name: &str) -> bool {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if (c == '_' || c.is_uppercase() && prev_lower) && !cur.is_empty() {
            parts.push(std::mem::take(&mut cur));
        }
        if c != '_' {
            cur.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase();
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts.iter().any(|p| {
        words.iter().any(|w| {
            let (short, long) = if p.len() <= w.len() { (p, w) } else { (w, p) };
            p == w || short.len() >= 4 && long.starts_with(short.as_str())
        })
    })
}

/// Names `goal` writes as code: followed by `(`, holding `_`, in camelCase, in backticks, or
/// either side of `::`.
fn code_names(goal: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<(usize, char)> = goal.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, ch) = chars[i];
        if !(ch.is_alphabetic() || ch == '_') {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && is_word(chars[j].1) {
            j += 1;
        }
        let end = chars.get(j).map_or(goal.len(), |c| c.0);
        let word = &goal[start..end];
        let before = goal[..start].chars().next_back();
        let after = goal[end..].chars().next();
        let camel = word
            .chars()
            .zip(word.chars().skip(1))
            .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
        let code = after == Some('(')
            || word.contains('_')
            || camel
            || before == Some('`')
            || goal[..start].ends_with("::")
            || goal[end..].starts_with("::");
        if code && word.chars().count() >= 2 && !out.iter().any(|o| o == word) {
            out.push(word.to_owned());
        }
        i = j;
    }
    out
}

/// The definition enclosing 1-based `line` of `path` (its text `text`), when it is code and
/// not test code.
fn enclosing(
    path: &str,
    text: &str,
    line: usize,
    is_test: &dyn Fn(&str, &str) -> bool,
) -> Option<Site> {
    let l = lang(path)?;
    let lines: Vec<&str> = text.lines().collect();
    let at = line.checked_sub(1)?.min(lines.len().checked_sub(1)?);
    // A line of a top-level constant's statement: the constant.
    for i in (at.saturating_sub(MAX_CONSTANT_LINES)..=at).rev() {
        if let Some((name, end)) = constant_at(&lines, i, l) {
            if end > at && !is_test(path, &text[..offset_of(text, i)]) {
                return Some(Site {
                    path: path.to_owned(),
                    name: name.to_owned(),
                    start: i,
                    end,
                    touched: Vec::new(),
                    whole: true,
                });
            }
            break;
        }
    }
    for i in (0..=at).rev() {
        let Some(name) = super::fragment::defined_name(lines[i]) else {
            continue;
        };
        if !declares(lines[i], name) {
            continue;
        }
        if let Some(end) = block_end(&lines, i)
            && end > at
            && !is_test(path, &text[..offset_of(text, i)])
        {
            return Some(Site {
                path: path.to_owned(),
                name: name.to_owned(),
                start: i,
                end,
                touched: Vec::new(),
                whole: false,
            });
        }
    }
    None
}

/// The bodies of the test named `test` (a runner's id: `test_x (mod.Class.test_x)`,
/// `tests::x`, `suite > title`), found in test code: a definition of its last name, or a
/// block opened on a line that quotes its title.
fn test_bodies(
    root: &Utf8Path,
    test: &str,
    users: &dyn Fn(&str) -> Vec<String>,
    is_test: &dyn Fn(&str, &str) -> bool,
) -> Vec<String> {
    let title = test.rsplit(" > ").next().unwrap_or(test).trim();
    let name = test
        .split(|c: char| !is_word(c))
        .rfind(|w| !w.is_empty() && w.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .unwrap_or_default();
    let look = |needle: &str, quoted: bool| {
        let mut out = Vec::new();
        for path in users(needle) {
            let Some(text) = read(root, &path) else {
                continue;
            };
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let here = if quoted {
                    ['"', '\'', '`']
                        .iter()
                        .any(|q| l.contains(&format!("{q}{needle}{q}")))
                } else {
                    declares(l, needle)
                };
                if here
                    && is_test(&path, &text[..offset_of(&text, i)])
                    && let Some(end) = block_end(&lines, i)
                {
                    out.push(lines[i + 1..end].join("\n"));
                }
            }
        }
        out
    };
    let mut out = if title.contains(' ') {
        look(title, true)
    } else {
        Vec::new()
    };
    if !name.is_empty() && out.is_empty() {
        out = look(name, false);
    }
    out
}

/// The names `body` calls (`name(`, `.name(`), framework calls and keywords aside, in order.
fn callees(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in body.lines() {
        let toks = lex(line, Lang::Curly);
        for (k, t) in toks.iter().enumerate() {
            if t.kind == Kind::Name
                && toks.get(k + 1).is_some_and(|n| n.text == "(")
                && !KEYWORDS.contains(&t.text)
                && !FRAMEWORK.contains(&t.text)
                && !t.text.starts_with("assert")
                && !out.iter().any(|o| o == t.text)
            {
                out.push(t.text.to_owned());
            }
        }
    }
    out
}

/// The names `body` reads that may be top-level constants: not called, not after `.`/`::`,
/// no keyword, in order of first use.
fn read_names(body: &[&str], lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in body {
        let toks = lex(line, lang);
        for (k, t) in toks.iter().enumerate() {
            let after_dot = k > 0 && matches!(toks[k - 1].text, "." | "::");
            let called = toks.get(k + 1).is_some_and(|n| matches!(n.text, "(" | "!"));
            if t.kind == Kind::Name
                && !after_dot
                && !called
                && !KEYWORDS.contains(&t.text)
                && !out.iter().any(|o| o == t.text)
            {
                out.push(t.text.to_owned());
            }
        }
    }
    out
}

/// The name the top-level line `lines[at]` assigns a constant — `NAME = …`, `NAME: T = …`,
/// `export const NAME = …`, `var NAME = …`, `pub(crate) const NAME: T = …`, `static NAME: T =
/// …` — and the end (exclusive) of its statement: its brackets balanced again, within
/// [`MAX_CONSTANT_LINES`].
fn constant_at<'a>(lines: &[&'a str], at: usize, lang: Lang) -> Option<(&'a str, usize)> {
    let line = *lines.get(at)?;
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let toks = lex(line, lang);
    let mut k = 0;
    let mut declared = false;
    while let Some(t) = toks.get(k) {
        match t.text {
            "export" | "mut" => k += 1,
            "const" | "let" | "var" | "static" => {
                declared = true;
                k += 1;
            }
            "pub" => {
                k += 1;
                if toks.get(k).is_some_and(|t| t.text == "(") {
                    while toks.get(k).is_some_and(|t| t.text != ")") {
                        k += 1;
                    }
                    k += 1;
                }
            }
            _ => break,
        }
    }
    let name = toks.get(k).filter(|t| t.kind == Kind::Name)?;
    if KEYWORDS.contains(&name.text) || (lang != Lang::Python && !declared) {
        return None;
    }
    // `NAME = …`, or a type first (`NAME: T = …`); `==` is no assignment.
    let next = toks.get(k + 1)?.text;
    let assigns = next == "=" || next == ":" && toks[k + 2..].iter().any(|t| t.text == "=");
    if !assigns {
        return None;
    }
    let mut depth: i64 = 0;
    for (j, l) in lines.iter().enumerate().skip(at).take(MAX_CONSTANT_LINES) {
        for t in lex(l, lang) {
            match t.text {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                _ => {}
            }
        }
        if depth <= 0 {
            return Some((name.text, j + 1));
        }
    }
    None
}

/// The punctuation `goal` quotes (`'; comments'`, `"a,b"`, `` `x|y` ``), at most four
/// characters, in order: what a pattern may be missing. An apostrophe inside a word opens no
/// quote; quotes, backslashes and `]` are left out (they would need escaping in a pattern).
fn quoted_chars(goal: &str) -> Vec<char> {
    let chars: Vec<char> = goal.chars().collect();
    let mut out: Vec<char> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let q = chars[i];
        let opens = matches!(q, '\'' | '"' | '`')
            && (q != '\'' || i == 0 || !chars[i - 1].is_alphanumeric());
        let close = opens
            .then(|| chars[i + 1..].iter().position(|c| *c == q))
            .flatten();
        let Some(len) = close.filter(|len| *len > 0 && *len <= 60) else {
            i += 1;
            continue;
        };
        for &c in &chars[i + 1..i + 1 + len] {
            if c.is_ascii_punctuation()
                && !matches!(c, '\'' | '"' | '`' | '\\' | ']')
                && !out.contains(&c)
                && out.len() < 4
            {
                out.push(c);
            }
        }
        i += len + 2;
    }
    out
}

/// Regular-expression syntax: a pattern's character that means something other than itself.
const REGEX_META: &str = ".^$*+?()[]{}|\\/";

/// Class 9 (D84): each pattern on the line — a string literal given to `re.compile(`/`re.sub(`
/// …, `Regex::new(`, `RegExp(`, or a JavaScript `/…/` literal — that lacks one of the `quoted`
/// characters gets it: in each of its character classes (`[#]` → `[#;]`), and beside each of
/// its literal punctuation characters (`#` → `[#;]`, `\.` → `[\.;]`).
fn patterns(
    line: &str,
    toks: &[Tok<'_>],
    lang: Lang,
    quoted: &[char],
) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    if quoted.is_empty() {
        return out;
    }
    for (base, text, delim, raw) in pattern_texts(line, toks, lang) {
        quoted_into(&mut out, base, text, delim, raw, quoted);
    }
    out
}

/// Class 10 (D90): a pattern that is one atom — a character, an escape (`\s`), a character
/// class — and so matches one where a run was meant (`r"-"` for `r"-+"`) gets `+`.
fn runs(line: &str, toks: &[Tok<'_>], lang: Lang) -> Vec<(usize, usize, String)> {
    pattern_texts(line, toks, lang)
        .into_iter()
        .filter(|(_, text, _, raw)| one_atom(text, *raw))
        .map(|(base, text, _, _)| (base + text.len(), 0, "+".to_owned()))
        .collect()
}

/// The whole pattern `text` is one atom: a character that is no pattern syntax, an escape, or
/// one character class. `raw`: the pattern's backslashes are written once.
fn one_atom(text: &str, raw: bool) -> bool {
    let b = text.as_bytes();
    match b.first() {
        Some(b'[') => {
            let inner = &text[1..text.len().saturating_sub(1).max(1)];
            text.len() >= 3 && text.ends_with(']') && !inner.contains(']')
        }
        Some(b'\\') => {
            let width = if raw || b.get(1) != Some(&b'\\') {
                2
            } else {
                3
            };
            b.len() == width
        }
        Some(_) => text.chars().count() == 1 && !text.chars().any(|c| REGEX_META.contains(c)),
        None => false,
    }
}

/// The patterns on the line: a string literal given to `re.compile(`/`re.sub(` …,
/// `Regex::new(`, `RegExp(`, or a JavaScript `/…/` literal — each as (offset of its text in the
/// line, its text, its delimiter, whether its backslashes are the pattern's own).
fn pattern_texts<'a>(
    line: &'a str,
    toks: &[Tok<'a>],
    lang: Lang,
) -> Vec<(usize, &'a str, char, bool)> {
    let mut found: Vec<(usize, &str, char, bool)> = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if t.kind == Kind::Literal && t.text.len() >= 2 {
            // The call the literal is the first argument of: `(` before it, a string prefix
            // (`r"…"`, `rb"…"`) aside.
            let mut p = k;
            if p > 0
                && toks[p - 1].kind == Kind::Name
                && toks[p - 1].at + toks[p - 1].text.len() == t.at
                && toks[p - 1].text.len() <= 2
            {
                p -= 1;
            }
            let callee = |back: usize| p.checked_sub(back).map(|i| toks[i].text);
            let is_pattern = callee(1) == Some("(")
                && match lang {
                    Lang::Python => {
                        callee(3) == Some(".")
                            && callee(4) == Some("re")
                            && callee(2).is_some_and(|f| {
                                matches!(
                                    f,
                                    "compile"
                                        | "sub"
                                        | "subn"
                                        | "match"
                                        | "search"
                                        | "fullmatch"
                                        | "split"
                                        | "findall"
                                        | "finditer"
                                )
                            })
                    }
                    Lang::Rust => {
                        callee(2) == Some("new")
                            && callee(3) == Some("::")
                            && callee(4).is_some_and(|f| f == "Regex" || f == "RegexBuilder")
                    }
                    Lang::Curly => callee(2) == Some("RegExp"),
                };
            if is_pattern {
                let delim = t.text.chars().next().unwrap_or('"');
                // `r"…"`: the pattern's backslashes as they are; else each is written twice.
                let raw = p < k && toks[p].text.contains(['r', 'R']);
                found.push((t.at + 1, &t.text[1..t.text.len() - 1], delim, raw));
            }
        } else if lang == Lang::Curly && t.text == "/" {
            // A `/…/` literal: where an operand begins, not after one.
            let starts = k == 0
                || toks[k - 1].kind == Kind::Op && !matches!(toks[k - 1].text, ")" | "]" | "}")
                || toks[k - 1].text == "return";
            if !starts {
                continue;
            }
            let rest = &line[t.at + 1..];
            if rest.starts_with('*') {
                // A block comment's `/*`.
                continue;
            }
            let (mut escaped, mut in_class) = (false, false);
            let end = rest.char_indices().find_map(|(i, c)| {
                let at_end = !escaped && !in_class && c == '/';
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '[' => in_class = true,
                    ']' => in_class = false,
                    _ => {}
                }
                at_end.then_some(i)
            });
            if let Some(end) = end.filter(|e| *e > 0) {
                found.push((t.at + 1, &rest[..end], '/', true));
            }
        }
    }
    found
}

/// Class 9's edits of one pattern (see [`patterns`]).
fn quoted_into(
    out: &mut Vec<(usize, usize, String)>,
    base: usize,
    text: &str,
    delim: char,
    raw: bool,
    quoted: &[char],
) {
    for &c in quoted {
        if c == delim || text.contains(c) {
            continue;
        }
        let b = text.as_bytes();
        let mut i = 0;
        let mut class_start: Option<usize> = None;
        while i < b.len() {
            let ch = b[i];
            // A pattern's escape (`\.`) is `\\.` in a string that is not raw; a single
            // backslash there is the string's own escape (`\n`), no punctuation.
            let (escaped, width) = match (ch == b'\\', raw) {
                (false, _) => (false, 1),
                (true, true) => (i + 1 < b.len(), 2),
                (true, false) if b.get(i + 1) == Some(&b'\\') => (i + 2 < b.len(), 3),
                (true, false) => (false, 2),
            };
            let width = width.min(b.len() - i);
            match class_start {
                Some(_) if !escaped && ch == b']' => {
                    out.push((base + i, 0, c.to_string()));
                    class_start = None;
                }
                Some(_) => {}
                None if !escaped && ch == b'[' => class_start = Some(i),
                None => {
                    // ASCII only, so the slice below cuts no character.
                    let punct = if escaped {
                        b[i + width - 1].is_ascii_punctuation()
                    } else {
                        width == 1 && ch.is_ascii_punctuation() && !REGEX_META.contains(ch as char)
                    };
                    if punct {
                        let atom = &text[i..i + width];
                        out.push((base + i, width, format!("[{atom}{c}]")));
                    }
                }
            }
            i += width;
        }
    }
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Name,
    Number,
    Op,
    /// A string or char literal.
    Literal,
}

/// One token of a line: where it is and what.
#[derive(Debug, Clone, Copy)]
struct Tok<'a> {
    at: usize,
    text: &'a str,
    kind: Kind,
    /// Whitespace right before and right after it.
    spaced: (bool, bool),
}

/// Operators, longest first.
const OPS: &[&str] = &[
    "===", "!==", "**=", "//=", "<<=", ">>=", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=",
    "&&", "||", "->", "=>", "::", "<<", ">>", "**", "//",
];

/// The line's tokens up to its comment, whitespace left out; strings are one token.
fn lex(line: &str, lang: Lang) -> Vec<Tok<'_>> {
    let b = line.as_bytes();
    let mut out: Vec<Tok<'_>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let kind;
        if lang == Lang::Python && c == b'#' || lang != Lang::Python && line[i..].starts_with("//")
        {
            break;
        }
        if c == b'"' || c == b'`' || c == b'\'' {
            // A Rust lifetime (`'a`) is no string: a char literal closes within a few bytes.
            if c == b'\'' && lang == Lang::Rust {
                let close = line[i + 1..]
                    .char_indices()
                    .take(3)
                    .find(|(k, ch)| *ch == '\'' && *k > 0)
                    .map(|(k, _)| i + 1 + k);
                let escaped = b.get(i + 1) == Some(&b'\\');
                if close.is_none() && !escaped {
                    i += 1;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                    out.push(tok(line, start, i, Kind::Name));
                    continue;
                }
            }
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            kind = Kind::Literal;
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                // `1..n` is a range, not a float.
                if b[i] == b'.' && b.get(i + 1).is_some_and(|n| !n.is_ascii_digit()) {
                    break;
                }
                i += 1;
            }
            kind = Kind::Number;
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80 {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80)
            {
                i += 1;
            }
            kind = Kind::Name;
        } else {
            let len = OPS
                .iter()
                .find(|op| line[i..].starts_with(**op))
                .map_or(1, |op| op.len());
            i += len;
            kind = Kind::Op;
        }
        out.push(tok(line, start, i, kind));
    }
    out
}

fn tok(line: &str, start: usize, end: usize, kind: Kind) -> Tok<'_> {
    let b = line.as_bytes();
    let before = start == 0 || b[start - 1].is_ascii_whitespace();
    let after = end >= b.len() || b[end].is_ascii_whitespace();
    Tok {
        at: start,
        text: &line[start..end],
        kind,
        spaced: (before, after),
    }
}

/// The line's code: strings blanked, its comment cut off.
fn code_of(line: &str, lang: Lang) -> String {
    let mut out = String::new();
    for t in lex(line, lang) {
        if t.kind != Kind::Literal {
            out.push_str(t.text);
        }
        out.push(' ');
    }
    out
}

/// What a comparison may be turned into.
fn comparisons(op: &str) -> &'static [&'static str] {
    match op {
        "<" => &["<=", ">"],
        "<=" => &["<", ">="],
        ">" => &[">=", "<"],
        ">=" => &[">", "<="],
        "==" => &["!="],
        "!=" => &["=="],
        "===" => &["!=="],
        "!==" => &["==="],
        _ => &[],
    }
}

/// The mutants of `sites`, in the order of the module docs, without repeats, at most `limit`;
/// an edit that brings in a name the `goal` speaks of comes before the others of its tier.
pub(crate) fn mutants(root: &Utf8Path, goal: &str, sites: &[Site], limit: usize) -> Vec<Mutant> {
    // (class, site, line, replacement); classes: 0 comparisons, 1 compound assignments and
    // their targets, 2 operands, 3 arithmetic (D90: and the operands of `/`, `-` swapped), 4
    // logic and min/max, 5 numbers (D81); then 6 text read as numbers, 7 divisions rounded up,
    // 8 guards (D82: after all of D81's, whose order, and so what the limit leaves tried, they
    // do not change); 9 a character the goal quotes brought into a pattern (D84: it speaks of
    // the goal, so it comes first of its tier); 10 a one-atom pattern made a run (D90).
    let mut edits: Vec<(u8, usize, usize, usize, usize, String)> = Vec::new();
    // The punctuation the goal quotes (`'; comments'`), for the patterns of class 9.
    let quoted = quoted_chars(goal);
    // Each site's file, read once however many sites it holds.
    let mut files: BTreeMap<&str, Option<Rc<str>>> = BTreeMap::new();
    let mut texts: Vec<Option<Rc<str>>> = Vec::new();
    for (si, s) in sites.iter().enumerate() {
        let text = files
            .entry(s.path.as_str())
            .or_insert_with(|| read(root, &s.path).map(Rc::from))
            .clone();
        let Some(l) = lang(&s.path) else {
            texts.push(None);
            continue;
        };
        let Some(text) = text else {
            texts.push(None);
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let fields = fields_of(&text, l);
        let body = lines.get(s.first()..s.end).unwrap_or_default();
        let locals = locals_of(body, l);
        let flags = flags_of(body, l);
        let js = l == Lang::Curly && !s.path.ends_with(".go");
        let mut in_doc = false;
        for (k, line) in body.iter().enumerate() {
            let n = s.first() + k;
            let t = line.trim_start();
            if l == Lang::Python {
                let quotes = line.matches("\"\"\"").count() + line.matches("'''").count();
                if in_doc || quotes > 0 {
                    if quotes % 2 == 1 {
                        in_doc = !in_doc;
                    }
                    continue;
                }
            }
            if t.starts_with("#[") || t.starts_with('@') || t.starts_with("//") {
                continue;
            }
            let toks = lex(line, l);
            for (at, len, to) in guards(line, &toks, l, &flags) {
                edits.push((8, si, n, at, len, to));
            }
            for (at, len, to) in patterns(line, &toks, l, &quoted) {
                edits.push((9, si, n, at, len, to));
            }
            for (at, len, to) in runs(line, &toks, l) {
                edits.push((10, si, n, at, len, to));
            }
            if (js || l == Lang::Python)
                && let Some((at, len, to)) = as_numbers(line, &toks, js)
            {
                edits.push((6, si, n, at, len, to));
            }
            for (ti, tk) in toks.iter().enumerate() {
                let mut add = |class: u8, at: usize, len: usize, to: String| {
                    edits.push((class, si, n, at, len, to));
                };
                match tk.kind {
                    Kind::Op => {
                        let binary = tk.spaced == (true, true);
                        if binary {
                            for to in comparisons(tk.text) {
                                add(0, tk.at, tk.text.len(), (*to).to_owned());
                            }
                        }
                        let swap = match tk.text {
                            "+=" => Some((1, "-=")),
                            "-=" => Some((1, "+=")),
                            "*=" => Some((1, "/=")),
                            "/=" => Some((1, "*=")),
                            "+" if binary => Some((3, "-")),
                            "-" if binary => Some((3, "+")),
                            "*" if binary => Some((3, "/")),
                            "/" if binary => Some((3, "*")),
                            "&&" => Some((4, "||")),
                            "||" => Some((4, "&&")),
                            _ => None,
                        };
                        if let Some((class, to)) = swap {
                            add(class, tk.at, tk.text.len(), to.to_owned());
                        }
                        // The operands of `/` or `-` the wrong way round, two plain tokens
                        // (`9.0 / 5.0` for `5.0 / 9.0`, D90): not a member's, a call's or an
                        // index's.
                        if binary && matches!(tk.text, "/" | "-") && ti > 0 {
                            let plain = |i: usize| {
                                toks.get(i).is_some_and(|t| {
                                    matches!(t.kind, Kind::Number | Kind::Name)
                                        && !KEYWORDS.contains(&t.text)
                                })
                            };
                            let member = ti >= 2 && matches!(toks[ti - 2].text, "." | "::");
                            let applied = toks
                                .get(ti + 2)
                                .is_some_and(|t| matches!(t.text, "." | "::" | "(" | "["));
                            let (a, b) = (&toks[ti - 1], toks.get(ti + 1));
                            if plain(ti - 1)
                                && plain(ti + 1)
                                && !member
                                && !applied
                                && let Some(b) = b.filter(|b| b.text != a.text)
                            {
                                let end = b.at + b.text.len();
                                let to = format!(
                                    "{}{}{}",
                                    b.text,
                                    &line[a.at + a.text.len()..b.at],
                                    a.text
                                );
                                add(3, a.at, end - a.at, to);
                            }
                        }
                        let left = left_span(&toks, ti);
                        let right = right_span(&toks, ti);
                        let text_of = |(a, b): (usize, usize)| {
                            &line[toks[a].at..toks[b].at + toks[b].text.len()]
                        };
                        // Strings compared where numbers were meant ("10" < "9").
                        if binary
                            && matches!(tk.text, "<" | ">" | "<=" | ">=")
                            && (js || l == Lang::Python)
                            && let (Some(a), Some(b)) = (left, right)
                        {
                            let conv = if js { "Number" } else { "int" };
                            let to = format!(
                                "{conv}({}) {} {conv}({})",
                                text_of(a),
                                tk.text,
                                text_of(b)
                            );
                            let from = toks[a.0].at;
                            add(6, from, toks[b.1].at + toks[b.1].text.len() - from, to);
                        }
                        // A division rounding down where it should round up.
                        let divisor = right.or_else(|| {
                            toks.get(ti + 1)
                                .filter(|t| t.kind == Kind::Number)
                                .map(|_| (ti + 1, ti + 1))
                        });
                        if binary && let (Some(a), Some(r)) = (left, divisor) {
                            let d = text_of(r);
                            let end = toks[r.1].at + toks[r.1].text.len();
                            let from = toks[a.0].at;
                            let to = match (l, tk.text) {
                                (Lang::Rust, "/") => Some(format!("{}.div_ceil({d})", text_of(a))),
                                (Lang::Python, "//") => Some(format!("-(-{} // {d})", text_of(a))),
                                _ => None,
                            };
                            if let Some(to) = to {
                                add(7, from, end - from, to);
                            }
                        }
                        // A negation dropped: a prefix `!` (not a macro's, not `!=`).
                        let prefix = ti == 0
                            || !(toks[ti - 1].kind == Kind::Name
                                && !KEYWORDS.contains(&toks[ti - 1].text)
                                || matches!(toks[ti - 1].text, ")" | "]"));
                        if tk.text == "!"
                            && l != Lang::Python
                            && prefix
                            && toks.get(ti + 1).is_some()
                        {
                            add(4, tk.at, 1, String::new());
                        }
                        let compound = matches!(tk.text, "+=" | "-=" | "*=" | "/=");
                        let operator = binary
                            && (!comparisons(tk.text).is_empty()
                                || matches!(tk.text, "+" | "-" | "*" | "/"))
                            || compound;
                        if operator {
                            let class = if compound { 1 } else { 2 };
                            // The operand on the left, then the one on the right.
                            for o in [left_operand(&toks, ti), right_operand(&toks, ti)]
                                .into_iter()
                                .flatten()
                            {
                                let name = toks[o].text;
                                let member = o >= 2
                                    && toks[o - 1].text == "."
                                    && matches!(toks[o - 2].text, "self" | "this");
                                let pool: &[String] = if member { &fields } else { &locals };
                                for other in pool.iter().filter(|p| *p != name).take(MAX_SWAPS) {
                                    add(class, toks[o].at, name.len(), other.clone());
                                }
                                // Only a compound assignment's target (left of it) swaps.
                                if compound {
                                    break;
                                }
                            }
                        }
                    }
                    Kind::Name => match tk.text {
                        "and" if l == Lang::Python => add(4, tk.at, 3, "or".into()),
                        "or" if l == Lang::Python => add(4, tk.at, 2, "and".into()),
                        "min" | "max" if toks.get(ti + 1).is_some_and(|n| n.text == "(") => {
                            let to = if tk.text == "min" { "max" } else { "min" };
                            add(4, tk.at, 3, to.into());
                        }
                        "floor" | "ceil" if toks.get(ti + 1).is_some_and(|n| n.text == "(") => {
                            let to = if tk.text == "floor" { "ceil" } else { "floor" };
                            add(7, tk.at, tk.text.len(), to.into());
                        }
                        // A condition the wrong way round: `not` dropped.
                        "not"
                            if l == Lang::Python
                                && toks.get(ti + 1).is_some_and(|n| n.text != "in") =>
                        {
                            let next = toks[ti + 1].at;
                            add(4, tk.at, next - tk.at, String::new());
                        }
                        "True" | "False" if l == Lang::Python => {
                            let to = if tk.text == "True" { "False" } else { "True" };
                            add(4, tk.at, tk.text.len(), to.into());
                        }
                        "true" | "false" if l != Lang::Python => {
                            let to = if tk.text == "true" { "false" } else { "true" };
                            add(4, tk.at, tk.text.len(), to.into());
                        }
                        _ => {}
                    },
                    Kind::Number => {
                        if let Ok(v) = tk.text.parse::<u64>() {
                            add(5, tk.at, tk.text.len(), (v + 1).to_string());
                            if v > 0 {
                                add(5, tk.at, tk.text.len(), (v - 1).to_string());
                            }
                        }
                    }
                    Kind::Literal => {}
                }
            }
        }
        texts.push(Some(text));
    }
    // Lines the model's rejected changes touched first: it found the place, if not the token.
    // Within each, an edit that brings in a name the goal speaks of ("escaped quote" →
    // `&& !escaped`).
    let words = goal_words(goal);
    let lines_of: Vec<Vec<&str>> = texts
        .iter()
        .map(|t| {
            t.as_deref()
                .map(|t| t.lines().collect())
                .unwrap_or_default()
        })
        .collect();
    let line_at = |si: usize, n: usize| lines_of.get(si).and_then(|l| l.get(n)).copied();
    let named = |e: &(u8, usize, usize, usize, usize, String)| {
        if e.0 == 9 {
            // A character the goal quotes, brought into a pattern.
            return true;
        }
        let line = line_at(e.1, e.2).unwrap_or_default();
        let old = line.get(e.3..e.3 + e.4).unwrap_or_default();
        e.5.split(|c: char| !is_word(c))
            .filter(|w| !w.is_empty() && !old.contains(*w))
            .any(|w| speaks_of(&words, w))
    };
    edits.sort_by_cached_key(|e| {
        let cold = sites
            .get(e.1)
            .is_none_or(|s| !s.touched.contains(&(e.2 + 1)));
        // A constant's edits after the definitions' of their tier: a lead of the second rank.
        let constant = sites.get(e.1).is_some_and(|s| s.whole);
        (cold, !named(e), constant, e.0, e.1, e.2)
    });
    let mut out: Vec<Mutant> = Vec::new();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    for (_, si, n, at, len, to) in edits {
        if out.len() >= limit {
            break;
        }
        let (Some(site), Some(Some(text))) = (sites.get(si), texts.get(si)) else {
            continue;
        };
        let Some(line) = line_at(si, n) else {
            continue;
        };
        let mutated = format!("{}{}{}", &line[..at], to, &line[at + len..]);
        if mutated == line || !seen.insert((site.path.clone(), format!("{n}:{mutated}"))) {
            continue;
        }
        let mut new_text = String::with_capacity(text.len() + 8);
        for (k, l) in text.split_inclusive('\n').enumerate() {
            if k == n {
                new_text.push_str(&mutated);
                new_text.push_str(&l[line.len()..]);
            } else {
                new_text.push_str(l);
            }
        }
        out.push(Mutant {
            path: site.path.clone(),
            name: site.name.clone(),
            line: n + 1,
            from: line.trim().to_owned(),
            to: mutated.trim().to_owned(),
            document: json!({
                "actions": [{"kind": "UPDATE_FILE", "path": site.path, "content": new_text}],
                "summary": format!("{}:{}: {}", site.path, n + 1, mutated.trim()),
            })
            .to_string(),
        });
    }
    out
}

/// The token index of the operand left of the operator at `op`: a name (or `self.name`), not
/// a call.
fn left_operand(toks: &[Tok<'_>], op: usize) -> Option<usize> {
    let o = op.checked_sub(1)?;
    (toks[o].kind == Kind::Name && !KEYWORDS.contains(&toks[o].text)).then_some(o)
}

/// The token index of the operand right of the operator at `op`: a name or `self.name` /
/// `this.name`, not a call or an index.
fn right_operand(toks: &[Tok<'_>], op: usize) -> Option<usize> {
    let mut o = op + 1;
    if toks
        .get(o)
        .is_some_and(|t| matches!(t.text, "self" | "this"))
        && toks.get(o + 1).is_some_and(|t| t.text == ".")
    {
        o += 2;
    }
    let t = toks.get(o)?;
    let call = toks
        .get(o + 1)
        .is_some_and(|n| matches!(n.text, "(" | "[" | "." | "::"));
    (t.kind == Kind::Name && !call && !KEYWORDS.contains(&t.text)).then_some(o)
}

/// Whether the token is a name an operand may start with: not a keyword, or `self`/`this`.
fn operand_name(t: &Tok<'_>) -> bool {
    t.kind == Kind::Name && (!KEYWORDS.contains(&t.text) || matches!(t.text, "self" | "this"))
}

/// The tokens (first, last) of the operand right before the operator at `op`: a name with its
/// `.field` and `[index]` suffixes (`left[i]`, `self.a.b`), not a call.
fn left_span(toks: &[Tok<'_>], op: usize) -> Option<(usize, usize)> {
    let last = op.checked_sub(1)?;
    let mut k = last;
    loop {
        if toks[k].text == "]" {
            let mut depth = 0i32;
            let mut j = k;
            loop {
                match toks[j].text {
                    "]" => depth += 1,
                    "[" => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                j = j.checked_sub(1)?;
            }
            k = j.checked_sub(1)?;
            continue;
        }
        if !operand_name(&toks[k]) {
            return None;
        }
        if k >= 2 && toks[k - 1].text == "." {
            k -= 2;
            continue;
        }
        return Some((k, last));
    }
}

/// The tokens (first, last) of the operand right after the operator at `op`: a name with its
/// `.field` and `[index]` suffixes, not a call.
fn right_span(toks: &[Tok<'_>], op: usize) -> Option<(usize, usize)> {
    let first = op + 1;
    if !operand_name(toks.get(first)?) {
        return None;
    }
    let mut k = first;
    loop {
        match toks.get(k + 1).map(|t| t.text) {
            Some(".") if toks.get(k + 2).is_some_and(|t| t.kind == Kind::Name) => k += 2,
            Some("[") => {
                let mut depth = 0i32;
                let mut j = k + 1;
                loop {
                    match toks.get(j)?.text {
                        "[" => depth += 1,
                        "]" => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    j += 1;
                }
                k = j;
            }
            Some("(" | "::" | "!") => return None,
            _ => return Some((first, k)),
        }
    }
}

/// The names a body sets to a boolean literal (`let mut escaped = false;`, `seen = True`):
/// the state flags a condition may be missing.
fn flags_of(body: &[&str], lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in body {
        let toks = lex(line, lang);
        for k in 0..toks.len().saturating_sub(2) {
            if toks[k].kind == Kind::Name
                && !KEYWORDS.contains(&toks[k].text)
                && (k == 0 || toks[k - 1].text != ".")
                && toks[k + 1].text == "="
                && matches!(toks[k + 2].text, "true" | "false" | "True" | "False")
                && !out.iter().any(|o| o == toks[k].text)
            {
                out.push(toks[k].text.to_owned());
            }
        }
    }
    out
}

/// A condition missing a guard by one of the definition's `flags`: an `if`'s (`elif`'s,
/// `else if`'s) condition with `&& !flag` then `&& flag` (`and not flag`, `and flag`) added,
/// parenthesised when it holds an `||`/`or`; as (byte, length, replacement) edits of `line`.
fn guards(
    line: &str,
    toks: &[Tok<'_>],
    lang: Lang,
    flags: &[String],
) -> Vec<(usize, usize, String)> {
    let Some(i) = toks
        .iter()
        .take(3)
        .position(|t| matches!(t.text, "if" | "elif"))
    else {
        return Vec::new();
    };
    if toks[..i].iter().any(|t| !matches!(t.text, "}" | "else")) || flags.is_empty() {
        return Vec::new();
    }
    // The condition's tokens, first to last.
    let (a, b) = match lang {
        Lang::Python => {
            let mut depth = 0i32;
            let Some(colon) = toks.iter().enumerate().skip(i + 1).find_map(|(k, t)| {
                match t.text {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth -= 1,
                    ":" if depth == 0 => return Some(k),
                    _ => {}
                }
                None
            }) else {
                return Vec::new();
            };
            (i + 1, colon.saturating_sub(1))
        }
        _ if toks.get(i + 1).is_some_and(|t| t.text == "(") => {
            let mut depth = 0i32;
            let Some(close) = toks.iter().enumerate().skip(i + 1).find_map(|(k, t)| {
                match t.text {
                    "(" => depth += 1,
                    ")" => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(k);
                        }
                    }
                    _ => {}
                }
                None
            }) else {
                return Vec::new();
            };
            (i + 2, close.saturating_sub(1))
        }
        _ if toks.last().is_some_and(|t| t.text == "{") => (i + 1, toks.len().saturating_sub(2)),
        _ => return Vec::new(),
    };
    if b < a || toks[a].text == "let" {
        return Vec::new();
    }
    let cond = &toks[a..=b];
    let start = toks[a].at;
    let end = toks[b].at + toks[b].text.len();
    let text = &line[start..end];
    let either = cond.iter().any(|t| matches!(t.text, "||" | "or"));
    let mut out = Vec::new();
    for flag in flags {
        if cond.iter().any(|t| t.text == flag) {
            continue;
        }
        let (neg, and) = if lang == Lang::Python {
            ("not ", "and")
        } else {
            ("!", "&&")
        };
        for not in [neg, ""] {
            let to = if either {
                format!("({text}) {and} {not}{flag}")
            } else {
                format!("{text} {and} {not}{flag}")
            };
            out.push((start, end - start, to));
        }
    }
    out
}

/// Parts cut out of text kept as strings where numbers were meant: a value returned or
/// assigned that ends in a `.slice(…)`, `.split(…)`, `.match(…)` or `.groups()` call gets
/// `.map(Number)` (JavaScript) or becomes `list(map(int, …))` (Python); as a (byte, length,
/// replacement) edit of `line`.
fn as_numbers(line: &str, toks: &[Tok<'_>], js: bool) -> Option<(usize, usize, String)> {
    let last = toks
        .len()
        .checked_sub(1 + usize::from(toks.last()?.text == ";"))?;
    if toks[last].text != ")" {
        return None;
    }
    let mut depth = 0i32;
    let mut open = last;
    loop {
        match toks[open].text {
            ")" => depth += 1,
            "(" => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            break;
        }
        open = open.checked_sub(1)?;
    }
    let name = open.checked_sub(1)?;
    if !matches!(toks[name].text, "slice" | "split" | "match" | "groups")
        || name == 0
        || toks[name - 1].text != "."
    {
        return None;
    }
    // The value: after `return` or the (first) `=`.
    let value = toks
        .iter()
        .position(|t| t.text == "=")
        .or_else(|| (toks[0].text == "return").then_some(0))?
        + 1;
    if value > name {
        return None;
    }
    let end = toks[last].at + 1;
    if js {
        Some((end, 0, ".map(Number)".to_owned()))
    } else {
        let start = toks[value].at;
        Some((
            start,
            end - start,
            format!("list(map(int, {}))", &line[start..end]),
        ))
    }
}

/// The fields the file uses: names right after `self.` or `this.` that are not called.
fn fields_of(text: &str, lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let toks = lex(line, lang);
        for k in 2..toks.len() {
            if toks[k].kind == Kind::Name
                && toks[k - 1].text == "."
                && matches!(toks[k - 2].text, "self" | "this")
                && toks.get(k + 1).is_none_or(|n| n.text != "(")
                && !out.iter().any(|o| o == toks[k].text)
            {
                out.push(toks[k].text.to_owned());
            }
        }
    }
    out
}

/// The plain names a body uses as values: not keywords, not called, not after `.` or `::`,
/// not capitalised (types), in order of first use.
fn locals_of(body: &[&str], lang: Lang) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in body {
        let toks = lex(line, lang);
        for (k, t) in toks.iter().enumerate() {
            let after_dot = k > 0 && matches!(toks[k - 1].text, "." | "::");
            let called = toks
                .get(k + 1)
                .is_some_and(|n| matches!(n.text, "(" | "!" | "::"));
            if t.kind == Kind::Name
                && !after_dot
                && !called
                && !KEYWORDS.contains(&t.text)
                && t.text
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_lowercase() || c == '_')
                && !out.iter().any(|o| o == t.text)
            {
                out.push(t.text.to_owned());
            }
        }
    }
    out
}

/// The 1-based old-file lines a unified diff of one file changes (a pure insertion counts the
/// line it comes before).
pub(crate) fn touched_lines(diff: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut old = 0usize;
    // Added lines that follow removed ones replace them: no other line is touched.
    let mut removing = false;
    for l in diff.lines() {
        if let Some(rest) = l.strip_prefix("@@ -") {
            old = rest
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            continue;
        }
        if l.starts_with("---") || l.starts_with("+++") || old == 0 {
            continue;
        }
        match l.chars().next() {
            Some('-') => {
                out.push(old);
                old += 1;
                removing = true;
            }
            Some('+') if !removing => out.push(old),
            Some('+') | Some('\\') => {}
            _ => {
                old += 1;
                removing = false;
            }
        }
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::testkit::{project, users_in};

    fn root_of(dir: &tempfile::TempDir) -> &Utf8Path {
        Utf8Path::from_path(dir.path()).expect("utf-8 temp dir")
    }

    fn is_test(path: &str, before: &str) -> bool {
        papayu_context::is_test_path(path) || before.contains("#[cfg(test)]")
    }

    /// The sites `sites` finds in the project at `root` for `goal`, the failing `tests` and the
    /// `touched` lines.
    fn found_in(
        root: &Utf8Path,
        goal: &str,
        tests: &[String],
        touched: &[(String, usize)],
    ) -> Vec<Site> {
        sites(root, goal, tests, touched, &users_in(root), &is_test)
    }

    /// The sites' names, in order.
    fn names_of(sites: &[Site]) -> Vec<&str> {
        sites.iter().map(|s| s.name.as_str()).collect()
    }

    /// The definition at lines `start..end` (0-based, `end` exclusive) of `path`, untouched.
    fn site_of(path: &str, start: usize, end: usize) -> Site {
        Site {
            path: path.to_owned(),
            name: "f".to_owned(),
            start,
            end,
            touched: Vec::new(),
            whole: false,
        }
    }

    /// The lines papayu's edits of that definition would write, in order.
    fn edits_of(root: &Utf8Path, path: &str, start: usize, end: usize) -> Vec<String> {
        mutants(root, "", &[site_of(path, start, end)], 500)
            .into_iter()
            .map(|m| m.to)
            .collect()
    }

    const ROMAN: &str = "\"\"\"Roman numerals.\"\"\"\n\n_VALUES = {\"I\": 1, \"V\": 5, \"X\": 10}\n\n\ndef from_roman(numeral):\n    \"\"\"Return the value of `numeral` (if a > b).\"\"\"\n    digits = [_VALUES[ch] for ch in numeral]\n    total = 0\n    for i, value in enumerate(digits):\n        following = digits[i + 1] if i + 1 < len(digits) else 0\n        if value > following:  # a > b here\n            total -= value\n        else:\n            total += value\n    return total\n";
    const ROMAN_TEST: &str = "import unittest\nfrom roman import from_roman\n\n\nclass T(unittest.TestCase):\n    def test_subtractive(self):\n        self.assertEqual(from_roman(\"XIV\"), 14)\n";

    #[test]
    fn the_goals_definition_is_found_and_its_comparison_turned() {
        let dir = project(&[("roman.py", ROMAN), ("test_roman.py", ROMAN_TEST)]);
        let root = root_of(&dir);
        let sites = found_in(root, "from_roman('XIV') returns 16 instead of 14", &[], &[]);
        // The definition, then the top-level constant it reads.
        let names: Vec<(&str, &str, bool)> = sites
            .iter()
            .map(|s| (s.path.as_str(), s.name.as_str(), s.whole))
            .collect();
        assert_eq!(
            names,
            [
                ("roman.py", "from_roman", false),
                ("roman.py", "_VALUES", true)
            ]
        );
        let all = mutants(root, "", &sites, 500);
        // The constant's edits (its numbers) come after the definition's.
        let first_constant = all
            .iter()
            .position(|m| m.line == 3)
            .expect("_VALUES edited");
        assert!(all[first_constant..].iter().all(|m| m.line == 3));
        let fixed = all
            .iter()
            .find(|m| m.to == "if value < following:  # a > b here")
            .expect("the comparison turned");
        assert_eq!(fixed.line, 12);
        assert_eq!(fixed.from, "if value > following:  # a > b here");
        // Comparisons come first; nothing in the docstring, a string or a comment is touched.
        assert!(all[..4].iter().all(|m| m.line == 11 || m.line == 12));
        assert!(
            all.iter()
                .all(|m| m.line != 7 && !m.to.contains("# a < b") && !m.to.contains("# a >= b"))
        );
        let doc: serde_json::Value = serde_json::from_str(&fixed.document).expect("json");
        assert_eq!(
            doc["actions"][0]["content"].as_str().expect("content"),
            ROMAN.replace("if value > following", "if value < following")
        );
        // Every other class is there too.
        let tos: Vec<&str> = all.iter().map(|m| m.to.as_str()).collect();
        assert!(tos.contains(&"total += value"), "{tos:?}");
        assert!(tos.contains(&"total = 1"), "{tos:?}");
        assert!(
            tos.contains(&"following = digits[i - 1] if i + 1 < len(digits) else 0"),
            "{tos:?}"
        );
        assert!(tos.contains(&"if value > total:  # a > b here"), "{tos:?}");
        assert_eq!(mutants(root, "", &sites, 3).len(), 3);
    }

    #[test]
    fn what_a_failing_test_calls_and_what_that_calls_is_found_and_a_field_swapped() {
        let lib = "mod stock;\npub use stock::Stock;\n\npub struct Inv { s: Stock }\n\nimpl Inv {\n    pub fn cancel(&mut self, qty: u32) {\n        self.s.release(qty);\n    }\n}\n";
        let stock = "pub struct Stock {\n    pub on_hand: u32,\n    pub reserved: u32,\n}\n\nimpl Stock {\n    pub fn release(&mut self, qty: u32) {\n        self.on_hand -= qty;\n    }\n\n    pub fn reserve(&mut self, qty: u32) {\n        self.reserved += qty;\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    fn release() {}\n}\n";
        let test = "use inv::*;\n\n#[test]\nfn cancel_gives_the_units_back() {\n    let mut i = Inv::default();\n    i.cancel(3);\n    assert_eq!(i.s.on_hand, 0);\n}\n";
        let dir = project(&[
            ("src/lib.rs", lib),
            ("src/stock.rs", stock),
            ("tests/inv.rs", test),
        ]);
        let root = root_of(&dir);
        let sites = found_in(
            root,
            "cancelling doesn't give the stock back",
            &["cancel_gives_the_units_back".to_owned()],
            &[],
        );
        let names: Vec<(&str, &str)> = sites
            .iter()
            .map(|s| (s.path.as_str(), s.name.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![("src/lib.rs", "cancel"), ("src/stock.rs", "release")]
        );
        let all = mutants(root, "", &sites, 100);
        let tos: Vec<&str> = all.iter().map(|m| m.to.as_str()).collect();
        assert_eq!(tos[..2], ["self.on_hand += qty;", "self.reserved -= qty;"]);
    }

    #[test]
    fn a_constant_pattern_the_tests_reach_gains_the_character_the_goal_quotes() {
        // py-05's kind: the comment pattern is a top-level constant read by a helper that the
        // function the failing test calls calls; the goal quotes the missing `;`.
        let ini = "import re\n\n_COMMENT = re.compile(r\"\\s#.*$\")\nLIMIT = 3\nSEP = 1\n\n\ndef _strip(value):\n    return _COMMENT.sub(\"\", value).rstrip()\n\n\ndef parse(text):\n    return {k.strip(): _strip(v) for k, v in (l.split(\"=\", SEP) for l in text.splitlines())}\n";
        let test = "import unittest\nfrom ini import parse\n\n\nclass T(unittest.TestCase):\n    def test_semicolon(self):\n        self.assertEqual(parse(\"port = 80 ; http\"), {\"port\": \"80\"})\n";
        let dir = project(&[("ini.py", ini), ("test_ini.py", test)]);
        let root = root_of(&dir);
        let goal = "the parser keeps inline '; comments' in values, e.g. `port = 80 ; http`";
        let found = found_in(root, goal, &["test_semicolon".to_owned()], &[]);
        let names: Vec<(&str, bool)> = found.iter().map(|s| (s.name.as_str(), s.whole)).collect();
        assert_eq!(
            names,
            [
                ("parse", false),
                ("_strip", false),
                ("_COMMENT", true),
                ("SEP", true)
            ],
            "`SEP` is read first, but `_COMMENT` speaks of the goal's comments"
        );
        let all = mutants(root, goal, &found, 500);
        // The quoted `;` (and `=`) brought into the pattern come before every other edit.
        let tos: Vec<&str> = all.iter().take(2).map(|m| m.to.as_str()).collect();
        assert_eq!(
            tos,
            [
                "_COMMENT = re.compile(r\"\\s[#;].*$\")",
                "_COMMENT = re.compile(r\"\\s[#=].*$\")"
            ]
        );
        assert_eq!((all[0].line, all[0].name.as_str()), (3, "_COMMENT"));
        // `LIMIT` is read by nobody: no site; `re` is a module, not a constant.
        assert!(all.iter().all(|m| m.line != 4 && m.line != 1));
        assert!(all.iter().any(|m| m.to == "SEP = 2"), "a constant's number");
        // Without a quoted character there is no pattern edit.
        let plain = mutants(root, "inline comments are kept", &found, 500);
        assert!(plain.iter().all(|m| !m.to.contains('[')), "{plain:?}");
    }

    #[test]
    fn patterns_gain_a_quoted_character_in_classes_and_beside_literal_punctuation() {
        let js = "const SEP = /[,\\s]+/;\nconst KEY = new RegExp('^\\\\w+:');\n\nexport function split(text) {\n  const a = text.split(SEP);\n  const n = a.length / 2;\n  return KEY.test(text) ? a : a.slice(0, n);\n}\n";
        let toks: Vec<Vec<Tok<'_>>> = js.lines().map(|l| lex(l, Lang::Curly)).collect();
        let lines: Vec<&str> = js.lines().collect();
        let edit = |n: usize, quoted: &[char]| -> Vec<String> {
            patterns(lines[n], &toks[n], Lang::Curly, quoted)
                .into_iter()
                .map(|(at, len, to)| format!("{}{}{}", &lines[n][..at], to, &lines[n][at + len..]))
                .collect()
        };
        assert_eq!(edit(0, &[';']), ["const SEP = /[,\\s;]+/;"]);
        assert_eq!(edit(1, &['-']), ["const KEY = new RegExp('^\\\\w+[:-]');"]);
        // A division is no pattern; a character the pattern has is not added again; the
        // delimiter is never added.
        assert!(edit(5, &[';']).is_empty());
        assert!(edit(0, &[',']).is_empty());
        assert!(edit(0, &['/']).is_empty());
        let comment = "/* a, b / c */ const x = 1;";
        assert!(patterns(comment, &lex(comment, Lang::Curly), Lang::Curly, &[';']).is_empty());
        let rs = "    let re = Regex::new(r\"\\d+\\.\\d+\").unwrap();";
        let rs_toks = lex(rs, Lang::Rust);
        let got: Vec<String> = patterns(rs, &rs_toks, Lang::Rust, &[','])
            .into_iter()
            .map(|(at, len, to)| format!("{}{}{}", &rs[..at], to, &rs[at + len..]))
            .collect();
        assert_eq!(
            got,
            ["    let re = Regex::new(r\"\\d+[\\.,]\\d+\").unwrap();"]
        );
        // A string that is not given to a pattern constructor is not a pattern.
        let py = "    return text.split(\"#\")";
        assert!(patterns(py, &lex(py, Lang::Python), Lang::Python, &[';']).is_empty());
    }

    #[test]
    fn quoted_punctuation_of_a_goal_and_top_level_constants_are_read() {
        assert_eq!(
            quoted_chars("keeps inline '; comments', e.g. `a = 1 ; b`"),
            [';', '=']
        );
        // An apostrophe is no quote; quotes and backslashes are never offered.
        assert_eq!(quoted_chars("it doesn't split on \"a|b\" or '\\\\'"), ['|']);
        assert!(quoted_chars("no quotes here").is_empty());
        let lines = [
            "_VALUES = {",
            "    \"I\": 1,",
            "}",
            "LIMIT: int = 3",
            "export const NUMBER = /\\d+/y;",
            "pub(crate) const MAX_PAGE: usize = 50;",
            "static mut N: u32 = 0;",
            "x == 1",
            "def f(a):",
            "    y = 2",
            "let total = 0;",
        ];
        let py = |i| constant_at(&lines, i, Lang::Python);
        assert_eq!(py(0), Some(("_VALUES", 3)));
        assert_eq!(py(3), Some(("LIMIT", 4)));
        assert_eq!(py(7), None);
        assert_eq!(py(8), None);
        assert_eq!(py(9), None, "indented: not top level");
        assert_eq!(constant_at(&lines, 4, Lang::Curly), Some(("NUMBER", 5)));
        assert_eq!(constant_at(&lines, 5, Lang::Rust), Some(("MAX_PAGE", 6)));
        assert_eq!(constant_at(&lines, 6, Lang::Rust), Some(("N", 7)));
        assert_eq!(constant_at(&lines, 10, Lang::Curly), Some(("total", 11)));
        // Outside Python, a bare assignment declares nothing.
        assert_eq!(constant_at(&lines, 3, Lang::Curly), None);
    }

    #[test]
    fn a_touched_constant_line_leads_to_the_constant() {
        let js = "const NUMBER = /\\d+/y;\n\nexport function tokenize(s) {\n  return NUMBER.exec(s);\n}\n";
        let dir = project(&[("expr.js", js)]);
        let root = root_of(&dir);
        let found = found_in(
            root,
            "decimals: '1.5' fails",
            &[],
            &[("expr.js".to_owned(), 1)],
        );
        assert_eq!(found.len(), 1);
        assert_eq!(
            (
                found[0].name.as_str(),
                found[0].whole,
                found[0].touched.as_slice()
            ),
            ("NUMBER", true, &[1][..])
        );
        let all = mutants(root, "decimals: '1.5' fails", &found, 50);
        assert!(all.iter().all(|m| m.line == 1), "{all:?}");
    }

    #[test]
    fn match_arms_and_macro_calls_are_no_definitions() {
        // A touched line inside a match arm leads to the function that holds it, and the calls
        // in its body (`Some(…)`, `write!(…)`) lead to no arms or macro lines of their own.
        let lexer = "pub enum Tok { Str(String), Other(char) }\n\npub fn next(chars: &mut std::str::Chars) -> Option<Tok> {\n    match chars.next() {\n        Some('\"') => {\n            let s: String = chars.take_while(|c| *c != '\"').collect();\n            Some(Tok::Str(s))\n        }\n        Some(c) => {\n            Some(Tok::Other(c))\n        }\n        None => None,\n    }\n}\n\nimpl std::fmt::Display for Tok {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n        match self {\n            Tok::Str(s) => {\n                write!(f, \"{{{s}}}\")\n            }\n            Tok::Other(c) => write!(f, \"{c}\"),\n        }\n    }\n}\n";
        let test = "use lex::*;\n\n#[test]\nfn strings() {\n    let mut c = \"'a'\".chars();\n    assert!(matches!(next(&mut c), Some(Tok::Str(_))));\n}\n";
        let dir = project(&[("src/lib.rs", lexer), ("tests/lex.rs", test)]);
        let root = root_of(&dir);
        let found = found_in(
            root,
            "strings are lexed wrong",
            &["strings".to_owned()],
            &[("src/lib.rs".to_owned(), 6), ("src/lib.rs".to_owned(), 10)],
        );
        let names = names_of(&found);
        assert_eq!(names, ["next"], "{found:?}");
        assert_eq!(found[0].touched, [6, 10]);
    }

    #[test]
    fn a_node_test_title_and_a_rejected_changes_lines_lead_to_their_definitions() {
        let js = "function shape(m) {\n  return [m.length, m[0].length];\n}\n\nfunction multiply(a, b) {\n  const [rows, inner] = shape(a);\n  const [innerB, cols] = shape(b);\n  let sum = 0;\n  for (let k = 0; k < cols; k++) sum += a[0][k] * b[k][0];\n  return sum;\n}\n\nmodule.exports = { multiply };\n";
        let test = "const test = require('node:test');\nconst { multiply } = require('./matrix.js');\n\ntest('multiplies non-square matrices', () => {\n  multiply([[1, 2]], [[1], [2]]);\n});\n";
        let dir = project(&[("matrix.js", js), ("matrix.test.js", test)]);
        let root = root_of(&dir);
        let by_test = found_in(
            root,
            "the product is wrong",
            &["multiplies non-square matrices".to_owned()],
            &[],
        );
        let names = names_of(&by_test);
        assert_eq!(names, vec!["multiply", "shape"]);
        let by_lines = found_in(root, "wrong", &[], &[("matrix.js".to_owned(), 9)]);
        assert_eq!(by_lines[0].name, "multiply");
        let all = mutants(root, "", &by_test, 200);
        assert!(
            all.iter()
                .any(|m| m.to == "for (let k = 0; k < inner; k++) sum += a[0][k] * b[k][0];"),
            "{:?}",
            all.iter().map(|m| &m.to).collect::<Vec<_>>()
        );
    }

    #[test]
    fn negations_are_dropped_and_booleans_turned_but_macros_and_inequalities_stay() {
        let js = "function ok(a, b) {\n  if (!a.done && a !== b) return true;\n  return !(b);\n}\n";
        let rs = "fn ok(a: bool) -> bool {\n    println!(\"{}\", !a);\n    a != false\n}\n";
        let py = "def ok(a):\n    return not a and a not in (1,)\n";
        let dir = project(&[("m.js", js), ("m.rs", rs), ("m.py", py)]);
        let root = root_of(&dir);
        let js = edits_of(root, "m.js", 0, 4);
        assert!(
            js.contains(&"if (a.done && a !== b) return true;".to_owned()),
            "{js:?}"
        );
        assert!(js.contains(&"return (b);".to_owned()), "{js:?}");
        assert!(
            js.contains(&"if (!a.done && a !== b) return false;".to_owned()),
            "{js:?}"
        );
        let rs = edits_of(root, "m.rs", 0, 4);
        assert!(rs.contains(&"println!(\"{}\", a);".to_owned()), "{rs:?}");
        assert!(
            rs.iter()
                .all(|t| t.contains("println!") || !t.starts_with("println")),
            "{rs:?}"
        );
        assert!(rs.contains(&"a != true".to_owned()), "{rs:?}");
        let py = edits_of(root, "m.py", 0, 2);
        assert!(
            py.contains(&"return a and a not in (1,)".to_owned()),
            "{py:?}"
        );
        assert!(
            !py.iter()
                .any(|t| t.contains("a in (1,)") && !t.contains("not in")),
            "{py:?}"
        );
    }

    #[test]
    fn the_lines_a_rejected_change_touched_are_edited_first() {
        let dir = project(&[("roman.py", ROMAN), ("test_roman.py", ROMAN_TEST)]);
        let root = root_of(&dir);
        let touched = [("roman.py".to_owned(), 15), ("other.py".to_owned(), 15)];
        let found = found_in(root, "", &["test_subtractive".to_owned()], &touched);
        assert_eq!(found.len(), 2, "from_roman and the _VALUES it reads");
        assert_eq!(found[0].touched, [15]);
        let all = mutants(root, "", &found, 500);
        // Line 15 (`total += value`) before the comparisons of lines 11 and 12.
        assert_eq!((all[0].line, all[0].to.as_str()), (15, "total -= value"));
        assert!(
            all.iter()
                .skip_while(|m| m.line == 15)
                .all(|m| m.line != 15)
        );
        assert_eq!(all.iter().find(|m| m.line != 15).map(|m| m.line), Some(11));
    }

    #[test]
    fn a_rewritten_files_lines_are_no_lead_and_do_not_crowd_out_the_tests_sites() {
        let dir = project(&[("roman.py", ROMAN), ("test_roman.py", ROMAN_TEST)]);
        let root = root_of(&dir);
        let rewrite: Vec<(String, usize)> = (1..=60).map(|l| ("roman.py".to_owned(), l)).collect();
        let found = found_in(root, "", &["test_subtractive".to_owned()], &rewrite);
        // The definition the test reaches and the constant it reads, neither led by the rewrite.
        let names = names_of(&found);
        assert_eq!(names, ["from_roman", "_VALUES"]);
        assert!(found.iter().all(|s| s.touched.is_empty()), "{found:?}");
    }

    #[test]
    fn a_condition_gains_a_guard_by_the_definitions_flag() {
        let rs = "fn string(&mut self) -> Option<String> {\n    let mut out = String::new();\n    let mut escaped = false;\n    while let Some(c) = self.bump() {\n        if c == '\"' {\n            return Some(out);\n        }\n        if escaped {\n            escaped = false;\n        } else if c == '\\\\' || c == '/' {\n            escaped = true;\n        }\n    }\n    None\n}\n";
        let py = "def read(text):\n    quoted = False\n    for c in text:\n        if c == ',': continue\n        elif c == '\"':\n            quoted = not quoted\n";
        let js = "function scan(s) {\n  let done = false;\n  for (const c of s) {\n    if (c === 'x' || c === 'y') return c;\n    if (c === 'z') done = true;\n  }\n}\n";
        let dir = project(&[("m.rs", rs), ("m.py", py), ("m.js", js)]);
        let root = root_of(&dir);
        let rs = edits_of(root, "m.rs", 0, 14);
        assert!(
            rs.contains(&"if c == '\"' && !escaped {".to_owned()),
            "{rs:?}"
        );
        assert!(
            rs.contains(&"if c == '\"' && escaped {".to_owned()),
            "{rs:?}"
        );
        assert!(
            rs.contains(&"} else if (c == '\\\\' || c == '/') && !escaped {".to_owned()),
            "{rs:?}"
        );
        // A goal that speaks of the flag puts the edits that bring it in first.
        let first = mutants(
            root,
            "the lexer ends a string at an escaped quote",
            &[site_of("m.rs", 0, 14)],
            500,
        );
        let guard = first
            .iter()
            .position(|m| m.to == "if c == '\"' && !escaped {")
            .expect("the guard");
        let plain = first
            .iter()
            .position(|m| !m.to.contains("escaped") || m.from.contains("escaped"))
            .expect("an edit that brings in no goal word");
        assert!(guard < plain, "{guard} {plain}");
        assert!(speaks_of(&goal_words("a quoted field"), "isQuote"));
        assert!(speaks_of(&goal_words("the page size"), "per_page"));
        assert!(!speaks_of(&goal_words("should not fail"), "should_fail"));
        // A condition that already reads the flag, and a `while let`, gain nothing.
        assert!(
            !rs.iter().any(|t| t.contains("escaped && !escaped")),
            "{rs:?}"
        );
        assert!(
            !rs.iter()
                .any(|t| t.starts_with("while") && t.contains("&&")),
            "{rs:?}"
        );
        let py = edits_of(root, "m.py", 0, 6);
        assert!(
            py.contains(&"if c == ',' and not quoted: continue".to_owned()),
            "{py:?}"
        );
        assert!(
            py.contains(&"elif c == '\"' and quoted:".to_owned()),
            "{py:?}"
        );
        let js = edits_of(root, "m.js", 0, 6);
        assert!(
            js.contains(&"if ((c === 'x' || c === 'y') && !done) return c;".to_owned()),
            "{js:?}"
        );
        assert!(
            js.contains(&"if (c === 'z' && !done) done = true;".to_owned()),
            "{js:?}"
        );
    }

    #[test]
    fn strings_compared_or_cut_out_as_numbers_and_divisions_rounded_up() {
        let js = "function cmp(left, right, i) {\n  return left[i] < right[i] ? -1 : 1;\n}\n\nfunction pages(n, size) {\n  return Math.floor(n / size);\n}\n";
        let rs = "pub fn page_count(total: usize, per_page: usize) -> usize {\n    (total / per_page).max(1)\n}\n";
        let py = "def pages(n, size):\n    return max(n // size, 1) if self.a.b >= 2 else 0\n";
        let go = "func less(a, b []string) bool {\n\treturn a[0] < b[0]\n}\n";
        let parts_js = "function parse(s, match) {\n  const p = s.split('.');\n  return match.slice(1, 4);\n}\n";
        let parts_py = "def parse(m):\n    return m.group(1).split('.')\n";
        let dir = project(&[
            ("m.js", js),
            ("m.rs", rs),
            ("m.py", py),
            ("m.go", go),
            ("p.js", parts_js),
            ("p.py", parts_py),
        ]);
        let root = root_of(&dir);
        let cmp = edits_of(root, "m.js", 0, 2);
        assert!(
            cmp.contains(&"return Number(left[i]) < Number(right[i]) ? -1 : 1;".to_owned()),
            "{cmp:?}"
        );
        let parts = edits_of(root, "p.js", 0, 3);
        assert!(
            parts.contains(&"return match.slice(1, 4).map(Number);".to_owned()),
            "{parts:?}"
        );
        assert!(
            parts.contains(&"const p = s.split('.').map(Number);".to_owned()),
            "{parts:?}"
        );
        let py_parts = edits_of(root, "p.py", 0, 2);
        assert!(
            py_parts.contains(&"return list(map(int, m.group(1).split('.')))".to_owned()),
            "{py_parts:?}"
        );
        let pages = edits_of(root, "m.js", 4, 6);
        assert!(
            pages.contains(&"return Math.ceil(n / size);".to_owned()),
            "{pages:?}"
        );
        let rs = edits_of(root, "m.rs", 0, 2);
        assert!(
            rs.contains(&"(total.div_ceil(per_page)).max(1)".to_owned()),
            "{rs:?}"
        );
        let py = edits_of(root, "m.py", 0, 2);
        assert!(
            py.contains(&"return max(-(-n // size), 1) if self.a.b >= 2 else 0".to_owned()),
            "{py:?}"
        );
        assert!(
            !py.iter().any(|t| t.contains("int(")),
            "a number is no operand to convert: {py:?}"
        );
        // Go compares strings by value on purpose: no conversion there.
        let go = edits_of(root, "m.go", 0, 2);
        assert!(
            !go.iter().any(|t| t.contains('(') && t.contains("a[0]) <")),
            "{go:?}"
        );
    }

    #[test]
    fn operands_of_a_division_or_subtraction_swap_and_a_one_atom_pattern_becomes_a_run() {
        let rs = "pub fn f_to_c(f: f64) -> f64 {\n    (f - 32.0) * 9.0 / 5.0\n}\n\npub fn g(a: &V, n: f64) -> f64 {\n    a.x / n - len(a) / n\n}\n";
        let py = "def slug(t):\n    t = _DASHES.sub('-', t)\n    a = re.compile(r\"-\")\n    b = re.compile(r\"\\w\")\n    c = re.compile(\"[,;]\")\n    d = re.compile(r\"a-\")\n    e = re.compile(r\"-+\")\n    return t\n";
        let dir = project(&[("m.rs", rs), ("m.py", py)]);
        let root = root_of(&dir);
        let f = edits_of(root, "m.rs", 0, 3);
        for swapped in ["(32.0 - f) * 9.0 / 5.0", "(f - 32.0) * 5.0 / 9.0"] {
            assert!(f.contains(&swapped.to_owned()), "{f:?}");
        }
        // A member's, a call's result, a called name: not plain operands.
        let g = edits_of(root, "m.rs", 4, 7);
        assert!(
            !g.iter()
                .any(|t| t.starts_with("n /") || t.contains("len / ")),
            "{g:?}"
        );
        let runs = edits_of(root, "m.py", 0, 8);
        for run in [
            "a = re.compile(r\"-+\")",
            "b = re.compile(r\"\\w+\")",
            "c = re.compile(\"[,;]+\")",
        ] {
            assert!(runs.contains(&run.to_owned()), "{run}: {runs:?}");
        }
        // Two atoms, or a run already: no `+`.
        assert!(
            !runs.iter().any(|t| t.contains("a-+") || t.contains("-++")),
            "{runs:?}"
        );
    }

    #[test]
    fn what_the_tests_reach_through_their_helpers_and_several_calls_is_a_site() {
        let js = "function tokenize(s) {\n  return next(s);\n}\n\nfunction next(s) {\n  return quoted(s);\n}\n\nfunction quoted(s) {\n  return s.length > 1;\n}\n\nmodule.exports = { tokenize };\n";
        let test = "const test = require('node:test');\nconst { tokenize } = require('./lex.js');\n\nfunction kinds(s) {\n  return tokenize(s).map((t) => t.kind);\n}\n\ntest('reads a string', () => {\n  kinds('x');\n});\n";
        let dir = project(&[("lex.js", js), ("lex.test.js", test)]);
        let root = root_of(&dir);
        let found = found_in(
            root,
            "strings are cut short",
            &["reads a string".to_owned()],
            &[],
        );
        let names = names_of(&found);
        assert_eq!(names, ["tokenize", "next", "quoted"]);
    }

    #[test]
    fn a_diffs_touched_lines_are_its_old_lines() {
        let diff = "--- a/x.py\n+++ b/x.py\n@@ -3,4 +3,4 @@\n a\n-b\n+B\n c\n@@ -20,2 +20,3 @@\n d\n+e\n f\n";
        assert_eq!(touched_lines(diff), vec![4, 21]);
    }

    #[test]
    fn code_names_are_what_a_goal_writes_as_code() {
        assert_eq!(
            code_names(
                "from_roman('XIV') returns 16; multiply() in `matrix` and TodoList::overdue, parseQueryString"
            ),
            vec![
                "from_roman",
                "multiply",
                "matrix",
                "TodoList",
                "overdue",
                "parseQueryString"
            ]
        );
        assert!(code_names("the last page is missing").is_empty());
    }

    #[test]
    fn strings_comments_and_lifetimes_are_lexed_apart() {
        let toks: Vec<&str> = lex("let s = \"a < b\"; // x > y", Lang::Rust)
            .iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(toks, vec!["let", "s", "=", "\"a < b\"", ";"]);
        let toks: Vec<&str> = lex("fn f<'a>(x: &'a str) -> char { 'x' }", Lang::Rust)
            .iter()
            .map(|t| t.text)
            .collect();
        assert!(toks.contains(&"'a") && toks.contains(&"'x'") && toks.contains(&"->"));
        let toks: Vec<&str> = lex("x = a // 2  # half", Lang::Python)
            .iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(toks, vec!["x", "=", "a", "//", "2"]);
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::{Lang, Site, lex, mutants};
        use crate::agent::testkit::project;

        /// Code-like lines: operators, names, numbers, strings, comments, non-ASCII.
        fn line() -> impl Strategy<Value = String> {
            "( {0,4})[a-cé_0-9 <>=!+*/&|.,:;'\"`#(){}\\-]{0,24}"
        }

        proptest! {
            #[test]
            fn tokens_are_ordered_apart_and_the_lines_own_text(l in line(), which in 0..3usize) {
                let lang = [Lang::Python, Lang::Rust, Lang::Curly][which];
                let mut at = 0;
                for t in lex(&l, lang) {
                    prop_assert!(t.at >= at, "{:?}", l);
                    prop_assert_eq!(&l[t.at..t.at + t.text.len()], t.text);
                    prop_assert!(!t.text.trim().is_empty());
                    at = t.at + t.text.len();
                }
            }

            #[test]
            fn a_mutant_changes_one_line_of_its_definition_only(
                body in proptest::collection::vec(line(), 1..6),
                which in 0..2usize,
            ) {
                let (path, head) = [("m.py", "def f(a, b):"), ("m.js", "function f(a, b) {")][which];
                let lines: Vec<String> = body.iter().map(|l| format!("    {}", l.replace(['{', '}'], ""))).collect();
                let text = format!("{head}\n{}\n{}\n", lines.join("\n"), if which == 1 { "}" } else { "" });
                let dir = project(&[(path, &text)]);
                let root = camino::Utf8Path::from_path(dir.path()).expect("utf-8");
                let site = Site { path: path.to_owned(), name: "f".to_owned(), start: 0, end: lines.len() + 1, touched: Vec::new(), whole: false };
                for m in mutants(root, "", &[site], 200) {
                    let doc: serde_json::Value = serde_json::from_str(&m.document).expect("json");
                    let new = doc["actions"][0]["content"].as_str().expect("content");
                    let changed: Vec<usize> = text
                        .lines()
                        .zip(new.lines())
                        .enumerate()
                        .filter(|(_, (a, b))| a != b)
                        .map(|(k, _)| k + 1)
                        .collect();
                    prop_assert_eq!(new.lines().count(), text.lines().count());
                    prop_assert_eq!(&changed, &vec![m.line]);
                    prop_assert!(m.line >= 2 && m.line <= lines.len() + 1);
                }
            }
        }
    }
}
