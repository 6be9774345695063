//! `papayu plan <goal>`: ask the model for a plan (nothing is written; the plan is saved).

use anyhow::Result;
use papayu_agent::PlanOutcome;

use crate::cmd::session::{ProgressLine, open_agent, print_json, report_agent_error, runtime};
use crate::exit::Exit;
use crate::global::Global;

/// Ask the model for a plan; it is saved so `papayu apply` (or "ok" in chat) applies it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What you want done, e.g. "fix the failing test in tests/api.rs".
    #[arg(required = true, num_args = 1..)]
    pub goal: Vec<String>,
    /// Write the progress as JSON Lines events on stdout (`stage`, `tokens`, `preview`,
    /// `check`), ending with a `result` event holding the `--json` document.
    #[arg(long)]
    pub json_stream: bool,
}

/// Print a plan for people.
pub fn print_plan(p: &PlanOutcome) {
    println!(
        "{}",
        crate::tr!(
            "plan-title",
            protocol = p.protocol,
            trace = p.trace_id.to_string()
        )
    );
    if let Some(s) = &p.summary {
        println!("\n{s}\n");
    }
    for (i, step) in p.plan.iter().enumerate() {
        println!("  {}. {} — {}", i + 1, step.step, step.details);
    }
    print!(
        "{}",
        titled_lists(&[
            (&crate::tr!("list-risks"), &p.risks),
            (&crate::tr!("list-questions"), &p.questions),
            (&crate::tr!("list-verification"), &p.verification),
            (&crate::tr!("list-commands"), &p.commands_to_run),
            (&crate::tr!("list-rollback"), &p.rollback),
        ])
    );
    if !p.unanswered_context_requests.is_empty() {
        println!(
            "{}",
            crate::tr!(
                "plan-unanswered",
                count = p.unanswered_context_requests.len()
            )
        );
    }
    if let Some(m) = &p.memory {
        for a in &m.applied {
            let (key, value) = (a.key.to_string(), a.value.to_string());
            println!(
                "{}",
                crate::tr!("memory-remembered", key = key, value = value)
            );
        }
        for r in &m.rejected {
            let (key, reason) = (r.key.to_string(), r.reason.to_string());
            println!(
                "{}",
                crate::tr!("memory-not-remembered", key = key, reason = reason)
            );
        }
    }
}

/// Each non-empty list under its title, one `  - item` line per entry (plan and preview share
/// it, so a fix-plan's commands and rollback read the same in both).
pub fn titled_lists(lists: &[(&str, &[String])]) -> String {
    let mut out = String::new();
    for (title, items) in lists {
        if !items.is_empty() {
            out.push_str(title);
            out.push_str(":\n");
            for item in *items {
                out.push_str("  - ");
                out.push_str(item);
                out.push('\n');
            }
        }
    }
    out
}

/// Plan; exit 0, or the error's exit code.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let goal = args.goal.join(" ");
    let mut agent = open_agent(global)?;
    let progress = ProgressLine::new(global);
    let outcome = runtime()?.block_on(agent.plan(&goal, &|p| progress.show(p)));
    progress.done();
    match outcome {
        Ok(plan) => {
            if global.json {
                print_json(&plan)?;
            } else {
                print_plan(&plan);
                println!("\n{}", crate::tr!("plan-saved"));
            }
            Ok(Exit::Ok)
        }
        Err(e) => report_agent_error(&e, global),
    }
}
