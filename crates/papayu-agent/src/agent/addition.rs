//! A whole-file answer that holds only a new definition (D66). Asked to add a function or a
//! method and to answer with the whole new file, a small model often answers with the new
//! definition alone; read literally, that replaces the file with it. When an UPDATE_FILE's
//! content is one or more whole blocks, the first defining a name the file does not define yet
//! (lines the file already has, such as its imports, may come first and are dropped), the
//! content is added to the file instead: a method — a `self` parameter, an indented Python
//! `def`, a JavaScript method without `function` — at the end of the file's one class or
//! inherent `impl` block, re-indented to its body; anything else after the file's last
//! definition, before its trailer (`if __name__ == "__main__":`, `module.exports` / `export {…}`,
//! `#[cfg(test)]`). A one-line CommonJS `module.exports = { a, b };` then also exports the new
//! name. After the tests rejected a whole-file change, its new definitions alone are added
//! the same way (D79): a small model asked to add a method often rewrites the class or `impl`
//! around it with the other methods left out. Text in, text out; the tests judge the result
//! like any change.

use std::ops::Range;

use camino::Utf8Path;
use papayu_protocol::ActionKind;
use papayu_validate::ValidatedPlan;
use serde_json::{Value, json};

use super::fragment::defined_name;

/// A rejected whole-file change's new definitions, added alone (D79).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Added {
    /// The names of the definitions added, in file order.
    pub(crate) names: Vec<String>,
    /// The files they are added to.
    pub(crate) files: Vec<String>,
    /// `{"actions": [...]}`: an UPDATE_FILE per such file.
    pub(crate) document: String,
}

impl Added {
    /// `` `a`, `b` added alone to x.rs, from <parent trace id> ``.
    pub(crate) fn describe(&self, parent: &str) -> String {
        let names: Vec<String> = self.names.iter().map(|n| format!("`{n}`")).collect();
        format!(
            "{} added alone to {}, from {parent}",
            names.join(", "),
            self.files.join(", ")
        )
    }
}

/// The new definitions of `plan`'s UPDATE_FILEs added alone to the files as they are (see
/// [`added_definitions`]); `None` when it adds none, or holds anything but whole-file updates.
pub(crate) fn added(root: &Utf8Path, plan: &ValidatedPlan) -> Option<Added> {
    let mut names = Vec::new();
    let mut files = Vec::new();
    let mut doc: Vec<Value> = Vec::new();
    for a in plan.actions() {
        if *a.kind() != ActionKind::UpdateFile {
            return None;
        }
        let path = a.path.as_str();
        let old = String::from_utf8(fs_err::read(root.join(path)).ok()?).ok()?;
        let new = a.action.content.as_deref()?;
        if let Some((grown, added)) = added_definitions(path, &old, new) {
            names.extend(added);
            files.push(path.to_owned());
            doc.push(json!({"kind": "UPDATE_FILE", "path": path, "content": grown}));
        }
    }
    (!names.is_empty()).then(|| Added {
        names,
        files,
        document: json!({ "actions": doc }).to_string(),
    })
}

/// `file` with `content` added as described in the module docs, and the range of the file's
/// lines it was inserted before (empty: nothing of the file is replaced); `None` when the
/// content is not a new definition or there is no one place for it.
pub(super) fn addition(path: &str, file: &str, content: &str) -> Option<(String, Range<usize>)> {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let f: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    let c: Vec<&str> = content.trim_end().split('\n').map(str::trim_end).collect();
    // The first line that opens a block and defines a name; what comes before it must be lines
    // the file already has (a repeated import) or blank.
    let start = c
        .iter()
        .position(|l| opens_block(l) && defined_name(l).is_some())?;
    // Its comments, attributes and decorators come with it.
    let mut lead = start;
    while lead > 0 && is_lead(c[lead - 1]) && leading(c[lead - 1]) == leading(c[start]) {
        lead -= 1;
    }
    let known: std::collections::HashSet<&str> = f.iter().map(|l| l.trim()).collect();
    if !c[..lead]
        .iter()
        .all(|l| l.trim().is_empty() || known.contains(l.trim()))
    {
        return None;
    }
    let head = c[start];
    let body = &c[lead..];
    let name = defined_name(head)?;
    // Every definition at the content's own depth is new to the file: one that redefines a
    // name the file has is an edit or a rewrite, not an addition.
    let defined: std::collections::HashSet<&str> = f
        .iter()
        .filter(|l| opens_block(l))
        .filter_map(|l| defined_name(l))
        .collect();
    let depth = leading(head).len();
    if body.iter().any(|l| {
        leading(l).len() == depth
            && opens_block(l)
            && defined_name(l).is_some_and(|n| defined.contains(n))
    }) || !whole_blocks(body)
    {
        return None;
    }
    let eol = if file.contains("\r\n") { "\r\n" } else { "\n" };
    let python = path.ends_with(".py") || path.ends_with(".pyi");
    let (at, indent, gap) = if is_method(head, python) {
        let (at, indent) = if python {
            class_end(&f)?
        } else {
            container_end(&f)?
        };
        (at, indent, 1)
    } else {
        (trailer_start(&f), String::new(), if python { 2 } else { 1 })
    };
    let base = leading(head);
    let mut block = String::new();
    for l in body {
        if l.trim().is_empty() {
            block.push_str(eol);
            continue;
        }
        let own = leading(l);
        // Re-indent: the block's first line to `indent`, the others keep their depth below it.
        let rest = l.get(own.len().min(base.len())..).unwrap_or(l.trim_start());
        block.push_str(&indent);
        block.push_str(rest);
        block.push_str(eol);
    }
    // Blank lines around the block: `gap` before it, and after it when the file goes on.
    let before_blank = f[..at].iter().rev().take_while(|l| l.is_empty()).count();
    let mut out = String::new();
    let prefix_end = at - before_blank;
    lines[..prefix_end].iter().for_each(|l| out.push_str(l));
    if prefix_end > 0 && !lines[prefix_end - 1].ends_with('\n') {
        out.push_str(eol);
    }
    if prefix_end > 0 {
        (0..gap).for_each(|_| out.push_str(eol));
    }
    out.push_str(&block);
    if at < f.len() {
        let next = f[at].trim();
        let after = if next.is_empty() || next.starts_with('}') {
            0
        } else {
            gap
        };
        (0..after).for_each(|_| out.push_str(eol));
    }
    lines[at..].iter().for_each(|l| out.push_str(l));
    if !python {
        out = export_too(&out, name);
    }
    Some((out, at..at))
}

/// `old` with the definitions `new` adds added as [`addition`] adds one, and their names: each
/// block of `new` (with the comments, attributes and decorators right above it) that opens
/// with a definition of a name `old` does not hold as a word, outside another such block.
/// `None` when `new` adds no definition or one has no place in `old`.
pub(super) fn added_definitions(path: &str, old: &str, new: &str) -> Option<(String, Vec<String>)> {
    let words: std::collections::HashSet<&str> = old
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
        .collect();
    let lines: Vec<&str> = new.lines().map(str::trim_end).collect();
    let mut file = old.to_owned();
    let mut names = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let name = defined_name(l).filter(|n| opens_block(l) && !words.contains(n));
        let Some(name) = name else {
            i += 1;
            continue;
        };
        // The comments, attributes and decorators right above it, at its depth.
        let depth = leading(l).len();
        let mut start = i;
        while start > 0 {
            let above = lines[start - 1];
            if !is_lead(above) || leading(above).len() != depth {
                break;
            }
            start -= 1;
        }
        let end = block_end(&lines, i)?;
        let block = lines[start..end].join("\n");
        let (grown, _) = addition(path, &file, &block)?;
        file = grown;
        names.push(name.to_owned());
        i = end;
    }
    (!names.is_empty()).then_some((file, names))
}

/// The end (exclusive) of the block opened at `lines[at]`: braces balanced again, or the last
/// line indented deeper than it for a block opened with `:`.
fn block_end(lines: &[&str], at: usize) -> Option<usize> {
    if lines[at].trim_end().ends_with('{') {
        let mut depth: i64 = 0;
        for (k, l) in lines.iter().enumerate().skip(at) {
            depth += l.chars().filter(|&c| c == '{').count() as i64;
            depth -= l.chars().filter(|&c| c == '}').count() as i64;
            if depth <= 0 {
                return Some(k + 1);
            }
        }
        return None;
    }
    let base = leading(lines[at]).len();
    let mut end = at + 1;
    for (k, l) in lines.iter().enumerate().skip(at + 1) {
        if l.trim().is_empty() {
            continue;
        }
        if leading(l).len() <= base {
            break;
        }
        end = k + 1;
    }
    (end > at + 1).then_some(end)
}

/// A comment, attribute or decorator line, which leads the definition below it.
fn is_lead(line: &str) -> bool {
    let t = line.trim();
    ["#[", "@", "//", "/*", "*", "#"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// A line that opens a block: it ends with `{` or `:` (a comment line aside).
fn opens_block(line: &str) -> bool {
    let t = line.trim();
    !t.starts_with('#') && !t.starts_with("//") && (t.ends_with('{') || t.ends_with(':'))
}

/// The line's leading whitespace.
fn leading(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The lines are whole blocks: with braces, balanced and never closing more than they opened,
/// each top-level line a definition, an attribute, a decorator or a comment; with a trailing
/// `:`, every line below the first indented deeper, or at its depth opening another block.
fn whole_blocks(body: &[&str]) -> bool {
    let braces = |l: &str| {
        l.chars().filter(|&ch| ch == '{').count() as i64
            - l.chars().filter(|&ch| ch == '}').count() as i64
    };
    let top = |l: &str| {
        let t = l.trim();
        (opens_block(l) && defined_name(l).is_some())
            || ["#[", "@", "//", "/*", "*", "#"]
                .iter()
                .any(|p| t.starts_with(p))
    };
    // The definition's own line, below its comments, attributes and decorators.
    let first = body.iter().find(|l| !is_lead(l)).unwrap_or(&body[0]);
    if first.trim_end().ends_with('{') {
        let mut depth = 0;
        for l in body {
            if depth == 0 && !l.trim().is_empty() && !top(l) {
                return false;
            }
            depth += braces(l);
            if depth < 0 {
                return false;
            }
        }
        depth == 0
    } else {
        let base = leading(first).len();
        body.iter().skip(1).all(|l| {
            l.trim().is_empty() || leading(l).len() > base || (leading(l).len() == base && top(l))
        }) && body.len() > 1
    }
}

/// The definition is a method: it takes `self` (`&self`, `cls`), is an indented Python `def`,
/// or is a JavaScript method (`name(args) {` without `function`, `=` or a declaration keyword).
fn is_method(first: &str, python: bool) -> bool {
    let t = first.trim_start();
    let params = t.split_once('(').map_or("", |(_, p)| p);
    let first_param = params
        .split([',', ')'])
        .next()
        .unwrap_or("")
        .trim()
        .trim_start_matches('&')
        .trim_start_matches("mut ")
        .trim();
    if matches!(first_param, "self" | "cls") || first_param.starts_with("self:") {
        return true;
    }
    if python {
        return !leading(first).is_empty();
    }
    let head = t.split('(').next().unwrap_or("");
    let words: Vec<&str> = head.split_whitespace().collect();
    const PLAIN: &[&str] = &[
        "function",
        "fn",
        "const",
        "let",
        "var",
        "class",
        "def",
        "export",
        "pub",
        "struct",
        "enum",
        "trait",
        "impl",
        "mod",
        "type",
        "interface",
        "func",
    ];
    t.ends_with('{')
        && !head.contains('=')
        && !words
            .iter()
            .any(|w| PLAIN.contains(w) || w.starts_with("pub("))
}

/// Where a Python method goes: after the last line of the file's one top-level class, and the
/// indentation of that class's body.
fn class_end(f: &[&str]) -> Option<(usize, String)> {
    let classes: Vec<usize> = (0..f.len())
        .filter(|&i| f[i].starts_with("class ") && f[i].ends_with(':'))
        .collect();
    let [class] = classes.as_slice() else {
        return None;
    };
    let mut last = *class;
    let mut indent = None;
    for (i, l) in f.iter().enumerate().skip(class + 1) {
        if l.trim().is_empty() {
            continue;
        }
        if leading(l).is_empty() {
            break;
        }
        indent.get_or_insert_with(|| leading(l).to_owned());
        last = i;
    }
    Some((last + 1, indent.unwrap_or_else(|| "    ".to_owned())))
}

/// Where a method of a brace language goes: before the closing brace of the file's one class
/// (`class X {`) or inherent `impl` block (`impl X {`, not `impl T for X {`), and the
/// indentation of its body.
fn container_end(f: &[&str]) -> Option<(usize, String)> {
    let containers: Vec<usize> = (0..f.len())
        .filter(|&i| {
            let t = f[i].trim();
            t.ends_with('{')
                && ((t.starts_with("class ")
                    || t.contains(" class ")
                    || t.starts_with("export class"))
                    || ((t.starts_with("impl ") || t.starts_with("impl<")) && !t.contains(" for ")))
        })
        .collect();
    let [open] = containers.as_slice() else {
        return None;
    };
    let mut depth = 0i64;
    for (i, l) in f.iter().enumerate().skip(*open) {
        depth += l.chars().filter(|&ch| ch == '{').count() as i64
            - l.chars().filter(|&ch| ch == '}').count() as i64;
        if depth == 0 {
            if !l.trim().starts_with('}') {
                return None;
            }
            let indent = f[open + 1..i]
                .iter()
                .find(|l| !l.trim().is_empty())
                .map_or_else(
                    || format!("{}    ", leading(f[*open])),
                    |l| leading(l).to_owned(),
                );
            return Some((i, indent));
        }
    }
    None
}

/// Where a top-level definition goes: before the file's trailer — a Python main guard, a
/// trailing `module.exports` / `export {…}` / `export default` statement, a Rust test module —
/// or at the end.
fn trailer_start(f: &[&str]) -> usize {
    let last = f
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let trailer = (0..last).rev().find(|&i| {
        let l = f[i];
        l.starts_with("if __name__")
            || l.starts_with("#[cfg(test)]")
            || l.starts_with("module.exports")
            || l.starts_with("export {")
            || l.starts_with("export default")
    });
    match trailer {
        // Only a trailer that ends the file counts: after it, nothing at the top level but
        // closing brackets (and a test module's `mod tests {` after its attribute).
        Some(i)
            if f[i + 1..last].iter().all(|l| {
                l.trim().is_empty()
                    || !leading(l).is_empty()
                    || l.starts_with(['}', ')', ']'])
                    || (f[i].starts_with("#[cfg(test)]") && l.starts_with("mod "))
            }) =>
        {
            // Comments and attributes right above it belong to it.
            let mut at = i;
            while at > 0 && {
                let t = f[at - 1].trim();
                t.starts_with("//") || t.starts_with('#')
            } {
                at -= 1;
            }
            at
        }
        _ => last,
    }
}

/// `text` with its one-line CommonJS export of names (`module.exports = { a, b };`) exporting
/// `name` too, when it does not already.
fn export_too(text: &str, name: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| exported(line, name).unwrap_or_else(|| line.to_owned()))
        .collect()
}

/// The export line with `name` added, if it is one that lacks it.
fn exported(line: &str, name: &str) -> Option<String> {
    let t = line.trim_end();
    let inner = t
        .strip_prefix("module.exports = {")?
        .trim_end_matches(';')
        .trim_end()
        .strip_suffix('}')?;
    let names: Vec<&str> = inner
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.contains(&name)
        || names.iter().any(|n| {
            !n.chars()
                .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '$')
        })
    {
        return None;
    }
    let mut all = names;
    all.push(name);
    let semi = if t.ends_with(';') { ";" } else { "" };
    Some(format!(
        "module.exports = {{ {} }}{semi}{}",
        all.join(", "),
        &line[t.len()..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewritten_impl_that_left_the_other_methods_out_adds_its_new_method_alone() {
        let file = "pub struct M {\n    n: usize,\n}\n\nimpl M {\n    pub fn new(n: usize) -> Self {\n        M { n }\n    }\n\n    pub fn get(&self) -> usize {\n        self.n\n    }\n}\n\nimpl Clone for M {\n    fn clone(&self) -> Self {\n        M { n: self.n }\n    }\n}\n";
        // The model's whole file: the impl holds the new method only.
        let answer = "pub struct M {\n    n: usize,\n}\n\nimpl M {\n    /// Twice.\n    pub fn double(&self) -> M {\n        let n = self.n * 2;\n        M { n }\n    }\n}\n\nimpl Clone for M {\n    fn clone(&self) -> Self {\n        M { n: self.n }\n    }\n}\n";
        let (out, names) = added_definitions("src/lib.rs", file, answer).unwrap();
        assert_eq!(names, ["double"]);
        assert_eq!(
            out,
            "pub struct M {\n    n: usize,\n}\n\nimpl M {\n    pub fn new(n: usize) -> Self {\n        M { n }\n    }\n\n    pub fn get(&self) -> usize {\n        self.n\n    }\n\n    /// Twice.\n    pub fn double(&self) -> M {\n        let n = self.n * 2;\n        M { n }\n    }\n}\n\nimpl Clone for M {\n    fn clone(&self) -> Self {\n        M { n: self.n }\n    }\n}\n"
        );
        // Nothing new: nothing to add.
        assert_eq!(added_definitions("src/lib.rs", file, file), None);
    }

    #[test]
    fn new_python_definitions_of_a_rewritten_file_are_added_alone() {
        let answer = "import re\n\n\ndef words(text):\n    return text.split()\n\n\ndef top_words(text, n):\n    def key(kv):\n        return (-kv[1], kv[0])\n    return sorted(word_counts(text).items(), key=key)[:n]\n";
        let (out, names) = added_definitions("wordcount.py", WORDS, answer).unwrap();
        assert_eq!(names, ["top_words"]);
        assert_eq!(
            out,
            format!(
                "{WORDS}\n\ndef top_words(text, n):\n    def key(kv):\n        return (-kv[1], kv[0])\n    return sorted(word_counts(text).items(), key=key)[:n]\n"
            )
        );
    }

    const WORDS: &str = "\"\"\"Count words.\"\"\"\n\nimport re\nfrom collections import Counter\n\n\ndef words(text):\n    return re.findall(r\"[a-z]+\", text.lower())\n\n\ndef word_counts(text):\n    return Counter(words(text))\n";

    #[test]
    fn a_new_python_function_goes_after_the_last_definition() {
        let content = "from collections import Counter\n\ndef top_words(text, n):\n    ranked = sorted(word_counts(text).items(), key=lambda kv: (-kv[1], kv[0]))\n    return ranked[:n]\n";
        let (out, at) = addition("wordcount.py", WORDS, content).unwrap();
        assert_eq!(at, 12..12);
        assert_eq!(
            out,
            format!(
                "{WORDS}\n\ndef top_words(text, n):\n    ranked = sorted(word_counts(text).items(), key=lambda kv: (-kv[1], kv[0]))\n    return ranked[:n]\n"
            )
        );
    }

    #[test]
    fn a_python_method_goes_to_the_end_of_the_one_class_reindented() {
        let file = "class TodoStore:\n    def __init__(self):\n        self.items = []\n\n    def add(self, title):\n        self.items.append(title)\n\n\nif __name__ == \"__main__\":\n    print(TodoStore())\n";
        let content = "def clear_completed(self):\n    n = len(self.items)\n    self.items = []\n    return n\n";
        let (out, at) = addition("todo.py", file, content).unwrap();
        assert_eq!(at, 6..6);
        assert_eq!(
            out,
            "class TodoStore:\n    def __init__(self):\n        self.items = []\n\n    def add(self, title):\n        self.items.append(title)\n\n    def clear_completed(self):\n        n = len(self.items)\n        self.items = []\n        return n\n\n\nif __name__ == \"__main__\":\n    print(TodoStore())\n"
        );
    }

    #[test]
    fn a_js_function_goes_before_the_exports_and_is_exported() {
        let file = "'use strict';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nmodule.exports = { add };\n";
        let content = "function sub(a, b) {\n  return a - b;\n}\n";
        let (out, _) = addition("calc.js", file, content).unwrap();
        assert_eq!(
            out,
            "'use strict';\n\nfunction add(a, b) {\n  return a + b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n\nmodule.exports = { add, sub };\n"
        );
    }

    #[test]
    fn a_js_method_goes_into_the_one_class() {
        let file = "export class Emitter {\n  constructor() {\n    this.map = new Map();\n  }\n\n  on(event, fn) {\n    this.map.set(event, fn);\n  }\n}\n";
        let content = "once(event, fn) {\n  this.on(event, fn);\n}";
        let (out, at) = addition("emitter.js", file, content).unwrap();
        assert_eq!(at, 8..8);
        assert_eq!(
            out,
            "export class Emitter {\n  constructor() {\n    this.map = new Map();\n  }\n\n  on(event, fn) {\n    this.map.set(event, fn);\n  }\n\n  once(event, fn) {\n    this.on(event, fn);\n  }\n}\n"
        );
    }

    #[test]
    fn a_rust_method_goes_into_the_inherent_impl_before_the_tests() {
        let file = "pub struct M(Vec<f64>);\n\nimpl M {\n    pub fn len(&self) -> usize {\n        self.0.len()\n    }\n}\n\nimpl Default for M {\n    fn default() -> Self {\n        M(Vec::new())\n    }\n}\n";
        let content = "pub fn is_empty(&self) -> bool {\n    self.0.is_empty()\n}\n";
        let (out, at) = addition("src/lib.rs", file, content).unwrap();
        assert_eq!(at, 6..6);
        assert!(
            out.contains("        self.0.len()\n    }\n\n    pub fn is_empty(&self) -> bool {\n        self.0.is_empty()\n    }\n}\n\nimpl Default"),
            "{out}"
        );
        let top = "pub fn double(x: i32) -> i32 {\n    x * 2\n}\n";
        let file = "pub fn one() -> i32 {\n    1\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
        let (out, _) = addition("src/lib.rs", file, top).unwrap();
        assert_eq!(
            out,
            "pub fn one() -> i32 {\n    1\n}\n\npub fn double(x: i32) -> i32 {\n    x * 2\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n"
        );
    }

    #[test]
    fn edits_rewrites_and_fragments_are_not_additions() {
        // The file defines the name already: an edit (fragment.rs's job).
        assert_eq!(
            addition("wordcount.py", WORDS, "def words(text):\n    return []\n"),
            None
        );
        // A statement, not a definition.
        assert_eq!(addition("wordcount.py", WORDS, "print(words('a'))\n"), None);
        // New lines before the definition.
        assert_eq!(
            addition(
                "wordcount.py",
                WORDS,
                "import os\n\ndef f(x):\n    return x\n"
            ),
            None
        );
        // Not whole blocks.
        assert_eq!(
            addition(
                "calc.js",
                "function a() {\n  return 1;\n}\n",
                "function b() {\n  return 2;\n"
            ),
            None
        );
        // A rewrite: a new helper first, then the file's own definitions again.
        assert_eq!(
            addition(
                "wordcount.py",
                WORDS,
                "def helper(x):\n    return x\n\n\ndef words(text):\n    return []\n"
            ),
            None
        );
        // Two classes: no one place for a method.
        let two = "class A:\n    pass\n\n\nclass B:\n    pass\n";
        assert_eq!(
            addition("ab.py", two, "    def f(self):\n        return 1\n"),
            None
        );
    }
}
