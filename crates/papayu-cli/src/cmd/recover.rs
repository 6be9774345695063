//! `papayu recover`.

use anyhow::Result;
use serde_json::json;

use papayu_protocol::ErrorCode;

use crate::cmd::apply_plan::report_error;
use crate::exit::{Exit, with_code};
use crate::global::Global;

/// Roll back any transaction a crash left unfinished.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Exit 0 when every unfinished transaction is rolled back (paths kept as the user left them,
/// with the originals set aside, and journals left alone are reported but do not fail it), 1
/// when a rollback could not finish (retried by the next run).
pub fn run(_args: &Args, global: &Global) -> Result<Exit> {
    let root = global.project_root()?;
    let r = match papayu_patch::recover(&root) {
        Ok(r) => r,
        Err(e) => return report_error(&e, global),
    };
    let exit = if r.is_complete() {
        Exit::Ok
    } else {
        Exit::Failure
    };
    if global.json {
        let code = r.unfinished.first().map(|u| u.code);
        crate::json::print(&crate::json::document(
            r.is_complete(),
            code,
            json!({"recovery": r}),
        ));
        return Ok(exit);
    }
    if r == papayu_patch::RecoveryReport::default() {
        println!("{}", crate::tr!("recover-nothing"));
        return Ok(exit);
    }
    if !r.rolled_back.is_empty() || !r.discarded.is_empty() {
        println!(
            "{}",
            crate::tr!(
                "recover-done",
                rolled_back = r.rolled_back.len(),
                discarded = r.discarded.len()
            )
        );
    }
    for c in &r.conflicts {
        eprintln!(
            "papayu: {}",
            with_code(ErrorCode::RollbackConflict, &c.to_string())
        );
    }
    for l in &r.left_alone {
        eprintln!(
            "papayu: {}",
            crate::tr!(
                "recover-left-alone",
                dir = l.dir.to_string(),
                reason = l.reason.to_string()
            )
        );
    }
    for u in &r.unfinished {
        eprintln!(
            "papayu: {}",
            with_code(
                u.code,
                &crate::tr!(
                    "recover-unfinished",
                    tx = u.tx_id.to_string(),
                    error = u.error.to_string()
                )
            )
        );
    }
    Ok(exit)
}
