//! `papayu history`.

use anyhow::Result;
use serde_json::json;

use crate::cmd::apply_plan::{inspect_project, report_error};
use crate::exit::Exit;
use crate::global::Global;

/// List the undo and redo stacks.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Exit 0.
pub fn run(_args: &Args, global: &Global) -> Result<Exit> {
    let project = inspect_project(global)?;
    let h = match project.history() {
        Ok(h) => h,
        Err(e) => return report_error(&e, global),
    };
    if global.json {
        crate::json::print_ok(&json!({"history": h}))?;
        return Ok(Exit::Ok);
    }
    for (undo, list) in [(true, &h.undo), (false, &h.redo)] {
        let count = list.len();
        let title = if undo {
            crate::tr!("history-stack-undo", count = count)
        } else {
            crate::tr!("history-stack-redo", count = count)
        };
        println!("{title}");
        for e in list {
            let kinds: Vec<String> = e
                .actions
                .iter()
                .map(|a| format!("{} {}", a.kind, a.path))
                .collect();
            println!(
                "{}",
                crate::tr!(
                    "history-entry",
                    tx = e.tx_id.to_string(),
                    kind = format!("{:?}", e.kind),
                    count = e.paths.len(),
                    actions = kinds.join(", ")
                )
            );
        }
    }
    Ok(Exit::Ok)
}
