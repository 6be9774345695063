//! Auto-gathering (SPEC §6.4): what to read before the first model call, from the goal text
//! and any attached log.
//!
//! Stack frames of Python, Rust, Node/TypeScript, Go and Java/Kotlin become ±`auto_radius_lines`
//! snippets of the project files they name (absolute paths inside the root are made relative;
//! frames outside the project or in vendored directories are skipped). Import errors bring the
//! ENV block and the manifests present. "test X fails" brings the test file and, when it can be
//! resolved, the module under test.

use papayu_validate::RelPath;
use regex::Regex;
use serde::Serialize;

use crate::confine::is_vendored;
use crate::files::FileIndex;
use crate::project::Project;
use crate::search::SearchMode;

/// Language of a stack frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// `File "x.py", line N` or `x.py:N`.
    Python,
    /// `src/x.rs:N:M`.
    Rust,
    /// `at f (x.ts:N:M)`, `x.ts(N,M)`.
    Node,
    /// `x.go:N`.
    Go,
    /// `(X.java:N)` / `(X.kt:N)`: a file name only, resolved by searching the project.
    Jvm,
}

/// A frame found in error text, before it is mapped onto the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceFrame {
    /// Which syntax matched.
    pub language: Language,
    /// The path as written (for JVM frames: the file name).
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// JVM frames: the package as a directory (`com/example`), used to pick among files of the
    /// same name.
    pub package_dir: Option<String>,
}

/// What auto-gathering decided to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AutoItem {
    Read { path: RelPath, start: u64, end: u64 },
    Env,
    Manifest(RelPath),
}

/// Manifests attached for an import error, in this order.
pub const MANIFESTS: &[&str] = &[
    "pyproject.toml",
    "requirements.txt",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "poetry.lock",
];

#[allow(clippy::expect_used)] // constant patterns; every one is exercised by the tests
fn re(pattern: &'static str) -> Regex {
    Regex::new(pattern).expect("constant regex")
}

struct Patterns {
    py_file: Regex,
    py_colon: Regex,
    rust: Regex,
    node: Regex,
    tsc: Regex,
    go: Regex,
    jvm: Regex,
    import_error: Regex,
    tests: Vec<Regex>,
}

fn patterns() -> &'static Patterns {
    static P: std::sync::OnceLock<Patterns> = std::sync::OnceLock::new();
    P.get_or_init(|| Patterns {
        py_file: re(r#"File "(?P<path>[^"\n]+)", line (?P<line>\d+)"#),
        py_colon: re(r"(?P<path>(?:[A-Za-z]:)?[\w./\\~+-]+\.py):(?P<line>\d+)"),
        rust: re(r"(?P<path>(?:[A-Za-z]:)?[\w./\\~+-]+\.rs):(?P<line>\d+)"),
        node: re(r"(?P<path>(?:file://)?(?:[A-Za-z]:)?[\w./\\~@+-]+\.(?:[cm]?[jt]sx?|vue|svelte)):(?P<line>\d+)"),
        tsc: re(r"(?P<path>[\w./\\~@+-]+\.tsx?)\((?P<line>\d+),\d+\)"),
        go: re(r"(?P<path>(?:[A-Za-z]:)?[\w./\\~@+-]+\.go):(?P<line>\d+)"),
        jvm: re(
            r"(?:at\s+(?P<qual>[\w$.]+)\.[\w$<>-]+)?\((?P<file>[\w$-]+\.(?:java|kt|kts|scala|groovy)):(?P<line>\d+)\)",
        ),
        import_error: re(
            r"(?i)\b(?:ImportError|ModuleNotFoundError|cannot find module|unresolved import|could not resolve (?:import|module)|no required module provides package|cannot find package)\b",
        ),
        tests: vec![
            re(r"FAILED\s+(?P<path>[\w./\\-]+\.py)::(?P<name>[\w.-]+)"),
            re(r"(?P<path>[\w./\\-]+\.py)::(?P<name>\w+)\s+FAILED"),
            re(r"(?m)^test\s+(?P<name>[\w:]+)\s+\.\.\.\s+FAILED"),
            re(r"---- (?P<name>[\w:]+) stdout ----"),
            re(r"--- FAIL: (?P<name>\w+)"),
            re(r"(?m)^\s*FAIL\s+(?P<path>[\w./@-]+\.(?:test|spec)\.[cm]?[jt]sx?)"),
            re(
                r"(?i)\btest\s+[`'\x22]?(?P<name>[\w:./-]+?)[`'\x22]?\s+(?:fails|failed|is failing|failing|is broken|breaks)\b",
            ),
        ],
    })
}

/// Every stack frame in `text`, innermost first where the language says which that is
/// (Python prints the innermost frame last, so its frames are reversed), deduplicated.
pub fn parse_frames(text: &str) -> Vec<TraceFrame> {
    let p = patterns();
    let mut python: Vec<TraceFrame> = Vec::new();
    let mut positioned: Vec<(usize, TraceFrame)> = Vec::new();
    let line_of =
        |c: &regex::Captures<'_>| c.name("line").and_then(|m| m.as_str().parse::<u64>().ok());
    for c in p.py_file.captures_iter(text) {
        if let (Some(path), Some(line)) = (c.name("path"), line_of(&c)) {
            python.push(TraceFrame {
                language: Language::Python,
                path: path.as_str().to_owned(),
                line,
                package_dir: None,
            });
        }
    }
    python.reverse();
    let simple = [
        (&p.py_colon, Language::Python),
        (&p.rust, Language::Rust),
        (&p.node, Language::Node),
        (&p.tsc, Language::Node),
        (&p.go, Language::Go),
    ];
    for (regex, language) in simple {
        for c in regex.captures_iter(text) {
            if let (Some(path), Some(line)) = (c.name("path"), line_of(&c)) {
                let frame = TraceFrame {
                    language,
                    path: path.as_str().to_owned(),
                    line,
                    package_dir: None,
                };
                positioned.push((path.start(), frame));
            }
        }
    }
    for c in p.jvm.captures_iter(text) {
        if let (Some(file), Some(line)) = (c.name("file"), line_of(&c)) {
            let package_dir = c
                .name("qual")
                .and_then(|q| q.as_str().rsplit_once('.'))
                .map(|(pkg, _)| pkg.replace('.', "/"));
            let frame = TraceFrame {
                language: Language::Jvm,
                path: file.as_str().to_owned(),
                line,
                package_dir,
            };
            positioned.push((file.start(), frame));
        }
    }
    positioned.sort_by_key(|(pos, _)| *pos);
    let mut out: Vec<TraceFrame> = Vec::new();
    for f in python
        .into_iter()
        .chain(positioned.into_iter().map(|(_, f)| f))
    {
        if f.line > 0 && !out.iter().any(|o| o.path == f.path && o.line == f.line) {
            out.push(f);
        }
    }
    out
}

/// Whether the text reports a missing import / module.
pub fn mentions_import_error(text: &str) -> bool {
    patterns().import_error.is_match(text)
}

/// A failing test named in the text: a path, a name, or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailingTest {
    /// Test file as written, when the text names one.
    pub path: Option<String>,
    /// Test name as written (`tests::parse_works`, `TestFoo`).
    pub name: Option<String>,
}

/// Failing tests named in the text, in order of appearance, deduplicated.
pub fn parse_failing_tests(text: &str) -> Vec<FailingTest> {
    let mut found: Vec<(usize, FailingTest)> = Vec::new();
    for regex in &patterns().tests {
        for c in regex.captures_iter(text) {
            let pos = c.get(0).map_or(0, |m| m.start());
            let path = c.name("path").map(|m| m.as_str().to_owned());
            let name = c.name("name").map(|m| m.as_str().to_owned());
            let (path, name) = match (path, name) {
                (None, Some(n)) if looks_like_path(&n) => (Some(n), None),
                other => other,
            };
            found.push((pos, FailingTest { path, name }));
        }
    }
    found.sort_by_key(|(pos, _)| *pos);
    let mut out: Vec<FailingTest> = Vec::new();
    for (_, t) in found {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

fn looks_like_path(s: &str) -> bool {
    s.contains('/')
        || [
            ".py", ".rs", ".go", ".ts", ".tsx", ".js", ".jsx", ".java", ".kt",
        ]
        .iter()
        .any(|e| s.ends_with(e))
}

impl Project {
    /// Map a path written in a trace onto an existing project file, or `None` (outside the
    /// project, vendored, refused or not found).
    fn frame_file(&self, raw: &str, index: &mut FileIndex) -> Option<RelPath> {
        let rel = self.root.relativize(raw)?;
        if is_vendored(&rel) {
            return None;
        }
        let parsed = RelPath::parse(&rel).ok()?;
        if let Ok(r) = self.root.resolve_rel(parsed.clone()) {
            return Some(r.rel);
        }
        let is_abs = raw.starts_with('/') || raw.contains(":\\") || raw.contains(":/");
        if is_abs {
            return None;
        }
        // A relative path from another working directory (`src/lib.rs` inside a workspace):
        // accept the one project file it can only mean.
        let found = index.unique_suffix(self, parsed.as_str(), None)?;
        self.root.resolve_rel(found).ok().map(|r| r.rel)
    }

    pub(crate) fn plan_auto(&self, text: &str) -> Vec<AutoItem> {
        let mut index = FileIndex::default();
        let radius = self.config.auto_radius_lines;
        // Frames grouped per file in first-seen order, ranges merged when they overlap.
        let mut files: Vec<(RelPath, Vec<(u64, u64)>)> = Vec::new();
        let mut frames_used = 0usize;
        for frame in parse_frames(text) {
            if frames_used >= self.config.auto_max_frames {
                break;
            }
            let file = match frame.language {
                Language::Jvm => index
                    .unique_suffix(self, &frame.path, frame.package_dir.as_deref())
                    .and_then(|f| self.root.resolve_rel(f).ok().map(|r| r.rel)),
                _ => self.frame_file(&frame.path, &mut index),
            };
            let Some(file) = file else { continue };
            frames_used += 1;
            let range = (
                frame.line.saturating_sub(radius).max(1),
                frame.line.saturating_add(radius),
            );
            add_range(&mut files, file, range);
        }
        for test in parse_failing_tests(text).into_iter().take(2) {
            for (file, range) in self.resolve_failing_test(&test, &mut index) {
                add_range(&mut files, file, range);
            }
        }
        let mut items: Vec<AutoItem> = Vec::new();
        for (path, ranges) in files {
            for (start, end) in ranges {
                items.push(AutoItem::Read {
                    path: path.clone(),
                    start,
                    end,
                });
            }
        }
        if mentions_import_error(text) {
            items.push(AutoItem::Env);
            for m in MANIFESTS {
                if let Ok(rel) = RelPath::parse(m)
                    && let Ok(r) = self.root.resolve_rel(rel)
                {
                    items.push(AutoItem::Manifest(r.rel));
                }
            }
        }
        items
    }

    fn resolve_failing_test(
        &self,
        test: &FailingTest,
        index: &mut FileIndex,
    ) -> Vec<(RelPath, (u64, u64))> {
        let radius = self.config.auto_radius_lines;
        let default_range = (1, self.config.read_default_lines.max(1));
        let ident = test.name.as_deref().map(|n| {
            let n = n.split('[').next().unwrap_or(n);
            n.rsplit("::")
                .next()
                .unwrap_or(n)
                .rsplit('.')
                .next()
                .unwrap_or(n)
                .to_owned()
        });
        let mut out = Vec::new();
        let (file, line) = match (&test.path, &ident) {
            (Some(p), _) => {
                let Some(file) = self.frame_file(p, index) else {
                    return out;
                };
                let line = ident
                    .as_deref()
                    .and_then(|id| self.definition_line(&file, id));
                (file, line)
            }
            (None, Some(id)) => {
                let Some((file, line)) = self.find_test_definition(id) else {
                    return out;
                };
                (file, Some(line))
            }
            (None, None) => return out,
        };
        let range = line.map_or(default_range, |l| {
            (l.saturating_sub(radius).max(1), l.saturating_add(radius))
        });
        out.push((file.clone(), range));
        if let Some(module) = self.module_under_test(&file, index)
            && module != file
        {
            out.push((module, default_range));
        }
        out
    }

    /// `fn NAME`, `def NAME`, `func NAME`, `test("NAME"` / `it("NAME"` — the definition of a
    /// test named in the text; test-looking paths win over others.
    fn find_test_definition(&self, ident: &str) -> Option<(RelPath, u64)> {
        if ident.is_empty()
            || !ident
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            return None;
        }
        let id = regex::escape(ident);
        let pattern =
            format!(r#"\b(?:fn|def|func)\s+{id}\b|\b(?:test|it|describe)\s*\(\s*['"`]{id}\b"#);
        let hits = self
            .search_hits(&pattern, None, SearchMode::Regex)
            .ok()?
            .hits;
        let best = hits
            .iter()
            .find(|h| h.path.contains("test"))
            .or_else(|| hits.first())?;
        let file = RelPath::parse(&best.path).ok()?;
        Some((file, best.line))
    }

    fn definition_line(&self, file: &RelPath, ident: &str) -> Option<u64> {
        let resolved = self.root.resolve_rel(file.clone()).ok()?;
        let (bytes, _) = self.read_whole(&resolved).ok()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let id = regex::escape(ident);
        let def = Regex::new(&format!(r"\b(?:fn|def|func)\s+{id}\b")).ok()?;
        text.lines()
            .position(|l| def.is_match(l))
            .map(|i| i as u64 + 1)
    }

    /// The module a test file exercises, by naming convention: `test_foo.py`/`foo_test.py` →
    /// `foo.py`, `foo_test.go` → `foo.go`, `foo.test.ts`/`foo.spec.ts` → `foo.ts` (or `.tsx`,
    /// `.js`, `.jsx`), `FooTest.java` → `Foo.java`, `tests/foo.rs` → `src/foo.rs`. Looked up
    /// next to the test, then in the matching source directory, then as a unique name.
    fn module_under_test(&self, test: &RelPath, index: &mut FileIndex) -> Option<RelPath> {
        let name = test.file_name();
        let (stem, ext) = name.rsplit_once('.')?;
        let mut names: Vec<String> = Vec::new();
        if let Some(s) = stem.strip_prefix("test_") {
            names.push(format!("{s}.{ext}"));
        }
        for suffix in ["_test", "_spec", ".test", ".spec", "Test", "Tests", "Spec"] {
            if let Some(s) = stem.strip_suffix(suffix)
                && !s.is_empty()
            {
                names.push(format!("{s}.{ext}"));
                if matches!(ext, "ts" | "tsx" | "js" | "jsx" | "mjs" | "cjs") {
                    for e in ["ts", "tsx", "js", "jsx"] {
                        names.push(format!("{s}.{e}"));
                    }
                }
            }
        }
        let dir = test.parent().map(|d| d.as_str().to_owned());
        let in_tests_dir = test
            .segments()
            .any(|s| s == "tests" || s == "test" || s == "__tests__");
        if names.is_empty() && ext == "rs" && in_tests_dir {
            names.push(name.to_owned());
            names.push(format!("{stem}/mod.rs"));
        }
        let mut dirs: Vec<String> = Vec::new();
        if let Some(d) = &dir {
            dirs.push(d.clone());
            for (from, to) in [
                ("tests", "src"),
                ("test", "src"),
                ("__tests__", ""),
                ("src/test/", "src/main/"),
            ] {
                let swapped = if from.ends_with('/') {
                    d.replacen(from, to, 1)
                } else {
                    d.split('/')
                        .map(|s| if s == from { to } else { s })
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join("/")
                };
                if swapped != *d {
                    dirs.push(swapped);
                }
            }
        } else if in_tests_dir || ext == "rs" {
            dirs.push("src".to_owned());
        }
        if dir.as_deref().is_some_and(|d| d == "tests") {
            dirs.push("src".to_owned());
        }
        for n in &names {
            for d in &dirs {
                let candidate = if d.is_empty() {
                    n.clone()
                } else {
                    format!("{d}/{n}")
                };
                if let Ok(rel) = RelPath::parse(&candidate)
                    && rel != *test
                    && let Ok(r) = self.root.resolve_rel(rel)
                {
                    return Some(r.rel);
                }
            }
        }
        names
            .iter()
            .find_map(|n| index.unique_suffix(self, n, None).filter(|r| r != test))
    }
}

fn add_range(files: &mut Vec<(RelPath, Vec<(u64, u64)>)>, file: RelPath, (start, end): (u64, u64)) {
    let entry = match files.iter_mut().position(|(f, _)| *f == file) {
        Some(i) => &mut files[i].1,
        None => {
            files.push((file, Vec::new()));
            let last = files.len() - 1;
            &mut files[last].1
        }
    };
    entry.push((start, end));
    // Merge overlapping or adjacent ranges, keeping first-seen order of the merged groups.
    let mut sorted = entry.clone();
    sorted.sort();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (s, e) in sorted {
        match merged.last_mut() {
            Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    *entry = merged;
}
