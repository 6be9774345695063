//! A rename the model began and did not finish (D74). Asked to rename a function or a type
//! "everywhere", a small model renames it in the one line it rewrites — the definition, or an
//! import of it — and leaves every other use under the old name; the tests then reject the
//! change. This room reads, in a change the tests rejected, lines that differ from the file's
//! only by one name replaced with another (`def parse_date(` → `def parse_iso_date(`, `import {
//! getUser, …` → `import { fetchUser, …`), where the old name is defined in the project's code
//! and the new one is not, and proposes the same change with that rename carried out in every
//! file that still uses the old name (whole words; test files are left as they are — they
//! judge the change) — and then the rename alone, without the rest of the change. A module is
//! a name too (D76): asked to move a module's functions into a new one, the model renames the
//! module in an import (`from utils import` → `from money import`, `pub mod util;` → `pub mod
//! text;`) or deletes the module and creates the new one with its definitions; the completion
//! then moves the module's file and renames the module wherever it is imported. The caller
//! validates, previews and tests each like any change. Reads the project's files; writes
//! nothing.

use std::collections::BTreeMap;

use camino::Utf8Path;
use papayu_protocol::ActionKind;
use papayu_validate::ValidatedPlan;
use serde_json::{Value, json};
use similar::{Algorithm, DiffOp, capture_diff_slices};

/// At most this many names are renamed together.
const MAX_RENAMES: usize = 3;

/// Files larger than this are not rewritten by a completed rename.
const MAX_FILE_BYTES: usize = 512 * 1024;

/// Words that declare the name after them.
const DECLARES: &[&str] = &[
    "def",
    "function",
    "class",
    "struct",
    "enum",
    "trait",
    "type",
    "interface",
    "fn",
    "mod",
    "func",
    "const",
    "let",
    "var",
    "static",
    "union",
    "macro_rules",
];

/// A rejected change with the renames it began carried out everywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Renamed {
    /// `(old, new)` names, in the order first seen.
    pub(crate) names: Vec<(String, String)>,
    /// Files the completion changes that the model's change did not touch, sorted (every file
    /// it changes when `alone`).
    pub(crate) files: Vec<String>,
    /// The rename alone, on the files as they are, without the rest of the model's change.
    pub(crate) alone: bool,
    /// Module files moved to the renamed module's path, `(from, to)` (D76).
    pub(crate) moved: Vec<(String, String)>,
    /// The goal asked for this rename in words (`rename getUser to fetchUser`, D86); the
    /// model's change did not begin it.
    pub(crate) asked: bool,
    /// `{"actions": [...]}`: the change's actions, renamed, then an UPDATE_FILE per such file.
    pub(crate) document: String,
}

impl Renamed {
    /// `` `a` → `b` also in x.py, y.py, completing <parent trace id> ``.
    pub(crate) fn describe(&self, parent: &str) -> String {
        let mut names: Vec<String> = self
            .names
            .iter()
            .map(|(a, b)| format!("`{a}` → `{b}`"))
            .collect();
        names.extend(self.moved.iter().map(|(a, b)| format!("{a} moved to {b}")));
        if self.asked {
            return format!(
                "{} in {}, as the goal asks",
                names.join(", "),
                self.files.join(", ")
            );
        }
        if self.alone {
            return format!(
                "{} alone in {}, as begun by {parent}",
                names.join(", "),
                self.files.join(", ")
            );
        }
        let files = if self.files.is_empty() {
            "within the change's files".to_owned()
        } else {
            format!("also in {}", self.files.join(", "))
        };
        format!("{} {files}, completing {parent}", names.join(", "))
    }
}

/// The change `plan` with the renames it began completed, then those renames alone on the
/// files as they are (the rest of the change may be what broke it), when it began any (see the
/// module docs). `users(name)` lists the project's files that hold `name` (literally; the caller's
/// project search, which honours ignore files and skips binary ones).
pub(crate) fn completed(
    root: &Utf8Path,
    plan: &ValidatedPlan,
    users: &dyn Fn(&str) -> Vec<String>,
) -> Vec<Renamed> {
    // Each action's path, kind and new content (none for a delete), and the old texts.
    let mut actions: Vec<(String, ActionKind, Option<String>)> = Vec::new();
    let mut old: BTreeMap<String, String> = BTreeMap::new();
    for a in plan.actions() {
        let path = a.path.as_str().to_owned();
        match a.kind() {
            ActionKind::UpdateFile => {
                let Some(text) = read(root, &path) else {
                    return Vec::new();
                };
                old.insert(path.clone(), text);
                actions.push((path, ActionKind::UpdateFile, a.action.content.clone()));
            }
            ActionKind::CreateFile => {
                actions.push((path, ActionKind::CreateFile, a.action.content.clone()))
            }
            ActionKind::DeleteFile => actions.push((path, ActionKind::DeleteFile, None)),
            _ => return Vec::new(),
        }
    }
    // Every one-name line change: the names, the file, and the line before.
    let mut seen: Vec<Seen> = Vec::new();
    for (path, kind, content) in &actions {
        if *kind != ActionKind::UpdateFile {
            continue;
        }
        let (Some(before), Some(after)) = (old.get(path), content) else {
            continue;
        };
        seen.extend(
            renamed_lines(before, after)
                .into_iter()
                .map(|(from, to, line)| Seen {
                    from,
                    to,
                    path: path.clone(),
                    line,
                }),
        );
    }
    // Each old name renamed one way only, and no two to the same new name; defined in the
    // project's code, the new name not.
    let mut names: Vec<(String, String)> = Vec::new();
    for s in &seen {
        if names.iter().any(|(x, _)| *x == s.from) {
            continue;
        }
        if seen
            .iter()
            .any(|t| (t.from == s.from && t.to != s.to) || (t.to == s.to && t.from != s.from))
        {
            continue;
        }
        names.push((s.from.clone(), s.to.clone()));
    }
    // A module deleted and created under another name with its definitions is renamed (D76).
    let mut moves: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (gone, kind, _) in &actions {
        if *kind != ActionKind::DeleteFile {
            continue;
        }
        let Some(before) = read(root, gone) else {
            continue;
        };
        for (made, kind, content) in &actions {
            if *kind != ActionKind::CreateFile || !same_language(gone, made) {
                continue;
            }
            let (Some(a), Some(b)) = (stem(gone), stem(made)) else {
                continue;
            };
            let content = content.as_deref().unwrap_or_default();
            let shared = before.lines().any(|l| {
                super::fragment::defined_name(l)
                    .is_some_and(|n| content.lines().any(|m| declares(m, n)))
            });
            if a != b && shared && !names.iter().any(|(x, _)| x == a) {
                names.push((a.to_owned(), b.to_owned()));
                moves.insert(a.to_owned(), (gone.clone(), made.clone()));
            }
        }
    }
    // Each name is searched for once (a search walks the project).
    let searched: std::cell::RefCell<BTreeMap<String, Vec<String>>> = Default::default();
    let users = |name: &str| -> Vec<String> {
        searched
            .borrow_mut()
            .entry(name.to_owned())
            .or_insert_with(|| users(name))
            .clone()
    };
    let code = |path: &str| !papayu_context::is_test_path(path);
    // Each file is read once: the declarations are looked for in the same texts that are renamed.
    let texts: std::cell::RefCell<BTreeMap<String, Option<String>>> = Default::default();
    let text_of = |path: &str| -> Option<String> {
        if let Some(t) = old.get(path) {
            return Some(t.clone());
        }
        texts
            .borrow_mut()
            .entry(path.to_owned())
            .or_insert_with(|| read(root, path))
            .clone()
    };
    let defined_in = |name: &str, files: &[String]| {
        files
            .iter()
            .filter(|p| code(p))
            .any(|p| text_of(p).is_some_and(|text| text.lines().any(|l| declares(l, name))))
    };
    names.retain(|(a, b)| {
        if moves.contains_key(a) {
            return true;
        }
        // A module renamed in an import: its file moves to the new name's path.
        let module = seen
            .iter()
            .filter(|s| s.from == *a && s.to == *b && imports(&s.line))
            .find_map(|s| module_move(root, &s.path, &s.line, a, b));
        if let Some(m) = module.filter(|(from, _)| code(from)) {
            moves.insert(a.clone(), m);
            return true;
        }
        defined_in(a, &users(a)) && !defined_in(b, &users(b))
    });
    names.truncate(MAX_RENAMES);
    moves.retain(|a, _| names.iter().any(|(x, _)| x == a));
    if names.is_empty() {
        return Vec::new();
    }
    let rename_all = |text: &str| {
        names
            .iter()
            .fold(text.to_owned(), |t, (a, b)| rename_word(&t, a, b))
    };
    let moved: Vec<(String, String)> = moves.values().cloned().collect();
    let is_moved = |path: &str| moved.iter().any(|(from, _)| from == path);
    let acts_on = |path: &str| actions.iter().any(|(q, _, _)| q == path);
    let mut doc: Vec<Value> = Vec::new();
    let mut changed = false;
    for (path, kind, content) in &actions {
        match kind {
            ActionKind::DeleteFile => doc.push(json!({"kind": "DELETE_FILE", "path": path})),
            _ => {
                let content = content.as_deref().unwrap_or_default();
                let renamed = rename_all(content);
                changed |= renamed != content;
                // The model's update of a module that moves goes to the module's new path.
                let target = moved
                    .iter()
                    .find(|(from, to)| from == path && !acts_on(to))
                    .filter(|_| *kind == ActionKind::UpdateFile);
                if let Some((from, to)) = target {
                    doc.push(json!({"kind": "DELETE_FILE", "path": from}));
                    doc.push(json!({"kind": "CREATE_FILE", "path": to, "content": renamed}));
                    changed = true;
                    continue;
                }
                let kind = if *kind == ActionKind::CreateFile {
                    "CREATE_FILE"
                } else {
                    "UPDATE_FILE"
                };
                doc.push(json!({"kind": kind, "path": path, "content": renamed}));
            }
        }
    }
    // Every non-test file that uses an old name, as it is now.
    let mut using: Vec<(String, String)> = Vec::new();
    let mut paths: Vec<String> = names
        .iter()
        .flat_map(|(a, _)| users(a))
        .filter(|p| code(p) && !is_moved(p))
        .collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        if let Some(text) = text_of(&path).filter(|t| t.len() <= MAX_FILE_BYTES) {
            using.push((path, text));
        }
    }
    // A moved module's file, as it is now, renamed at its new path.
    let mut modules: Vec<(String, String, String)> = Vec::new();
    for (from, to) in &moved {
        let Some(text) = text_of(from).filter(|t| t.len() <= MAX_FILE_BYTES) else {
            return Vec::new();
        };
        modules.push((from.clone(), to.clone(), rename_all(&text)));
    }
    let mut touched = Vec::new();
    for (path, text) in &using {
        if acts_on(path) {
            continue;
        }
        let renamed = rename_all(text);
        if renamed != *text {
            doc.push(json!({"kind": "UPDATE_FILE", "path": path, "content": renamed}));
            touched.push(path.clone());
        }
    }
    // A module the change neither moved nor created anew is moved as it is.
    for (from, to, text) in &modules {
        if acts_on(to) {
            continue;
        }
        if !actions
            .iter()
            .any(|(q, k, _)| q == from && *k == ActionKind::DeleteFile)
        {
            if acts_on(from) {
                continue;
            }
            doc.push(json!({"kind": "DELETE_FILE", "path": from}));
        }
        doc.push(json!({"kind": "CREATE_FILE", "path": to, "content": text}));
        touched.push(to.clone());
        changed = true;
    }
    let mut out = Vec::new();
    if changed || !touched.is_empty() {
        out.push(Renamed {
            names: names.clone(),
            files: touched,
            alone: false,
            moved: moved.clone(),
            asked: false,
            document: json!({ "actions": doc }).to_string(),
        });
    }
    // The rename alone, without the rest of the change (which may be what broke it).
    let mut alone: Vec<Value> = Vec::new();
    let mut files = Vec::new();
    for (path, text) in &using {
        let renamed = rename_all(text);
        if renamed != *text {
            alone.push(json!({"kind": "UPDATE_FILE", "path": path, "content": renamed}));
            files.push(path.clone());
        }
    }
    for (from, to, text) in &modules {
        alone.push(json!({"kind": "DELETE_FILE", "path": from}));
        alone.push(json!({"kind": "CREATE_FILE", "path": to, "content": text}));
        files.push(to.clone());
    }
    let alone_doc = json!({ "actions": alone }).to_string();
    // Not when it is the same change as the completed one (the change was the rename only).
    let same = |a: &[Value], b: &[Value]| {
        let key = |v: &[Value]| -> BTreeMap<String, String> {
            v.iter()
                .map(|x| (x["path"].to_string(), x.to_string()))
                .collect()
        };
        key(a) == key(b)
    };
    if !alone.is_empty() && (out.is_empty() || !same(&doc, &alone)) {
        out.push(Renamed {
            names,
            files,
            alone: true,
            moved,
            asked: false,
            document: alone_doc,
        });
    }
    out
}

/// Words of a goal that may stand between `rename` and the old name, or after it: what kind of
/// name it is.
const KINDS: &[&str] = &[
    "the",
    "function",
    "method",
    "class",
    "type",
    "struct",
    "enum",
    "trait",
    "interface",
    "variable",
    "constant",
    "const",
    "field",
    "fn",
    "def",
];

/// The `(old, new)` names a goal asks to rename in words: `rename getUser to fetchUser`,
/// `rename the Rgb type to Color`, ``Rename `parse_date` into `parse_iso_date` ``, `rename
/// old_name -> new_name` (backticks, quotes and a call's `()` around a name are read through).
pub(crate) fn asked_rename(goal: &str) -> Option<(String, String)> {
    let bare = |w: &str| -> String {
        w.trim_matches(|c: char| matches!(c, '`' | '\'' | '"' | ',' | '.' | ':' | ';' | ')' | '('))
            .trim_end_matches("()")
            .trim_matches(|c: char| matches!(c, '`' | '\'' | '"'))
            .to_owned()
    };
    let words: Vec<&str> = goal.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| bare(w).eq_ignore_ascii_case("rename"))?;
    let mut rest = words[at + 1..].iter().map(|w| bare(w)).peekable();
    let skip_kinds = |rest: &mut std::iter::Peekable<_>| {
        while rest
            .peek()
            .is_some_and(|w: &String| KINDS.contains(&w.to_ascii_lowercase().as_str()))
        {
            rest.next();
        }
    };
    skip_kinds(&mut rest);
    let old = rest.next()?;
    skip_kinds(&mut rest);
    let joint = rest.next()?;
    if !matches!(
        joint.to_ascii_lowercase().as_str(),
        "to" | "into" | "as" | "->" | "→"
    ) {
        return None;
    }
    let new = rest.next()?;
    let ident = |w: &str| is_name(w) && w.chars().all(is_word);
    (ident(&old) && ident(&new) && old != new).then_some((old, new))
}

/// The rename a goal asks for in words ([`asked_rename`]) carried out in every non-test file
/// that uses the old name (whole words), on the files as they are — when the old name is
/// defined in the project's code and the new one is not (D86). `users(name)` as in
/// [`completed`].
pub(crate) fn asked(
    root: &Utf8Path,
    goal: &str,
    users: &dyn Fn(&str) -> Vec<String>,
) -> Option<Renamed> {
    let (old, new) = asked_rename(goal)?;
    let code = |path: &String| !papayu_context::is_test_path(path);
    let using: Vec<(String, String)> = users(&old)
        .into_iter()
        .filter(code)
        .filter_map(|p| {
            let text = read(root, &p).filter(|t| t.len() <= MAX_FILE_BYTES)?;
            Some((p, text))
        })
        .collect();
    if !using
        .iter()
        .any(|(_, t)| t.lines().any(|l| declares(l, &old)))
    {
        return None;
    }
    let defines_new = users(&new)
        .into_iter()
        .filter(code)
        .any(|p| read(root, &p).is_some_and(|t| t.lines().any(|l| declares(l, &new))));
    if defines_new {
        return None;
    }
    let mut actions = Vec::new();
    let mut files = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (path, text) in &using {
        if !seen.insert(path.clone()) {
            continue;
        }
        let renamed = rename_word(text, &old, &new);
        if renamed != *text {
            actions.push(json!({"kind": "UPDATE_FILE", "path": path, "content": renamed}));
            files.push(path.clone());
        }
    }
    (!actions.is_empty()).then(|| Renamed {
        names: vec![(old, new)],
        files,
        alone: true,
        moved: Vec::new(),
        asked: true,
        document: json!({ "actions": actions }).to_string(),
    })
}

/// A one-name line change: `from` became `to` in `path`'s line `line`.
struct Seen {
    from: String,
    to: String,
    path: String,
    line: String,
}

/// The line imports or declares a module: `import`, `from … import`, `require(…)`, `use`,
/// `mod`, `include`.
fn imports(line: &str) -> bool {
    tokens(line).iter().any(|t| {
        matches!(
            *t,
            "import" | "from" | "require" | "use" | "mod" | "include" | "extern"
        )
    })
}

/// A file's name without its extension, when it is a name (`utils` of `src/utils.py`).
pub(super) fn stem(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    let stem = name.split_once('.').map_or(name, |(s, _)| s);
    (stem.len() >= 2 && is_name(stem) && stem.chars().all(is_word)).then_some(stem)
}

/// The extension of a path's file name (`py`), empty when it has none.
pub(super) fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

/// Two files of the same language, by extension (`.js`, `.mjs`, `.cjs`, `.ts` count as one).
pub(super) fn same_language(a: &str, b: &str) -> bool {
    fn family(e: &str) -> &str {
        match e {
            "js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" | "mts" | "cts" => "js",
            other => other,
        }
    }
    !extension(a).is_empty() && family(extension(a)) == family(extension(b))
}

/// `(module file, its path under the new name)` when `line` of `importer` names the project's
/// module `a` and nothing exists at the new name's path: the path in a quoted relative import
/// (`'./lib/helpers.js'`, `"../util"`), else a file `a.<the importer's extension>` in the
/// importer's directory or one above it (a Python module, a Rust `mod` or `crate::a::` path).
fn module_move(
    root: &Utf8Path,
    importer: &str,
    line: &str,
    a: &str,
    b: &str,
) -> Option<(String, String)> {
    let dir = importer.rsplit_once('/').map_or("", |(d, _)| d);
    let ext = extension(importer);
    let exists = |p: &str| root.join(p).is_file();
    let mut candidates: Vec<String> = Vec::new();
    for quoted in quoted_paths(line) {
        let segments: Vec<&str> = quoted.split('/').collect();
        let last = segments.last().copied().unwrap_or_default();
        if !quoted.starts_with('.') || stem(last) != Some(a) {
            continue;
        }
        let Some(joined) = normalise(dir, &quoted) else {
            continue;
        };
        if extension(last).is_empty() {
            candidates.push(format!("{joined}.{ext}"));
            candidates.push(format!("{joined}.js"));
            candidates.push(format!("{joined}.ts"));
        } else {
            candidates.push(joined);
        }
    }
    let mut up = Some(dir);
    while let Some(d) = up {
        candidates.push(if d.is_empty() {
            format!("{a}.{ext}")
        } else {
            format!("{d}/{a}.{ext}")
        });
        up = (!d.is_empty()).then(|| d.rsplit_once('/').map_or("", |(p, _)| p));
    }
    let from = candidates.into_iter().find(|c| exists(c))?;
    let (parent, name) = from.rsplit_once('/').map_or(("", from.as_str()), |x| x);
    let rest = name.strip_prefix(a)?;
    let to = if parent.is_empty() {
        format!("{b}{rest}")
    } else {
        format!("{parent}/{b}{rest}")
    };
    (!exists(&to) && from != importer).then_some((from, to))
}

/// The contents of a line's quoted strings that look like paths (hold a `/`).
pub(super) fn quoted_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(['\'', '"', '`']) {
        let quote = &rest[at..at + 1];
        let after = &rest[at + 1..];
        let Some(end) = after.find(quote) else {
            break;
        };
        if after[..end].contains('/') {
            out.push(after[..end].to_owned());
        }
        rest = &after[end + 1..];
    }
    out
}

/// `dir` joined with the relative `path` (`./x`, `../y/z`), `.` and `..` resolved; `None` when
/// it leaves the project.
pub(super) fn normalise(dir: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// A project file as text (`None`: unreadable or not UTF-8).
pub(super) fn read(root: &Utf8Path, path: &str) -> Option<String> {
    String::from_utf8(fs_err::read(root.join(path)).ok()?).ok()
}

/// The `(old, new, old line)` of the lines `after` changed from `before` by one name only: in
/// each replaced run of as many new lines as old, line for line; in another, an old line that
/// exactly one of the run's new lines repeats with one name replaced, and that no other old
/// line pairs with (the run may have gained or lost other lines beside it).
fn renamed_lines(before: &str, after: &str) -> Vec<(String, String, String)> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let mut found = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
        if let DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } = op
        {
            if old_len == new_len {
                // Line for line.
                for k in 0..old_len {
                    if let Some((a, b)) = one_rename(old[old_index + k], new[new_index + k]) {
                        found.push((a, b, old[old_index + k].to_owned()));
                    }
                }
                continue;
            }
            // (old line, new line, names) of each old line one new line repeats renamed.
            let mut pairs: Vec<(usize, usize, (String, String))> = Vec::new();
            for (o, line) in old.iter().enumerate().skip(old_index).take(old_len) {
                let mut found_here = (new_index..new_index + new_len)
                    .filter_map(|n| one_rename(line, new[n]).map(|names| (o, n, names)));
                if let (Some(pair), None) = (found_here.next(), found_here.next()) {
                    pairs.push(pair);
                }
            }
            // A new line that several old lines repeat renamed (`pub mod feed;`, `pub mod
            // util;` → one `pub mod text;`) is no rename of either.
            for (o, n, (a, b)) in &pairs {
                if pairs.iter().filter(|(_, m, _)| m == n).count() == 1 {
                    found.push((a.clone(), b.clone(), old[*o].to_owned()));
                }
            }
        }
    }
    found
}

/// `(a, b)` when `new` is `old` with the name `a` replaced by `b` (once or more) and nothing
/// else changed.
fn one_rename(old: &str, new: &str) -> Option<(String, String)> {
    let (x, y) = (tokens(old), tokens(new));
    if x.len() != y.len() {
        return None;
    }
    let mut pair: Option<(&str, &str)> = None;
    for (a, b) in x.iter().zip(&y) {
        if a == b {
            continue;
        }
        if !is_name(a) || !is_name(b) {
            return None;
        }
        match pair {
            None => pair = Some((a, b)),
            Some(p) if p == (*a, *b) => {}
            Some(_) => return None,
        }
    }
    let (a, b) = pair?;
    (a.len() >= 2 && b.len() >= 2).then(|| (a.to_owned(), b.to_owned()))
}

/// A line cut into names (letters, digits, `_`, `$`) and single other characters, spaces kept.
pub(super) fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in line.char_indices() {
        if is_word(ch) {
            start.get_or_insert(i);
        } else {
            if let Some(s) = start.take() {
                out.push(&line[s..i]);
            }
            out.push(&line[i..i + ch.len_utf8()]);
        }
    }
    if let Some(s) = start {
        out.push(&line[s..]);
    }
    out
}

pub(super) fn is_word(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_' || ch == '$'
}

/// A token that names something: starts with a letter, `_` or `$`.
fn is_name(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|ch| ch.is_alphabetic() || ch == '_' || ch == '$')
}

/// The line declares `name`: a declaring word right before it (`def name`, `pub struct name`,
/// `export async function name`), or a line that opens a block and defines it by the signature
/// reading of D62 (`const name = (a) => {`). A plain assignment (`total = 0`) declares nothing,
/// nor does a call whose string holds a brace (`console.log(`${x}`)`, `raise E(f"{x}")`): a
/// block opens at the line's end (`{`, `:`; a trailing comment aside), with an arrow, or as a
/// one-line `{ … }`.
pub(super) fn declares(line: &str, name: &str) -> bool {
    let t = line.trim_end();
    let code = [" //", " #"]
        .iter()
        .find_map(|c| t.split_once(c))
        .map_or(t, |(code, _)| code.trim_end());
    let opens = [t, code]
        .iter()
        .any(|t| t.ends_with('{') || t.ends_with(':'))
        || t.contains("=>")
        || (t.ends_with('}') && t.contains('{'));
    if opens && super::fragment::defined_name(line) == Some(name) {
        return true;
    }
    let words: Vec<&str> = tokens(line)
        .into_iter()
        .filter(|t| !t.trim().is_empty())
        .collect();
    words
        .windows(2)
        .any(|w| w[1] == name && DECLARES.contains(&w[0]))
}

/// `text` with every whole-word `from` replaced by `to`.
fn rename_word(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().next_back().or(prev);
        let after = rest[at + from.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        prev = from.chars().next_back();
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{plan_of, project, users_in};
    use super::*;

    #[test]
    fn a_rename_the_goal_asks_for_in_words() {
        let cases = [
            (
                "rename getUser to fetchUser everywhere (the tests already use the new name)",
                Some(("getUser", "fetchUser")),
            ),
            (
                "rename the Rgb type to Color across the crate",
                Some(("Rgb", "Color")),
            ),
            (
                "Rename `parse_date()` into `parse_iso_date`.",
                Some(("parse_date", "parse_iso_date")),
            ),
            (
                "please rename function old_name -> new_name",
                Some(("old_name", "new_name")),
            ),
            ("rename files in bulk", None),
            ("rename x to x", None),
            ("fix the rename of users", None),
            ("rename a.b to c", None),
        ];
        for (goal, want) in cases {
            let got = asked_rename(goal);
            assert_eq!(
                got.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
                want,
                "{goal}"
            );
        }
    }

    #[test]
    fn a_rename_the_goal_asks_for_is_carried_out_in_the_code_not_the_tests() {
        let dir = project(&[
            (
                "src/api.js",
                "export async function getUser(id) {\n  return { id };\n}\n",
            ),
            (
                "src/index.js",
                "export { getUser } from './api.js';\n// getUserName stays\n",
            ),
            (
                "test/api.test.js",
                "import { fetchUser } from '../src/index.js';\n// getUser was the old name\n",
            ),
        ]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let users = users_in(root);
        let r = asked(root, "rename getUser to fetchUser everywhere", &users).expect("a rename");
        assert!(r.asked && r.alone);
        assert_eq!(r.files, ["src/api.js", "src/index.js"]);
        assert!(
            r.document.contains("export async function fetchUser(id)"),
            "{}",
            r.document
        );
        assert!(
            r.document
                .contains("export { fetchUser } from './api.js';\\n// getUserName stays"),
            "{}",
            r.document
        );
        assert!(!r.document.contains("test/api.test.js"), "{}", r.document);
        assert_eq!(
            r.describe("t"),
            "`getUser` → `fetchUser` in src/api.js, src/index.js, as the goal asks"
        );
        // Not when the new name is already defined in the code, nor when the old one is not.
        assert!(asked(root, "rename getUser to getUserName", &users).is_some());
        let taken = project(&[
            ("a.py", "def old():\n    pass\n\n\ndef new():\n    pass\n"),
            ("b.py", "from a import old\n"),
        ]);
        let root = Utf8Path::from_path(taken.path()).unwrap();
        let users = users_in(root);
        assert!(asked(root, "rename old to new", &users).is_none());
        assert!(asked(root, "rename missing to other", &users).is_none());
    }

    #[test]
    fn a_line_with_one_name_replaced_is_a_rename() {
        assert_eq!(
            one_rename("def parse_date(text):", "def parse_iso_date(text):"),
            Some(("parse_date".into(), "parse_iso_date".into()))
        );
        assert_eq!(
            one_rename(
                "import { getUser, listTeams } from './api.js';",
                "import { fetchUser, listTeams } from './api.js';"
            ),
            Some(("getUser".into(), "fetchUser".into()))
        );
        // The same rename twice on a line is one rename.
        assert_eq!(
            one_rename("x = Rgb(Rgb.RED)", "x = Color(Color.RED)"),
            Some(("Rgb".into(), "Color".into()))
        );
    }

    #[test]
    fn other_edits_are_not_renames() {
        assert_eq!(one_rename("return a - b", "return a + b"), None);
        assert_eq!(one_rename("f(a, b)", "g(a, c)"), None);
        assert_eq!(one_rename("x = 1", "x = 2"), None);
        assert_eq!(one_rename("f(a)", "f(a, b)"), None);
        assert_eq!(
            one_rename("let a = 1;", "let b = 1;"),
            None,
            "one-letter names"
        );
    }

    #[test]
    fn a_word_is_renamed_whole() {
        assert_eq!(
            rename_word(
                "use crate::Rgb; fn f(c: Rgb) -> RgbError { Rgb::new(); my_Rgb }",
                "Rgb",
                "Color"
            ),
            "use crate::Color; fn f(c: Color) -> RgbError { Color::new(); my_Rgb }"
        );
        assert_eq!(rename_word("RgbRgb Rgb", "Rgb", "C"), "RgbRgb C");
        assert_eq!(
            rename_word("$getUser getUser", "getUser", "x"),
            "$getUser x"
        );
    }

    #[test]
    fn declarations_are_read_in_several_languages() {
        assert!(declares("def parse_date(text):", "parse_date"));
        assert!(declares(
            "export async function getUser(t, id) {",
            "getUser"
        ));
        assert!(declares("pub struct Rgb {", "Rgb"));
        assert!(declares("#[derive(Debug)] pub enum Rgb {", "Rgb"));
        assert!(declares("class Account:", "Account"));
        assert!(!declares("    return parse_date(x)", "parse_date"));
        assert!(!declares("import { getUser } from './api.js';", "getUser"));
        // A call whose string holds a brace opens no block; a one-line block does.
        assert!(!declares("    console.log(`${total}`);", "log"));
        assert!(!declares("  report(`${a}`)", "report"));
        assert!(declares("  area(s) { return s * s; }", "area"));
        assert!(declares("  area(s) { // the square's", "area"));
        assert!(declares("const twice = (x) => x * 2;", "twice"));
    }

    const DATES: &str =
        "def parse_date(text):\n    return text\n\n\ndef week(day):\n    return parse_date(day)\n";
    const SHEET: &str = "from dates import parse_date, week\n\n\ndef total(rows):\n    return [parse_date(r) for r in rows]\n";
    const TEST: &str = "from dates import parse_iso_date\n";

    #[test]
    fn a_renamed_definition_is_renamed_at_its_uses_but_not_in_the_tests() {
        let dir = project(&[
            ("dates.py", DATES),
            ("sheet.py", SHEET),
            ("test_dates.py", TEST),
        ]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "dates.py",
            "content": DATES.replacen("def parse_date", "def parse_iso_date", 1)
        }]));
        let users = users_in(root);
        let all = completed(root, &plan, &users);
        // The change was the rename only: the rename alone is the same change, not tried twice.
        assert_eq!(all.len(), 1);
        let r = &all[0];
        assert!(!r.alone);
        assert_eq!(
            r.names,
            [("parse_date".to_owned(), "parse_iso_date".to_owned())]
        );
        assert_eq!(r.files, ["sheet.py"]);
        let doc: Value = serde_json::from_str(&r.document).unwrap();
        let actions = doc["actions"].as_array().unwrap();
        assert_eq!(actions.len(), 2);
        assert_eq!(
            actions[0]["content"],
            DATES.replace("parse_date", "parse_iso_date")
        );
        assert_eq!(actions[1]["path"], "sheet.py");
        assert_eq!(
            actions[1]["content"],
            SHEET.replace("parse_date", "parse_iso_date")
        );
        assert!(
            r.describe("T")
                .starts_with("`parse_date` → `parse_iso_date` also in sheet.py")
        );
    }

    #[test]
    fn a_renamed_import_renames_the_definition_it_names() {
        let api = "export async function getUser(t, id) {\n  return t(id);\n}\n";
        let profile =
            "import { getUser } from './api.js';\n\nexport const load = (t) => getUser(t, 1);\n";
        let dir = project(&[("src/api.js", api), ("src/profile.js", profile)]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "src/profile.js",
            "content": profile.replacen("{ getUser }", "{ fetchUser }", 1)
        }]));
        let users = users_in(root);
        let all = completed(root, &plan, &users);
        assert_eq!(all.len(), 1, "{all:?}");
        let r = &all[0];
        assert_eq!(r.files, ["src/api.js"]);
        let doc: Value = serde_json::from_str(&r.document).unwrap();
        assert_eq!(
            doc["actions"][0]["content"],
            profile.replace("getUser", "fetchUser")
        );
        assert_eq!(
            doc["actions"][1]["content"],
            api.replace("getUser", "fetchUser")
        );
    }

    #[test]
    fn the_rename_alone_is_tried_after_the_change_that_began_it() {
        let dir = project(&[("dates.py", DATES), ("sheet.py", SHEET)]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        // The rename, and a line broken beside it.
        let content = DATES
            .replacen("def parse_date", "def parse_iso_date", 1)
            .replace("    return text\n", "    return text +\n");
        let plan =
            plan_of(json!([{"kind": "UPDATE_FILE", "path": "dates.py", "content": content}]));
        let users = users_in(root);
        let all = completed(root, &plan, &users);
        assert_eq!(all.len(), 2);
        assert!(!all[0].alone && all[1].alone);
        assert_eq!(all[1].files, ["dates.py", "sheet.py"]);
        let doc: Value = serde_json::from_str(&all[1].document).unwrap();
        assert_eq!(
            doc["actions"][0]["content"],
            DATES.replace("parse_date", "parse_iso_date")
        );
        assert_eq!(
            doc["actions"][1]["content"],
            SHEET.replace("parse_date", "parse_iso_date")
        );
        assert_eq!(
            all[1].describe("T"),
            "`parse_date` → `parse_iso_date` alone in dates.py, sheet.py, as begun by T"
        );
    }

    #[test]
    fn no_rename_when_the_new_name_exists_or_the_old_one_is_not_defined() {
        // `b` already defined: a call switched to another function, not a rename.
        let calc = "def aa(x):\n    return x\n\n\ndef bb(x):\n    return -x\n\n\ndef f(y):\n    return aa(y)\n";
        let dir = project(&[("calc.py", calc)]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let users = users_in(root);
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "calc.py",
            "content": calc.replace("    return aa(y)", "    return bb(y)")
        }]));
        assert_eq!(completed(root, &plan, &users), []);
        // `total` is a local variable nobody declares with a declaring word: not a rename.
        let sums =
            "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n";
        let dir = project(&[("sums.py", sums)]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let users = users_in(root);
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "sums.py",
            "content": sums.replacen("    total = 0", "    acc = 0", 1)
        }]));
        assert_eq!(completed(root, &plan, &users), []);
    }

    #[test]
    fn a_module_renamed_in_an_import_moves_its_file() {
        let util = "pub fn slugify(t: &str) -> String {\n    t.to_lowercase()\n}\n";
        let lib = "pub mod post;\npub mod util;\n";
        let post =
            "use crate::util::slugify;\n\npub fn slug() -> String {\n    slugify(\"A\")\n}\n";
        let tests = "use blog::text::slugify;\n";
        let dir = project(&[
            ("src/util.rs", util),
            ("src/lib.rs", lib),
            ("src/post.rs", post),
            ("tests/blog.rs", tests),
        ]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        // `pub mod util;` → `pub mod text;`, and a line broken beside it.
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "src/lib.rs",
            "content": "pub mod post;\npub mod text;\nbroken\n"
        }]));
        let users = users_in(root);
        let all = completed(root, &plan, &users);
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(all[0].names, [("util".to_owned(), "text".to_owned())]);
        assert_eq!(
            all[0].moved,
            [("src/util.rs".to_owned(), "src/text.rs".to_owned())]
        );
        assert_eq!(all[0].files, ["src/post.rs", "src/text.rs"]);
        let alone = &all[1];
        assert!(alone.alone);
        assert_eq!(alone.files, ["src/lib.rs", "src/post.rs", "src/text.rs"]);
        let doc: Value = serde_json::from_str(&alone.document).unwrap();
        assert_eq!(
            doc["actions"],
            json!([
                {"kind": "UPDATE_FILE", "path": "src/lib.rs", "content": lib.replace("util", "text")},
                {"kind": "UPDATE_FILE", "path": "src/post.rs", "content": post.replace("util", "text")},
                {"kind": "DELETE_FILE", "path": "src/util.rs"},
                {"kind": "CREATE_FILE", "path": "src/text.rs", "content": util},
            ])
        );
        assert_eq!(
            alone.describe("T"),
            "`util` → `text`, src/util.rs moved to src/text.rs alone in src/lib.rs, src/post.rs, \
             src/text.rs, as begun by T"
        );
    }

    #[test]
    fn several_names_renamed_to_one_are_no_rename() {
        let lib = "pub mod feed;\npub mod post;\npub mod util;\n";
        let dir = project(&[
            ("src/lib.rs", lib),
            ("src/feed.rs", "pub fn f() {}\n"),
            ("src/post.rs", "pub fn p() {}\n"),
            ("src/util.rs", "pub fn u() {}\n"),
        ]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        // Three module lines became one: which of them was renamed is anyone's guess.
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "src/lib.rs", "content": "pub mod text;\n"
        }]));
        assert_eq!(completed(root, &plan, &users_in(root)), []);
        // The same lines each renamed to their own new name are three renames.
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "src/lib.rs", "content": "pub mod feeds;\npub mod posts;\npub mod utils;\n"
        }]));
        let all = completed(root, &plan, &users_in(root));
        assert_eq!(all[0].names.len(), 3, "{all:?}");
    }

    #[test]
    fn a_quoted_relative_import_names_the_module_file() {
        let helpers = "export function isEmail(t) {\n  return t.includes('@');\n}\n";
        let form = "import { isEmail } from '../lib/helpers.js';\n\nexport const ok = (t) => isEmail(t);\n";
        let dir = project(&[("src/lib/helpers.js", helpers), ("src/ui/form.js", form)]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "src/ui/form.js",
            "content": form.replace("helpers", "validators")
        }]));
        let users = users_in(root);
        let all = completed(root, &plan, &users);
        assert_eq!(all.len(), 1, "{all:?}");
        assert_eq!(
            all[0].moved,
            [(
                "src/lib/helpers.js".to_owned(),
                "src/lib/validators.js".to_owned()
            )]
        );
        assert_eq!(
            module_move(
                root,
                "src/ui/form.js",
                "import x from './helpers.js';",
                "helpers",
                "v"
            ),
            None,
            "no ./helpers.js beside form.js, and none in src/ui or above"
        );
    }

    #[test]
    fn a_module_deleted_and_created_under_another_name_is_renamed_where_imported() {
        let utils = "def parse_money(text):\n    return int(text)\n";
        let account = "from utils import parse_money\n";
        let dir = project(&[("utils.py", utils), ("account.py", account)]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let plan = plan_of(json!([
            {"kind": "DELETE_FILE", "path": "utils.py"},
            {"kind": "CREATE_FILE", "path": "money.py", "content": "import re\n\ndef parse_money(text):\n    return int(text)\n"},
        ]));
        let users = users_in(root);
        let all = completed(root, &plan, &users);
        assert_eq!(all.len(), 2, "{all:?}");
        // The model's move, with the import renamed.
        let doc: Value = serde_json::from_str(&all[0].document).unwrap();
        assert_eq!(doc["actions"].as_array().unwrap().len(), 3);
        assert_eq!(doc["actions"][2]["path"], "account.py");
        assert_eq!(
            doc["actions"][2]["content"],
            "from money import parse_money\n"
        );
        // The move alone keeps the module's own text.
        let doc: Value = serde_json::from_str(&all[1].document).unwrap();
        assert_eq!(doc["actions"][2]["content"], utils);
    }

    #[test]
    fn no_module_move_without_an_import_line_or_onto_an_existing_file() {
        let utils = "def f(x):\n    return x\n";
        let money = "def g(x):\n    return x\n";
        // An assignment's variable that happens to share a module's name is no import.
        let main = "utils = 1\nprint(utils)\n";
        let dir = project(&[("utils.py", utils), ("money.py", money), ("main.py", main)]);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let users = users_in(root);
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "main.py", "content": "cash = 1\nprint(utils)\n"
        }]));
        assert_eq!(completed(root, &plan, &users), []);
        // money.py exists: an import switched to another module, not a rename.
        let plan = plan_of(json!([{
            "kind": "UPDATE_FILE", "path": "main.py", "content": "from money import f\n"
        }]));
        fs_err::write(dir.path().join("main.py"), "from utils import f\n").unwrap();
        assert_eq!(completed(root, &plan, &users), []);
    }
}
