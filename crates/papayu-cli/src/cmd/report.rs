//! `papayu report [--since 7d]`: metrics computed from the project's traces (SPEC §10).

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_agent::report::{DayBucket, Report, SINCE_HINT, parse_since, report_with_timeline};

use crate::cmd::report_verdict;
use crate::cmd::session::{print_json, report_agent_error};
use crate::exit::{Exit, UsageError};
use crate::global::Global;
use crate::term::{chart, style, table};

/// Fallback rate, repair success, error codes, context size and cache hit rate from traces.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only traces newer than this (`30m`, `12h`, `7d`, `2w`, `2h 30m`; no months or years).
    #[arg(long, value_name = "AGE")]
    pub since: Option<String>,
    /// Also ask the configured provider for its weekly proposals (checked against
    /// `schemas/llm_weekly_report_schema.json`).
    #[arg(long)]
    pub proposals: bool,
}

/// Compute and print the report.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let since = match &args.since {
        Some(s) => {
            Some(parse_since(s).ok_or_else(|| UsageError(format!("--since {s:?}: {SINCE_HINT}")))?)
        }
        None => None,
    };
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    match report_with_timeline(&root, since, now_ms) {
        Ok((r, days)) => {
            let proposals = if args.proposals {
                Some(report_verdict::proposals(&r, global)?)
            } else {
                None
            };
            if global.json {
                let mut doc = serde_json::to_value(report_verdict::WeeklyDoc {
                    report: &r,
                    proposals: proposals.as_ref(),
                })?;
                doc["timeline"] = serde_json::to_value(&days)?;
                print_json(&doc)?;
            } else {
                anstream::println!(
                    "{}",
                    style::paint(
                        style::BOLD,
                        &crate::tr!(
                            "report-title",
                            root = root.to_string(),
                            window = args
                                .since
                                .as_ref()
                                .map(|s| crate::tr!("report-last", since = s.to_string()))
                                .unwrap_or_default()
                        )
                    )
                );
                print_human(&r, &days);
                print!("{}", report_verdict::render_weekly(&r));
                if let Some(p) = &proposals {
                    print!("{}", report_verdict::render_proposals(p));
                }
            }
            Ok(Exit::Ok)
        }
        Err(e) => report_agent_error(&e, global),
    }
}

/// The width of a rate's bar in the per-day chart.
const BAR: usize = 10;

/// The metrics as a table, the counts per code as tables, the rates per day as a chart.
fn print_human(r: &Report, days: &[DayBucket]) {
    if r.trace_count == 0 {
        println!("{}", crate::tr!("report-no-traces"));
        return;
    }
    let percent =
        |x: Option<f64>| x.map_or_else(|| "–".to_owned(), |x| format!("{:.0}%", x * 100.0));
    let mut metrics = table::new(&[crate::tr!("col-metric"), crate::tr!("col-value")]);
    let rows: [(String, String); 9] = [
        (crate::tr!("report-traces"), r.trace_count.to_string()),
        (crate::tr!("report-plan-calls"), r.plan_count.to_string()),
        (
            crate::tr!("report-apply-calls"),
            format!("{} ({})", r.apply_count, r.applied_count),
        ),
        (
            crate::tr!("report-fallbacks"),
            format!("{} ({})", r.fallback_count, percent(r.fallback_rate)),
        ),
        (
            crate::tr!("report-repairs"),
            format!("{} ({})", r.repair_count, percent(r.repair_success_rate)),
        ),
        (
            crate::tr!("report-context-mean"),
            r.context_avg_chars.map_or_else(
                || "–".to_owned(),
                |c| crate::tr!("report-context-chars", count = c.round()),
            ),
        ),
        (crate::tr!("report-cache-hits"), percent(r.cache_hit_rate)),
        (
            crate::tr!("report-unreadable"),
            r.unreadable_traces.to_string(),
        ),
        (
            crate::tr!("report-window"),
            r.since_secs.map_or_else(
                || crate::tr!("report-all-traces"),
                |s| style::duration_ms(s * 1000),
            ),
        ),
    ];
    for (k, v) in rows {
        metrics.add_row(vec![k, v]);
    }
    println!("{metrics}");
    for (title, counts) in [
        (crate::tr!("col-error-code"), &r.error_codes),
        (crate::tr!("col-fallback-reason"), &r.fallback_reasons),
        (crate::tr!("col-violation-code"), &r.violation_codes),
    ] {
        if counts.is_empty() {
            continue;
        }
        let mut t = table::new(&[title.clone(), crate::tr!("col-count")]);
        let mut sorted: Vec<_> = counts.iter().collect();
        sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (code, n) in sorted {
            t.add_row(vec![code.clone(), n.to_string()]);
        }
        println!("{t}");
    }
    if !days.is_empty() {
        let most = days.iter().map(|d| d.calls).max().unwrap_or(1).max(1);
        let mut t = table::new(&[
            crate::tr!("col-day"),
            crate::tr!("col-calls"),
            crate::tr!("col-fallback-rate"),
            crate::tr!("col-repair-success"),
        ]);
        for d in days {
            t.add_row(vec![
                d.day.clone(),
                format!(
                    "{} {:>4}",
                    chart::bar(d.calls as f64 / most as f64, BAR),
                    d.calls
                ),
                chart::rate(d.fallback_rate, BAR),
                chart::rate(d.repair_success_rate, BAR),
            ]);
        }
        println!("{t}");
    }
}
