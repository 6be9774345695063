//! The "remember this" detector.

use papayu_memory::remember_requested;

#[test]
fn english_requests() {
    for msg in [
        "Remember that tests run with pytest -q",
        "remember: we use pnpm",
        "REMEMBER THIS",
        "Ok, please remember the lint command is ruff check .",
        "Fix the build. Also remember to use cargo nextest",
        "Please, remember that I prefer brief answers",
        "Could you remember that the build command is make?",
        "can you please remember the test roots",
        "Memorize: the package manager is uv",
        "and memorise this",
        "Note for later — remember the CI runs on Windows",
    ] {
        assert!(remember_requested(msg), "should detect: {msg:?}");
    }
}

#[test]
fn russian_requests() {
    for msg in [
        "Запомни, что тесты запускаются через pytest -q",
        "запомните: линтер ruff",
        "ЗАПОМНИ это",
        "Пожалуйста, запомни команду сборки",
        "Исправь тест и запомни, что мы используем pnpm",
        "Можешь запомнить, что я предпочитаю краткие ответы?",
        "Прошу запомнить пакетный менеджер",
        "запоминай такие вещи",
        "Зафиксируй: CI на Linux",
    ] {
        assert!(remember_requested(msg), "should detect: {msg:?}");
    }
}

#[test]
fn negatives() {
    for msg in [
        "",
        "Fix the failing test in tests/test_api.py",
        "I don't remember why this test fails",
        "Do you remember the old API?",
        "I remembered to run the tests",
        "The remembering logic lives in memory.rs",
        "rememberThat is a function name",
        "This test remembers state between runs",
        "not to be remembered",
        "Я не запомнил, как запускать тесты",
        "Не запоминай это",
        "не запомни",
        "Функция запомнила значение",
        "Не могу запомнить команду",
        "напомни мне потом",
        "запомнил",
    ] {
        assert!(!remember_requested(msg), "should not detect: {msg:?}");
    }
}
