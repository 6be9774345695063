//! The base context of a goal's first request (SPEC §14, §6.4 extended): a map of the project
//! and the files the goal points at — by path, by a name it defines, or by its words — so that
//! even a model that never asks for a file sees the one it has to change. Reads only.

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use papayu_validate::RelPath;
use regex::Regex;

use crate::block::{Block, BlockKind};
use crate::files::{FileEntry, FileIndex};
use crate::project::Project;
use crate::search::SearchMode;

/// Why a file is in the base context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Pointer {
    /// The goal names its path or file name.
    Path,
    /// It defines a name the goal mentions (`add()`, `` `get_user` ``).
    Defines,
    /// It uses a specific identifier the goal mentions (a rename touches every use).
    Uses,
    /// Its name or content shares the goal's words.
    Words,
}

/// Words too common in goals to point at a file.
const STOPWORDS: &[&str] = &[
    "about",
    "after",
    "again",
    "also",
    "because",
    "before",
    "being",
    "broken",
    "change",
    "code",
    "does",
    "doesn",
    "dont",
    "every",
    "everywhere",
    "file",
    "files",
    "fails",
    "failing",
    "fail",
    "from",
    "have",
    "into",
    "instead",
    "just",
    "make",
    "more",
    "must",
    "need",
    "needs",
    "only",
    "other",
    "please",
    "project",
    "rename",
    "return",
    "returns",
    "should",
    "some",
    "still",
    "test",
    "tests",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "used",
    "uses",
    "using",
    "when",
    "which",
    "while",
    "will",
    "with",
    "without",
    "work",
    "works",
    "wrong",
    "already",
    "correct",
    "correctly",
    "properly",
    "right",
    "function",
    "method",
    "class",
    "value",
    "values",
    "add",
    "fix",
    "bug",
];

fn re(pattern: &'static str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

struct Patterns {
    path: Option<Regex>,
    call: Option<Regex>,
    ticked: Option<Regex>,
    word: Option<Regex>,
}

fn patterns() -> &'static Patterns {
    static P: std::sync::OnceLock<Patterns> = std::sync::OnceLock::new();
    P.get_or_init(|| Patterns {
        path: re(r"(?:[\w@.-]+/)*[\w@-][\w@.-]*\.[A-Za-z][A-Za-z0-9]{0,5}\b"),
        call: re(r"\b([A-Za-z_$][\w$]*)\s*\(\)"),
        ticked: re(r"`([A-Za-z_$][\w$.:]*)`"),
        word: re(r"[A-Za-z_$][\w$]*"),
    })
}

/// An identifier specific enough that its uses matter: `snake_case`, `camelCase`, `Path::x`.
fn is_specific_identifier(word: &str) -> bool {
    let inner_upper = word.chars().skip(1).any(|c| c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_lowercase());
    word.chars().count() >= 4 && (word.contains('_') || inner_upper)
}

/// Lowercase, with a plural or verb ending taken off (`invoices` → `invoice`, `ignores` →
/// `ignore`); good enough to find a word in a file name or a line.
fn stem(word: &str) -> String {
    let w = word.to_ascii_lowercase();
    if let Some(base) = w.strip_suffix("ies")
        && base.len() >= 3
    {
        return format!("{base}y");
    }
    match w.strip_suffix('s') {
        Some(base) if base.len() >= 4 && !base.ends_with('s') => base.to_owned(),
        _ => w,
    }
}

/// Whether a project-relative path names a test file by the usual conventions: a `tests`,
/// `test`, `__tests__` or `spec` directory, or a `test_*`, `*_test.*`, `*.test.*` or `*.spec.*`
/// name.
///
/// ```
/// assert!(papayu_context::is_test_path("tests/order.rs"));
/// assert!(papayu_context::is_test_path("test_calc.py"));
/// assert!(!papayu_context::is_test_path("src/lib.rs"));
/// ```
pub fn is_test_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.split('/')
        .any(|s| matches!(s, "tests" | "test" | "__tests__" | "spec"))
        || name.starts_with("test_")
        || name.starts_with("test.")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// Text files a model could be asked to change (by extension or a well-known name).
fn is_source_like(path: &str) -> bool {
    const EXT: &[&str] = &[
        "py", "rs", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "java", "kt", "rb", "php", "c",
        "h", "cc", "cpp", "hpp", "cs", "swift", "scala", "sh", "toml", "json", "yaml", "yml", "md",
        "txt", "cfg", "ini", "html", "css", "vue", "svelte", "sql", "lua",
    ];
    let name = path.rsplit('/').next().unwrap_or(path);
    if matches!(name, "Makefile" | "Dockerfile" | "README") {
        return true;
    }
    if matches!(
        name,
        "package-lock.json" | "Cargo.lock" | "poetry.lock" | "yarn.lock"
    ) {
        return false;
    }
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| EXT.contains(&ext.to_ascii_lowercase().as_str()))
}

fn human_size(bytes: u64) -> String {
    match bytes {
        b if b < 10_000 => format!("{b} B"),
        b if b < 10_000_000 => format!("{} KB", b / 1000),
        b => format!("{} MB", b / 1_000_000),
    }
}

/// A line of the map: a file, or a directory summarised.
enum MapItem<'a> {
    File(&'a FileEntry),
    Dir {
        path: String,
        files: usize,
        bytes: u64,
    },
}

impl MapItem<'_> {
    fn path(&self) -> &str {
        match self {
            MapItem::File(f) => &f.path,
            MapItem::Dir { path, .. } => path,
        }
    }
}

fn parent(path: &str) -> Option<&str> {
    path.rfind('/').map(|i| &path[..i])
}

/// Summarise directories, deepest first, until at most `max` lines remain.
fn collapse<'a>(files: &'a [FileEntry], max: usize) -> Vec<MapItem<'a>> {
    let mut items: Vec<MapItem<'a>> = files.iter().map(MapItem::File).collect();
    while items.len() > max.max(1) {
        // Every directory holding at least two items, with how many it holds.
        let mut dirs: BTreeMap<&str, usize> = BTreeMap::new();
        for item in &items {
            let mut p = parent(item.path());
            while let Some(d) = p {
                *dirs.entry(d).or_default() += 1;
                p = parent(d);
            }
        }
        let Some((dir, _)) = dirs
            .iter()
            .filter(|(_, n)| **n >= 2)
            .max_by_key(|(d, n)| (d.matches('/').count(), **n))
            .map(|(d, n)| ((*d).to_owned(), *n))
        else {
            break;
        };
        let prefix = format!("{dir}/");
        let (mut count, mut bytes) = (0usize, 0u64);
        let mut at = None;
        let mut kept = Vec::with_capacity(items.len());
        for item in items {
            if item.path().starts_with(&prefix) {
                match &item {
                    MapItem::File(f) => {
                        count += 1;
                        bytes += f.size;
                    }
                    MapItem::Dir {
                        files, bytes: b, ..
                    } => {
                        count += files;
                        bytes += b;
                    }
                }
                at.get_or_insert(kept.len());
            } else {
                kept.push(item);
            }
        }
        let dir_item = MapItem::Dir {
            path: dir,
            files: count,
            bytes,
        };
        match at {
            Some(i) => kept.insert(i, dir_item),
            None => kept.push(dir_item),
        }
        items = kept;
    }
    items
}

/// The `PROJECT MAP` block: every file with its size, the most recently modified marked, and
/// directories summarised deepest first when there are more than `max_entries` files.
pub(crate) fn map_block(files: &[FileEntry], max_entries: usize, recent: usize) -> Block {
    let mut by_time: Vec<(&str, SystemTime)> = files
        .iter()
        .filter_map(|f| f.modified.map(|m| (f.path.as_str(), m)))
        .collect();
    by_time.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let recent: BTreeSet<&str> = by_time.iter().take(recent).map(|(p, _)| *p).collect();
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut body = String::new();
    let items = collapse(files, max_entries);
    for item in &items {
        match item {
            MapItem::File(f) => {
                let mark = if recent.contains(f.path.as_str()) {
                    " (recently modified)"
                } else {
                    ""
                };
                body.push_str(&format!("{} {}{mark}\n", f.path, human_size(f.size)));
            }
            MapItem::Dir { path, files, bytes } => {
                body.push_str(&format!(
                    "{path}/ ({files} files, {})\n",
                    human_size(*bytes)
                ));
            }
        }
    }
    if body.is_empty() {
        body.push_str("[no files]");
    } else {
        body.pop();
    }
    Block::new(
        BlockKind::Map,
        "map".to_owned(),
        format!(
            "PROJECT MAP ({} files, {}; .gitignore honoured):",
            files.len(),
            human_size(total)
        ),
        body,
        None,
    )
}

impl Project {
    /// The files `goal` points at, most specific first: paths and file names it writes, files
    /// defining the names it calls out (`add()`, `` `x` ``), files using the specific
    /// identifiers it mentions, then files whose name or content share its words. Tests come
    /// after the code they test within each kind. At most `max` files.
    pub(crate) fn goal_files(
        &self,
        goal: &str,
        index: &mut FileIndex,
        max: usize,
    ) -> Vec<(RelPath, Pointer)> {
        let p = patterns();
        let mut out: Vec<(RelPath, Pointer)> = Vec::new();
        let push = |out: &mut Vec<(RelPath, Pointer)>, rel: RelPath, why: Pointer| {
            if !out.iter().any(|(r, _)| *r == rel) && self.root.resolve_rel(rel.clone()).is_ok() {
                out.push((rel, why));
            }
        };
        // 1. Paths and file names.
        if let Some(path_re) = &p.path {
            for m in path_re.find_iter(goal) {
                let token = m.as_str().trim_end_matches('.');
                let Ok(rel) = RelPath::parse(token) else {
                    continue;
                };
                if self.root.resolve_rel(rel.clone()).is_ok() {
                    push(&mut out, rel, Pointer::Path);
                } else if let Some(found) = index.unique_suffix(self, rel.as_str(), None) {
                    push(&mut out, found, Pointer::Path);
                }
            }
        }
        // 2. Names the goal calls out: their definitions; specific identifiers: their uses.
        let mut names: Vec<String> = Vec::new();
        for r in [&p.call, &p.ticked].into_iter().flatten() {
            for c in r.captures_iter(goal) {
                if let Some(n) = c.get(1) {
                    names.push(
                        n.as_str()
                            .rsplit([':', '.'])
                            .next()
                            .unwrap_or("")
                            .to_owned(),
                    );
                }
            }
        }
        if let Some(word_re) = &p.word {
            names.extend(
                word_re
                    .find_iter(goal)
                    .map(|m| m.as_str())
                    .filter(|w| is_specific_identifier(w))
                    .map(str::to_owned),
            );
        }
        names.retain(|n| !n.is_empty());
        names.dedup();
        let mut defining: Vec<RelPath> = Vec::new();
        let mut using: Vec<RelPath> = Vec::new();
        for name in &names {
            defining.extend(self.definitions(name));
            if is_specific_identifier(name) {
                using.extend(self.uses(name));
            }
        }
        let code_first = |v: &mut Vec<RelPath>| v.sort_by_key(|r| is_test_path(r.as_str()));
        code_first(&mut defining);
        code_first(&mut using);
        for rel in defining {
            push(&mut out, rel, Pointer::Defines);
        }
        for rel in using {
            push(&mut out, rel, Pointer::Uses);
        }
        // 3. The goal's words, when nothing above found the code to change.
        if !out
            .iter()
            .any(|(r, _)| !is_test_path(r.as_str()) && is_source_like(r.as_str()))
        {
            for rel in self.word_files(goal, index) {
                push(&mut out, rel, Pointer::Words);
            }
        }
        out.truncate(max);
        out
    }

    /// Files defining `name`: `def`/`fn`/`func`/`function`/`class`/`struct`/… or `name =`
    /// / `name:` a function, or a method `name(…) {`.
    fn definitions(&self, name: &str) -> Vec<RelPath> {
        if !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            return Vec::new();
        }
        let id = regex::escape(name);
        let pattern = format!(
            r"\b(?:def|fn|func|function|class|struct|enum|trait|interface|type|impl)\s+{id}\b|\b(?:const|let|var)\s+{id}\s*=|^\s*(?:export\s+)?(?:async\s+)?{id}\s*\([^)]*\)\s*\{{|\b{id}\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>)"
        );
        self.hit_files(&pattern, SearchMode::Regex)
    }

    /// Files mentioning `name` as a whole word.
    fn uses(&self, name: &str) -> Vec<RelPath> {
        let pattern = format!(r"\b{}\b", regex::escape(name));
        self.hit_files(&pattern, SearchMode::Regex)
    }

    fn hit_files(&self, pattern: &str, mode: SearchMode) -> Vec<RelPath> {
        let Ok(result) = self.search_hits(pattern, None, mode) else {
            return Vec::new();
        };
        let mut files: Vec<RelPath> = Vec::new();
        for h in result.hits {
            if let Ok(rel) = RelPath::parse(&h.path)
                && !files.contains(&rel)
            {
                files.push(rel);
            }
        }
        files
    }

    /// Files ranked by the goal's words: a word in the file's name counts 3, each distinct
    /// word in its content 1; files scoring at least 2, best first, code before tests.
    fn word_files(&self, goal: &str, index: &mut FileIndex) -> Vec<RelPath> {
        let Some(word_re) = &patterns().word else {
            return Vec::new();
        };
        let words: BTreeSet<String> = word_re
            .find_iter(goal)
            .map(|m| m.as_str())
            .filter(|w| w.chars().count() >= 4)
            .map(stem)
            .filter(|w| !STOPWORDS.contains(&w.as_str()))
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        let mut scored: Vec<(u32, bool, String)> = Vec::new();
        for f in index.get(self) {
            if !is_source_like(&f.path) || f.size > 256 * 1024 {
                continue;
            }
            let name = f.path.to_ascii_lowercase();
            let mut score = 0;
            let content = RelPath::parse(&f.path)
                .ok()
                .and_then(|rel| self.root.resolve_rel(rel).ok())
                .and_then(|r| self.read_whole(&r).ok())
                .map(|(bytes, _)| String::from_utf8_lossy(&bytes).to_ascii_lowercase())
                .unwrap_or_default();
            for w in &words {
                if name.contains(w.as_str()) {
                    score += 3;
                } else if content.contains(w.as_str()) {
                    score += 1;
                }
            }
            if score >= 2 {
                scored.push((score, is_test_path(&f.path), f.path.clone()));
            }
        }
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        scored
            .into_iter()
            .filter_map(|(_, _, p)| RelPath::parse(&p).ok())
            .collect()
    }

    /// When the project's text files together fit in `max_chars`, all of them, code first,
    /// then tests, then the rest (manifests, docs); else nothing.
    pub(crate) fn small_project_files(
        &self,
        index: &mut FileIndex,
        max_chars: u64,
    ) -> Vec<RelPath> {
        if max_chars == 0 {
            return Vec::new();
        }
        let files: Vec<&FileEntry> = index
            .get(self)
            .iter()
            .filter(|f| is_source_like(&f.path))
            .collect();
        if files.iter().map(|f| f.size).sum::<u64>() > max_chars {
            return Vec::new();
        }
        let rank = |p: &str| {
            let code = !p.ends_with(".md") && !p.ends_with(".toml") && !p.ends_with(".json");
            match (code, is_test_path(p)) {
                (true, false) => 0,
                (true, true) => 1,
                _ => 2,
            }
        };
        let mut paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        paths.sort_by_key(|p| (rank(p), *p));
        paths
            .into_iter()
            .filter_map(|p| RelPath::parse(p).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests;
