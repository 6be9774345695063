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
    let ids: BTreeSet<String> = source
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_alphabetic()))
        .filter_map(|l| l.split_once(" =").map(|(id, _)| id.trim().to_owned()))
        .collect();
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
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut used = BTreeSet::new();
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for entry in fs_err::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs_err::read_to_string(&path).unwrap();
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
