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
