//! `papayu batch <goals.txt|goals.jsonl>`: each goal solved as its own verified transaction
//! (as `papayu run --yes`), stopping at the first failure unless `--keep-going`, then a summary
//! table; agent-sync records the batch when it is on.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_agent::{DEFAULT_ATTEMPTS, DEFAULT_RETRY_TEMPERATURE, SolveOptions, SolveOutcome};
use papayu_integrations::batch::{self, BatchRow};
use papayu_integrations::sync;
use papayu_protocol::agent_sync::{SyncKind, SyncStatus};

use crate::cmd::research::{fail, integrations_config};
use crate::cmd::run_goal::failure_code;
use crate::cmd::session::{ProgressLine, open_agent, print_json, runtime};
use crate::exit::{Exit, UsageError, read_input};
use crate::global::Global;
use crate::json::print_failure;

/// Solve the goals of a file, one verified transaction each.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The goals: one per line (`#` comments), or JSON Lines `{"goal": "…"}` (`-` for stdin).
    pub file: PathBuf,
    /// Apply each verified change without asking (required: a batch does not stop to ask).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Go on with the next goal when one fails (default: stop).
    #[arg(long)]
    pub keep_going: bool,
    /// The command that runs the project's tests (default: as `papayu run`).
    #[arg(long, value_name = "CMD")]
    pub test: Option<String>,
    /// Changes tried per goal at most.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ATTEMPTS)]
    pub attempts: u32,
    /// The temperature retries draw at, each from its own fixed seed (0: every attempt as
    /// configured; the first attempt always is). A greedy model repeats its rejected fix.
    #[arg(long, value_name = "T", default_value_t = DEFAULT_RETRY_TEMPERATURE, value_parser = super::run_goal::temperature)]
    pub retry_temperature: f32,
    /// Changes drawn and tested per attempt (default: as `papayu run`).
    #[arg(long, value_name = "N")]
    pub draws: Option<u32>,
    /// Smaller sets of a rejected change's hunks tried at most (default: as `papayu run`).
    #[arg(long, value_name = "N", default_value_t = papayu_agent::DEFAULT_PARTS)]
    pub parts: u32,
    /// papayu's own small edits tried at most (default: as `papayu run`).
    #[arg(long, value_name = "N", default_value_t = papayu_agent::DEFAULT_MUTANTS)]
    pub mutants: u32,
    /// papayu's own small edits tried before the model is first asked (default: as `papayu run`).
    #[arg(long, value_name = "N", default_value_t = papayu_agent::EARLY_MUTANTS)]
    pub early_mutants: u32,
}

fn outcome_name(outcome: SolveOutcome) -> &'static str {
    match outcome {
        SolveOutcome::Verified => "verified",
        SolveOutcome::AppliedUnverified => "applied",
        SolveOutcome::NoChanges => "no_changes",
        SolveOutcome::Declined => "declined",
        _ => "not_solved",
    }
}

/// Exit 0 when every goal succeeded, 1 otherwise, 2 for an unusable goals file.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    if !args.yes {
        return Err(UsageError(
            "`papayu batch` applies without asking: pass --yes (each change is still verified by the tests)"
                .to_owned(),
        )
        .into());
    }
    let config = integrations_config()?;
    let goals = match batch::parse_goals(&read_input(&args.file)?) {
        Ok(g) => g,
        Err(e) => return fail(e.code(), &e.to_string(), global),
    };
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let mut agent = open_agent(global)?;
    let rt = runtime()?;
    let mut options = SolveOptions::default()
        .attempts(args.attempts)
        .retry_temperature(args.retry_temperature)
        .parts(args.parts)
        .mutants(args.mutants)
        .early_mutants(args.early_mutants)
        .confirmed_deletes(true)
        .test_timeout(Duration::from_secs(300));
    if let Some(t) = &args.test {
        options = options.test_command(t.clone());
    }
    if let Some(n) = args.draws {
        options = options.draws(n);
    }
    let mut rows: Vec<BatchRow> = Vec::new();
    let mut stopped = false;
    let mut first_failure = None;
    for goal in &goals {
        if stopped {
            rows.push(BatchRow {
                goal: goal.clone(),
                outcome: "skipped".to_owned(),
                code: None,
                attempts: 0,
            });
            continue;
        }
        if !global.json {
            eprintln!(
                "{}",
                crate::tr!(
                    "batch-goal",
                    index = rows.len() + 1,
                    total = goals.len(),
                    goal = goal.as_str()
                )
            );
        }
        let progress = ProgressLine::new(global);
        let result = rt.block_on(agent.solve(goal, &options, None, &|p| progress.show(p)));
        progress.done();
        let (row, failure) = match result {
            Ok(report) => {
                let failure = failure_code(&report);
                let row = BatchRow {
                    goal: goal.clone(),
                    outcome: outcome_name(report.outcome).to_owned(),
                    // The code `papayu run` would exit with: a change whose tests failed is
                    // ERR_CHECK_FAILED even though no attempt carries an error of its own.
                    code: failure.map(|c| c.as_str().to_owned()),
                    attempts: report.attempts.len(),
                };
                (row, failure)
            }
            Err(e) => (
                BatchRow {
                    goal: goal.clone(),
                    outcome: "failed".to_owned(),
                    code: Some(e.code().as_str().to_owned()),
                    attempts: 0,
                },
                Some(e.code()),
            ),
        };
        if !row.succeeded() {
            first_failure = first_failure.or(failure);
        }
        stopped = !row.succeeded() && !args.keep_going;
        rows.push(row);
    }
    let all_ok = rows.iter().all(BatchRow::succeeded);
    let succeeded = format!(
        "{} of {} goals succeeded",
        rows.iter().filter(|r| r.succeeded()).count(),
        rows.len()
    );
    if config.agent_sync {
        let status = if all_ok {
            SyncStatus::Completed
        } else {
            SyncStatus::Partial
        };
        let mut last = sync::last(SyncKind::Batch, None, status);
        last.result.message = Some(succeeded.clone());
        if let Err(e) = sync::write(&root, &config, last, None, None, None) {
            tracing::warn!(error = %e, "agent-sync: the document was not written");
        }
    }
    if global.json {
        let body = serde_json::json!({"all_ok": all_ok, "goals": rows});
        // `ok` is false with the first failed goal's code, as `papayu run` reports that goal.
        match first_failure.filter(|_| !all_ok) {
            Some(code) => print_failure(code, &succeeded, &body)?,
            None => print_json(&body)?,
        }
    } else {
        println!("{}", render_table(&rows));
    }
    Ok(if all_ok { Exit::Ok } else { Exit::Failure })
}

/// The batch's table for people, in this process's language: the library's rows
/// (`batch::render_table`; outcomes and codes stay as the JSON has them) under a translated
/// header and over a translated total, so English is the library's table byte for byte.
fn render_table(rows: &[BatchRow]) -> String {
    let table = batch::render_table(rows);
    let body: Vec<&str> = table.lines().skip(1).take(rows.len()).collect();
    let header = format!(
        "{:>3}  {:<11} {:>8}  {:<22} {}",
        "#",
        crate::tr!("batch-col-outcome"),
        crate::tr!("batch-col-attempts"),
        crate::tr!("batch-col-code"),
        crate::tr!("batch-col-goal")
    );
    let ok = rows.iter().filter(|r| r.succeeded()).count();
    let total = crate::tr!("batch-succeeded", ok = ok, total = rows.len());
    std::iter::once(header.as_str())
        .chain(body)
        .chain(std::iter::once(total.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use papayu_integrations::batch::{self, BatchRow};

    /// The English table is the library's, byte for byte.
    #[test]
    fn english_table_is_the_librarys() {
        let rows = vec![
            BatchRow {
                goal: "add a test".to_owned(),
                outcome: "applied".to_owned(),
                code: None,
                attempts: 1,
            },
            BatchRow {
                goal: "x".repeat(80),
                outcome: "failed".to_owned(),
                code: Some("ERR_PATCH_APPLY_FAILED".to_owned()),
                attempts: 3,
            },
        ];
        assert_eq!(super::render_table(&rows), batch::render_table(&rows));
    }
}
