use std::collections::BTreeSet;

use fluent_bundle::FluentResource;

use super::*;

/// The ids of a catalogue's messages (a message starts a line with `id =`); the catalogue must
/// parse without an error, and each id must have a value.
fn ids(name: &str, source: &str) -> BTreeSet<String> {
    if let Err((_, errors)) = FluentResource::try_new(source.to_owned()) {
        panic!("{name} does not parse: {errors:?}");
    }
    let lang = if name == "ru.ftl" { Lang::Ru } else { Lang::En };
    let all: Vec<String> = source
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_alphabetic()))
        .filter_map(|l| l.split_once(" =").map(|(id, _)| id.trim().to_owned()))
        .collect();
    let ids: BTreeSet<String> = all.iter().cloned().collect();
    // A second message under one id is dropped by the bundle: the code would show the first.
    let twice: Vec<&String> = ids
        .iter()
        .filter(|id| all.iter().filter(|a| a == id).count() > 1)
        .collect();
    assert!(twice.is_empty(), "{name}: ids defined twice: {twice:?}");
    for id in &ids {
        assert!(
            bundle(lang)
                .get_message(id)
                .and_then(|m| m.value())
                .is_some(),
            "{name}: {id} has no value"
        );
    }
    ids
}

#[test]
fn both_catalogues_have_exactly_the_same_keys() {
    let en = ids("en.ftl", EN);
    let ru = ids("ru.ftl", RU);
    let only_en: Vec<_> = en.difference(&ru).collect();
    let only_ru: Vec<_> = ru.difference(&en).collect();
    assert!(
        only_en.is_empty() && only_ru.is_empty(),
        "only in en.ftl: {only_en:?}; only in ru.ftl: {only_ru:?}"
    );
}

#[test]
fn every_error_code_has_a_meaning_in_both_languages() {
    let en = ids("en.ftl", EN);
    let ru = ids("ru.ftl", RU);
    for code in ErrorCode::ALL {
        let key = format!("code-{code}");
        assert!(en.contains(&key) && ru.contains(&key), "{key} is missing");
    }
}

/// Every `tr!("key"…)` of the binary's sources names a message of the catalogue.
#[test]
fn every_key_the_code_uses_exists() {
    let en = ids("en.ftl", EN);
    let mut used = BTreeSet::new();
    for (path, text) in sources("src") {
        // `tr!("key"`, not the end of another macro's name (`include_str!("…")`).
        for (at, _) in text.match_indices("tr!(\"") {
            if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &text[at + "tr!(\"".len()..];
            let key = rest.split('"').next().unwrap_or_default();
            used.insert((key.to_owned(), path.display().to_string()));
        }
    }
    // The macro's own documentation names a placeholder key.
    used.retain(|(key, _)| key != "key");
    assert!(used.len() > 50, "found only {} uses", used.len());
    let missing: Vec<_> = used.iter().filter(|(key, _)| !en.contains(key)).collect();
    assert!(missing.is_empty(), "keys not in the catalogue: {missing:?}");
}

#[test]
fn the_language_comes_from_papayu_lang_then_the_locale() {
    let choose = |vars: &[(&str, &str)]| {
        Lang::choose(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    };
    assert_eq!(choose(&[]), Lang::En);
    assert_eq!(choose(&[("PAPAYU_LANG", "ru")]), Lang::Ru);
    assert_eq!(choose(&[("LANG", "ru_RU.UTF-8")]), Lang::Ru);
    assert_eq!(
        choose(&[("LC_MESSAGES", "ru_RU"), ("LANG", "en_US")]),
        Lang::Ru
    );
    assert_eq!(
        choose(&[("LC_ALL", "C"), ("LANG", "ru_RU.UTF-8")]),
        Lang::En
    );
    assert_eq!(
        choose(&[("PAPAYU_LANG", "en"), ("LANG", "ru_RU.UTF-8")]),
        Lang::En
    );
    // A language papayu does not speak is English, not the next variable.
    assert_eq!(
        choose(&[("PAPAYU_LANG", "de"), ("LANG", "ru_RU")]),
        Lang::En
    );
    assert_eq!(choose(&[("LANG", "fr_FR.UTF-8")]), Lang::En);
    assert_eq!(choose(&[("PAPAYU_LANG", " "), ("LANG", "ru")]), Lang::Ru);
}

#[test]
fn russian_numbers_take_their_plural_form() {
    let files = |n: u32| text_in(Lang::Ru, "preview-files", &[("count", n.into())]);
    assert_eq!(files(1), " 1 файл");
    assert_eq!(files(3), " 3 файла");
    assert_eq!(files(5), " 5 файлов");
    assert_eq!(files(21), " 21 файл");
    assert_eq!(
        text_in(Lang::En, "preview-files", &[("count", 5.into())]),
        " 5 file(s)"
    );
}

#[test]
fn a_coded_message_keeps_its_code_in_both_languages() {
    let detail = "ERR_BASE_MISMATCH: src/a.rs changed";
    assert_eq!(
        text_in(
            Lang::En,
            "coded",
            &[
                ("code", "ERR_BASE_MISMATCH".into()),
                ("meaning", "x".into()),
                ("detail", "src/a.rs changed".into())
            ]
        ),
        detail
    );
    let ru = text_in(
        Lang::Ru,
        "coded",
        &[
            ("code", "ERR_BASE_MISMATCH".into()),
            ("meaning", "файл изменился".into()),
            ("detail", "src/a.rs changed".into()),
        ],
    );
    assert_eq!(ru, "ERR_BASE_MISMATCH: файл изменился — src/a.rs changed");
}

/// The string literals inside every `println!`/`eprintln!`/`print!`/`eprint!`/`writeln!`/
/// `write!` call of `src/cmd`, with the file and line of the call.
fn printed_literals() -> Vec<(String, usize, String)> {
    const MACROS: [&str; 6] = [
        "println!(",
        "eprintln!(",
        "print!(",
        "eprint!(",
        "writeln!(",
        "write!(",
    ];
    let mut found = Vec::new();
    for (path, text) in sources("src/cmd") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for m in MACROS {
            for (at, _) in text.match_indices(m) {
                // `eprintln!(` also contains `println!(`: only a macro's own name counts.
                if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let line = text[..at].lines().count().max(1);
                let args = &text[at + m.len()..];
                for literal in literals_until_close(args) {
                    found.push((name.clone(), line, literal));
                }
            }
        }
    }
    found
}

/// Every `.rs` file under the crate's folder `dir`, with its text.
fn sources(dir: &str) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
    while let Some(dir) = stack.pop() {
        for entry in fs_err::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs_err::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    out
}

/// The string literals (escapes kept) of `args` up to the `)` that closes the call, but for
/// catalogue keys and JSON indexes.
fn literals_until_close(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut chars = args.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => break,
            ')' | ']' | '}' => depth -= 1,
            // A char literal such as `'"'` or `'('` is not a string nor a bracket.
            '\'' if args[i..].len() >= 3 && args[i + 2..].starts_with('\'') => {
                chars.next();
                chars.next();
            }
            '"' => {
                let mut literal = String::new();
                while let Some((_, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, e)) = chars.next() {
                                literal.push('\\');
                                literal.push(e);
                            }
                        }
                        '"' => break,
                        c => literal.push(c),
                    }
                }
                // A catalogue key (`tr!("key"`) and a JSON index (`v["key"]`) are not printed.
                let before = args[..i].trim_end();
                if !(before.ends_with(concat!("tr!", "(")) || before.ends_with('[')) {
                    let after = chars.clone().map(|(_, c)| c).find(|c| !c.is_whitespace());
                    if after == Some(':') {
                        // A JSON key (`json!({"ok": …})`) is a name, not prose.
                        continue;
                    }
                    out.push(literal);
                }
            }
            _ => {}
        }
    }
    out
}

/// The words of a literal a person would read: placeholders (`{name:<8}`), escapes (`\n`)
/// and backquoted code (`` `papayu undo` ``) removed, then every run of two or more letters.
fn prose_words(literal: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut skip_until: Option<char> = None;
    let mut chars = literal.chars();
    while let Some(c) = chars.next() {
        if let Some(end) = skip_until {
            if c == end {
                skip_until = None;
            }
            continue;
        }
        match c {
            '{' => skip_until = Some('}'),
            '`' => skip_until = Some('`'),
            '\\' => {
                chars.next();
            }
            c => plain.push(c),
        }
    }
    plain
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 2)
        .map(str::to_owned)
        .collect()
}

/// Words that are names, not prose, wherever they stand in a printed literal.
const NOT_PROSE: &[&str] = &["papayu"];

/// Printed literals that are not prose for people.
const ALLOWED: &[&str] = &[
    // `trace list`'s code column: `ok` or an `ERR_*` code, both machine words.
    "ok",
    // The agent-sync file's path, after its file name.
    "agent-sync: {path}",
    // The subcommand's name before its (translated) message.
    "papayu: sandbox-exec: {}",
    // `papayu ui`'s first line, which scripts and the UI tests read for the URL.
    "papayu ui: {url}",
    // A command line to copy, after `doctor`'s (translated) hint.
    "  PAPAYU_LLM_API_URL=http://127.0.0.1:8080/v1 PAPAYU_LLM_MODEL=smollm2 papayu doctor",
];

/// No human-facing line of `src/cmd` is English text written in the code: every word a person
/// reads comes from the catalogue (`tr!`), so the Russian output has no English left in it.
#[test]
fn commands_print_no_english_words_outside_the_catalogue() {
    let found = printed_literals();
    assert!(found.len() > 100, "found only {} literals", found.len());
    let offenders: Vec<String> = found
        .iter()
        .filter(|(_, _, literal)| !ALLOWED.contains(&literal.as_str()))
        .filter(|(_, _, literal)| {
            prose_words(literal)
                .iter()
                .any(|w| !NOT_PROSE.contains(&w.as_str()))
        })
        .map(|(file, line, literal)| format!("{file}:{line}: {literal:?}"))
        .collect();
    assert!(
        offenders.is_empty(),
        "{} printed literal(s) hold English outside tr!:\n{}",
        offenders.len(),
        offenders.join("\n")
    );
}

#[test]
fn the_prose_scan_sees_words_and_skips_placeholders_and_code() {
    assert_eq!(prose_words("{key:<8} {}"), Vec::<String>::new());
    assert_eq!(prose_words("papayu: `papayu undo`\\n{x}"), vec!["papayu"]);
    assert_eq!(prose_words("{path}: {key} removed"), vec!["removed"]);
    assert_eq!(
        // Split so that the catalogue test does not read a key here.
        literals_until_close(concat!(
            r#""a {}", f("b", '"'), tr!"#,
            r#"("k"), v["i"], json!({"key": 1}), "c\"d") + "e""#
        )),
        vec!["a {}", "b", "c\\\"d"]
    );
}
