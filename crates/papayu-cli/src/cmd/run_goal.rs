//! `papayu run <goal> [--yes] [--test CMD] [--attempts N]`: a verified fix or nothing (SPEC §14)
//! — the project's tests before, a change applied as a transaction checked by those tests, kept
//! only when they confirm it, retried with the failure otherwise.

use std::time::Duration;

use anyhow::Result;
use papayu_agent::{
    ApplyOutcome, ApplyPreview, DEFAULT_ATTEMPTS, DEFAULT_MUTANTS, DEFAULT_PARTS,
    DEFAULT_RETRY_TEMPERATURE, SolveOptions, SolveOutcome, SolveReport, TestCommandSource, Verdict,
};
use papayu_protocol::ErrorCode;

use crate::cmd::apply_plan::print_preview;
use crate::cmd::session::{ProgressLine, confirm, open_agent, report_agent_error, runtime};
use crate::exit::{ConfirmationRequired, Exit};
use crate::global::Global;

/// Ask the model for a change, verify it with the project's tests, keep it only if it verifies.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What you want done.
    #[arg(required = true, num_args = 1..)]
    pub goal: Vec<String>,
    /// Apply without asking (deletions included).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// The command that runs the project's tests (default: `project.default_test_command` from
    /// `papayu memory`, else detected: cargo, go, npm/node, pytest/unittest, make).
    #[arg(long, value_name = "CMD")]
    pub test: Option<String>,
    /// Try at most this many changes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ATTEMPTS)]
    pub attempts: u32,
    /// The temperature retries draw at, each from its own fixed seed (0: every attempt as
    /// configured; the first attempt always is). A greedy model repeats its rejected fix.
    #[arg(long, value_name = "T", default_value_t = DEFAULT_RETRY_TEMPERATURE, value_parser = temperature)]
    pub retry_temperature: f32,
    /// Changes drawn and tested per attempt from its one prompt (default: 3 with the
    /// in-process model, which then only generates each answer; 1 over the network).
    #[arg(long, value_name = "N")]
    pub draws: Option<u32>,
    /// When the tests reject a change of whole-file updates, try at most this many smaller
    /// sets of its hunks, each tested on its own (0: none). A small model's rewrite often
    /// holds the fix beside lines it changed by accident.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PARTS)]
    pub parts: u32,
    /// When the model's first change did not verify and the goal's tests fail, try at most
    /// this many of papayu's own small edits of the code those tests exercise (a comparison
    /// turned, `+` for `-`, one field for another, a number off by one), each tested on its own
    /// and kept only if it verifies (0: none).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MUTANTS)]
    pub mutants: u32,
    /// Before the model is first asked, try at most this many of those edits, for about ten
    /// seconds (one edit when a test run takes longer; 0: none; never more than --mutants): a
    /// one-token bug is then fixed without a model call.
    #[arg(long, value_name = "N", default_value_t = papayu_agent::EARLY_MUTANTS)]
    pub early_mutants: u32,
    /// Timeout of each test run, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub test_timeout: u64,
    /// Write the progress as JSON Lines events on stdout (`stage`, `tokens`, `preview`,
    /// `check`), ending with a `result` event holding the `--json` document.
    #[arg(long)]
    pub json_stream: bool,
}

/// A temperature argument: a number in 0..=2.
pub(crate) fn temperature(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(t) if (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(format!(
            "`{s}` is not a temperature: give a number from 0 to 2"
        )),
    }
}

/// Solve the goal: exit 0 with a verified (or, without tests, applied) change, 4 when nothing
/// verified (the project is unchanged), 1 when declined.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    if global.json && !args.yes {
        return Err(ConfirmationRequired(
            "`papayu run` cannot ask before applying under --json or --json-stream; pass --yes to apply a change that verifies"
                .to_owned(),
        )
        .into());
    }
    let goal = args.goal.join(" ");
    let mut agent = open_agent(global)?;
    let progress = ProgressLine::new(global);
    let mut options = SolveOptions::default()
        .attempts(args.attempts)
        .retry_temperature(args.retry_temperature)
        .parts(args.parts)
        .mutants(args.mutants)
        .early_mutants(args.early_mutants)
        .confirmed_deletes(args.yes)
        .test_timeout(Duration::from_secs(args.test_timeout.max(1)));
    if let Some(t) = &args.test {
        options = options.test_command(t.clone());
    }
    if let Some(n) = args.draws {
        options = options.draws(n);
    }
    let ask = |preview: &ApplyPreview| -> bool {
        progress.done();
        show_change(preview);
        let question = if preview.deletes.is_empty() {
            crate::tr!("confirm-apply-one")
        } else {
            crate::tr!(
                "confirm-apply-one-deleting",
                paths = preview.deletes.join(", ")
            )
        };
        confirm(&question).unwrap_or(false)
    };
    // Under --json-stream (which implies --yes) every change is shown as a `preview` event
    // before it is applied, and approved.
    let announce = |preview: &ApplyPreview| -> bool {
        if let Ok(doc) = serde_json::to_value(preview) {
            crate::events::emit(&crate::events::Event::Preview(&doc));
        }
        true
    };
    let confirm_fn: Option<&(dyn Fn(&ApplyPreview) -> bool + Send + Sync)> =
        if crate::json::streaming() {
            Some(&announce)
        } else if args.yes {
            None
        } else {
            Some(&ask)
        };
    let result =
        runtime()?.block_on(agent.solve(&goal, &options, confirm_fn, &|p| progress.show(p)));
    progress.done();
    let report = match result {
        Ok(r) => r,
        Err(e) => return report_agent_error(&e, global),
    };
    let code = failure_code(&report);
    let exit = match code {
        // A change that never got to its tests (rejected, blocked) exits as that code does.
        Some(c) if report.outcome == SolveOutcome::NotSolved => Exit::from(c),
        _ => exit_of(report.outcome),
    };
    let committed = match (&report.applied, report.outcome.changed()) {
        (
            Some(ApplyOutcome {
                report: Some(tx), ..
            }),
            true,
        ) => {
            let summary = report
                .attempts
                .iter()
                .rev()
                .find_map(|a| a.summary.clone())
                .unwrap_or_else(|| report.goal.clone());
            crate::vcs::commit_applied(global, &crate::cmd::apply::touched(tx), &summary, &tx.tx_id)
        }
        _ => None,
    };
    if global.json {
        let body = serde_json::to_value(&report)?;
        crate::json::print(&crate::json::document(exit == Exit::Ok, code, body));
        return Ok(exit);
    }
    print_report(&report, !args.yes);
    if let Some(said) = committed {
        eprintln!("papayu: {said}");
    }
    if let Some(code) = code {
        let why = report
            .reason
            .clone()
            .unwrap_or_else(|| crate::tr!("run-declined"));
        eprintln!("papayu: {}", crate::exit::with_code(code, &why));
    }
    Ok(exit)
}

/// The code of a run that did not end in a change: the last attempt's own error (a rejected
/// answer, a blocked action, a failing check), `ERR_CHECK_FAILED` when the tests did not verify,
/// `ERR_CANCELLED` when declined.
pub fn failure_code(report: &SolveReport) -> Option<ErrorCode> {
    match report.outcome {
        SolveOutcome::NotSolved => Some(
            report
                .attempts
                .last()
                .and_then(|a| a.error.as_ref())
                .map_or(ErrorCode::CheckFailed, |e| e.code),
        ),
        SolveOutcome::Declined => Some(ErrorCode::Cancelled),
        _ => None,
    }
}

fn exit_of(outcome: SolveOutcome) -> Exit {
    match outcome {
        SolveOutcome::Verified | SolveOutcome::AppliedUnverified | SolveOutcome::NoChanges => {
            Exit::Ok
        }
        SolveOutcome::NotSolved => Exit::RolledBack,
        SolveOutcome::Declined => Exit::Failure,
    }
}

/// The change a confirmation asks about.
fn show_change(preview: &ApplyPreview) {
    if let Some(s) = &preview.summary {
        println!("{s}");
    }
    for a in &preview.actions {
        println!("  [{}] {} {}", a.index, a.kind, a.path);
    }
    print_preview(&preview.preview);
}

fn print_report(report: &SolveReport, diffs_shown: bool) {
    match &report.test {
        Some(t) => {
            let source = match &t.source {
                TestCommandSource::Given => crate::tr!("run-tests-given"),
                TestCommandSource::Memory => crate::tr!("run-tests-memory"),
                TestCommandSource::Detected { reason } => {
                    crate::tr!("run-tests-detected", reason = reason.to_string())
                }
                _ => crate::tr!("run-tests-configured"),
            };
            println!(
                "{}",
                crate::tr!(
                    "run-tests",
                    command = t.command.to_string(),
                    source = source
                )
            );
        }
        None => println!("{}", crate::tr!("run-tests-none")),
    }
    if let Some(b) = &report.baseline {
        let seconds = format!("{:.1}", b.duration_ms as f64 / 1000.0);
        let line = if b.failing.is_empty() {
            crate::tr!("run-before-green", passing = b.passed, seconds = seconds)
        } else {
            crate::tr!(
                "run-before-red",
                failing = b.failing.len(),
                names = b.failing.join(", "),
                passing = b.passed,
                seconds = seconds
            )
        };
        println!("{line}");
    }
    // Attempts that drew several changes name each one `attempt.draw`.
    let drawn = report.attempts.iter().any(|a| a.draw > 1);
    for a in &report.attempts {
        let what: Vec<String> = a
            .actions
            .iter()
            .map(|x| format!("{} {}", x.kind, x.path))
            .collect();
        let result = match (&a.verdict, &a.error) {
            (Some(Verdict::Verified { fixed }), _) if fixed.is_empty() => {
                crate::tr!("run-verified-all")
            }
            (Some(Verdict::Verified { fixed }), _) => {
                crate::tr!("run-verified-fixed", names = fixed.join(", "))
            }
            (Some(Verdict::NotVerified { reason, .. }), _) => {
                crate::tr!("run-rolled-back", reason = reason.to_string())
            }
            (None, Some(e)) => crate::exit::with_code(e.code, first_line(&e.message)),
            (None, None) if a.actions.is_empty() => crate::tr!("run-no-change-proposed"),
            (None, None) => crate::tr!("run-not-applied"),
        };
        let what = if what.is_empty() {
            String::new()
        } else {
            format!(" [{}]", what.join(", "))
        };
        let number = if a.number == 0 {
            // papayu's own change before the model was asked (D88, D89).
            crate::tr!("run-before-model")
        } else if drawn {
            format!("{}.{}", a.number, a.draw)
        } else {
            a.number.to_string()
        };
        println!(
            "{}",
            crate::tr!(
                "run-attempt",
                number = match derived_label(a) {
                    Some(label) => format!("{number} ({label})"),
                    None => number,
                },
                what = what,
                result = result
            )
        );
    }
    let applied_diff = report
        .attempts
        .last()
        .filter(|_| report.outcome.changed())
        .map(|a| a.diff.as_str())
        .unwrap_or_default();
    if !diffs_shown && !applied_diff.is_empty() {
        println!("{applied_diff}");
    }
    let tx = report
        .applied
        .as_ref()
        .and_then(|a| a.report.as_ref())
        .map(|r| r.tx_id.clone());
    let tx = tx.map(|t| crate::tr!("run-tx", tx = t)).unwrap_or_default();
    let reason = |otherwise: String| report.reason.clone().unwrap_or(otherwise);
    let said = match report.outcome {
        SolveOutcome::Verified => crate::tr!("run-solved", tx = tx),
        SolveOutcome::AppliedUnverified => crate::tr!(
            "run-unverified",
            tx = tx,
            reason = reason(crate::tr!("run-no-test-command"))
        ),
        SolveOutcome::NotSolved => {
            crate::tr!(
                "run-not-solved",
                reason = reason(crate::tr!("run-unchanged"))
            )
        }
        SolveOutcome::NoChanges => crate::tr!("run-nothing-to-change"),
        SolveOutcome::Declined => crate::tr!("run-declined"),
    };
    println!("{said}");
    println!(
        "{}",
        crate::tr!(
            "run-usage",
            calls = report.usage.model_calls,
            input = report.usage.input_tokens,
            output = report.usage.output_tokens
        )
    );
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// What a change papayu derived from a rejected one was (a part, a completed rename), for the
/// run report's attempt line; `None` for the model's own change.
fn derived_label(a: &papayu_agent::AttemptView) -> Option<String> {
    use crate::term::progress::{hunk_list, name_list};
    if let Some(p) = &a.part {
        return Some(if p.keeping.is_empty() {
            crate::tr!("run-part", hunks = hunk_list(&p.hunks), of = p.of)
        } else {
            crate::tr!(
                "run-part-keeping",
                hunks = hunk_list(&p.hunks),
                of = p.of,
                keeping = hunk_list(&p.keeping)
            )
        });
    }
    if let Some(m) = &a.mutant {
        return Some(crate::tr!(
            "run-mutant",
            path = m.path.clone(),
            line = m.line,
            from = m.from.clone(),
            to = m.to.clone(),
            tried = m.tried
        ));
    }
    if let Some(d) = &a.added {
        return Some(crate::tr!(
            "run-added",
            names = d.names.join(", "),
            files = d.files.join(", ")
        ));
    }
    if let Some(m) = &a.moved {
        return Some(crate::tr!(
            "run-moved",
            names = m.names.join(", "),
            from = m.from.clone(),
            to = m.to.clone(),
            files = m.files.len()
        ));
    }
    let r = a.renamed.as_ref()?;
    let (names, files) = (name_list(&r.names), r.files.len());
    Some(if r.alone {
        crate::tr!("run-renamed-alone", names = names, files = files)
    } else {
        crate::tr!("run-renamed", names = names, files = files)
    })
}
