//! Test files in a goal's base context, focused on the failing tests: the tests that fail are
//! shown whole, the passing ones by name only (issue #16). Helpers, imports and fixtures stay.
//!
//! A test file is not the model's to change while the tests judge the fix (D60), so it is read,
//! not rewritten: what the model needs from it is what the failing tests expect. The passing
//! tests' bodies were a fifth of the benchmark's prompts, and a small model on two cores reads
//! about 40 prompt tokens a second.
//!
//! A test is found by its header — Python's `def test…` (with its decorators), Rust's `#[test]`
//! (or another `#[…test]` attribute) and its `fn`, JavaScript's `test(`/`it(` — and ends where
//! the indentation returns to the header's (a closing `}`/`})` at that depth included). A test
//! is failing when its name (Python, Rust) or its quoted title (JavaScript) is the last part of
//! a failing test's name. A file none of whose tests is recognised as failing is left whole:
//! the names may not match, and then eliding could hide the very test that fails.

/// The test a failing test's runner name points at: the title after the last ` > ` of a TAP
/// suite path (matched as a quoted string), else the identifier after the last `::` or `.`,
/// without a `[parameter]` suffix (matched as a word).
fn leaf(name: &str) -> Option<Leaf<'_>> {
    let name = name.trim();
    if let Some((_, title)) = name.rsplit_once(" > ") {
        return (!title.is_empty()).then_some(Leaf::Title(title));
    }
    let bare = name.split_once('[').map_or(name, |(n, _)| n);
    let last = bare.rsplit([':', '.']).next().unwrap_or(bare).trim();
    if !last.is_empty() && last.chars().all(|c| c.is_alphanumeric() || c == '_') {
        Some(Leaf::Ident(last))
    } else if !name.is_empty() {
        Some(Leaf::Title(name))
    } else {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf<'a> {
    Ident(&'a str),
    Title(&'a str),
}

impl Leaf<'_> {
    /// Whether the header line of a test (`def test_x(`, `fn x(`, `test('x', …`) is this test.
    fn names(&self, header: &str) -> bool {
        match self {
            Leaf::Ident(id) => header.match_indices(id).any(|(i, _)| {
                let before = header[..i].chars().next_back();
                let after = header[i + id.len()..].chars().next();
                before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
                    && after.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            }),
            Leaf::Title(t) => ['\'', '"', '`']
                .iter()
                .any(|q| header.contains(&format!("{q}{t}{q}"))),
        }
    }
}

/// The language's line comment, by the file's extension; `None` for languages whose tests are
/// not recognised.
fn comment(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    match ext {
        "py" => Some("#"),
        "rs" | "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "jsx" | "tsx" => Some("//"),
        _ => None,
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Whether `line` opens a Python or JavaScript test (its decorators above it are found by
/// [`tests`]; Rust's tests open with an attribute, [`is_test_attribute`]).
fn is_header(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("def test")
        || t.starts_with("async def test")
        || t.starts_with("test(")
        || t.starts_with("it(")
        || t.starts_with("test.only(")
        || t.starts_with("it.only(")
}

fn is_test_attribute(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("#[") && t.ends_with(']') && t.trim_end_matches(']').ends_with("test")
}

/// One test of the file: its lines `start..end` and the line naming it.
struct Test {
    start: usize,
    end: usize,
    header: usize,
}

/// The tests in `lines` (texts, without line numbers).
fn tests(lines: &[&str]) -> Vec<Test> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let (start, header) = if is_test_attribute(line) {
            // The attribute, further attributes, then the `fn`.
            let mut h = i + 1;
            while h < lines.len() && lines[h].trim_start().starts_with("#[") {
                h += 1;
            }
            if h >= lines.len() || !lines[h].contains("fn ") {
                i += 1;
                continue;
            }
            (i, h)
        } else if is_header(line) {
            let mut s = i;
            while s > 0
                && lines[s - 1].trim_start().starts_with('@')
                && indent(lines[s - 1]) == indent(line)
            {
                s -= 1;
            }
            (s, i)
        } else {
            i += 1;
            continue;
        };
        let depth = indent(lines[header]);
        let mut end = header + 1;
        while end < lines.len() {
            let l = lines[end];
            if l.trim().is_empty() || indent(l) > depth {
                end += 1;
                continue;
            }
            if l.trim_start().starts_with(['}', ')', ']']) {
                end += 1;
            }
            break;
        }
        // Blank lines at the end belong to the gap, not the test.
        while end > header + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        found.push(Test { start, end, header });
        i = end.max(i + 1);
    }
    found
}

/// The body of a FILE block of test file `path` (`N|text` lines, or plain text) with the tests
/// that are not `failing` replaced by one comment line per run of them, naming them; `None`
/// when nothing would be left out (no recognised failing test in the file, no passing test, or
/// an unknown language).
pub(crate) fn focus_tests(path: &str, body: &str, failing: &[String]) -> Option<String> {
    let comment = comment(path)?;
    let leaves: Vec<Leaf<'_>> = failing.iter().filter_map(|n| leaf(n)).collect();
    if leaves.is_empty() {
        return None;
    }
    // Split off the `N|` prefix of numbered lines.
    let rows: Vec<(&str, &str)> = body
        .lines()
        .map(|l| match l.split_once('|') {
            Some((n, text)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                (&l[..=n.len()], text)
            }
            _ => ("", l),
        })
        .collect();
    let texts: Vec<&str> = rows.iter().map(|(_, t)| *t).collect();
    let found = tests(&texts);
    let is_failing = |t: &Test| leaves.iter().any(|leaf| leaf.names(texts[t.header]));
    if !found.iter().any(is_failing) || found.iter().all(is_failing) {
        return None;
    }
    let name_of = |t: &Test| -> String {
        let h = texts[t.header].trim_start();
        // A JavaScript test's title: from its first quote to the same quote again.
        let title = h
            .find(['\'', '"', '`'])
            .filter(|_| !h.starts_with("def") && !h.starts_with("async def") && !h.contains("fn "))
            .and_then(|open| {
                let q = h[open..].chars().next()?;
                let rest = &h[open + 1..];
                rest.find(q).map(|close| &rest[..close])
            });
        match title {
            Some(t) => format!("\"{t}\""),
            None => h
                .split(['(', '<'])
                .next()
                .unwrap_or(h)
                .rsplit(' ')
                .next()
                .unwrap_or(h)
                .to_owned(),
        }
    };
    let mut out = String::with_capacity(body.len());
    let mut row = 0;
    let mut k = 0;
    while row < rows.len() {
        if k < found.len() && row == found[k].start {
            if is_failing(&found[k]) {
                for (prefix, text) in &rows[found[k].start..found[k].end] {
                    out.push_str(prefix);
                    out.push_str(text);
                    out.push('\n');
                }
                row = found[k].end;
                k += 1;
                continue;
            }
            // A run of passing tests (blank lines between them included).
            let depth = indent(texts[found[k].start]);
            let mut names = Vec::new();
            let mut next = row;
            while k < found.len() && !is_failing(&found[k]) {
                if texts[next..found[k].start]
                    .iter()
                    .any(|t| !t.trim().is_empty())
                {
                    break;
                }
                names.push(name_of(&found[k]));
                next = found[k].end;
                k += 1;
            }
            let (what, verb) = if names.len() == 1 {
                ("passing test", "is")
            } else {
                ("passing tests", "are")
            };
            out.push_str(&format!(
                "{:depth$}{comment} … {} {what} {verb} not shown: {}\n",
                "",
                names.len(),
                names.join(", ")
            ));
            // The blank lines after the run are copied as they are, by the rows below.
            row = next;
            continue;
        }
        let (prefix, text) = rows[row];
        out.push_str(prefix);
        out.push_str(text);
        out.push('\n');
        row += 1;
    }
    if !body.ends_with('\n') {
        out.pop();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(text: &str) -> String {
        text.lines()
            .enumerate()
            .map(|(i, l)| format!("{}|{l}\n", i + 1))
            .collect()
    }

    #[test]
    fn unittest_file_keeps_the_failing_test_and_the_fixtures() {
        let text = "import unittest\nfrom ini import parse\n\n\nclass ParseTest(unittest.TestCase):\n    def setUp(self):\n        self.text = \"a=1\"\n\n    def test_sections(self):\n        self.assertEqual(parse(\"[a]\"), {\"a\": {}})\n\n    def test_values(self):\n        self.assertEqual(parse(self.text), {\"\": {\"a\": \"1\"}})\n\n    @unittest.skipIf(False, \"never\")\n    def test_inline_comments(self):\n        self.assertEqual(parse(\"a=1 ; c\"), {\"\": {\"a\": \"1\"}})\n\n    def test_empty(self):\n        self.assertEqual(parse(\"\"), {})\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
        let body = numbered(text);
        let failing = vec!["test_ini.ParseTest.test_inline_comments".to_owned()];
        let out = focus_tests("test_ini.py", &body, &failing).expect("focused");
        assert!(
            out.contains("16|    def test_inline_comments(self):"),
            "{out}"
        );
        assert!(out.contains("15|    @unittest.skipIf"), "{out}");
        assert!(out.contains("6|    def setUp(self):"), "{out}");
        assert!(out.contains("24|    unittest.main()"), "{out}");
        assert!(
            out.contains("    # … 2 passing tests are not shown: test_sections, test_values\n"),
            "{out}"
        );
        assert!(
            out.contains("    # … 1 passing test is not shown: test_empty\n"),
            "{out}"
        );
        assert!(!out.contains("parse(\"[a]\")"), "{out}");
        assert!(out.len() < body.len());
    }

    #[test]
    fn rust_and_node_tests_by_name_and_title() {
        let rs = "use lexer::tokenize;\n\nfn kinds(t: &str) -> Vec<u8> {\n    tokenize(t)\n}\n\n#[test]\nfn numbers() {\n    assert_eq!(kinds(\"1\"), vec![1]);\n}\n\n#[test]\n#[should_panic]\nfn escaped_quotes() {\n    assert_eq!(\n        kinds(r#\"\"\\\"\"\"#),\n        vec![2]\n    );\n}\n";
        let failing = vec!["tests/lexer.rs::escaped_quotes".to_owned()];
        let out = focus_tests("tests/lexer.rs", rs, &failing).expect("focused");
        assert!(out.contains("fn kinds(t: &str)"), "{out}");
        assert!(
            out.contains("// … 1 passing test is not shown: numbers\n"),
            "{out}"
        );
        assert!(
            out.contains("#[should_panic]\nfn escaped_quotes() {"),
            "{out}"
        );
        assert!(out.ends_with("    );\n}\n"), "{out}");

        let js = "const test = require('node:test');\n\ntest('parses versions', () => {\n  assert.deepEqual(parse('1.2.3'), [1, 2, 3]);\n});\n\ntest(\"compares numerically, not as text\", () => {\n  assert.equal(compare('1.10.0', '1.9.0'), 1);\n});\n";
        let failing = vec!["compares numerically, not as text".to_owned()];
        let out = focus_tests("test/semver.test.js", js, &failing).expect("focused");
        assert!(
            out.contains("// … 1 passing test is not shown: \"parses versions\"\n"),
            "{out}"
        );
        assert!(out.contains("compare('1.10.0', '1.9.0')"), "{out}");
        assert!(!out.contains("deepEqual"), "{out}");
    }

    #[test]
    fn nothing_is_left_out_without_a_recognised_failing_test() {
        let text = "def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n";
        // No failing test named here: the file may hold the one that fails under another name.
        assert_eq!(
            focus_tests("test_x.py", text, &["test_x.py::test_c".to_owned()]),
            None
        );
        assert_eq!(focus_tests("test_x.py", text, &[]), None);
        // Every test fails: nothing to leave out.
        let both = vec![
            "test_x.py::test_a".to_owned(),
            "test_x.py::test_b".to_owned(),
        ];
        assert_eq!(focus_tests("test_x.py", text, &both), None);
        // An unknown language.
        assert_eq!(focus_tests("test_x.rb", text, &["test_a".to_owned()]), None);
        // A parameterised pytest name points at its function.
        let out = focus_tests("test_x.py", text, &["test_x.py::test_b[1-2]".to_owned()]).unwrap();
        assert_eq!(
            out,
            "# … 1 passing test is not shown: test_a\n\n\ndef test_b():\n    assert 2\n"
        );
    }
}
