//! Messages in Russian and English (issue #21): the language changes what people read, never
//! an error code nor a byte of `--json`.

use crate::{papayu_env, repo_root};

const REJECTED: &str = "examples/plans/rejected_everything.json";

fn validate(env: &[(&str, &str)], json: bool) -> crate::Run {
    let mut args = vec!["validate", REJECTED];
    if json {
        args.push("--json");
    }
    papayu_env(&repo_root(), env, &args)
}

#[test]
fn papayu_lang_ru_says_a_rejection_in_russian_with_the_same_codes() {
    let en = validate(&[], false);
    let ru = validate(&[("PAPAYU_LANG", "ru")], false);
    assert_eq!((en.code, ru.code), (3, 3), "{}", ru.stderr);
    assert!(
        en.stdout.contains("rejected with 11 problem(s)"),
        "{}",
        en.stdout
    );
    assert!(ru.stdout.contains("отклонён, 11 проблем"), "{}", ru.stdout);
    assert!(
        ru.stdout
            .contains("путь пустой, абсолютный, выходит из проекта"),
        "{}",
        ru.stdout
    );
    assert!(ru.stdout.contains("действие 0"), "{}", ru.stdout);
    // Every line names the same code, in the same place, in both languages.
    let codes = |out: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("ERR_")))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(codes(&ru.stdout), codes(&en.stdout));
    assert!(codes(&ru.stdout).contains(&"ERR_INVALID_PATH".to_owned()));
}

#[test]
fn json_is_byte_identical_in_every_language() {
    let en = validate(&[], true);
    let ru = validate(&[("PAPAYU_LANG", "ru")], true);
    assert_eq!(en.code, 3);
    assert_eq!(ru.code, 3);
    assert_eq!(ru.stdout, en.stdout);
    // An error document too: nothing to undo in an empty project.
    let dir = tempfile::tempdir().unwrap();
    let undo = |env: &[(&str, &str)]| papayu_env(dir.path(), env, &["undo", "--json"]);
    let (en, ru) = (undo(&[]), undo(&[("PAPAYU_LANG", "ru")]));
    assert_eq!(en.code, 1, "{}", en.stderr);
    assert!(en.stdout.contains("ERR_NOTHING_TO_UNDO"), "{}", en.stdout);
    assert_eq!(ru.stdout, en.stdout);
}

#[test]
fn an_error_in_russian_keeps_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let en = papayu_env(dir.path(), &[], &["undo"]);
    let ru = papayu_env(dir.path(), &[("PAPAYU_LANG", "ru")], &["undo"]);
    assert_eq!((en.code, ru.code), (1, 1));
    assert!(en.stderr.contains("ERR_NOTHING_TO_UNDO: "), "{}", en.stderr);
    assert!(
        ru.stderr.contains("ERR_NOTHING_TO_UNDO: отменять нечего"),
        "{}",
        ru.stderr
    );
}

#[test]
fn lang_ru_ru_utf8_alone_selects_russian() {
    let ru = validate(&[("LANG", "ru_RU.UTF-8")], false);
    assert!(ru.stdout.contains("отклонён"), "{}", ru.stdout);
    // LC_ALL outranks LANG, as POSIX says.
    let c = validate(&[("LANG", "ru_RU.UTF-8"), ("LC_ALL", "C")], false);
    assert!(c.stdout.contains("rejected with"), "{}", c.stdout);
}

#[test]
fn an_unknown_language_falls_back_to_english() {
    let en = validate(&[], false);
    for env in [
        [("PAPAYU_LANG", "de")],
        [("LANG", "fr_FR.UTF-8")],
        [("PAPAYU_LANG", "klingon")],
    ] {
        let run = validate(&env, false);
        assert_eq!(run.stdout, en.stdout, "{env:?}");
    }
}

/// `args` in `dir` in English and in Russian, human and `--json`: the JSON is the same bytes in
/// both languages and both exit the same way; returns the two human outputs (stdout + stderr).
fn both_languages(dir: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> (String, String) {
    let run = |lang: Option<&str>, json: bool| {
        let mut env = env.to_vec();
        if let Some(l) = lang {
            env.push(("PAPAYU_LANG", l));
        }
        let mut args = args.to_vec();
        if json {
            args.push("--json");
        }
        papayu_env(dir, &env, &args)
    };
    let (en_json, ru_json) = (run(None, true), run(Some("ru"), true));
    assert_eq!(en_json.code, 0, "{}", en_json.stderr);
    assert_eq!(ru_json.code, en_json.code);
    assert_eq!(ru_json.stdout, en_json.stdout, "--json differs by language");
    let (en, ru) = (run(None, false), run(Some("ru"), false));
    assert_eq!((en.code, ru.code), (0, 0), "{}\n{}", en.stderr, ru.stderr);
    (en.stdout + &en.stderr, ru.stdout + &ru.stderr)
}

#[test]
fn config_show_and_path_speak_russian_and_keep_their_json() {
    let dir = tempfile::tempdir().unwrap();
    let (en, ru) = both_languages(dir.path(), &[], &["config", "show"]);
    assert!(
        en.contains("(default)") || en.contains("  (default"),
        "{en}"
    );
    assert!(ru.contains("(по умолчанию)"), "{ru}");
    assert!(!ru.contains("(default)"), "{ru}");
    // The keys are names: one line per key in both languages.
    assert_eq!(ru.lines().count(), en.lines().count());
    let (en, ru) = both_languages(dir.path(), &[], &["config", "path"]);
    assert!(en.starts_with("user "), "{en}");
    assert!(ru.starts_with("пользователь "), "{ru}");
    assert!(ru.contains("(нет файла)"), "{ru}");
}

#[test]
fn model_list_speaks_russian_and_keeps_its_json() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let env = [("XDG_CACHE_HOME", cache.to_str().unwrap())];
    let (en, ru) = both_languages(dir.path(), &env, &["model", "list"]);
    assert!(
        en.starts_with("catalogue (`papayu model fetch NAME`):"),
        "{en}"
    );
    assert!(
        ru.starts_with("каталог (`papayu model fetch ИМЯ`):"),
        "{ru}"
    );
    assert!(ru.contains("кэш моделей: "), "{ru}");
    assert!(ru.contains("(пусто: `papayu model fetch` скачает"), "{ru}");
    assert!(!ru.contains("model cache"), "{ru}");
}

#[test]
fn memory_show_and_unset_speak_russian_and_keep_their_json() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let (en, ru) = both_languages(dir.path(), &env, &["memory", "show"]);
    assert!(en.starts_with("user prefs:    "), "{en}");
    assert!(ru.starts_with("настройки пользователя: "), "{ru}");
    assert!(ru.contains("\nнастройки проекта:     "), "{ru}");
    assert!(
        ru.contains("(ничего не задано: модель не видит блока памяти)"),
        "{ru}"
    );
    let (en, ru) = both_languages(dir.path(), &env, &["memory", "unset", "user.ask_budget"]);
    assert_eq!(en.trim_end(), "user.ask_budget was not set");
    assert_eq!(ru.trim_end(), "user.ask_budget не был задан");
}

#[test]
fn analyze_speaks_russian_with_plurals_and_keeps_its_json() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let (en, ru) = both_languages(dir.path(), &[], &["analyze"]);
    assert!(en.contains("\nlanguages:\n"), "{en}");
    assert!(en.contains("\ntest command: cargo test"), "{en}");
    assert!(ru.starts_with("проект "), "{ru}");
    assert!(ru.contains(" файла, "), "two files: {ru}");
    assert!(ru.contains("\nязыки:\n"), "{ru}");
    assert!(ru.contains("\nманифесты: Cargo.toml"), "{ru}");
    assert!(ru.contains("\nкоманда тестов: cargo test"), "{ru}");
    assert!(ru.contains("\nнаходки: "), "{ru}");
    assert!(!ru.contains("languages:"), "{ru}");
}
