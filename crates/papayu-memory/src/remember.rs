//! Detecting "remember this" requests in the user's message (English and Russian).

/// Words that may precede an imperative at the start of a clause without changing it
/// ("ok, please remember ...", "и запомни ...").
const FILLERS: &[&str] = &[
    "please",
    "pls",
    "plz",
    "also",
    "and",
    "ok",
    "okay",
    "so",
    "now",
    "hey",
    "btw",
    "then",
    "papayu",
    "и",
    "а",
    "ну",
    "ок",
    "пожалуйста",
    "также",
    "ещё",
    "еще",
    "теперь",
    "кстати",
    "так",
    "папаю",
];

/// English verbs that are a request when used as an imperative.
const EN_VERBS: &[&str] = &["remember", "memorize", "memorise"];

/// Russian imperatives: a request wherever they appear, unless negated by a preceding "не".
const RU_IMPERATIVES: &[&str] = &[
    "запомни",
    "запомните",
    "запоминай",
    "запоминайте",
    "запомним",
    "зафиксируй",
    "зафиксируйте",
];

/// Russian words that turn a following "запомнить" into a request ("можешь запомнить").
const RU_MODALS: &[&str] = &[
    "можешь",
    "можете",
    "сможешь",
    "сможете",
    "прошу",
    "нужно",
    "надо",
    "попрошу",
];

/// Whether the user's message asks papayu to remember something.
///
/// Case-insensitive and word-aware ("remembered" and "запомнил" do not count). English
/// `remember` / `memorize` count only as an imperative: at the start of a clause (after
/// optional fillers such as "ok, please"), after "please", or in "can / could / would / will you
/// remember". Russian `запомни`, `запомните`, `запоминай(те)`, `запомним`, `зафиксируй(те)`
/// count anywhere unless preceded by "не"; `запомнить` counts after "можешь", "прошу",
/// "нужно" and similar.
///
/// ```
/// use papayu_memory::remember_requested;
/// assert!(remember_requested("Remember that tests run with `pytest -q`"));
/// assert!(remember_requested("ok, запомни: тесты запускать через pytest"));
/// assert!(!remember_requested("I don't remember why this test fails"));
/// ```
pub fn remember_requested(message: &str) -> bool {
    let lower = message.to_lowercase();
    lower
        .split(['.', '!', '?', ';', ':', ',', '\n', '\r', '—'])
        .any(clause_requests)
}

fn words(clause: &str) -> Vec<&str> {
    clause
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .collect()
}

fn clause_requests(clause: &str) -> bool {
    let words = words(clause);
    // Imperative at the start of the clause.
    if let Some(first) = words.iter().find(|w| !FILLERS.contains(w))
        && EN_VERBS.contains(first)
    {
        return true;
    }
    words.iter().enumerate().any(|(i, word)| {
        let prev = i.checked_sub(1).map(|j| words[j]);
        let prev2 = i.checked_sub(2).map(|j| words[j]);
        if EN_VERBS.contains(word) {
            // "please remember", "can you remember", "could you please remember".
            let asked = |w: Option<&str>| matches!(w, Some("can" | "could" | "would" | "will"));
            return prev == Some("please") || (prev == Some("you") && asked(prev2));
        }
        if RU_IMPERATIVES.contains(word) {
            return prev != Some("не");
        }
        if *word == "запомнить" {
            return prev.is_some_and(|p| RU_MODALS.contains(&p))
                || (prev == Some("пожалуйста") && prev2.is_some_and(|p| RU_MODALS.contains(&p)));
        }
        false
    })
}
