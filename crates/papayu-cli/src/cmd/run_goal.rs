//! `papayu run <goal> [--yes]`: plan and apply in one go (preview and confirmation unless `--yes`).

use anyhow::Result;

use crate::cmd::apply::confirm_and_apply;
use crate::cmd::session::{ProgressLine, open_agent, report_agent_error, runtime};
use crate::exit::Exit;
use crate::global::Global;

/// Ask the model for changes and apply them (preview + confirmation unless `--yes`).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What you want done.
    #[arg(required = true, num_args = 1..)]
    pub goal: Vec<String>,
    /// Apply without asking (deletions included).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Plan + apply.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let goal = args.goal.join(" ");
    let mut agent = open_agent(global)?;
    let progress = ProgressLine::new(global);
    let preview = runtime()?.block_on(agent.prepare_apply(Some(&goal), &|p| progress.show(p)));
    progress.done();
    match preview {
        Ok(preview) => confirm_and_apply(&agent, &preview, args.yes, None, global, &progress),
        Err(e) => report_agent_error(&e, global),
    }
}
