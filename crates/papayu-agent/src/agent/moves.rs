//! Definitions the model began to move into a new module (D78). Asked to move some functions
//! out of a module into a new one, a small model creates the new module — often with the
//! functions' bodies half rewritten or left as placeholders — and rewrites one import, or none.
//! This room reads, in a change the tests rejected, a CREATE_FILE of a new module that declares
//! top-level names an existing module of the same language declares, and proposes the move
//! itself: those definitions (with the constants and imports only they use) cut from the old
//! module and written, as the old module has them, into the new one; every non-test file that
//! imports them from the old module importing them from the new one instead (Python `from m
//! import`, JavaScript `import { … } from` and `const { … } = require(…)`, Rust `use
//! crate::…::{…}` and a `mod` declaration beside the old one). Test files are left as they are
//! (they judge). The caller validates, previews and tests it like any change. Reads the
//! project's files; writes nothing.

use std::collections::BTreeSet;

use camino::Utf8Path;
use papayu_protocol::ActionKind;
use papayu_validate::ValidatedPlan;
use serde_json::{Value, json};

use super::rename::{declares, extension, is_word, normalise, read, same_language, stem, tokens};

/// Files larger than this are not rewritten.
const MAX_FILE_BYTES: usize = 512 * 1024;

/// At most this many of a new module's names are looked for in the project (each is a search).
const MAX_NAMES: usize = 12;

/// Definitions moved from one module into a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Moved {
    /// The names moved, in the old module's order.
    pub(crate) names: Vec<String>,
    /// The old module's path.
    pub(crate) from: String,
    /// The new module's path.
    pub(crate) to: String,
    /// Other files rewritten to import the names from the new module, sorted.
    pub(crate) files: Vec<String>,
    /// `{"actions": [...]}`: the old module rewritten, the new one created, the importers.
    pub(crate) document: String,
    /// The goal asked for this move in words (D88); no change of the model's began it.
    pub(crate) asked: bool,
}

impl Moved {
    /// `` `a`, `b` moved from x.py to y.py (imports in z.py), as begun by <trace> ``.
    pub(crate) fn describe(&self, parent: &str) -> String {
        let names: Vec<String> = self.names.iter().map(|n| format!("`{n}`")).collect();
        let imports = if self.files.is_empty() {
            String::new()
        } else {
            format!(" (imports in {})", self.files.join(", "))
        };
        let by = if self.asked {
            "as the goal asks".to_owned()
        } else {
            format!("as begun by {parent}")
        };
        format!(
            "{} moved from {} to {}{imports}, {by}",
            names.join(", "),
            self.from,
            self.to
        )
    }
}

/// The language a path's module is written in, when the move knows its imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Script,
    Rust,
}

fn lang(path: &str) -> Option<Lang> {
    match extension(path) {
        "py" => Some(Lang::Python),
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" | "mts" | "cts" => Some(Lang::Script),
        "rs" => Some(Lang::Rust),
        _ => None,
    }
}

/// The moves `plan` began (see the module docs): at most one per new module. `users(name)`
/// lists the project's files that hold `name` (the caller's project search).
pub(crate) fn moved(
    root: &Utf8Path,
    plan: &ValidatedPlan,
    users: &dyn Fn(&str) -> Vec<String>,
) -> Vec<Moved> {
    let code = |path: &str| !papayu_context::is_test_path(path);
    let mut out = Vec::new();
    for a in plan.actions() {
        let to = a.path.as_str();
        if *a.kind() != ActionKind::CreateFile || root.join(to).exists() || !code(to) {
            continue;
        }
        let Some(language) = lang(to) else {
            continue;
        };
        let content = a.action.content.as_deref().unwrap_or_default();
        // Top-level names the new module declares, and the modules that declare them now.
        let declared: Vec<&str> = content
            .lines()
            .filter(|l| !l.starts_with([' ', '\t']))
            .filter_map(super::fragment::defined_name)
            .collect();
        // The module that declares most of them, with its text (read once).
        let mut best: Option<(String, String, Vec<String>)> = None;
        // Each name is searched for once, the first few only (a search walks the project; the
        // source is found by any of them, and every declared name it has moves).
        let mut searched: Vec<&str> = Vec::new();
        for name in &declared {
            if !searched.contains(name) && searched.len() < MAX_NAMES {
                searched.push(name);
            }
        }
        let mut sources: BTreeSet<String> = BTreeSet::new();
        for name in &searched {
            sources.extend(
                users(name)
                    .into_iter()
                    .filter(|p| p != to && code(p) && same_language(p, to) && lang(p).is_some()),
            );
        }
        for from in sources {
            let Some(text) = read(root, &from).filter(|t| t.len() <= MAX_FILE_BYTES) else {
                continue;
            };
            let items = items(&text);
            let names: Vec<String> = items
                .iter()
                .filter_map(|i| i.name.clone())
                .filter(|n| declared.contains(&n.as_str()))
                .collect();
            if names.len() > best.as_ref().map_or(0, |(_, _, n)| n.len()) {
                best = Some((from, text, names));
            }
        }
        let Some((from, text, names)) = best else {
            continue;
        };
        if let Some(m) = move_names(root, language, (&from, &text), to, &names, users) {
            out.push(m);
        }
    }
    out
}

/// One top-level item of a module: its lines `[start, end)`, the name it declares, whether it
/// is an import.
#[derive(Debug, Clone)]
struct Item {
    start: usize,
    end: usize,
    name: Option<String>,
    import: bool,
    /// A JavaScript export list (`module.exports = { … }`, `export { … }`).
    export: bool,
}

/// A module's top-level items: each begins at a line that is not indented (with the comments,
/// decorators and attributes right above it) and runs through the indented, blank and closing
/// (`}`, `)`, `]`) lines after it. Blank lines between items belong to none.
fn items(text: &str) -> Vec<Item> {
    let lines: Vec<&str> = text.lines().collect();
    let top = |l: &str| !l.is_empty() && !l.starts_with([' ', '\t']);
    let closer = |l: &str| l.starts_with(['}', ')', ']']);
    let lead = |l: &str| {
        let t = l.trim_start();
        t.starts_with('#') && !t.starts_with("#!") || t.starts_with("//") || t.starts_with('@')
    };
    let mut out: Vec<Item> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !top(lines[i]) || closer(lines[i]) {
            i += 1;
            continue;
        }
        let start = i;
        // Comments, decorators and attributes lead the item they stand above.
        while i < lines.len() && top(lines[i]) && lead(lines[i]) {
            i += 1;
        }
        if i >= lines.len() || !top(lines[i]) {
            // Comments alone (a file's header): an item of no name.
            out.push(Item {
                start,
                end: i,
                name: None,
                import: false,
                export: false,
            });
            continue;
        }
        let head = lines[i];
        i += 1;
        // A statement that opens a bracket runs to the line that closes it.
        let mut depth = depth_change(head);
        while i < lines.len() {
            let l = lines[i];
            if depth <= 0 && top(l) && !closer(l) {
                break;
            }
            depth += depth_change(l);
            i += 1;
        }
        let mut end = i;
        while end > start + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        let words = tokens(head);
        let import = words
            .iter()
            .any(|w| matches!(*w, "import" | "use" | "require" | "extern"))
            && !words
                .iter()
                .any(|w| matches!(*w, "def" | "fn" | "function" | "class"));
        let name = super::fragment::defined_name(head)
            .filter(|n| declares(head, n) || head.contains('='))
            .map(str::to_owned);
        let export = export_list(head).is_some();
        out.push(Item {
            start,
            end,
            name: if import || export { None } else { name },
            import,
            export,
        });
    }
    out
}

/// Brackets a line opens minus those it closes, outside strings and comments (roughly: a
/// quote runs to the next unescaped one on the line; `#` and `//` end the code).
fn depth_change(line: &str) -> i32 {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for ch in line.chars() {
        match quote {
            Some(q) => {
                if ch == q && prev != '\\' {
                    quote = None;
                }
            }
            None => match ch {
                '"' | '\'' | '`' => quote = Some(ch),
                '{' | '(' | '[' => depth += 1,
                '}' | ')' | ']' => depth -= 1,
                '#' => break,
                '/' if prev == '/' => break,
                _ => {}
            },
        }
        prev = ch;
    }
    depth
}

/// `text` holds `name` as a whole word.
fn uses(text: &str, name: &str) -> bool {
    tokens(text).contains(&name)
}

/// The top-level names a module defines, as the move reads them (an import, an export list,
/// a comment defines none).
pub(crate) fn top_names(text: &str) -> Vec<String> {
    items(text).into_iter().filter_map(|i| i.name).collect()
}

/// Moving `names` out of the module `text` would move every named definition it has (the
/// items only they use go with them): a whole-module move. `false` also when the cut is not
/// clean (something that stays needs what moves).
pub(crate) fn moves_everything(text: &str, names: &[String]) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    moving(&items(text), &lines, names).is_some_and(|(_, everything)| everything)
}

/// Which of `all` (the items of the module of `lines`) move with `names`: those named, and the
/// named items only the moving ones use; `None` when an item both sides use would have to be
/// cut, or what stays needs what moves. The flag says nothing named would stay.
fn moving(all: &[Item], lines: &[&str], names: &[String]) -> Option<(Vec<bool>, bool)> {
    let body = |i: &Item| lines[i.start..i.end].join("\n");
    let mut moving: Vec<bool> = all
        .iter()
        .map(|i| i.name.as_ref().is_some_and(|n| names.contains(n)))
        .collect();
    // Named items only the moved ones use go with them (a pattern, a helper).
    loop {
        let moved_text: String = all
            .iter()
            .zip(&moving)
            .filter(|(_, m)| **m)
            .map(|(i, _)| body(i))
            .collect::<Vec<_>>()
            .join("\n");
        let staying_text: String = all
            .iter()
            .zip(&moving)
            .filter(|(i, m)| !**m && !i.import && !i.export)
            .map(|(i, _)| body(i))
            .collect::<Vec<_>>()
            .join("\n");
        let mut grew = false;
        for (k, item) in all.iter().enumerate() {
            let Some(name) = &item.name else {
                continue;
            };
            if moving[k] || !uses(&moved_text, name) {
                continue;
            }
            // Used by both sides: not a clean cut.
            let rest: String = staying_text.replace(&body(item), "");
            if uses(&rest, name) {
                return None;
            }
            moving[k] = true;
            grew = true;
        }
        if !grew {
            // What stays must not need what moves.
            let named: Vec<&String> = all
                .iter()
                .zip(&moving)
                .filter(|(_, m)| **m)
                .filter_map(|(i, _)| i.name.as_ref())
                .collect();
            if named.iter().any(|n| uses(&staying_text, n)) {
                return None;
            }
            break;
        }
    }
    let staying_named = all
        .iter()
        .zip(&moving)
        .any(|(i, m)| !*m && !i.import && i.name.is_some());
    Some((moving, !staying_named))
}

/// The move of `names` from the module `from` (path, text) into the new module `to`, or `None`
/// when it is not a clean cut (a moved definition needs something that stays, or what stays
/// needs a moved one).
fn move_names(
    root: &Utf8Path,
    lang: Lang,
    (from, text): (&str, &str),
    to: &str,
    names: &[String],
    users: &dyn Fn(&str) -> Vec<String>,
) -> Option<Moved> {
    let lines: Vec<&str> = text.lines().collect();
    let all = items(text);
    let body = |i: &Item| lines[i.start..i.end].join("\n");
    let (moving, everything) = moving(&all, &lines, names)?;
    if everything {
        // Everything would move: a whole-module move, read by D76.
        return None;
    }
    let moved_names: Vec<String> = all
        .iter()
        .zip(&moving)
        .filter(|(_, m)| **m)
        .filter_map(|(i, _)| i.name.clone())
        .collect();
    let exported: Vec<String> = moved_names
        .iter()
        .filter(|n| names.contains(n))
        .cloned()
        .collect();
    let moved_text: String = all
        .iter()
        .zip(&moving)
        .filter(|(_, m)| **m)
        .map(|(i, _)| body(i))
        .collect::<Vec<_>>()
        .join("\n");
    let staying_text: String = all
        .iter()
        .zip(&moving)
        .filter(|(i, m)| !**m && !i.import && !i.export)
        .map(|(i, _)| body(i))
        .collect::<Vec<_>>()
        .join("\n");
    // Imports: the new module takes those the moved code uses; the old keeps those it uses.
    let mut header: Vec<String> = Vec::new();
    let mut drop_import: Vec<bool> = vec![false; all.len()];
    for (k, item) in all.iter().enumerate() {
        if !item.import {
            continue;
        }
        let bound = bound_names(&body(item));
        let by_moved = bound.iter().any(|n| uses(&moved_text, n));
        let by_staying = bound.iter().any(|n| uses(&staying_text, n));
        if by_moved {
            header.push(body(item));
        }
        if by_moved && !by_staying {
            drop_import[k] = true;
        }
    }
    // CommonJS: the old module's `module.exports = { … }` loses the moved names.
    let mut old_lines: Vec<String> = Vec::new();
    let mut export_form: Option<&'static str> = None;
    for (n, line) in lines.iter().enumerate() {
        let cut = all
            .iter()
            .enumerate()
            .any(|(k, i)| (moving[k] || drop_import[k]) && (i.start..i.end).contains(&n));
        if cut {
            continue;
        }
        if lang == Lang::Script
            && let Some(kept) = exports_without(line, &exported)
        {
            export_form = export_list(line).map(|(form, _)| form);
            if let Some(kept) = kept {
                old_lines.push(kept);
            }
            continue;
        }
        old_lines.push((*line).to_owned());
    }
    let old_text = tidy(&old_lines, text);
    let sep = if lang == Lang::Python {
        "\n\n\n"
    } else {
        "\n\n"
    };
    let mut new_text = String::new();
    if !header.is_empty() {
        new_text.push_str(&header.join("\n"));
        new_text.push_str(sep);
    }
    let bodies: Vec<String> = all
        .iter()
        .zip(&moving)
        .filter(|(_, m)| **m)
        .map(|(i, _)| body(i))
        .collect();
    new_text.push_str(&bodies.join(sep));
    new_text.push('\n');
    if let Some(form) = export_form {
        new_text.push_str(&format!("\n{form}{{ {} }};\n", exported.join(", ")));
    }
    let mut doc: Vec<Value> = vec![
        json!({"kind": "UPDATE_FILE", "path": from, "content": old_text}),
        json!({"kind": "CREATE_FILE", "path": to, "content": new_text}),
    ];
    // Every non-test file that imports a moved name from the old module.
    let mut candidates: BTreeSet<String> = BTreeSet::new();
    for n in &exported {
        candidates.extend(users(n));
    }
    if lang == Lang::Rust {
        // The file that declares the old module declares the new one beside it.
        if let Some(parent) = rust_parent(root, from) {
            candidates.insert(parent);
        }
    }
    let mut files = Vec::new();
    for path in candidates {
        if path == from || path == to || papayu_context::is_test_path(&path) {
            continue;
        }
        let Some(text) = read(root, &path).filter(|t| t.len() <= MAX_FILE_BYTES) else {
            continue;
        };
        let rewritten = match lang {
            Lang::Python => python_imports(&text, from, to, &exported),
            Lang::Script => script_imports(&text, &path, from, to, &exported),
            Lang::Rust => rust_imports(&text, from, to, &exported),
        };
        if rewritten != text {
            doc.push(json!({"kind": "UPDATE_FILE", "path": path, "content": rewritten}));
            files.push(path);
        }
    }
    Some(Moved {
        names: exported,
        from: from.to_owned(),
        to: to.to_owned(),
        files,
        document: json!({ "actions": doc }).to_string(),
        asked: false,
    })
}

/// The names an import line binds: the words after `import` (Python, JavaScript), inside a
/// destructuring `{ … }` before `require`, or the last segment(s) of a Rust `use`.
fn bound_names(line: &str) -> Vec<String> {
    let words: Vec<&str> = tokens(line)
        .into_iter()
        .filter(|t| t.chars().next().is_some_and(is_word))
        .collect();
    let skip = [
        "import", "from", "as", "use", "pub", "crate", "self", "super", "const", "let", "var",
        "require", "type",
    ];
    if let Some(at) = words.iter().position(|w| *w == "import") {
        // `from m import a, b` binds a, b; `import m` binds m; `import x from 'y'` binds x.
        let after: Vec<String> = words[at + 1..]
            .iter()
            .take_while(|w| **w != "from")
            .filter(|w| !skip.contains(w))
            .map(|w| (*w).to_owned())
            .collect();
        return after;
    }
    words
        .iter()
        .filter(|w| !skip.contains(w))
        .map(|w| (*w).to_owned())
        .collect()
}

/// A JavaScript export list's form (`module.exports = ` or `export `) and its `{ … }` inside.
fn export_list(line: &str) -> Option<(&'static str, &str)> {
    let t = line.trim();
    let (form, rest) = if let Some(r) = t.strip_prefix("module.exports") {
        ("module.exports = ", r.trim_start().strip_prefix('=')?)
    } else {
        ("export ", t.strip_prefix("export")?)
    };
    let inner = rest.trim().trim_end_matches(';').trim();
    Some((form, inner.strip_prefix('{')?.strip_suffix('}')?))
}

/// An export list line without the moved names: `None` when the line is no export list, or
/// exports none of them; `Some(None)` when nothing is left to export.
fn exports_without(line: &str, moved: &[String]) -> Option<Option<String>> {
    let (form, inner) = export_list(line)?;
    let kept: Vec<&str> = inner
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .filter(|e| {
            let key = e.split(':').next().unwrap_or(e).trim();
            !moved.iter().any(|m| m == key)
        })
        .collect();
    let all = inner.split(',').filter(|e| !e.trim().is_empty()).count();
    if kept.len() == all {
        return None;
    }
    Some((!kept.is_empty()).then(|| format!("{form}{{ {} }};", kept.join(", "))))
}

/// Lines joined back into a file: runs of blank lines no longer than the original's longest,
/// no blank lines at the end, the original's final newline.
fn tidy(lines: &[String], original: &str) -> String {
    let longest = original
        .lines()
        .collect::<Vec<_>>()
        .split(|l| !l.trim().is_empty())
        .map(<[&str]>::len)
        .max()
        .unwrap_or(1);
    let mut out: Vec<&str> = Vec::new();
    let mut blank = 0;
    for l in lines {
        if l.trim().is_empty() {
            blank += 1;
            if blank > longest || out.is_empty() {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push(l);
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    let mut text = out.join("\n");
    if original.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Names split into those that move and those that stay; each entry as written
/// (`a as b`, `a: b`), matched by its first word.
fn partition<'a>(list: &'a str, moved: &[String]) -> (Vec<&'a str>, Vec<&'a str>) {
    let mut going = Vec::new();
    let mut staying = Vec::new();
    for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let key = entry.split(|c: char| !is_word(c)).next().unwrap_or(entry);
        if moved.iter().any(|m| m == key) {
            going.push(entry);
        } else {
            staying.push(entry);
        }
    }
    (going, staying)
}

/// A Python module's dotted path from its file path (`pkg/utils.py` → `pkg.utils`).
fn python_module(path: &str) -> String {
    path.trim_end_matches(".py").replace('/', ".")
}

/// `text` with `from <old> import a, b` lines split so moved names come from the new module.
fn python_imports(text: &str, from: &str, to: &str, moved: &[String]) -> String {
    let (old_full, new_full) = (python_module(from), python_module(to));
    let (Some(old_stem), Some(new_stem)) = (stem(from), stem(to)) else {
        return text.to_owned();
    };
    let same_dir = from.rsplit_once('/').map(|x| x.0) == to.rsplit_once('/').map(|x| x.0);
    // `import utils` and `utils.parse_money(…)`: the moved names are used through the new
    // module, imported beside the old one.
    let plain = |m: &str| m == old_full || (m == old_stem && same_dir);
    let qualified_module = text.lines().find_map(|l| {
        let m = l.trim().strip_prefix("import ")?.trim();
        plain(m).then(|| m.to_owned())
    });
    let mut text = text.to_owned();
    if let Some(m) = &qualified_module {
        let new_module = if *m == old_full {
            new_full.clone()
        } else {
            new_stem.to_owned()
        };
        let mut used = false;
        for n in moved {
            let renamed = replace_qualified(&text, m, n, &new_module);
            used |= renamed != text;
            text = renamed;
        }
        if used {
            let mut lines: Vec<String> = Vec::new();
            for l in text.lines() {
                lines.push(l.to_owned());
                if l.trim().strip_prefix("import ").map(str::trim) == Some(m.as_str()) {
                    let indent = &l[..l.len() - l.trim_start().len()];
                    lines.push(format!("{indent}import {new_module}"));
                }
            }
            text = rejoin(lines, &text);
        }
    }
    let text = text.as_str();
    let mut out: Vec<String> = Vec::new();
    for (line, original) in statements(text, |t| t.starts_with("from ")) {
        let indent = &line[..line.len() - line.trim_start().len()];
        let t = line.trim();
        let parsed = t.strip_prefix("from ").and_then(|r| {
            let (module, names) = r.split_once(" import ")?;
            Some((module.trim(), names.trim()))
        });
        let Some((module, list)) = parsed else {
            out.extend(original);
            continue;
        };
        // The old module as written here: its full path, or its name (a sibling import).
        let new_module = if module == old_full {
            new_full.clone()
        } else if module == old_stem && same_dir {
            new_stem.to_owned()
        } else if let Some(prefix) = module.strip_suffix(&format!(".{old_stem}"))
            && same_dir
        {
            format!("{prefix}.{new_stem}")
        } else {
            out.extend(original);
            continue;
        };
        let inner = list.trim_start_matches('(').trim_end_matches(')');
        let (going, staying) = partition(inner, moved);
        if going.is_empty() {
            out.extend(original);
            continue;
        }
        if !staying.is_empty() {
            out.push(format!(
                "{indent}from {module} import {}",
                staying.join(", ")
            ));
        }
        out.push(format!(
            "{indent}from {new_module} import {}",
            going.join(", ")
        ));
    }
    rejoin(out, text)
}

/// The lines of `text`, each statement that `joins` picks and that opens a bracket it closes
/// on a later line (`from m import (`, `import {`) read as one line: `(statement, its lines)`.
fn statements(text: &str, joins: impl Fn(&str) -> bool) -> Vec<(String, Vec<String>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let first = lines[i];
        let mut depth = depth_change(first);
        let mut end = i + 1;
        if joins(first.trim()) && depth > 0 {
            while end < lines.len() && depth > 0 {
                depth += depth_change(lines[end]);
                end += 1;
            }
        }
        let original: Vec<String> = lines[i..end].iter().map(|l| (*l).to_owned()).collect();
        let joined = if end == i + 1 || depth != 0 {
            first.to_owned()
        } else {
            let rest: Vec<&str> = lines[i + 1..end].iter().map(|l| l.trim()).collect();
            format!("{} {}", first.trim_end(), rest.join(" "))
        };
        if end > i + 1 && depth != 0 {
            // Never closed: each line as it is.
            out.extend(original.into_iter().map(|l| (l.clone(), vec![l])));
        } else {
            out.push((joined, original));
        }
        i = end;
    }
    out
}

/// `text` with `module.name` (whole words) written `to.name`.
fn replace_qualified(text: &str, module: &str, name: &str, to: &str) -> String {
    let from = format!("{module}.{name}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&from) {
        let before = rest[..at].chars().next_back().or(out.chars().next_back());
        let after = rest[at + from.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(|c| is_word(c) || c == '.') || after.is_some_and(is_word) {
            out.push_str(&from);
        } else {
            out.push_str(&format!("{to}.{name}"));
        }
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Lines joined with the original's final newline.
fn rejoin(lines: Vec<String>, original: &str) -> String {
    let mut text = lines.join("\n");
    if original.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The path of `target` relative to the directory `dir`, as an import spells it (`./x.js`,
/// `../lib/x.js`).
fn relative(dir: &str, target: &str) -> String {
    let d: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    let t: Vec<&str> = target.split('/').collect();
    let common = d.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let ups = d.len() - common;
    let rest = t[common..].join("/");
    if ups == 0 {
        format!("./{rest}")
    } else {
        format!("{}{rest}", "../".repeat(ups))
    }
}

/// `text` (the file `path`) with `import { … } from '<old>'` and `const { … } =
/// require('<old>')` lines split so moved names come from the new module.
fn script_imports(text: &str, path: &str, from: &str, to: &str, moved: &[String]) -> String {
    let dir = path.rsplit_once('/').map_or("", |x| x.0);
    let mut out: Vec<String> = Vec::new();
    for (line, original) in statements(text, |t| t.starts_with("import") || t.contains("require("))
    {
        let line = line.as_str();
        let Some(open) = line.find('{') else {
            out.extend(original);
            continue;
        };
        let Some(close) = line[open..].find('}').map(|c| c + open) else {
            out.extend(original);
            continue;
        };
        let (head, inner, tail) = (&line[..open], &line[open + 1..close], &line[close + 1..]);
        let esm = head.trim_start().starts_with("import") && tail.trim_start().starts_with("from");
        let cjs = tail.contains("require(");
        let spec = super::rename::quoted_paths(tail)
            .into_iter()
            .next()
            .or_else(|| quoted(tail));
        let (Some(spec), true) = (spec, esm || cjs) else {
            out.extend(original);
            continue;
        };
        // The import names the old module: its path resolved from this file, with or without
        // an extension.
        let resolved = normalise(dir, &spec).unwrap_or_default();
        let bare = |p: &str| {
            p.rsplit_once('.')
                .map_or(p.to_owned(), |(s, _)| s.to_owned())
        };
        let has_ext = !extension(spec.rsplit('/').next().unwrap_or(&spec)).is_empty();
        let matches = if has_ext {
            resolved == from
        } else {
            resolved == bare(from)
        };
        if !spec.starts_with('.') || !matches {
            out.extend(original);
            continue;
        }
        let (going, staying) = partition(inner, moved);
        if going.is_empty() {
            out.extend(original);
            continue;
        }
        let mut new_spec = relative(dir, to);
        if !has_ext {
            new_spec = bare(&new_spec);
        }
        let new_tail = tail.replacen(&spec, &new_spec, 1);
        if !staying.is_empty() {
            out.push(format!("{head}{{ {} }}{tail}", staying.join(", ")));
        }
        out.push(format!("{head}{{ {} }}{new_tail}", going.join(", ")));
    }
    rejoin(out, text)
}

/// The first quoted string of a line.
fn quoted(text: &str) -> Option<String> {
    let at = text.find(['\'', '"', '`'])?;
    let q = &text[at..at + 1];
    let rest = &text[at + 1..];
    Some(rest[..rest.find(q)?].to_owned())
}

/// A Rust module's path from its file (`src/util.rs` → `util`, `src/a/b.rs` → `a::b`,
/// `src/a/mod.rs` → `a`).
fn rust_module(path: &str) -> Option<String> {
    let inner = path.strip_prefix("src/")?.strip_suffix(".rs")?;
    let inner = inner.strip_suffix("/mod").unwrap_or(inner);
    (!inner.is_empty() && inner != "lib" && inner != "main").then(|| inner.replace('/', "::"))
}

/// The file that declares the Rust module `path` (`src/lib.rs` or `src/main.rs` for
/// `src/x.rs`, `src/a.rs` or `src/a/mod.rs` for `src/a/x.rs`).
fn rust_parent(root: &Utf8Path, path: &str) -> Option<String> {
    let dir = path.rsplit_once('/')?.0;
    let candidates: Vec<String> = if dir == "src" {
        vec!["src/lib.rs".into(), "src/main.rs".into()]
    } else {
        vec![format!("{dir}.rs"), format!("{dir}/mod.rs")]
    };
    candidates.into_iter().find(|c| root.join(c).is_file())
}

/// `text` with `use crate::<old>::{…}` lines split so moved names come from the new module,
/// `<old>::name` paths renamed, and `mod <new>;` declared after `mod <old>;`.
fn rust_imports(text: &str, from: &str, to: &str, moved: &[String]) -> String {
    let (Some(old), Some(new)) = (rust_module(from), rust_module(to)) else {
        return text.to_owned();
    };
    let (Some(old_leaf), Some(new_leaf)) = (stem(from), stem(to)) else {
        return text.to_owned();
    };
    let same_parent = from.rsplit_once('/').map(|x| x.0) == to.rsplit_once('/').map(|x| x.0);
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        // `pub mod util;` gains `pub mod text;` after it.
        if same_parent
            && t.ends_with(';')
            && let Some(before) = t.strip_suffix(&format!("mod {old_leaf};"))
            && before
                .trim()
                .chars()
                .all(|c| is_word(c) || " ()".contains(c))
        {
            out.push(line.to_owned());
            out.push(line.replacen(&format!("mod {old_leaf};"), &format!("mod {new_leaf};"), 1));
            continue;
        }
        let prefix = format!("crate::{old}::");
        if let Some(at) = line.find(&format!("use {prefix}")) {
            let head = &line[..at + 4];
            let rest = &line[at + 4 + prefix.len()..];
            let list = rest.trim_end().trim_end_matches(';');
            let inner = list.trim_start_matches('{').trim_end_matches('}');
            let (going, staying) = partition(inner, moved);
            if going.is_empty() {
                out.push(line.to_owned());
                continue;
            }
            let render = |names: &[&str]| {
                if names.len() == 1 {
                    names[0].to_owned()
                } else {
                    format!("{{{}}}", names.join(", "))
                }
            };
            if !staying.is_empty() {
                out.push(format!("{head}crate::{old}::{};", render(&staying)));
            }
            out.push(format!("{head}crate::{new}::{};", render(&going)));
            continue;
        }
        // `util::slugify(…)` in code.
        let mut l = line.to_owned();
        for m in moved {
            l = l.replace(&format!("{old_leaf}::{m}"), &format!("{new_leaf}::{m}"));
        }
        out.push(l);
    }
    rejoin(out, text)
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{plan_of, project, users_in};
    use super::*;

    /// The moves a change that creates `new` (path, content) began in a project of `files`.
    fn moves_of(files: &[(&str, &str)], new: (&str, &str)) -> Vec<Moved> {
        let dir = project(files);
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let plan = plan_of(json!([{"kind": "CREATE_FILE", "path": new.0, "content": new.1}]));
        moved(root, &plan, &users_in(root))
    }

    /// The one move such a change began, and its actions.
    fn the_move(files: &[(&str, &str)], new: (&str, &str)) -> (Moved, Vec<Value>) {
        let mut all = moves_of(files, new);
        assert_eq!(all.len(), 1, "{all:?}");
        let m = all.remove(0);
        let a = actions(&m);
        (m, a)
    }

    fn actions(m: &Moved) -> Vec<Value> {
        let doc: Value = serde_json::from_str(&m.document).unwrap();
        doc["actions"].as_array().unwrap().clone()
    }

    const HELPERS: &str = "// Small string helpers and input validators.\n\nexport function capitalize(text) {\n  return text.toUpperCase();\n}\n\nconst EMAIL = /^[^\\s@]+@[^\\s@]+$/;\n\nexport function isEmail(text) {\n  return EMAIL.test(text.trim());\n}\n\nexport function isUrl(text) {\n  try {\n    return new URL(text).protocol === 'https:';\n  } catch {\n    return false;\n  }\n}\n";
    const SIGNUP: &str = "import { capitalize, isEmail, isUrl } from './helpers.js';\n\nexport const ok = (f) => isEmail(f.email) && isUrl(f.site) && capitalize(f.name);\n";

    #[test]
    fn definitions_a_new_module_declares_move_there_with_what_only_they_use() {
        // The model's new module: the functions, one body rewritten wrongly.
        let (m, a) = the_move(
            &[
                ("src/helpers.js", HELPERS),
                ("src/signup.js", SIGNUP),
                (
                    "test/forms.test.js",
                    "import { isEmail } from '../src/validators.js';\n",
                ),
            ],
            (
                "src/validators.js",
                "export function isEmail(text) {\n  return /@/;\n}\n\nexport function isUrl(text) {\n  return true;\n}\n",
            ),
        );
        assert_eq!(m.names, ["isEmail", "isUrl"]);
        assert_eq!(m.files, ["src/signup.js"]);
        assert_eq!(
            a[0]["content"],
            "// Small string helpers and input validators.\n\nexport function capitalize(text) {\n  return text.toUpperCase();\n}\n"
        );
        assert_eq!(a[1]["path"], "src/validators.js");
        assert_eq!(
            a[1]["content"],
            "const EMAIL = /^[^\\s@]+@[^\\s@]+$/;\n\nexport function isEmail(text) {\n  return EMAIL.test(text.trim());\n}\n\nexport function isUrl(text) {\n  try {\n    return new URL(text).protocol === 'https:';\n  } catch {\n    return false;\n  }\n}\n"
        );
        assert_eq!(
            a[2]["content"],
            "import { capitalize } from './helpers.js';\nimport { isEmail, isUrl } from './validators.js';\n\nexport const ok = (f) => isEmail(f.email) && isUrl(f.site) && capitalize(f.name);\n"
        );
        assert_eq!(
            m.describe("T"),
            "`isEmail`, `isUrl` moved from src/helpers.js to src/validators.js (imports in \
             src/signup.js), as begun by T"
        );
    }

    #[test]
    fn python_imports_are_split_and_the_imports_the_moved_code_needs_go_with_it() {
        let utils = "import re\nimport os\n\n_AMOUNT = re.compile(r\"^\\d+$\")\n\n\ndef parse_money(text):\n    if not _AMOUNT.match(text):\n        raise ValueError(text)\n    return int(text)\n\n\ndef home():\n    return os.environ.get('HOME')\n";
        let account = "from utils import home, parse_money as parse\n\n\ndef f(t):\n    return parse(t), home()\n";
        let (_, a) = the_move(
            &[("utils.py", utils), ("account.py", account)],
            ("money.py", "def parse_money(text):\n    pass\n"),
        );
        assert_eq!(
            a[0]["content"],
            "import os\n\n\ndef home():\n    return os.environ.get('HOME')\n"
        );
        assert_eq!(
            a[1]["content"],
            "import re\n\n\n_AMOUNT = re.compile(r\"^\\d+$\")\n\n\ndef parse_money(text):\n    if not _AMOUNT.match(text):\n        raise ValueError(text)\n    return int(text)\n"
        );
        assert_eq!(
            a[2]["content"],
            "from utils import home\nfrom money import parse_money as parse\n\n\ndef f(t):\n    return parse(t), home()\n"
        );
    }

    #[test]
    fn parenthesised_and_qualified_python_imports_follow_the_move() {
        let utils =
            "def parse_money(text):\n    return int(text)\n\n\ndef home():\n    return '~'\n";
        let account = "from utils import (\n    home,\n    parse_money,\n)\n\n\ndef f(t):\n    return parse_money(t), home()\n";
        let report = "import utils\n\n\ndef g(t):\n    return utils.parse_money(t), utils.home(), my.utils.parse_money\n";
        let (m, a) = the_move(
            &[
                ("utils.py", utils),
                ("account.py", account),
                ("report.py", report),
            ],
            ("money.py", "def parse_money(text):\n    pass\n"),
        );
        assert_eq!(m.files, ["account.py", "report.py"]);
        assert_eq!(
            a[2]["content"],
            "from utils import home\nfrom money import parse_money\n\n\ndef f(t):\n    return parse_money(t), home()\n"
        );
        assert_eq!(
            a[3]["content"],
            "import utils\nimport money\n\n\ndef g(t):\n    return money.parse_money(t), utils.home(), my.utils.parse_money\n"
        );
    }

    #[test]
    fn a_multi_line_javascript_import_follows_the_move() {
        let form = "import {\n  capitalize,\n  isEmail,\n} from './helpers.js';\n\nexport const ok = (f) => isEmail(f) && capitalize(f);\n";
        let (_, a) = the_move(
            &[("src/helpers.js", HELPERS), ("src/form.js", form)],
            (
                "src/validators.js",
                "export function isEmail(t) {\n  return true;\n}\n",
            ),
        );
        assert_eq!(
            a[2]["content"],
            "import { capitalize } from './helpers.js';\nimport { isEmail } from './validators.js';\n\nexport const ok = (f) => isEmail(f) && capitalize(f);\n"
        );
    }

    #[test]
    fn commonjs_exports_and_requires_follow_the_move() {
        let helpers = "function cap(t) {\n  return t;\n}\n\nfunction isEmail(t) {\n  return t.includes('@');\n}\n\nmodule.exports = { cap, isEmail };\n";
        let form = "const { cap, isEmail } = require('./helpers');\n\nmodule.exports = (t) => cap(t) && isEmail(t);\n";
        let (_, a) = the_move(
            &[("lib/helpers.js", helpers), ("lib/form.js", form)],
            (
                "lib/validators.js",
                "function isEmail(t) {\n  return true;\n}\n",
            ),
        );
        assert_eq!(
            a[0]["content"],
            "function cap(t) {\n  return t;\n}\n\nmodule.exports = { cap };\n"
        );
        assert_eq!(
            a[1]["content"],
            "function isEmail(t) {\n  return t.includes('@');\n}\n\nmodule.exports = { isEmail };\n"
        );
        assert_eq!(
            a[2]["content"],
            "const { cap } = require('./helpers');\nconst { isEmail } = require('./validators');\n\nmodule.exports = (t) => cap(t) && isEmail(t);\n"
        );
    }

    #[test]
    fn rust_uses_and_the_module_declaration_follow_the_move() {
        let util = "pub fn slugify(t: &str) -> String {\n    t.to_lowercase()\n}\n\npub fn shout(t: &str) -> String {\n    t.to_uppercase()\n}\n";
        let lib = "pub mod post;\npub mod util;\n";
        let post = "use crate::util::{shout, slugify};\n\npub fn f() -> String {\n    slugify(&shout(\"a\")) + &crate::util::slugify(\"b\")\n}\n";
        let (m, a) = the_move(
            &[
                ("src/util.rs", util),
                ("src/lib.rs", lib),
                ("src/post.rs", post),
            ],
            (
                "src/text.rs",
                "pub fn slugify(t: &str) -> String {\n    String::new()\n}\n",
            ),
        );
        assert_eq!(m.files, ["src/lib.rs", "src/post.rs"]);
        assert_eq!(
            a[2]["content"],
            "pub mod post;\npub mod util;\npub mod text;\n"
        );
        assert_eq!(
            a[3]["content"],
            "use crate::util::shout;\nuse crate::text::slugify;\n\npub fn f() -> String {\n    slugify(&shout(\"a\")) + &crate::text::slugify(\"b\")\n}\n"
        );
    }

    #[test]
    fn no_move_when_the_cut_is_not_clean_or_everything_would_move() {
        // `shout` stays and calls `slugify`, which would move.
        let util = "def slugify(t):\n    return t.lower()\n\n\ndef shout(t):\n    return slugify(t).upper()\n";
        let files = [("util.py", util)];
        assert_eq!(
            moves_of(&files, ("text.py", "def slugify(t):\n    pass\n")),
            []
        );
        // Everything would move: D76's whole-module move, not this one.
        let both = "def slugify(t):\n    pass\n\n\ndef shout(t):\n    pass\n";
        assert_eq!(moves_of(&files, ("text.py", both)), []);
        // A new module declaring nothing any module declares moves nothing.
        assert_eq!(
            moves_of(&files, ("text.py", "def other(t):\n    pass\n")),
            []
        );
    }

    #[test]
    fn items_are_read_with_their_comments_and_closing_lines() {
        let text = "#!/usr/bin/env python3\n\"\"\"Doc.\"\"\"\n\nimport re\n\n# The pattern.\nP = re.compile(\n    r'x',\n)\n\n\n@cache\ndef f(x):\n    return P.match(x)\n";
        let all = items(text);
        let got: Vec<(usize, usize, Option<&str>, bool)> = all
            .iter()
            .map(|i| (i.start, i.end, i.name.as_deref(), i.import))
            .collect();
        assert_eq!(
            got,
            [
                (0, 1, None, false),
                (1, 2, None, false),
                (3, 4, None, true),
                (5, 9, Some("P"), false),
                (11, 14, Some("f"), false),
            ]
        );
    }

    mod properties {
        use proptest::prelude::*;

        /// Lines of code-like text: indentation, brackets, quotes, comments, imports.
        fn text() -> impl Strategy<Value = String> {
            proptest::collection::vec(
                "( {0,4})(import |from |def |fn |// |# |@)?[a-c({\\[\\]})'\"#=, ]{0,8}",
                0..16,
            )
            .prop_map(|lines| lines.iter().map(|l| format!("{l}\n")).collect())
        }

        proptest! {
            #[test]
            fn statements_lose_no_line(t in text()) {
                let read = super::super::statements(&t, |l| l.starts_with("from ") || l.starts_with("import"));
                let lines: Vec<String> = read.into_iter().flat_map(|(_, o)| o).collect();
                let original: Vec<&str> = t.lines().collect();
                prop_assert_eq!(lines, original);
            }

            #[test]
            fn items_are_ordered_apart_and_inside_the_text(t in text()) {
                let n = t.lines().count();
                let all = super::super::items(&t);
                let mut at = 0;
                for i in &all {
                    prop_assert!(i.start >= at && i.start < i.end && i.end <= n, "{:?} in\n{}", all, t);
                    at = i.end;
                }
            }
        }
    }
}
