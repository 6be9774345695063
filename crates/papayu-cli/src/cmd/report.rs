//! `papayu report [--since 7d]`: metrics computed from the project's traces (SPEC §10).

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_agent::report::{parse_since, report};

use crate::cmd::report_verdict;
use crate::cmd::session::{print_json, report_agent_error};
use crate::exit::{Exit, UsageError};
use crate::global::Global;

/// Fallback rate, repair success, error codes, context size and cache hit rate from traces.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only traces newer than this (`30m`, `12h`, `7d`, `2w`).
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
        Some(s) => Some(
            parse_since(s)
                .ok_or_else(|| UsageError(format!("--since {s:?}: use e.g. 30m, 12h, 7d")))?,
        ),
        None => None,
    };
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    match report(&root, since, now_ms) {
        Ok(r) => {
            let proposals = if args.proposals {
                Some(report_verdict::proposals(&r, global)?)
            } else {
                None
            };
            if global.json {
                print_json(&report_verdict::WeeklyDoc {
                    report: &r,
                    proposals: proposals.as_ref(),
                })?;
            } else {
                let text = serde_json::to_string_pretty(&r)?;
                println!(
                    "papayu report for {root}{}",
                    args.since
                        .as_ref()
                        .map(|s| format!(" (last {s})"))
                        .unwrap_or_default()
                );
                println!("{text}");
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
