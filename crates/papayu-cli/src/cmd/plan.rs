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
    println!("Plan (protocol v{}, trace {}):", p.protocol, p.trace_id);
    if let Some(s) = &p.summary {
        println!("\n{s}\n");
    }
    for (i, step) in p.plan.iter().enumerate() {
        println!("  {}. {} — {}", i + 1, step.step, step.details);
    }
    print!(
        "{}",
        titled_lists(&[
            ("Risks", &p.risks),
            ("Questions", &p.questions),
            ("Verification", &p.verification),
            ("Commands", &p.commands_to_run),
            ("Rollback", &p.rollback),
        ])
    );
    if !p.unanswered_context_requests.is_empty() {
        println!(
            "The model still wanted {} more context item(s) after the round limit.",
            p.unanswered_context_requests.len()
        );
    }
    if let Some(m) = &p.memory {
        for a in &m.applied {
            println!("Remembered {} = {}", a.key, a.value);
        }
        for r in &m.rejected {
            println!("Did not remember {}: {}", r.key, r.reason);
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
                println!(
                    "\nSaved. Run `papayu apply` to turn it into changes (you will see a preview first)."
                );
            }
            Ok(Exit::Ok)
        }
        Err(e) => report_agent_error(&e, global),
    }
}
