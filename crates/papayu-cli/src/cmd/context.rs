//! `papayu context [--request JSON]... [--from-text FILE]`: the context block papayu would send.

use std::path::PathBuf;

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_protocol::ContextRequest;

use crate::cmd::session::{agent_config, print_json};
use crate::exit::{Exit, UsageError, read_input};
use crate::global::Global;

/// Assemble context: fulfil requests and auto-gather from an error text, then apply the diet.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A context request as JSON, e.g. '{"type":"read_file","path":"src/lib.rs"}' (repeatable).
    #[arg(long = "request", value_name = "JSON")]
    pub requests: Vec<String>,
    /// A goal, log or stack trace to auto-gather from (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub from_text: Option<PathBuf>,
}

/// Print the block and its stats.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let requests = args
        .requests
        .iter()
        .map(|r| {
            serde_json::from_str::<ContextRequest>(r)
                .map_err(|e| UsageError(format!("--request {r}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let text = args.from_text.as_deref().map(read_input).transpose()?;
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let mut config = agent_config(global)?.context_config();
    // The same project settings the agent applies: policy (protected globs) and log files.
    config.policy = crate::cmd::validate::load_policy(None, Some(root.as_std_path()))?;
    let memory = papayu_memory::Memory::load(
        Utf8PathBuf::from_path_buf(crate::cmd::session::config_dir()).unwrap_or_default(),
        &root,
    )
    .map_err(|e| UsageError(e.to_string()))?;
    config.log_files = memory.project().log_files().clone();
    let assembled = papayu_context::assemble(&root, &requests, text.as_deref(), &config)?;
    if global.json {
        print_json(&assembled)?;
    } else {
        println!("{}", assembled.text);
        println!("---\n{}", serde_json::to_string(&assembled.stats)?);
    }
    Ok(Exit::Ok)
}
