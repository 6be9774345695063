//! `papayu recover`.

use anyhow::Result;
use serde_json::json;

use crate::cmd::apply_plan::report_error;
use crate::exit::Exit;
use crate::global::Global;

/// Roll back any transaction a crash left unfinished.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Exit 0 when the project is consistent afterwards.
pub fn run(_args: &Args, global: &Global) -> Result<Exit> {
    let root = global.project_root()?;
    match papayu_patch::recover(&root) {
        Ok(r) => {
            if global.json {
                crate::json::print_ok(&json!({"recovery": r}))?;
            } else if r.rolled_back.is_empty() && r.discarded.is_empty() {
                println!("nothing to recover");
            } else {
                println!(
                    "rolled back {} unfinished transaction(s), discarded {} incomplete journal(s)",
                    r.rolled_back.len(),
                    r.discarded.len()
                );
            }
            Ok(Exit::Ok)
        }
        Err(e) => report_error(&e, global),
    }
}
