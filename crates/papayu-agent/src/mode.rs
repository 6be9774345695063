//! Mode resolution on the user's message (SPEC §9).

use papayu_memory::OutputFormat;
use papayu_validate::Mode;
use serde::Serialize;

/// Whole-message triggers that apply a saved plan.
pub const APPLY_TRIGGERS: &[&str] = &[
    "ok",
    "ок",
    "okay",
    "apply",
    "применяй",
    "применить",
    "делай",
    "да",
    "yes",
    "go",
    "вперёд",
    "вперед",
];

/// Why a mode was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeReason {
    /// `plan:` prefix.
    PlanPrefix,
    /// `apply:` prefix.
    ApplyPrefix,
    /// The whole message is a trigger (`ok`, `да`, …) and a plan is saved.
    SavedPlanTrigger,
    /// A fix word (`fix`, `исправь`, `почини`).
    FixWord,
    /// A create word (`create`, `создай`, `сгенерируй`, `с нуля`).
    CreateWord,
    /// `user.output_format` from memory.
    OutputFormat,
    /// Nothing matched.
    Default,
}

/// The outcome of [`resolve_mode`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModeDecision {
    /// PLAN or APPLY.
    #[serde(serialize_with = "ser_mode")]
    pub mode: Mode,
    /// The message to send (prefix stripped, trimmed).
    pub text: String,
    /// Apply the saved plan instead of asking about `text`.
    pub apply_saved_plan: bool,
    /// Why.
    pub reason: ModeReason,
}

pub(crate) fn ser_mode<S: serde::Serializer>(m: &Mode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(mode_name(*m))
}

/// `PLAN` or `APPLY`.
pub fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Plan => "PLAN",
        Mode::Apply => "APPLY",
    }
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text[prefix.len()..].trim())
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn is_fix_word(w: &str) -> bool {
    matches!(w, "fix" | "fixes" | "fixing") || w.starts_with("исправ") || w.starts_with("почин")
}

fn is_create_word(w: &str) -> bool {
    matches!(w, "create" | "creates" | "creating")
        || w.starts_with("созда")
        || w.starts_with("сгенерир")
}

/// Decide PLAN or APPLY for a user message (SPEC §9), case-insensitively on the trimmed text:
///
/// 1. prefix `plan:` → PLAN, `apply:` → APPLY (the prefix is stripped);
/// 2. the whole message is a trigger ([`APPLY_TRIGGERS`]) and a plan is saved → APPLY of it;
/// 3. a fix word (`fix`, `исправь`, `почини`) → PLAN;
/// 4. a create word (`create`, `создай`, `сгенерируй`) or `с нуля` → APPLY;
/// 5. `user.output_format` (`plan`/`plan_first` → PLAN, `apply`/`patch_first` → APPLY);
/// 6. PLAN.
///
/// ```
/// use papayu_agent::{resolve_mode, ModeReason};
/// use papayu_validate::Mode;
/// let d = resolve_mode("  Apply: add a README ", false, None);
/// assert_eq!((d.mode, d.text.as_str()), (Mode::Apply, "add a README"));
/// assert_eq!(resolve_mode("ОК", true, None).reason, ModeReason::SavedPlanTrigger);
/// assert_eq!(resolve_mode("почини тест", false, None).mode, Mode::Plan);
/// ```
pub fn resolve_mode(
    message: &str,
    has_saved_plan: bool,
    output_format: Option<OutputFormat>,
) -> ModeDecision {
    let text = message.trim();
    let decide = |mode, text: &str, reason| ModeDecision {
        mode,
        text: text.to_owned(),
        apply_saved_plan: false,
        reason,
    };
    if let Some(rest) = strip_prefix_ci(text, "plan:") {
        return decide(Mode::Plan, rest, ModeReason::PlanPrefix);
    }
    if let Some(rest) = strip_prefix_ci(text, "apply:") {
        return decide(Mode::Apply, rest, ModeReason::ApplyPrefix);
    }
    let bare = text.trim_end_matches(['.', '!', ' ', '\t']).to_lowercase();
    if has_saved_plan && APPLY_TRIGGERS.contains(&bare.as_str()) {
        return ModeDecision {
            mode: Mode::Apply,
            text: text.to_owned(),
            apply_saved_plan: true,
            reason: ModeReason::SavedPlanTrigger,
        };
    }
    let ws = words(text);
    if ws.iter().any(|w| is_fix_word(w)) {
        return decide(Mode::Plan, text, ModeReason::FixWord);
    }
    let lower = text.to_lowercase();
    if ws.iter().any(|w| is_create_word(w)) || lower.contains("с нуля") {
        return decide(Mode::Apply, text, ModeReason::CreateWord);
    }
    match output_format {
        Some(OutputFormat::Apply | OutputFormat::PatchFirst) => {
            decide(Mode::Apply, text, ModeReason::OutputFormat)
        }
        Some(OutputFormat::Plan | OutputFormat::PlanFirst) => {
            decide(Mode::Plan, text, ModeReason::OutputFormat)
        }
        None => decide(Mode::Plan, text, ModeReason::Default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        use Mode::{Apply, Plan};
        use ModeReason as R;
        type Case<'a> = (
            &'a str,
            bool,
            Option<OutputFormat>,
            Mode,
            &'a str,
            bool,
            ModeReason,
        );
        let cases: &[Case<'_>] = &[
            (
                "plan: add a flag",
                false,
                None,
                Plan,
                "add a flag",
                false,
                R::PlanPrefix,
            ),
            (
                "PLAN:  create x",
                true,
                None,
                Plan,
                "create x",
                false,
                R::PlanPrefix,
            ),
            (
                "Apply: fix it",
                false,
                None,
                Apply,
                "fix it",
                false,
                R::ApplyPrefix,
            ),
            ("ok", true, None, Apply, "ok", true, R::SavedPlanTrigger),
            (
                "  OK! ",
                true,
                None,
                Apply,
                "OK!",
                true,
                R::SavedPlanTrigger,
            ),
            ("ок", true, None, Apply, "ок", true, R::SavedPlanTrigger),
            ("Да", true, None, Apply, "Да", true, R::SavedPlanTrigger),
            (
                "вперёд",
                true,
                None,
                Apply,
                "вперёд",
                true,
                R::SavedPlanTrigger,
            ),
            (
                "применяй",
                true,
                None,
                Apply,
                "применяй",
                true,
                R::SavedPlanTrigger,
            ),
            (
                "применить",
                true,
                None,
                Apply,
                "применить",
                true,
                R::SavedPlanTrigger,
            ),
            (
                "делай",
                true,
                None,
                Apply,
                "делай",
                true,
                R::SavedPlanTrigger,
            ),
            ("yes", true, None, Apply, "yes", true, R::SavedPlanTrigger),
            ("go", true, None, Apply, "go", true, R::SavedPlanTrigger),
            (
                "apply",
                true,
                None,
                Apply,
                "apply",
                true,
                R::SavedPlanTrigger,
            ),
            ("ok", false, None, Plan, "ok", false, R::Default),
            (
                "ok go ahead",
                true,
                None,
                Plan,
                "ok go ahead",
                false,
                R::Default,
            ),
            (
                "fix the failing test",
                false,
                None,
                Plan,
                "fix the failing test",
                false,
                R::FixWord,
            ),
            (
                "Исправь ошибку",
                false,
                Some(OutputFormat::Apply),
                Plan,
                "Исправь ошибку",
                false,
                R::FixWord,
            ),
            (
                "почини сборку",
                false,
                None,
                Plan,
                "почини сборку",
                false,
                R::FixWord,
            ),
            (
                "create a README",
                false,
                None,
                Apply,
                "create a README",
                false,
                R::CreateWord,
            ),
            (
                "Создай файл",
                false,
                None,
                Apply,
                "Создай файл",
                false,
                R::CreateWord,
            ),
            (
                "сгенерируй тесты",
                false,
                None,
                Apply,
                "сгенерируй тесты",
                false,
                R::CreateWord,
            ),
            (
                "напиши сервис с нуля",
                false,
                None,
                Apply,
                "напиши сервис с нуля",
                false,
                R::CreateWord,
            ),
            (
                "fix and create",
                false,
                None,
                Plan,
                "fix and create",
                false,
                R::FixWord,
            ),
            (
                "add a flag",
                false,
                Some(OutputFormat::Apply),
                Apply,
                "add a flag",
                false,
                R::OutputFormat,
            ),
            (
                "add a flag",
                false,
                Some(OutputFormat::PatchFirst),
                Apply,
                "add a flag",
                false,
                R::OutputFormat,
            ),
            (
                "add a flag",
                false,
                Some(OutputFormat::PlanFirst),
                Plan,
                "add a flag",
                false,
                R::OutputFormat,
            ),
            (
                "add a flag",
                false,
                None,
                Plan,
                "add a flag",
                false,
                R::Default,
            ),
            (
                "the fixture is slow",
                false,
                None,
                Plan,
                "the fixture is slow",
                false,
                R::Default,
            ),
            (
                "recreate nothing",
                false,
                None,
                Plan,
                "recreate nothing",
                false,
                R::Default,
            ),
        ];
        for (msg, saved, fmt, mode, text, use_saved, reason) in cases {
            let d = resolve_mode(msg, *saved, *fmt);
            assert_eq!(
                (d.mode, d.text.as_str(), d.apply_saved_plan, d.reason),
                (*mode, *text, *use_saved, *reason),
                "{msg:?}"
            );
        }
    }
}
