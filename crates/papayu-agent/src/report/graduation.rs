//! Seed 001's graduation verdict: whether the v2→v1 fallback can be switched off
//! (`PAPAYU_PROTOCOL_FALLBACK_TO_V1=0`), judged over the last 100 APPLY calls.

use papayu_protocol::ErrorCode;
use serde::Serialize;

use super::ratio;
use crate::trace::TraceRecord;

/// APPLY calls the verdict looks at (the newest ones).
pub const GRADUATION_WINDOW: usize = 100;

/// The rate seed 001 requires to stay under (1 %) for fallbacks and for ERR_PATCH_APPLY_FAILED.
pub const GRADUATION_MAX_RATE: f64 = 0.01;

/// What the numbers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every criterion holds over a full window: the fallback can be switched off.
    Graduate,
    /// A full window, but at least one criterion fails: keep the fallback.
    KeepFallback,
    /// Fewer APPLY calls than the window: no verdict yet.
    NotEnoughData,
}

impl Verdict {
    /// `graduate`, `keep_fallback` or `not_enough_data`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Graduate => "graduate",
            Verdict::KeepFallback => "keep_fallback",
            Verdict::NotEnoughData => "not_enough_data",
        }
    }
}

/// One of seed 001's criteria with the value it was judged on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Criterion {
    /// Stable name (`fallback_rate_excluding_non_utf8`, …).
    pub id: &'static str,
    /// What must hold, in words.
    pub required: &'static str,
    /// The measured value, in words with its numbers.
    pub actual: String,
    /// Whether it holds.
    pub met: bool,
}

/// The verdict with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Graduation {
    /// [`GRADUATION_WINDOW`].
    pub window: usize,
    /// APPLY calls in the window (those that started on protocol v2 or v3, newest first, at
    /// most `window`).
    pub apply_calls: usize,
    /// Of them, calls that fell back to an older protocol.
    pub fallback_count: usize,
    /// Of the fallbacks, those caused by ERR_NON_UTF8_FILE (a limit of the data, not counted
    /// as a failure of the newer protocol).
    pub non_utf8_fallbacks: usize,
    /// `(fallbacks - non_utf8) / (calls - non_utf8)`.
    pub fallback_rate_excluding_non_utf8: Option<f64>,
    /// Calls where ERR_PATCH_APPLY_FAILED happened (rejected answer or fallback reason).
    pub patch_apply_failed: usize,
    /// Of them, calls the repair round cured without a fallback.
    pub patch_apply_failed_repaired: usize,
    /// Of them, calls that fell back because of it.
    pub patch_apply_failed_fallbacks: usize,
    /// Fallbacks caused by ERR_V2_UPDATE_EXISTING_FORBIDDEN (still there after repair).
    pub update_existing_forbidden_fallbacks: usize,
    /// Every criterion, in seed 001's order.
    pub criteria: Vec<Criterion>,
    /// The verdict.
    pub verdict: Verdict,
}

fn percent(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_owned(), |r| format!("{:.2}%", r * 100.0))
}

fn saw(t: &TraceRecord, code: ErrorCode) -> bool {
    t.protocol_fallback_reason == Some(code)
        || t.attempts
            .iter()
            .any(|a| a.violations.iter().any(|v| v.code == code))
}

/// Judge the newest [`GRADUATION_WINDOW`] APPLY calls of `traces` (any order) by seed 001's
/// criteria. Calls that started on protocol v1 cannot fall back and are not counted.
pub fn graduation(traces: &[TraceRecord]) -> Graduation {
    let mut applies: Vec<&TraceRecord> = traces
        .iter()
        .filter(|t| t.mode == "APPLY" && t.protocol_default >= 2)
        .collect();
    applies.sort_by(|a, b| (b.created_unix_ms, &b.trace_id).cmp(&(a.created_unix_ms, &a.trace_id)));
    applies.truncate(GRADUATION_WINDOW);
    let calls = applies.len();
    let fallback = |t: &&TraceRecord, code: ErrorCode| {
        t.protocol_fallback_attempted && t.protocol_fallback_reason == Some(code)
    };
    let fallback_count = applies
        .iter()
        .filter(|t| t.protocol_fallback_attempted)
        .count();
    let non_utf8 = applies
        .iter()
        .filter(|t| fallback(t, ErrorCode::NonUtf8File))
        .count();
    let paf: Vec<&&TraceRecord> = applies
        .iter()
        .filter(|t| saw(t, ErrorCode::PatchApplyFailed))
        .collect();
    let paf_fallbacks = paf
        .iter()
        .filter(|t| fallback(t, ErrorCode::PatchApplyFailed))
        .count();
    let paf_repaired = paf
        .iter()
        .filter(|t| !t.protocol_fallback_attempted && t.repair_success == Some(true))
        .count();
    let forbidden = applies
        .iter()
        .filter(|t| fallback(t, ErrorCode::V2UpdateExistingForbidden))
        .count();
    let rate_ex = ratio(fallback_count - non_utf8, calls - non_utf8);
    let paf_rate = ratio(paf.len(), calls);
    let below = |r: Option<f64>| r.is_some_and(|r| r < GRADUATION_MAX_RATE);
    let criteria = vec![
        Criterion {
            id: "apply_calls",
            required: "a full window of 100 APPLY calls",
            actual: format!("{calls} APPLY calls"),
            met: calls >= GRADUATION_WINDOW,
        },
        Criterion {
            id: "fallback_rate_excluding_non_utf8",
            required: "fallback rate (ERR_NON_UTF8_FILE excluded) < 1%",
            actual: format!(
                "{} ({} of {} calls)",
                percent(rate_ex),
                fallback_count - non_utf8,
                calls - non_utf8
            ),
            met: below(rate_ex),
        },
        Criterion {
            id: "patch_apply_failed_rate",
            required: "ERR_PATCH_APPLY_FAILED in < 1% of calls",
            actual: format!("{} ({} of {calls} calls)", percent(paf_rate), paf.len()),
            met: below(paf_rate),
        },
        Criterion {
            id: "patch_apply_failed_repair_over_fallback",
            required: "ERR_PATCH_APPLY_FAILED cured by repair more often than by fallback",
            actual: format!("{paf_repaired} repaired, {paf_fallbacks} fell back"),
            met: paf.is_empty() || paf_repaired > paf_fallbacks,
        },
        Criterion {
            id: "update_existing_forbidden",
            required: "no fallback on ERR_V2_UPDATE_EXISTING_FORBIDDEN",
            actual: format!("{forbidden} fallback(s)"),
            met: forbidden == 0,
        },
    ];
    let verdict = if calls < GRADUATION_WINDOW {
        Verdict::NotEnoughData
    } else if criteria.iter().all(|c| c.met) {
        Verdict::Graduate
    } else {
        Verdict::KeepFallback
    };
    Graduation {
        window: GRADUATION_WINDOW,
        apply_calls: calls,
        fallback_count,
        non_utf8_fallbacks: non_utf8,
        fallback_rate_excluding_non_utf8: rate_ex,
        patch_apply_failed: paf.len(),
        patch_apply_failed_repaired: paf_repaired,
        patch_apply_failed_fallbacks: paf_fallbacks,
        update_existing_forbidden_fallbacks: forbidden,
        criteria,
        verdict,
    }
}
