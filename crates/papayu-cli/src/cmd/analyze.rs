//! `papayu analyze`: a structured report of the project — languages, size, manifests, the test
//! command, findings, hot spots from papayu's history (`--json` for the document); it writes
//! agent-sync when `PAPAYU_AGENT_SYNC` is on.

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_integrations::{analyze, sync};
use papayu_protocol::agent_sync::{SyncKind, SyncStatus};

use crate::cmd::research::{fail, integrations_config};
use crate::cmd::session::print_json;
use crate::exit::{Exit, UsageError};
use crate::global::Global;

/// Describe the project.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Exit 0 with the report; 1 when the root is not a directory.
pub fn run(_args: &Args, global: &Global) -> Result<Exit> {
    let config = integrations_config()?;
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let analysis = match analyze::analyze(&root, &config) {
        Ok(a) => a,
        Err(e) => return fail(e.code(), &e.to_string(), global),
    };
    let synced = if config.agent_sync {
        let mut last = sync::last(SyncKind::Analysis, None, SyncStatus::Analyzed);
        last.result.message = Some(format!(
            "{} files; {} findings",
            analysis.files,
            analysis.findings.len()
        ));
        match sync::write(
            &root,
            &config,
            last,
            None,
            None,
            analysis.test_command.clone(),
        ) {
            Ok(path) => Some(path),
            Err(e) => return fail(e.code(), &e.to_string(), global),
        }
    } else {
        None
    };
    if global.json {
        let mut doc = serde_json::to_value(&analysis)?;
        doc["agent_sync"] = serde_json::json!(synced);
        print_json(&doc)?;
    } else {
        println!("{}", analysis.render());
        if let Some(path) = synced {
            println!("agent-sync: {path}");
        }
    }
    Ok(Exit::Ok)
}
