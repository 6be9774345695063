//! `papayu chat`: an interactive loop — describe a goal, read the plan, say "ok" (or "да"),
//! review the preview, confirm, and `undo` if you change your mind.

use std::io::{BufRead, Write};

use anyhow::Result;
use papayu_agent::ChatTurn;

use crate::cmd::apply::confirm_and_apply;
use crate::cmd::plan::print_plan;
use crate::cmd::session::{ProgressLine, open_agent, report_agent_error, runtime};
use crate::exit::Exit;
use crate::global::Global;

/// Chat with the model about the project: plan → "ok" → preview → confirm → apply.
#[derive(Debug, clap::Args)]
pub struct Args {}

const HELP: &str = "Describe a goal to get a plan. \"ok\" / \"да\" applies the saved plan (preview first).\n\
Prefix \"plan:\" or \"apply:\" to choose the mode. Commands: undo, redo, history, help, quit.";

/// Run the loop until end of input or `quit`.
pub fn run(_args: &Args, global: &Global) -> Result<Exit> {
    let mut agent = open_agent(global)?;
    let rt = runtime()?;
    let progress = ProgressLine::new(global);
    println!("papayu chat — {}", agent.root());
    println!("{HELP}");
    let stdin = std::io::stdin();
    let mut last = Exit::Ok;
    loop {
        print!("> ");
        std::io::stdout().flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            println!();
            return Ok(last);
        }
        let message = line.trim();
        match message.to_lowercase().as_str() {
            "" => continue,
            "quit" | "exit" | "q" | "выход" => return Ok(last),
            "help" | "?" => {
                println!("{HELP}");
                continue;
            }
            "undo" | "отмена" => {
                last = match agent.undo(false) {
                    Ok(r) => {
                        println!("Undone (transaction {}).", r.tx_id);
                        Exit::Ok
                    }
                    Err(e) => report_agent_error(&e, global)?,
                };
                continue;
            }
            "redo" => {
                last = match agent.redo(false) {
                    Ok(r) => {
                        println!("Redone (transaction {}).", r.tx_id);
                        Exit::Ok
                    }
                    Err(e) => report_agent_error(&e, global)?,
                };
                continue;
            }
            "history" => {
                match agent.history() {
                    Ok(h) => {
                        for e in h.undo.iter().rev() {
                            println!("  {} {:?} {}", e.tx_id, e.kind, e.paths.join(", "));
                        }
                        if h.undo.is_empty() {
                            println!("  (nothing applied yet)");
                        }
                    }
                    Err(e) => last = report_agent_error(&e, global)?,
                }
                continue;
            }
            _ => {}
        }
        let turn = rt.block_on(agent.handle_message(message, &|p| progress.show(p)));
        progress.done();
        last = match turn {
            Ok(ChatTurn::Plan { outcome, .. }) => {
                print_plan(&outcome);
                println!("Say \"ok\" to apply this plan.");
                Exit::Ok
            }
            Ok(ChatTurn::Preview { preview, .. }) => {
                confirm_and_apply(&agent, &preview, false, None, global, &progress)?
            }
            Err(e) => report_agent_error(&e, global)?,
        };
    }
}
