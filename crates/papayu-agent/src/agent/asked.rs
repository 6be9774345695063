//! A move the goal asks for in words (D88): `move A and B from x.py into a new module y.py`,
//! `move isEmail out of src/helpers.js into src/validators.js`, `move util.rs to text.rs`. This
//! room reads such a goal and writes the change a model would begin the move with — a new module
//! declaring the names (some of a module's definitions), or the old module deleted and created
//! under the new name (all of them) — so that D78's and D76's completions, which read a begun
//! move, carry it out with every import. The caller validates it and hands it to those
//! completions. Reads the project's files; writes nothing.

use camino::Utf8Path;
use serde_json::json;

use super::rename::{declares, extension, is_word, read, same_language};

/// Words between a move's parts that name no definition or module.
const FILLERS: &[&str] = &[
    "a",
    "an",
    "the",
    "new",
    "public",
    "pub",
    "private",
    "module",
    "file",
    "called",
    "named",
    "function",
    "functions",
    "method",
    "methods",
    "class",
    "classes",
    "type",
    "types",
    "helper",
    "helpers",
    "and",
    "&",
];

/// A move a goal asks for in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AskedMove {
    /// The names to move, as written (empty: the whole module).
    pub(crate) names: Vec<String>,
    /// The module they leave, as written (a path, `src/helpers.js`, or a file name).
    pub(crate) from: Option<String>,
    /// Where they go, as written: a path or a file name (`money.py`), or a module's name
    /// (`text`).
    pub(crate) to: String,
}

/// A word with the punctuation around it read through (backticks, quotes, brackets, a call's
/// `()`, a trailing comma or full stop: a path never ends in one).
fn bare(word: &str) -> &str {
    let mut w = word.trim_start_matches(['`', '\'', '"', '(']);
    loop {
        let before = w;
        w = w.trim_end_matches([',', ';', ':', '.', '`', '\'', '"']);
        w = match w.strip_suffix("()") {
            Some(name) => name,
            None => w.trim_end_matches(')'),
        };
        if w == before {
            return w;
        }
    }
}

/// A word that names a file: it has a `/` or an extension of letters.
fn is_path(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    word.contains('/')
        || name.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphabetic())
        })
}

/// An identifier: a letter, `_` or `$` first, word characters after.
fn is_ident(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && word.chars().all(is_word)
}

/// The move a goal asks for in words: `move|extract NAMES [from|out of PATH] into|to [a new
/// [public] module|file] DEST`, NAMES identifiers separated by commas or `and` (none: PATH is
/// the whole module, `move utils.py to money.py`). `None` when the goal says no such thing.
pub(crate) fn asked_move(goal: &str) -> Option<AskedMove> {
    let words: Vec<&str> = goal.split_whitespace().map(bare).collect();
    let at = words
        .iter()
        .position(|w| w.eq_ignore_ascii_case("move") || w.eq_ignore_ascii_case("extract"))?;
    let mut rest = words[at + 1..].iter().copied().peekable();
    let lower = |w: &str| w.to_ascii_lowercase();
    let mut names: Vec<String> = Vec::new();
    let mut from: Option<String> = None;
    // The names, up to `from`/`out of`/`into`/`to`; a path first is the module itself.
    loop {
        let word = rest.next()?;
        match lower(word).as_str() {
            "from" => {
                from = Some(rest.next().filter(|w| is_path(w))?.to_owned());
                break;
            }
            "out" if rest.peek().is_some_and(|w| lower(w) == "of") => {
                rest.next();
                from = Some(rest.next().filter(|w| is_path(w))?.to_owned());
                break;
            }
            "into" | "to" => return finish(names, None, &mut rest),
            w if FILLERS.contains(&w) || w.is_empty() => continue,
            _ if names.is_empty() && from.is_none() && is_path(word) => {
                from = Some(word.to_owned());
                // `move utils.py to money.py`: the joint comes next.
                let joint = lower(rest.next()?);
                if joint != "into" && joint != "to" {
                    return None;
                }
                return finish(names, from, &mut rest);
            }
            _ if is_ident(word) => names.push(word.to_owned()),
            _ => return None,
        }
    }
    let joint = lower(rest.next()?);
    if joint != "into" && joint != "to" {
        return None;
    }
    finish(names, from, &mut rest)
}

/// The destination after `into`/`to`, fillers skipped.
fn finish<'a>(
    names: Vec<String>,
    from: Option<String>,
    rest: &mut impl Iterator<Item = &'a str>,
) -> Option<AskedMove> {
    let to = rest.find(|w| !FILLERS.contains(&w.to_ascii_lowercase().as_str()))?;
    // A bare name as the destination only beside a module to leave: "the knight should move
    // the piece to the target square" asks for no move.
    if !(is_path(to) || is_ident(to) && from.is_some()) || (names.is_empty() && from.is_none()) {
        return None;
    }
    Some(AskedMove {
        names,
        from,
        to: to.to_owned(),
    })
}

/// The plan document that begins `asked` in the project at `root`, the way a model begins a
/// move (see the module docs), with the old module's path and the new one's: `None` when the
/// old module is not found (a path of the project, or the one code file `users(name)` lists
/// whose path ends in it), the new one exists already, their languages differ, or a name to
/// move is not defined at the old module's top level. A destination without a `/` lies beside
/// the old module; a module's name (`text`) takes the old module's extension.
pub(crate) fn begun(
    root: &Utf8Path,
    asked: &AskedMove,
    users: &dyn Fn(&str) -> Vec<String>,
) -> Option<(String, String, String)> {
    let code = |p: &str| !papayu_context::is_test_path(p);
    // Paths as the goal writes them, only inside the project (`..`, absolute paths: no move).
    let inside = |p: &str| papayu_validate::RelPath::parse(p).is_ok();
    if asked.from.as_deref().is_some_and(|f| !inside(f))
        || (is_path(&asked.to) && !inside(&asked.to))
    {
        return None;
    }
    let from = match &asked.from {
        Some(f) if root.join(f).is_file() => f.trim_start_matches("./").to_owned(),
        Some(f) => {
            let suffix = format!("/{}", f.trim_start_matches("./"));
            let mut found: Vec<String> = asked
                .names
                .iter()
                .take(1)
                .flat_map(|n| users(n))
                .filter(|p| p.ends_with(&suffix) && code(p))
                .collect();
            found.dedup();
            (found.len() == 1).then(|| found.remove(0))?
        }
        None => {
            // `move parse_money into money.py`: the one code file that declares the first name.
            let first = asked.names.first()?;
            let mut found: Vec<String> = users(first)
                .into_iter()
                .filter(|p| code(p))
                .filter(|p| {
                    read(root, p)
                        .is_some_and(|t| super::moves::top_names(&t).iter().any(|n| n == first))
                })
                .collect();
            found.dedup();
            (found.len() == 1).then(|| found.remove(0))?
        }
    };
    let text = read(root, &from)?;
    let dir = from.rsplit_once('/').map(|(d, _)| d);
    let mut to = asked.to.trim_start_matches("./").to_owned();
    if !is_path(&to) {
        to = format!("{to}.{}", extension(&from));
    }
    if !to.contains('/')
        && let Some(dir) = dir
    {
        to = format!("{dir}/{to}");
    }
    if to == from || root.join(&to).exists() || !same_language(&from, &to) || !code(&to) {
        return None;
    }
    let declared = super::moves::top_names(&text);
    if asked.names.iter().any(|n| !declared.contains(n)) {
        return None;
    }
    // Every named definition would go (those only the names use go with them).
    let whole = asked.names.is_empty() || super::moves::moves_everything(&text, &asked.names);
    let document = if whole {
        json!({"actions": [
            {"kind": "DELETE_FILE", "path": from},
            {"kind": "CREATE_FILE", "path": to, "content": text},
        ]})
    } else {
        // The new module declaring the names: the lines that declare them in the old one.
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with([' ', '\t']))
            .filter(|l| asked.names.iter().any(|n| declares(l, n)))
            .collect();
        json!({"actions": [
            {"kind": "CREATE_FILE", "path": to, "content": format!("{}\n", lines.join("\n"))},
        ]})
    };
    Some((document.to_string(), from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(names: &[&str], from: Option<&str>, to: &str) -> Option<AskedMove> {
        Some(AskedMove {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            from: from.map(str::to_owned),
            to: to.to_owned(),
        })
    }

    #[test]
    fn goals_that_ask_for_a_move_in_words_are_read() {
        assert_eq!(
            asked_move(
                "move format_money and parse_money from utils.py into a new module money.py, \
                 delete utils.py and fix the imports"
            ),
            asked(
                &["format_money", "parse_money"],
                Some("utils.py"),
                "money.py"
            )
        );
        assert_eq!(
            asked_move(
                "move isEmail and isUrl out of src/helpers.js into a new src/validators.js and \
                 update the imports"
            ),
            asked(
                &["isEmail", "isUrl"],
                Some("src/helpers.js"),
                "src/validators.js"
            )
        );
        assert_eq!(
            asked_move(
                "move slugify and truncate from src/util.rs into a new public module text \
                 (tests use blog::text::...), then remove util.rs"
            ),
            asked(&["slugify", "truncate"], Some("src/util.rs"), "text")
        );
        assert_eq!(
            asked_move("Move `load()`, `save`, dump to lib/io.js."),
            asked(&["load", "save", "dump"], None, "lib/io.js")
        );
        assert_eq!(
            asked_move("Extract the helper functions parse and dump from io.py to codec.py"),
            asked(&["parse", "dump"], Some("io.py"), "codec.py")
        );
        assert_eq!(
            asked_move("move utils.py to money.py"),
            asked(&[], Some("utils.py"), "money.py")
        );
    }

    #[test]
    fn goals_that_ask_for_no_move_are_not_read_as_one() {
        for goal in [
            "fix the bug in move_piece",
            "the cursor does not move to the end of line",
            "move on: add a test",
            "Remove the move from history.py",
            "move to a faster parser",
            "rename getUser to fetchUser",
            "the knight should move the piece to the target square",
            "fix: move() in board.py does not move the piece to the target",
        ] {
            assert_eq!(asked_move(goal), None, "{goal}");
        }
    }

    #[test]
    fn a_move_begins_as_a_model_would_begin_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fs_err::create_dir_all(root.join("src")).unwrap();
        fs_err::write(
            root.join("src/helpers.js"),
            "export function isEmail(s) {\n  return s.includes('@');\n}\n\nexport const trim = (s) => {\n  return s.trim();\n};\n",
        )
        .unwrap();
        fs_err::write(root.join("util.py"), "def one():\n    return 1\n").unwrap();
        let users = |name: &str| -> Vec<String> {
            match name {
                "isEmail" => vec!["src/helpers.js".into(), "src/helpers.test.js".into()],
                _ => Vec::new(),
            }
        };
        // Some of a module's definitions: a new module declaring them, beside the old one.
        let (doc, from, to) = begun(
            root,
            &asked(&["isEmail"], Some("helpers.js"), "validators").unwrap(),
            &users,
        )
        .unwrap();
        assert_eq!(
            (from.as_str(), to.as_str()),
            ("src/helpers.js", "src/validators.js")
        );
        let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(
            doc["actions"],
            json!([{"kind": "CREATE_FILE", "path": "src/validators.js",
                    "content": "export function isEmail(s) {\n"}])
        );
        // All of them: the old module deleted and created under the new name.
        let (doc, _, to) =
            begun(root, &asked(&[], Some("util.py"), "text").unwrap(), &users).unwrap();
        assert_eq!(to, "text.py");
        let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(
            doc["actions"][0],
            json!({"kind": "DELETE_FILE", "path": "util.py"})
        );
        assert_eq!(doc["actions"][1]["content"], "def one():\n    return 1\n");
        // A comment that reads like a definition (`dashes: …`) defines nothing, and a constant
        // only the named function uses goes with it: every definition moves, so the module does.
        fs_err::write(
            root.join("src/util.rs"),
            "/// Words joined by single dashes: `a b` -> `a-b`.\nconst SEP: char = '-';\n\npub fn slugify(t: &str) -> String {\n    t.replace(' ', &SEP.to_string())\n}\n",
        )
        .unwrap();
        let (doc, _, to) = begun(
            root,
            &asked(&["slugify"], Some("src/util.rs"), "text").unwrap(),
            &users,
        )
        .unwrap();
        assert_eq!(to, "src/text.rs");
        let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(
            doc["actions"][0],
            json!({"kind": "DELETE_FILE", "path": "src/util.rs"})
        );
        // A name the module does not define, a destination that exists, another language.
        for (names, from, to) in [
            (&["isUrl"][..], "src/helpers.js", "v.js"),
            (&[][..], "util.py", "src/helpers.js"),
            (&[][..], "util.py", "text.rs"),
            (&[][..], "nowhere.py", "text.py"),
            (&[][..], "../util.py", "text.py"),
            (&[][..], "util.py", "/tmp/text.py"),
        ] {
            assert_eq!(
                begun(root, &asked(names, Some(from), to).unwrap(), &users),
                None,
                "{names:?} {from} {to}"
            );
        }
    }
}
