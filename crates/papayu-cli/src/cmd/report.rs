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
                        &format!(
                            "papayu report for {root}{}",
                            args.since
                                .as_ref()
                                .map(|s| format!(" (last {s})"))
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
        println!("no traces yet: run papayu with PAPAYU_TRACE=1 to record them");
        return;
    }
    let percent =
        |x: Option<f64>| x.map_or_else(|| "–".to_owned(), |x| format!("{:.0}%", x * 100.0));
    let mut metrics = table::new(&["metric", "value"]);
    let rows: [(&str, String); 9] = [
        ("traces", r.trace_count.to_string()),
        ("plan calls", r.plan_count.to_string()),
        (
            "apply calls (applied)",
            format!("{} ({})", r.apply_count, r.applied_count),
        ),
        (
            "protocol fallbacks",
            format!("{} ({})", r.fallback_count, percent(r.fallback_rate)),
        ),
        (
            "repairs (accepted)",
            format!("{} ({})", r.repair_count, percent(r.repair_success_rate)),
        ),
        (
            "context size, mean",
            r.context_avg_chars
                .map_or_else(|| "–".to_owned(), |c| format!("{c:.0} chars")),
        ),
        ("context cache hits", percent(r.cache_hit_rate)),
        ("unreadable traces", r.unreadable_traces.to_string()),
        (
            "window",
            r.since_secs
                .map_or_else(|| "all traces".to_owned(), |s| style::duration_ms(s * 1000)),
        ),
    ];
    for (k, v) in rows {
        metrics.add_row(vec![k.to_owned(), v]);
    }
    println!("{metrics}");
    for (title, counts) in [
        ("error code", &r.error_codes),
        ("fallback reason", &r.fallback_reasons),
        ("violation code", &r.violation_codes),
    ] {
        if counts.is_empty() {
            continue;
        }
        let mut t = table::new(&[title, "count"]);
        let mut sorted: Vec<_> = counts.iter().collect();
        sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (code, n) in sorted {
            t.add_row(vec![code.clone(), n.to_string()]);
        }
        println!("{t}");
    }
    if !days.is_empty() {
        let most = days.iter().map(|d| d.calls).max().unwrap_or(1).max(1);
        let mut t = table::new(&["day (UTC)", "calls", "fallback rate", "repair success"]);
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
