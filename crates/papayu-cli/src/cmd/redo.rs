//! `papayu redo [--force]`.

use anyhow::Result;

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
    crate::cmd::undo::step(global, args.force, true)
}
