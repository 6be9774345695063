//! `papayu completions <shell>`: the shell completion script for papayu, on stdout.

use anyhow::Result;
use clap_complete::Shell;

use crate::exit::Exit;
use crate::global::Global;

/// Print a completion script; install it as your shell documents (e.g. bash:
/// `papayu completions bash > ~/.local/share/bash-completion/completions/papayu`).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Write the script for the chosen shell.
pub fn run(args: &Args, _global: &Global) -> Result<Exit> {
    let mut cmd = crate::help::command();
    clap_complete::generate(args.shell, &mut cmd, "papayu", &mut std::io::stdout());
    Ok(Exit::Ok)
}
