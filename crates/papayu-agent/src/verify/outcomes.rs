//! Which tests passed and failed, read from a test runner's output: Python unittest (`-v`) and
//! pytest (`-rA`), node's built-in runner (TAP and spec reporters), cargo test, go test (`-v`).
//! Output no parser recognises gives no per-test outcomes, and the verdict falls back to the
//! exit status.

use std::collections::BTreeMap;

use serde::Serialize;

/// One test's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    /// It passed.
    Pass,
    /// It was skipped or ignored.
    Skip,
    /// It failed or errored.
    Fail,
}

/// The per-test outcomes found in one run's output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TestOutcomes {
    /// Test name → outcome. A name seen twice keeps its worst outcome.
    pub tests: BTreeMap<String, TestStatus>,
}

impl TestOutcomes {
    fn record(&mut self, name: impl Into<String>, status: TestStatus) {
        let name = name.into();
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        let slot = self.tests.entry(name.to_owned()).or_insert(status);
        *slot = (*slot).max(status);
    }

    /// Whether no test outcome was recognised.
    pub fn is_empty(&self) -> bool {
        self.tests.is_empty()
    }

    /// The names with `status`, sorted.
    pub fn with(&self, status: TestStatus) -> Vec<String> {
        self.tests
            .iter()
            .filter(|(_, s)| **s == status)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// The outcome of `name`, if it ran.
    pub fn get(&self, name: &str) -> Option<TestStatus> {
        self.tests.get(name).copied()
    }
}

/// `test_add (test_calc.CalcTest.test_add) ... ok` (unittest -v).
fn unittest(line: &str, out: &mut TestOutcomes) -> bool {
    let Some((head, tail)) = line.split_once(" ... ") else {
        return false;
    };
    let Some(open) = head.find(" (") else {
        return false;
    };
    if !head.ends_with(')') {
        return false;
    }
    let name = &head[open + 2..head.len() - 1];
    let status = match tail.trim() {
        "ok" => TestStatus::Pass,
        "FAIL" | "ERROR" => TestStatus::Fail,
        "expected failure" => TestStatus::Pass,
        "unexpected success" => TestStatus::Fail,
        t if t.starts_with("skipped") => TestStatus::Skip,
        _ => return false,
    };
    out.record(name, status);
    true
}

/// `PASSED tests/test_x.py::test_a` / `FAILED tests/test_x.py::test_b - AssertionError` (pytest
/// -rA short summary), and `tests/test_x.py::test_a PASSED [ 50%]` (pytest -v).
fn pytest(line: &str, out: &mut TestOutcomes) -> bool {
    let status_of = |word: &str| match word {
        "PASSED" | "XFAIL" => Some(TestStatus::Pass),
        "FAILED" | "ERROR" | "XPASS" => Some(TestStatus::Fail),
        "SKIPPED" => Some(TestStatus::Skip),
        _ => None,
    };
    let mut words = line.split_whitespace();
    let (Some(first), Some(second)) = (words.next(), words.next()) else {
        return false;
    };
    if let Some(status) = status_of(first)
        && second.contains("::")
    {
        out.record(second, status);
        return true;
    }
    if first.contains("::")
        && let Some(status) = status_of(second)
    {
        out.record(first, status);
        return true;
    }
    false
}

/// `test tests::adds ... ok` (cargo test) and `tests::adds --- FAILED` (cargo test --quiet),
/// named after the test binary (`src/lib.rs::tests::adds`) because names repeat across them.
fn cargo(line: &str, binary: &str, out: &mut TestOutcomes) -> bool {
    let qualified = |name: &str| {
        if binary.is_empty() {
            name.to_owned()
        } else {
            format!("{binary}::{name}")
        }
    };
    if let Some(rest) = line.strip_prefix("test ")
        && let Some((name, status)) = rest.rsplit_once(" ... ")
    {
        let status = match status.trim() {
            "ok" => TestStatus::Pass,
            "FAILED" => TestStatus::Fail,
            s if s.starts_with("ignored") => TestStatus::Skip,
            _ => return false,
        };
        out.record(qualified(name.trim()), status);
        return true;
    }
    if let Some(name) = line.strip_suffix(" --- FAILED")
        && !name.contains(' ')
    {
        out.record(qualified(name.trim()), TestStatus::Fail);
        return true;
    }
    false
}

/// `--- PASS: TestAdd (0.00s)` / `--- FAIL: …` / `--- SKIP: …` (go test -v).
fn go(line: &str, out: &mut TestOutcomes) -> bool {
    let t = line.trim_start();
    for (prefix, status) in [
        ("--- PASS: ", TestStatus::Pass),
        ("--- FAIL: ", TestStatus::Fail),
        ("--- SKIP: ", TestStatus::Skip),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            let name = rest.split(" (").next().unwrap_or(rest);
            out.record(name, status);
            return true;
        }
    }
    false
}

/// node's TAP reporter: `ok 1 - adds` / `not ok 2 - subtracts` with nested `# Subtest:` levels
/// (suites are named by their path, `group > inner`); suites themselves are not tests.
struct Tap {
    /// The subtests open at each indentation level: (indent, name, has nested results).
    stack: Vec<(usize, String, bool)>,
}

impl Tap {
    fn line(&mut self, line: &str, out: &mut TestOutcomes) -> bool {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim_start();
        if let Some(name) = t.strip_prefix("# Subtest: ") {
            self.stack.retain(|(i, _, _)| *i < indent);
            self.stack.push((indent, name.trim().to_owned(), false));
            return true;
        }
        let (status, rest) = if let Some(r) = t.strip_prefix("not ok ") {
            (TestStatus::Fail, r)
        } else if let Some(r) = t.strip_prefix("ok ") {
            (TestStatus::Pass, r)
        } else {
            return false;
        };
        let Some((_, name)) = rest.split_once(" - ") else {
            return false;
        };
        let (name, directive) = match name.split_once(" # ") {
            Some((n, d)) => (n.trim(), d.trim().to_ascii_uppercase()),
            None => (name.trim(), String::new()),
        };
        let status = if directive.starts_with("SKIP") || directive.starts_with("TODO") {
            TestStatus::Skip
        } else {
            status
        };
        // A suite's own result line comes after its subtests' and repeats them.
        let is_suite = self
            .stack
            .iter()
            .any(|(i, n, nested)| *i == indent && n == name && *nested);
        let mut path: Vec<&str> = self
            .stack
            .iter()
            .filter(|(i, _, _)| *i < indent)
            .map(|(_, n, _)| n.as_str())
            .collect();
        path.push(name);
        let full = path.join(" > ");
        for entry in self.stack.iter_mut().filter(|(i, _, _)| *i < indent) {
            entry.2 = true;
        }
        self.stack.retain(|(i, _, _)| *i < indent);
        if !is_suite {
            out.record(full, status);
        }
        true
    }
}

/// node's spec reporter: `✔ adds (0.5ms)` / `✖ subtracts (1ms)` / `﹣ later (0.1ms) # SKIP`; a
/// suite opens with `▶ group` and closes with its own `✔`/`✖ group (…)`, which is not a test.
struct Spec {
    /// Suites opened by `▶ name` and not closed yet: (indent, name).
    suites: Vec<(usize, String)>,
}

impl Spec {
    fn line(&mut self, line: &str, out: &mut TestOutcomes) -> bool {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim_start();
        if let Some(name) = t.strip_prefix("▶ ") {
            if !name.trim_end().ends_with(')') {
                self.suites.push((indent, name.trim().to_owned()));
            }
            return true;
        }
        let (status, rest) = if let Some(r) = t.strip_prefix("✔ ") {
            (TestStatus::Pass, r)
        } else if let Some(r) = t.strip_prefix("✖ ") {
            (TestStatus::Fail, r)
        } else if let Some(r) = t.strip_prefix("﹣ ") {
            (TestStatus::Skip, r)
        } else {
            return false;
        };
        let name = match rest.rfind(" (") {
            Some(i) if rest.trim_end().ends_with(')') || rest.contains("# SKIP") => &rest[..i],
            _ => rest,
        };
        if let Some(at) = self
            .suites
            .iter()
            .rposition(|(i, n)| *i == indent && n == name)
        {
            self.suites.truncate(at);
            return true;
        }
        out.record(name, status);
        true
    }
}

/// The per-test outcomes in a test run's combined output (see the module docs for the
/// formats). Unknown output gives empty outcomes.
pub fn parse_outcomes(output: &str) -> TestOutcomes {
    let mut out = TestOutcomes::default();
    let mut tap = Tap { stack: Vec::new() };
    let mut spec = Spec { suites: Vec::new() };
    let mut binary = String::new();
    let mut in_spec_summary = false;
    for raw in output.lines() {
        let line = raw.trim_end_matches('\r');
        // cargo names each test binary before its tests.
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed
            .strip_prefix("Running unittests ")
            .or_else(|| trimmed.strip_prefix("Running "))
        {
            binary = rest.split(" (").next().unwrap_or(rest).trim().to_owned();
            continue;
        }
        if trimmed.starts_with("Doc-tests ") {
            binary = "doctests".to_owned();
            continue;
        }
        if trimmed.starts_with("✖ failing tests:") {
            in_spec_summary = true;
            continue;
        }
        if in_spec_summary {
            continue;
        }
        let _ = unittest(line, &mut out)
            || cargo(line, &binary, &mut out)
            || pytest(line, &mut out)
            || go(line, &mut out)
            || tap.line(line, &mut out)
            || spec.line(line, &mut out);
    }
    out
}

/// Whether a line is a stack frame nobody needs to fix the code: Rust backtrace frames, frames
/// inside node or the Python/Rust standard libraries.
fn noise(line: &str) -> bool {
    let t = line.trim_start();
    let numbered_frame = t
        .split_once(": ")
        .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    numbered_frame
        || t.starts_with("at /rustc/")
        || t.contains("(node:")
        || t.starts_with("node:internal")
        || t.contains("node:internal/")
        || t.starts_with("stack backtrace:")
        || t.starts_with("note: Some details are omitted")
        || t.contains("/lib/python3")
        || t.starts_with("npm warn")
        || t.starts_with("duration_ms:")
        || t.starts_with("# duration_ms")
        || t.starts_with("ℹ duration_ms")
}

/// Whether a line is a test runner's progress chatter, which says nothing about why a test
/// fails: cargo's build and binary banners (`Compiling`, `Finished`, `Running … (target/…)`,
/// `Doc-tests`), a test binary that ran no test, a passing test's status line (`test x ... ok`,
/// unittest's `test_x (m.C.test_x) ... ok`, pytest's `PASSED`, TAP's `ok 3 - name`, go's
/// `--- PASS:` and its `=== RUN`/`PAUSE`/`CONT` progress), node's TAP
/// bookkeeping when the output is TAP (`tap`: `TAP version`, `# Subtest:` — repeated by its
/// `not ok` line — the YAML diagnostic's `---`/`...` fences, `failureType`, `code`, `name`,
/// `operator`, empty `expected:`/`actual:` keys, zero counters). The failures themselves —
/// names, messages, values, locations, frames in the project — stay. A small model reads every
/// prompt token at about 40 a second on two cores: cargo's banners and node's YAML were a third
/// of their logs (issue #16).
fn chatter(line: &str, tap: bool) -> bool {
    let t = line.trim();
    let passed = t.ends_with(" ... ok")
        || t.ends_with(" PASSED")
        || t.starts_with("--- PASS: ")
        || t.starts_with("=== RUN ")
        || t.starts_with("=== PAUSE ")
        || t.starts_with("=== CONT ")
        || (t.contains(" PASSED [") && t.ends_with("%]"))
        || t.strip_prefix("ok ").is_some_and(|r| {
            r.split_once(" - ")
                .is_some_and(|(n, _)| n.bytes().all(|b| b.is_ascii_digit()))
        });
    let cargo = (t.starts_with("Compiling ") && t.contains(" v"))
        || t.starts_with("Finished `")
        || (t.starts_with("Running ") && t.ends_with(')') && t.contains("target/"))
        || t.starts_with("Doc-tests ")
        || t == "running 0 tests"
        || (t.starts_with("test result: ok. 0 passed;") && t.contains(" 0 failed;"))
        || t.starts_with("error: test failed, to rerun pass");
    let bookkeeping = t.starts_with("TAP version ")
        || t.starts_with("# Subtest: ")
        || t == "---"
        || t == "..."
        || t.starts_with("failureType: ")
        || t.starts_with("code: 'ERR_")
        || t.starts_with("name: '")
        || t.starts_with("operator: '")
        || t == "expected:"
        || t == "actual:"
        || ["# suites 0", "# cancelled 0", "# skipped 0", "# todo 0"].contains(&t);
    passed || cargo || (tap && bookkeeping)
}

/// A test runner's own summary or result line (not a test's message, whose text is the
/// model's to read as it is).
fn runner_line(line: &str) -> bool {
    let t = line.trim_start();
    (t.starts_with("Ran ") && t.contains(" test"))
        || (t.starts_with('=') && t.trim_end().ends_with('='))
        || t.starts_with("test result:")
        || t.starts_with(['✔', '✖', '﹣', '▶'])
        || t.starts_with("--- ")
        || t.starts_with("ok ")
        || t.starts_with("ok\t")
        || t.starts_with("FAIL\t")
}

/// A runner line without the run's timings — `in 0.012s` (unittest, pytest, cargo's "finished
/// in"), `(1.23ms)` / `(0.00s)` (node's spec reporter, go's `--- FAIL`), a tab and `0.004s`
/// (go's package line): they change from run to run, and a prompt that depends on how fast the
/// machine was makes the same project get a different answer. Other lines are kept as they are.
fn without_timings(line: &str) -> std::borrow::Cow<'_, str> {
    if !runner_line(line) {
        return std::borrow::Cow::Borrowed(line);
    }
    /// The length of a duration (`12`, `0.5`, then `s` or `ms`) at the start of `s`.
    fn duration_len(s: &str) -> Option<usize> {
        let digits = s
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        if digits == 0 || !s.as_bytes()[0].is_ascii_digit() {
            return None;
        }
        let rest = &s[digits..];
        let unit = if rest.starts_with("ms") {
            2
        } else if rest.starts_with('s') {
            1
        } else {
            return None;
        };
        let end = digits + unit;
        // `3 seconds` or `5sec` is prose, not a timing.
        let next = s[end..].chars().next();
        next.is_none_or(|c| !c.is_alphanumeric()).then_some(end)
    }
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        let cut = if let Some(r) = rest.strip_prefix(" in ") {
            duration_len(r).map(|n| 4 + n)
        } else if let Some(r) = rest.strip_prefix(" (") {
            duration_len(r)
                .filter(|&n| r[n..].starts_with(')'))
                .map(|n| 3 + n)
        } else if let Some(r) = rest.strip_prefix('\t') {
            duration_len(r).map(|n| 1 + n)
        } else {
            None
        };
        match cut {
            Some(n) => {
                out.push_str(&line[copied..i]);
                i += n;
                copied = i;
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(line);
    }
    out.push_str(&line[copied..]);
    std::borrow::Cow::Owned(out)
}

/// A line with the memory addresses a runtime prints in object descriptions masked as `0x…`:
/// `<lru.LRUCache object at 0x7f33196cc150>` reads `<lru.LRUCache object at 0x…>`. They change
/// from run to run, so the same failure would give the model a different prompt (and a greedy
/// model a different answer) each time. An address is hex after `at 0x`, or 12 or more hex
/// digits after `0x` anywhere; shorter constants in a test's own message (`0xdeadbeef`) stay.
fn without_addresses(line: std::borrow::Cow<'_, str>) -> std::borrow::Cow<'_, str> {
    if !line.contains("0x") {
        return line;
    }
    let mut out = String::with_capacity(line.len());
    let mut rest: &str = &line;
    let mut changed = false;
    while let Some(i) = rest.find("0x") {
        let hex = rest[i + 2..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count();
        let after_at = rest[..i].ends_with("at ");
        if hex > 0 && (after_at || hex >= 12) {
            out.push_str(&rest[..i]);
            out.push_str("0x…");
            rest = &rest[i + 2 + hex..];
            changed = true;
        } else {
            out.push_str(&rest[..i + 2]);
            rest = &rest[i + 2..];
        }
    }
    if !changed {
        return line;
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// cargo's test output in an order that does not depend on the run: its test threads finish in
/// whatever order the machine's scheduler gives them, and cargo prints each test's status line
/// and each failure's `---- name stdout ----` section in that order. Both are sorted by the
/// test's name here (cargo's closing `failures:` list already is), so the same failure reads
/// the same in every run — a greedy model given the same project gets the same prompt (D57), and
/// the first failure it reads does not change from run to run (D85). Other output is returned
/// as it is.
fn in_name_order(output: &str) -> std::borrow::Cow<'_, str> {
    let lines: Vec<&str> = output.lines().collect();
    let is_status = |l: &str| {
        l.strip_prefix("test ")
            .and_then(|r| r.rsplit_once(" ... "))
            .is_some()
    };
    let is_section = |l: &str| l.starts_with("---- ") && l.ends_with(" ----");
    if !lines.iter().any(|l| is_section(l) || is_status(l)) {
        return std::borrow::Cow::Borrowed(output);
    }
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if is_status(lines[i]) {
            let start = i;
            while i < lines.len() && is_status(lines[i]) {
                i += 1;
            }
            let mut run = lines[start..i].to_vec();
            run.sort_unstable();
            out.extend(run);
            continue;
        }
        if is_section(lines[i]) {
            // Sections up to the closing `failures:` list (or the end).
            let mut sections: Vec<&[&str]> = Vec::new();
            while i < lines.len() && is_section(lines[i]) {
                let start = i;
                i += 1;
                while i < lines.len() && !is_section(lines[i]) && lines[i].trim() != "failures:" {
                    i += 1;
                }
                sections.push(&lines[start..i]);
            }
            sections.sort_by_key(|s| s[0]);
            for s in sections {
                out.extend_from_slice(s);
            }
            continue;
        }
        out.push(lines[i]);
        i += 1;
    }
    let mut text = out.join("\n");
    if output.ends_with('\n') {
        text.push('\n');
    }
    std::borrow::Cow::Owned(text)
}

/// A compact account of a failing run for the model: cargo's tests in name order
/// (`in_name_order`), the output without stack-frame noise, without the runner's chatter
/// (`chatter`: banners, passing tests, TAP bookkeeping) and without the run's timings (the same
/// failure reads the same on a fast or a slow machine), its tail kept within `max_chars` (cut
/// on a line boundary).
pub fn failure_digest(output: &str, max_chars: usize) -> String {
    let tap = output.lines().any(|l| l.starts_with("TAP version "));
    let output = in_name_order(output);
    let mut lines: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    let mut blank = false;
    for line in output.lines() {
        if noise(line) || chatter(line, tap) {
            continue;
        }
        let line = without_addresses(without_timings(line));
        let is_blank = line.trim().is_empty();
        if is_blank && blank {
            continue;
        }
        blank = is_blank;
        lines.push(line);
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut total = 0;
    for line in lines.iter().rev() {
        let n = line.chars().count() + 1;
        if total + n > max_chars && !kept.is_empty() {
            break;
        }
        total += n;
        kept.push(line);
    }
    kept.reverse();
    let omitted = lines.len() - kept.len();
    let mut text = kept.join("\n");
    if omitted > 0 {
        text = format!("...[{omitted} earlier lines omitted]...\n{text}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_addresses_are_masked_and_test_constants_kept() {
        let cases = [
            (
                "AssertionError: 'a' not found in <lru.LRUCache object at 0x7f33196cc150>",
                "AssertionError: 'a' not found in <lru.LRUCache object at 0x…>",
            ),
            (
                "<function f at 0x1049a0e50> is not <bound method at 0x7f00aa>",
                "<function f at 0x…> is not <bound method at 0x…>",
            ),
            ("ptr 0x55d5c0ffee001234 dangling", "ptr 0x… dangling"),
            (
                "expected 0xdeadbeef, got 0xCBF43926",
                "expected 0xdeadbeef, got 0xCBF43926",
            ),
            ("no hex here", "no hex here"),
        ];
        for (line, want) in cases {
            assert_eq!(
                without_addresses(std::borrow::Cow::Borrowed(line)),
                want,
                "{line}"
            );
        }
        let a = failure_digest(
            "FAIL: t\nAssertionError: x in <A object at 0x7f33196cc150>\n",
            500,
        );
        let b = failure_digest(
            "FAIL: t\nAssertionError: x in <A object at 0x7fa000000010>\n",
            500,
        );
        assert_eq!(a, b);
    }

    #[test]
    fn runner_timings_are_left_out_and_test_messages_kept() {
        let cases = [
            ("Ran 4 tests in 0.012s", "Ran 4 tests"),
            (
                "========= 1 failed, 2 passed in 0.31s =========",
                "========= 1 failed, 2 passed =========",
            ),
            (
                "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
                "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished",
            ),
            ("✖ subtracts (1.0234ms)", "✖ subtracts"),
            ("--- FAIL: TestAdd (0.00s)", "--- FAIL: TestAdd"),
            ("FAIL\texample.com/calc\t0.004s", "FAIL\texample.com/calc"),
            ("ok  \texample.com/calc\t0.002s", "ok  \texample.com/calc"),
            // A test's own message keeps its durations; prose units are not timings.
            (
                "AssertionError: 'retry in 5s' != 'retry in 2s'",
                "AssertionError: 'retry in 5s' != 'retry in 2s'",
            ),
            ("Ran 3 tests in 5 seconds", "Ran 3 tests in 5 seconds"),
        ];
        for (line, want) in cases {
            assert_eq!(without_timings(line), want, "{line}");
        }
        let node =
            "# Subtest: adds\nok 1 - adds\n  ---\n  duration_ms: 0.81\n  ...\n# duration_ms 95.1\n";
        let twice = failure_digest(
            &node.replace("0.81", "3.5").replace("95.1", "120.7"),
            10_000,
        );
        assert_eq!(failure_digest(node, 10_000), twice);
        assert!(!twice.contains("duration_ms"), "{twice}");
    }

    const UNITTEST: &str = "\
test_add (test_calc.CalcTest.test_add) ... FAIL
test_err (test_calc.CalcTest.test_err) ... ERROR
test_mul (test_calc.CalcTest.test_mul) ... ok
test_skip (test_calc.CalcTest.test_skip) ... skipped 'later'

======================================================================
FAIL: test_add (test_calc.CalcTest.test_add)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/tmp/p/test_calc.py\", line 5, in test_add
    self.assertEqual(add(2, 3), 5)
AssertionError: -1 != 5

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=1, errors=1, skipped=1)
";

    #[test]
    fn unittest_verbose() {
        let o = parse_outcomes(UNITTEST);
        assert_eq!(
            o.with(TestStatus::Fail),
            ["test_calc.CalcTest.test_add", "test_calc.CalcTest.test_err"]
        );
        assert_eq!(o.with(TestStatus::Pass), ["test_calc.CalcTest.test_mul"]);
        assert_eq!(o.with(TestStatus::Skip), ["test_calc.CalcTest.test_skip"]);
    }

    #[test]
    fn pytest_short_summary_and_verbose() {
        let o = parse_outcomes(
            "tests/test_a.py::test_one PASSED [ 50%]\n\
             =========== short test summary info ===========\n\
             PASSED tests/test_a.py::test_one\n\
             FAILED tests/test_a.py::test_two - assert 1 == 2\n\
             SKIPPED [1] tests/test_a.py:9: later\n",
        );
        assert_eq!(o.get("tests/test_a.py::test_one"), Some(TestStatus::Pass));
        assert_eq!(o.get("tests/test_a.py::test_two"), Some(TestStatus::Fail));
    }

    #[test]
    fn cargo_test_names_the_binary_and_reads_quiet_output() {
        let o = parse_outcomes(
            "     Running unittests src/lib.rs (target/debug/deps/s-1)\n\
             running 3 tests\n\
             test tests::later ... ignored\n\
             test tests::zero ... ok\n\
             test tests::adds ... FAILED\n\
             \n     Running tests/integ.rs (target/debug/deps/integ-2)\n\
             running 1 test\n\
             tests::adds --- FAILED\n",
        );
        assert_eq!(o.get("src/lib.rs::tests::zero"), Some(TestStatus::Pass));
        assert_eq!(o.get("src/lib.rs::tests::adds"), Some(TestStatus::Fail));
        assert_eq!(o.get("src/lib.rs::tests::later"), Some(TestStatus::Skip));
        assert_eq!(o.get("tests/integ.rs::tests::adds"), Some(TestStatus::Fail));
    }

    #[test]
    fn node_tap_with_a_suite() {
        let tap = [
            "TAP version 13",
            "# Subtest: adds",
            "ok 1 - adds",
            "  ---",
            "  duration_ms: 1.1",
            "  ...",
            "# Subtest: subtracts",
            "not ok 2 - subtracts",
            "  ---",
            "  error: |-",
            "    0 !== 2",
            "  ...",
            "# Subtest: group",
            "    # Subtest: inner ok",
            "    ok 1 - inner ok",
            "    # Subtest: inner bad",
            "    not ok 2 - inner bad",
            "    1..2",
            "not ok 3 - group",
            "# Subtest: later",
            "ok 4 - later # SKIP",
            "1..4",
            "# tests 4",
            "# pass 2",
        ]
        .join("\n");
        let o = parse_outcomes(&tap);
        assert_eq!(o.get("adds"), Some(TestStatus::Pass));
        assert_eq!(o.get("subtracts"), Some(TestStatus::Fail));
        assert_eq!(o.get("group > inner ok"), Some(TestStatus::Pass));
        assert_eq!(o.get("group > inner bad"), Some(TestStatus::Fail));
        assert_eq!(o.get("later"), Some(TestStatus::Skip));
        assert_eq!(o.get("group"), None, "a suite is not a test");
        assert_eq!(o.tests.len(), 5);
    }

    #[test]
    fn node_spec_reporter_ignores_its_failure_summary() {
        let o = parse_outcomes(
            "✔ adds (0.51ms)\n✖ subtracts (1.2ms)\n  AssertionError\n\
             ﹣ later (0.1ms) # SKIP\nℹ tests 3\n✖ failing tests:\n\n✖ subtracts (1.2ms)\n",
        );
        assert_eq!(o.get("adds"), Some(TestStatus::Pass));
        assert_eq!(o.get("subtracts"), Some(TestStatus::Fail));
        assert_eq!(o.get("later"), Some(TestStatus::Skip));
        assert_eq!(o.tests.len(), 3);
    }

    #[test]
    fn go_verbose() {
        let o = parse_outcomes(
            "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n=== RUN   TestSub\n--- PASS: TestSub (0.00s)\n    --- SKIP: TestSub/later (0.00s)\nFAIL\n",
        );
        assert_eq!(o.get("TestAdd"), Some(TestStatus::Fail));
        assert_eq!(o.get("TestSub"), Some(TestStatus::Pass));
        assert_eq!(o.get("TestSub/later"), Some(TestStatus::Skip));
    }

    /// Real output of each runner on the same small failing suites (recorded on this project's
    /// CI machine: Python 3.11, node 20, cargo 1.95).
    #[test]
    fn recorded_runner_output() {
        let fixture = |text: &str, expect: &[(&str, TestStatus)], count: usize| {
            let o = parse_outcomes(text);
            for (name, status) in expect {
                assert_eq!(o.get(name), Some(*status), "{name} in {:?}", o.tests);
            }
            assert_eq!(o.tests.len(), count, "{:?}", o.tests);
        };
        use TestStatus::{Fail, Pass, Skip};
        fixture(
            include_str!("../../tests/fixtures/runner-output/unittest.txt"),
            &[
                ("test_calc.CalcTest.test_add", Fail),
                ("test_calc.CalcTest.test_err", Fail),
                ("test_calc.CalcTest.test_mul", Pass),
                ("test_calc.CalcTest.test_skip", Skip),
            ],
            4,
        );
        fixture(
            include_str!("../../tests/fixtures/runner-output/node-tap.txt"),
            &[
                ("adds", Pass),
                ("subtracts", Fail),
                ("group > inner ok", Pass),
                ("group > inner bad", Fail),
            ],
            4,
        );
        fixture(
            include_str!("../../tests/fixtures/runner-output/node-spec.txt"),
            &[
                ("adds", Pass),
                ("subtracts", Fail),
                ("inner ok", Pass),
                ("inner bad", Fail),
            ],
            4,
        );
        fixture(
            include_str!("../../tests/fixtures/runner-output/cargo.txt"),
            &[
                ("src/lib.rs::tests::adds", Fail),
                ("src/lib.rs::tests::panics", Fail),
                ("src/lib.rs::tests::zero", Pass),
                ("src/lib.rs::tests::later", Skip),
                ("tests/integ.rs::it_works", Fail),
            ],
            5,
        );
        fixture(
            include_str!("../../tests/fixtures/runner-output/cargo-quiet.txt"),
            &[("tests::adds", Fail), ("tests::panics", Fail)],
            2,
        );
    }

    #[test]
    fn unknown_output_has_no_outcomes() {
        assert!(parse_outcomes("make: *** [test] Error 1\n").is_empty());
        assert!(parse_outcomes("").is_empty());
    }

    #[test]
    fn a_name_seen_twice_keeps_its_worst_outcome() {
        let o = parse_outcomes("ok 1 - same\nnot ok 2 - same\nok 3 - same\n");
        assert_eq!(o.get("same"), Some(TestStatus::Fail));
    }

    #[test]
    fn cargo_tests_read_in_name_order_whatever_order_they_finished_in() {
        let run = |first: &str, second: &str| {
            format!(
                "running 3 tests\ntest tests::{first} ... FAILED\ntest tests::ok_one ... ok\ntest tests::{second} ... FAILED\n\n\
failures:\n\n---- tests::{first} stdout ----\npanicked in {first}:\n{first} broke\n\n\
---- tests::{second} stdout ----\npanicked in {second}:\n{second} broke\n\n\
failures:\n    tests::a_first\n    tests::b_second\n\ntest result: FAILED. 1 passed; 2 failed\n"
            )
        };
        let one = failure_digest(&run("b_second", "a_first"), 10_000);
        let other = failure_digest(&run("a_first", "b_second"), 10_000);
        assert_eq!(one, other);
        let a = one.find("a_first broke").unwrap();
        let b = one.find("b_second broke").unwrap();
        assert!(a < b, "{one}");
        assert!(
            one.find("test tests::a_first ... FAILED").unwrap()
                < one.find("test tests::b_second ... FAILED").unwrap(),
            "{one}"
        );
        // Output of other runners is left in its order.
        let py = "FAIL: test_b (t.T.test_b)\nAssertionError: b\nFAIL: test_a (t.T.test_a)\nAssertionError: a\n";
        assert_eq!(failure_digest(py, 10_000), py.trim_end());
    }

    /// The digest of `output` has none of `gone` and all of `kept`.
    fn digest_keeps(output: &str, gone: &[&str], kept: &[&str]) {
        let d = failure_digest(output, 10_000);
        for g in gone {
            assert!(!d.contains(g), "{g} kept:\n{d}");
        }
        for k in kept {
            assert!(d.contains(k), "{k} lost:\n{d}");
        }
    }

    #[test]
    fn digest_drops_runner_chatter_and_keeps_every_failure() {
        let cargo = "   Compiling jsonc_lexer v0.1.0 (/tmp/p)\n\
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.72s\n\
     Running unittests src/lib.rs (target/debug/deps/jsonc_lexer-ae6140cc5f9ea48e)\n\
\n\
running 0 tests\n\
\n\
test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
\n\
     Running tests/lexer.rs (target/debug/deps/lexer-96f2adae63e94bb1)\n\
\n\
running 2 tests\n\
test errors ... ok\n\
test escaped_quotes_stay_inside_the_string ... FAILED\n\
\n\
failures:\n\
\n\
---- escaped_quotes_stay_inside_the_string stdout ----\n\
thread 'escaped_quotes_stay_inside_the_string' panicked at tests/lexer.rs:5:10:\n\
called `Result::unwrap()` on an `Err` value: UnknownWord { word: \"hi\" }\n\
\n\
test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
\n\
error: test failed, to rerun pass `--test lexer`\n\
   Doc-tests jsonc_lexer\n";
        digest_keeps(
            cargo,
            &[
                "Compiling",
                "Finished",
                "Running",
                "running 0 tests",
                "0 passed",
                "errors ... ok",
                "Doc-tests",
                "to rerun",
            ],
            &[
                "running 2 tests",
                "escaped_quotes_stay_inside_the_string ... FAILED",
                "panicked at tests/lexer.rs:5:10",
                "UnknownWord { word: \"hi\" }",
                "test result: FAILED. 1 passed; 1 failed",
            ],
        );

        let tap = "TAP version 13\n# Subtest: compares numerically\nnot ok 2 - compares numerically\n  ---\n  \
location: 'test/semver.test.js:11:1'\n  failureType: 'testCodeFailure'\n  error: |-\n    \
Expected values to be strictly equal:\n\n    -1 !== 1\n\n  code: 'ERR_ASSERTION'\n  \
name: 'AssertionError'\n  expected: 1\n  actual: -1\n  operator: 'strictEqual'\n  stack: |-\n    \
TestContext.<anonymous> (file://test/semver.test.js:12:10)\n  ...\n# Subtest: parses\nok 3 - parses\n\
1..3\n# tests 3\n# suites 0\n# pass 1\n# fail 2\n# cancelled 0\n# skipped 0\n# todo 0\n";
        digest_keeps(
            tap,
            &[
                "TAP version",
                "# Subtest",
                "failureType",
                "ERR_ASSERTION",
                "'AssertionError'",
                "operator",
                "ok 3 - parses",
                "# suites",
                "# todo",
            ],
            &[
                "not ok 2 - compares numerically",
                "location: 'test/semver.test.js:11:1'",
                "-1 !== 1",
                "expected: 1",
                "actual: -1",
                "semver.test.js:12:10",
                "# fail 2",
            ],
        );
        digest_keeps(
            "=== RUN   TestAdd\n    calc_test.go:9: add(2, 3) = -1, want 5\n--- FAIL: TestAdd (0.00s)\n\
=== RUN   TestSub\n--- PASS: TestSub (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.002s\n",
            &["=== RUN", "TestSub"],
            &[
                "calc_test.go:9: add(2, 3) = -1, want 5",
                "--- FAIL: TestAdd",
            ],
        );
        // Outside TAP output, a message's own `name: '…'` line is the test's to show.
        let plain = failure_digest("AssertionError: dicts differ\nname: 'Ann'\n---\n", 10_000);
        assert!(
            plain.contains("name: 'Ann'") && plain.contains("---"),
            "{plain}"
        );
    }

    #[test]
    fn digest_drops_frames_and_keeps_the_tail() {
        let out = "thread 'tests::adds' panicked at src/lib.rs:5:25:\n\
                   assertion `left == right` failed\n  left: -1\n right: 5\n\
                   stack backtrace:\n   0: __rustc::rust_begin_unwind\n\
                   \x20            at /rustc/abc/library/std/src/panicking.rs:689:5\n\
                   test result: FAILED. 1 passed; 1 failed\n";
        let d = failure_digest(out, 10_000);
        assert!(d.contains("left: -1"));
        assert!(d.contains("test result: FAILED"));
        assert!(!d.contains("rust_begin_unwind"));
        assert!(!d.contains("/rustc/"));
        let short = failure_digest(out, 40);
        assert!(short.starts_with("...["), "{short}");
        assert!(short.ends_with("test result: FAILED. 1 passed; 1 failed"));
    }
}
