//! `papayu undo [--force]`.

use anyhow::Result;
use serde_json::json;

use crate::cmd::apply_plan::{open_project, report_error};
use crate::exit::Exit;
use crate::global::Global;

/// Undo the last transaction (refused if its files changed since, unless --force).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Undo even if files changed since the transaction.
    #[arg(long)]
    pub force: bool,
}

/// Exit 0 undone, 4 conflict, 1 nothing to undo or another failure.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    step(global, args.force, false)
}

/// Undo (`redo == false`) or redo the top transaction; shared by `papayu undo` and `papayu redo`.
pub fn step(global: &Global, force: bool, redo: bool) -> Result<Exit> {
    let project = open_project(global)?;
    let undone = if redo {
        None
    } else {
        project
            .history()
            .ok()
            .and_then(|h| h.undo.first().map(|e| e.tx_id.clone()))
    };
    let result = if redo {
        project.redo(force)
    } else {
        project.undo(force)
    };
    match result {
        Ok(r) => {
            if global.json {
                crate::json::print_ok(&json!({"tx_id": r.tx_id, "displaced": r.displaced}))?;
            } else {
                if redo {
                    println!("{}", crate::tr!("redone", tx = r.tx_id.to_string()));
                } else {
                    println!("{}", crate::tr!("undone", tx = r.tx_id.to_string()));
                }
                // What --force replaced is kept: say where.
                for d in &r.displaced {
                    println!("{d}");
                }
            }
            if let Some(hint) = undone.and_then(|tx| crate::vcs::after_undo(global, &tx)) {
                eprintln!("papayu: {}: {hint}", crate::tr!("note-word"));
            }
            Ok(Exit::Ok)
        }
        Err(e) => report_error(&e, global),
    }
}
