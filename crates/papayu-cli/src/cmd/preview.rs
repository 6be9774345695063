//! `papayu preview <plan.json>`: what apply-plan would do, writing nothing.

use std::path::PathBuf;

use anyhow::Result;
use papayu_patch::ApplyOptions;
use serde_json::json;

use crate::cmd::apply_plan::{Loaded, inspect_project, load_plan, print_preview, report_error};
use crate::exit::Exit;
use crate::global::Global;

/// Show the unified diffs, byte counts and any errors a plan would hit, without writing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan: a model answer (JSON, possibly in prose or a ```json fence); `-` for stdin.
    pub plan: PathBuf,
}

/// Exit 0 when apply would succeed, 3 when validation rejects the plan, 4 when an action is blocked.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let project = inspect_project(global)?;
    let plan = match load_plan(&args.plan, global)? {
        Loaded::Plan(p) => p,
        Loaded::Rejected(exit) => return Ok(exit),
    };
    #[allow(
        clippy::disallowed_methods,
        reason = "frontends read the environment once (SPEC §12)"
    )]
    let normalize =
        std::env::var("PAPAYU_NORMALIZE_EOL").is_ok_and(|v| v.trim().eq_ignore_ascii_case("lf"));
    let preview = match project
        .transaction(&plan)
        .options(ApplyOptions::default().normalize_eol_lf(normalize))
        .preview()
    {
        Ok(p) => p,
        Err(e) => return report_error(&e, global),
    };
    let exit = if preview.is_ok() {
        Exit::Ok
    } else {
        Exit::RolledBack
    };
    if global.json {
        let code = preview
            .files
            .iter()
            .find_map(|f| f.error.as_ref().map(|e| e.code));
        let body = json!({"preview": preview});
        crate::json::print(&crate::json::document(preview.is_ok(), code, body));
    } else {
        print_preview(&preview);
    }
    Ok(exit)
}
