//! `papayu report` (SPEC §10, seed 001's weekly report): metrics computed from the trace files,
//! the graduation verdict and the model's weekly proposals. Reads traces; writes nothing.

mod graduation;
mod proposals;

pub use graduation::{
    Criterion, GRADUATION_MAX_RATE, GRADUATION_WINDOW, Graduation, Verdict, graduation,
};
pub use proposals::{ProposalsOutcome, request_weekly_proposals, weekly_request};

use std::collections::BTreeMap;
use std::time::Duration;

use camino::Utf8Path;
use papayu_protocol::ErrorCode;
use serde::Serialize;

use crate::error::AgentError;
use crate::trace::{TraceRecord, load_traces};

/// The SPEC §10 metrics over a set of traces.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Traces considered (after the `since` filter).
    pub trace_count: usize,
    /// Trace files that could not be read (skipped).
    pub unreadable_traces: usize,
    /// The `since` window in seconds, if any.
    pub since_secs: Option<u64>,
    /// PLAN calls.
    pub plan_count: usize,
    /// APPLY calls.
    pub apply_count: usize,
    /// APPLY calls whose plan was written to disk.
    pub applied_count: usize,
    /// APPLY calls with a protocol fallback.
    pub fallback_count: usize,
    /// `fallback_count / apply_count` (`None` without APPLY calls).
    pub fallback_rate: Option<f64>,
    /// The same without `ERR_NON_UTF8_FILE` fallbacks, which are a limit of the data rather
    /// than a failure of the newer protocol: those calls leave numerator and denominator.
    pub fallback_rate_excluding_non_utf8: Option<f64>,
    /// Fallbacks per reason code.
    pub fallback_reasons: BTreeMap<String, usize>,
    /// Fallbacks per stage where the answer was rejected (`schema`, `validate`, `preview`).
    pub fallback_stages: BTreeMap<String, usize>,
    /// Paths whose `base_sha256` the repair round injected most often (at most
    /// [`TOP_PATHS`], most frequent first, ties by path).
    pub top_repair_injected_paths: Vec<PathCount>,
    /// Calls that used the repair round.
    pub repair_count: usize,
    /// Calls whose repaired answer was accepted.
    pub repair_success_count: usize,
    /// `repair_success_count / repair_count`.
    pub repair_success_rate: Option<f64>,
    /// Final error code per failed call (or rolled-back apply).
    pub error_codes: BTreeMap<String, usize>,
    /// Every violation code over all model answers (what models get wrong).
    pub violation_codes: BTreeMap<String, usize>,
    /// Mean `context_total_chars` per call.
    pub context_avg_chars: Option<f64>,
    /// 95th percentile (nearest rank) of `context_total_chars`.
    pub context_p95_chars: Option<usize>,
    /// Context cache hits over hits + misses, over all calls.
    pub cache_hit_rate: Option<f64>,
    /// Seed 001's verdict over the last 100 APPLY calls (regardless of `since`).
    pub graduation: Graduation,
}

/// How many paths [`Report::top_repair_injected_paths`] keeps.
pub const TOP_PATHS: usize = 20;

/// A path and how often it occurred.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathCount {
    /// Project-relative path.
    pub path: String,
    /// Occurrences.
    pub count: usize,
}

fn top_paths<'a>(paths: impl Iterator<Item = &'a String>) -> Vec<PathCount> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for p in paths {
        *counts.entry(p).or_insert(0) += 1;
    }
    let mut top: Vec<PathCount> = counts
        .into_iter()
        .map(|(path, count)| PathCount {
            path: path.to_owned(),
            count,
        })
        .collect();
    top.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
    top.truncate(TOP_PATHS);
    top
}

fn ratio(n: usize, d: usize) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

/// Compute the metrics over `traces`, keeping those created at or after `now_ms - since`; the
/// graduation verdict looks at the newest APPLY calls of all of `traces`.
pub fn compute(traces: &[TraceRecord], since: Option<Duration>, now_ms: u64) -> Report {
    let cutoff = since.map(|s| now_ms.saturating_sub(s.as_millis() as u64));
    let ts: Vec<&TraceRecord> = traces
        .iter()
        .filter(|t| cutoff.is_none_or(|c| t.created_unix_ms >= c))
        .collect();
    let applies: Vec<&&TraceRecord> = ts.iter().filter(|t| t.mode == "APPLY").collect();
    let fallbacks: Vec<&&&TraceRecord> = applies
        .iter()
        .filter(|t| t.protocol_fallback_attempted)
        .collect();
    let non_utf8 = fallbacks
        .iter()
        .filter(|t| t.protocol_fallback_reason == Some(ErrorCode::NonUtf8File))
        .count();
    let mut fallback_reasons = BTreeMap::new();
    let mut fallback_stages = BTreeMap::new();
    for t in &fallbacks {
        if let Some(r) = t.protocol_fallback_reason {
            *fallback_reasons.entry(r.as_str().to_owned()).or_insert(0) += 1;
        }
        if let Some(s) = t.protocol_fallback_stage {
            *fallback_stages.entry(s.as_str().to_owned()).or_insert(0) += 1;
        }
    }
    let repair_count = ts.iter().filter(|t| t.protocol_repair_attempt > 0).count();
    let repair_success_count = ts.iter().filter(|t| t.repair_success == Some(true)).count();
    let mut error_codes = BTreeMap::new();
    let mut violation_codes = BTreeMap::new();
    for t in &ts {
        let code = t
            .error_code
            .or_else(|| t.apply.as_ref().and_then(|a| a.error_code));
        if let Some(c) = code {
            *error_codes.entry(c.as_str().to_owned()).or_insert(0) += 1;
        }
        for a in &t.attempts {
            for v in &a.violations {
                *violation_codes
                    .entry(v.code.as_str().to_owned())
                    .or_insert(0) += 1;
            }
        }
    }
    let mut chars: Vec<usize> = ts
        .iter()
        .map(|t| t.context_stats.context_total_chars)
        .collect();
    chars.sort_unstable();
    let context_avg_chars = ratio(chars.iter().sum(), chars.len());
    let context_p95_chars = (!chars.is_empty()).then(|| {
        let rank = (0.95 * chars.len() as f64).ceil() as usize;
        chars[rank.clamp(1, chars.len()) - 1]
    });
    let hits: u64 = ts.iter().map(|t| t.cache_stats.hits).sum();
    let misses: u64 = ts.iter().map(|t| t.cache_stats.misses).sum();
    Report {
        trace_count: ts.len(),
        unreadable_traces: 0,
        since_secs: since.map(|s| s.as_secs()),
        plan_count: ts.iter().filter(|t| t.mode == "PLAN").count(),
        apply_count: applies.len(),
        applied_count: applies
            .iter()
            .filter(|t| t.apply.as_ref().is_some_and(|a| a.outcome == "applied"))
            .count(),
        fallback_count: fallbacks.len(),
        fallback_rate: ratio(fallbacks.len(), applies.len()),
        fallback_rate_excluding_non_utf8: ratio(
            fallbacks.len() - non_utf8,
            applies.len() - non_utf8,
        ),
        fallback_reasons,
        fallback_stages,
        top_repair_injected_paths: top_paths(
            ts.iter().flat_map(|t| t.repair_injected_paths.iter()),
        ),
        repair_count,
        repair_success_count,
        repair_success_rate: ratio(repair_success_count, repair_count),
        error_codes,
        violation_codes,
        context_avg_chars,
        context_p95_chars,
        cache_hit_rate: (hits + misses > 0).then(|| hits as f64 / (hits + misses) as f64),
        graduation: graduation(traces),
    }
}

/// `papayu report [--since 7d]`: read `.papa-yu/traces/` of `root` and compute the metrics.
pub fn report(root: &Utf8Path, since: Option<Duration>, now_ms: u64) -> Result<Report, AgentError> {
    let (records, unreadable) = load_records(root)?;
    let mut r = compute(&records, since, now_ms);
    r.unreadable_traces = unreadable;
    Ok(r)
}

/// [`report`] and its per-day [`timeline`], the traces read once.
pub fn report_with_timeline(
    root: &Utf8Path,
    since: Option<Duration>,
    now_ms: u64,
) -> Result<(Report, Vec<DayBucket>), AgentError> {
    let (records, unreadable) = load_records(root)?;
    let mut r = compute(&records, since, now_ms);
    r.unreadable_traces = unreadable;
    Ok((r, timeline(&records, since, now_ms)))
}

/// The readable traces of `root` and how many were not.
fn load_records(root: &Utf8Path) -> Result<(Vec<TraceRecord>, usize), AgentError> {
    let (traces, bad) = load_traces(root)?;
    Ok((traces.into_iter().map(|(_, t)| t).collect(), bad.len()))
}

/// One UTC day of [`timeline`]: the metrics a chart plots over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayBucket {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    /// Traces (model calls) that day.
    pub calls: usize,
    /// Fallbacks over APPLY calls that day.
    pub fallback_rate: Option<f64>,
    /// Accepted repairs over repair rounds that day.
    pub repair_success_rate: Option<f64>,
    /// Final error codes that day.
    pub error_codes: BTreeMap<String, usize>,
}

/// The civil date (UTC) of a day number since 1970-01-01 (H. Hinnant's algorithm).
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The metrics of [`compute`] per UTC day, oldest day first; days without traces are absent.
pub fn timeline(traces: &[TraceRecord], since: Option<Duration>, now_ms: u64) -> Vec<DayBucket> {
    let cutoff = since.map(|s| now_ms.saturating_sub(s.as_millis() as u64));
    let mut days: BTreeMap<u64, Vec<TraceRecord>> = BTreeMap::new();
    for t in traces
        .iter()
        .filter(|t| cutoff.is_none_or(|c| t.created_unix_ms >= c))
    {
        days.entry(t.created_unix_ms / 86_400_000)
            .or_default()
            .push(t.clone());
    }
    days.into_iter()
        .map(|(day, ts)| {
            let r = compute(&ts, None, now_ms);
            let (y, m, d) = civil_date(day as i64);
            DayBucket {
                day: format!("{y:04}-{m:02}-{d:02}"),
                calls: r.trace_count,
                fallback_rate: r.fallback_rate,
                repair_success_rate: r.repair_success_rate,
                error_codes: r.error_codes,
            }
        })
        .collect()
}

/// Units whose length varies with the calendar (humantime counts a month as 30.44 days and a
/// year as 365.25): a `--since` in them would be a guess, so it is refused.
const CALENDAR_UNITS: &[&str] = &["M", "month", "months", "y", "yr", "yrs", "year", "years"];

/// What a refused `--since` is told (the CLI's flag, the UI's report filter).
pub const SINCE_HINT: &str =
    "use e.g. 30m, 12h, 7d or 2h 30m (months and years are refused: their length varies)";

/// Parse a `--since` duration with humantime (`7d`, `12h`, `90m`, `2h 30m`, `1w`); `None` for
/// anything else, and for months and years.
pub fn parse_since(text: &str) -> Option<Duration> {
    let calendar = text
        .split(|c: char| !c.is_alphabetic())
        .any(|unit| CALENDAR_UNITS.contains(&unit));
    if calendar {
        return None;
    }
    humantime::parse_duration(text.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(19_782), (2024, 2, 29));
        assert_eq!(civil_date(20_757), (2026, 10, 31));
        assert_eq!(civil_date(-1), (1969, 12, 31));
    }

    #[test]
    fn since_units() {
        assert_eq!(parse_since("7d"), Some(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_since("12h"), Some(Duration::from_secs(43_200)));
        assert_eq!(parse_since("90m"), Some(Duration::from_secs(5_400)));
        assert_eq!(parse_since("2w"), Some(Duration::from_secs(1_209_600)));
        assert_eq!(parse_since("d"), None);
        assert_eq!(parse_since("7"), None);
        assert_eq!(parse_since("7y"), None);
    }

    #[test]
    fn since_takes_humantime_spans_but_no_calendar_units() {
        for (text, secs) in [
            ("90m", 5_400),
            ("2h 30m", 9_000),
            ("7d", 604_800),
            ("1w", 604_800),
            (" 1d12h ", 129_600),
        ] {
            assert_eq!(parse_since(text), Some(Duration::from_secs(secs)), "{text}");
        }
        for text in ["7y", "1M", "2 months", "1year", "1w 1M", "soon", ""] {
            assert_eq!(parse_since(text), None, "{text}");
        }
    }
}
