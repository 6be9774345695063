//! `papayu redo [--force]`.

use anyhow::Result;
use serde_json::json;

use crate::cmd::apply_plan::{open_project, report_error};
use crate::exit::Exit;
use crate::global::Global;

/// Re-apply the last undone transaction.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Redo even if files changed since the undo.
    #[arg(long)]
    pub force: bool,
}

/// Exit 0 redone, 4 conflict, 1 nothing to redo or another failure.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let project = open_project(global)?;
    match project.redo(args.force) {
        Ok(r) => {
            if global.json {
                println!("{}", json!({"ok": true, "tx_id": r.tx_id}));
            } else {
                println!("redone (as transaction {})", r.tx_id);
            }
            Ok(Exit::Ok)
        }
        Err(e) => report_error(&e, global),
    }
}
