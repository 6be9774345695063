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
    for (label, list) in [("undo", &h.undo), ("redo", &h.redo)] {
        println!("{label} stack ({}):", list.len());
        for e in list {
            let kinds: Vec<String> = e
                .actions
                .iter()
                .map(|a| format!("{} {}", a.kind, a.path))
                .collect();
            println!(
                "  {} {:?} {} path(s): {}",
                e.tx_id,
                e.kind,
                e.paths.len(),
                kinds.join(", ")
            );
        }
    }
    Ok(Exit::Ok)
}
