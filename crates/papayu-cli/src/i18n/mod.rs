//! The binary's human-facing text in English and Russian: two Project Fluent catalogues compiled
//! in (`en.ftl`, `ru.ftl`), the language chosen once by `main`; touches nothing else.
//!
//! Error codes, JSON documents and prompts to the model are never translated: only what a person
//! reads goes through [`text`] (or the [`tr!`](crate::tr) macro).

use std::sync::OnceLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use papayu_protocol::ErrorCode;

/// A language papayu speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    /// English (the default, and the fallback for a language papayu does not speak).
    #[default]
    En,
    /// Russian.
    Ru,
}

impl Lang {
    /// The language of a tag such as `ru`, `ru_RU.UTF-8`, `en-GB` or `C`; `None` when papayu
    /// does not speak it.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let language = tag
            .split(['_', '-', '.', '@'])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        match language.as_str() {
            "ru" => Some(Lang::Ru),
            "en" | "c" | "posix" => Some(Lang::En),
            _ => None,
        }
    }

    /// The language for this process: `PAPAYU_LANG` when set, else the locale POSIX gives
    /// messages (`LC_ALL`, then `LC_MESSAGES`, then `LANG`: the first one set decides);
    /// English for anything papayu does not speak.
    pub fn choose(var: impl Fn(&str) -> Option<String>) -> Lang {
        ["PAPAYU_LANG", "LC_ALL", "LC_MESSAGES", "LANG"]
            .into_iter()
            .find_map(|name| var(name).filter(|v| !v.trim().is_empty()))
            .and_then(|tag| Lang::from_tag(tag.trim()))
            .unwrap_or_default()
    }

    /// The short tag (`en`, `ru`) the UI and the documents use.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ru => "ru",
        }
    }
}

static LANG: OnceLock<Lang> = OnceLock::new();

/// Fix the language of this process (the first call wins; `main` makes it).
pub fn init(lang: Lang) {
    let _ = LANG.set(lang);
}

/// The language of this process (English before [`init`]).
pub fn lang() -> Lang {
    LANG.get().copied().unwrap_or_default()
}

const EN: &str = include_str!("en.ftl");
const RU: &str = include_str!("ru.ftl");

type Bundle = FluentBundle<FluentResource>;

/// The catalogue of `lang`, parsed on first use.
fn bundle(lang: Lang) -> &'static Bundle {
    static EN_BUNDLE: OnceLock<Bundle> = OnceLock::new();
    static RU_BUNDLE: OnceLock<Bundle> = OnceLock::new();
    let (cell, source) = match lang {
        Lang::En => (&EN_BUNDLE, EN),
        Lang::Ru => (&RU_BUNDLE, RU),
    };
    cell.get_or_init(|| build(lang, source))
}

fn build(lang: Lang, source: &str) -> Bundle {
    // The tag is one of two literals that parse; the default (`und`) would only lose plurals.
    let id: unic_langid::LanguageIdentifier = lang.tag().parse().unwrap_or_default();
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    // Terminal text, not bidirectional: no Unicode isolation marks around arguments.
    bundle.set_use_isolating(false);
    // A catalogue that does not parse fails the tests; at run time the messages it holds are
    // still used.
    let resource = FluentResource::try_new(source.to_owned()).unwrap_or_else(|(r, _)| r);
    let _ = bundle.add_resource(resource);
    bundle
}

/// The message `key` in this process's language with `args` filled in; the key itself when
/// the catalogue lacks it (a test makes sure none is missing).
pub fn text(key: &str, args: &[(&str, FluentValue<'_>)]) -> String {
    text_in(lang(), key, args)
}

/// [`text`] in a given language.
pub fn text_in(lang: Lang, key: &str, args: &[(&str, FluentValue<'_>)]) -> String {
    let bundle = bundle(lang);
    let Some(pattern) = bundle.get_message(key).and_then(|m| m.value()) else {
        return key.to_owned();
    };
    let mut fluent_args = FluentArgs::new();
    for (name, value) in args {
        fluent_args.set(*name, value.clone());
    }
    let mut errors = Vec::new();
    bundle
        .format_pattern(pattern, Some(&fluent_args), &mut errors)
        .into_owned()
}

/// The message `key` when the catalogue has it (a key made at run time, such as a criterion's),
/// in this process's language.
pub fn maybe(key: &str) -> Option<String> {
    bundle(lang()).has_message(key).then(|| text(key, &[]))
}

/// What a code means, for people, in this process's language.
pub fn meaning(code: ErrorCode) -> String {
    text(&format!("code-{code}"), &[])
}

/// `CODE: message` for people: in English the library's message after its code (once); in
/// Russian the code, what it means, then the library's message.
pub fn coded(code: ErrorCode, detail: &str) -> String {
    let detail = detail
        .strip_prefix(code.as_str())
        .map(|rest| rest.trim_start_matches(':').trim_start())
        .unwrap_or(detail);
    text(
        "coded",
        &[
            ("code", code.as_str().into()),
            ("meaning", meaning(code).into()),
            ("detail", detail.to_owned().into()),
        ],
    )
}

/// A message of the catalogue: `tr!("key")` or `tr!("key", name = value, …)`, every value
/// anything a `FluentValue` comes from (strings, numbers).
#[macro_export]
macro_rules! tr {
    ($key:literal) => {
        $crate::i18n::text($key, &[])
    };
    ($key:literal, $($name:ident = $value:expr),+ $(,)?) => {
        $crate::i18n::text(
            $key,
            &[$((stringify!($name), ::fluent_bundle::FluentValue::from($value))),+],
        )
    };
}

#[cfg(test)]
mod tests;
