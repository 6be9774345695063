//! `papayu mcp [--project DIR] [--read-only]`: papayu's engine as a Model Context Protocol
//! server on stdin/stdout (papayu-mcp), for Claude Code, Codex, Cursor and every other client.

use std::sync::Arc;

use anyhow::Result;
use papayu_app::provider::{self, Choice};
use papayu_mcp::{AgentSetup, McpOptions, PapayuMcp, ProviderFactory, ProviderUnavailable};
use papayu_protocol::{ErrorCode, ProtocolVersion};

use crate::cmd::session::{agent_config, config_dir, local_inputs, provider, sandbox};
use crate::exit::{Exit, UsageError};
use crate::global::Global;

/// Serve the project over stdio to an MCP client (stdout carries only the protocol).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Offer only the tools that write nothing (validate, preview, read, search, context,
    /// history).
    #[arg(long)]
    pub read_only: bool,
}

/// Serve until the client disconnects; exit 0.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let root = global.project_root()?;
    let root = camino::Utf8PathBuf::from_path_buf(root)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let config = agent_config(global)?;
    let protocol = match global.protocol {
        Some(_) => global.protocol_version()?,
        // Plans sent by another agent get every edit kind unless the user narrows them.
        None => ProtocolVersion::V3,
    };
    if protocol == ProtocolVersion::V1 {
        return Err(UsageError(
            "papayu mcp reads plans under protocol 2 or 3 (v1 updates files without a base hash)"
                .to_owned(),
        )
        .into());
    }
    let mut options = McpOptions::new(root)
        .read_only(args.read_only)
        .protocol(protocol)
        .normalize_eol_lf(config.normalize_eol_lf)
        .sandbox(sandbox(&config));
    if !args.read_only && provider_configured(&config, global) {
        let config_dir = camino::Utf8PathBuf::from_path_buf(config_dir())
            .map_err(|p| UsageError(format!("config directory {} is not UTF-8", p.display())))?;
        let for_factory = (config.clone(), global.clone());
        let factory: ProviderFactory = Arc::new(move || {
            provider(&for_factory.0, &for_factory.1)
                .map_err(|e| ProviderUnavailable::new(ErrorCode::LlmConfig, format!("{e:#}")))
        });
        options = options.agent(AgentSetup::new(config, config_dir, factory));
    }
    let server = PapayuMcp::new(options)?;
    tracing::info!(target: "papayu", root = %server.root(), read_only = args.read_only, "serving MCP on stdio");
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(server.serve_stdio())?;
    Ok(Exit::Ok)
}

/// Whether `plan_goal`/`run_goal` can be offered: a network provider is configured, or the
/// in-process model is built in and its file is on disk. Nothing is loaded here: an idle
/// server holds no model.
fn provider_configured(config: &papayu_agent::AgentConfig, global: &Global) -> bool {
    match provider::choose(config, &local_inputs(global)) {
        Choice::Network => true,
        Choice::Local { path, .. } => cfg!(feature = "local") && path.is_file(),
    }
}
