//! `papayu sandbox-exec [--allow-network] --write DIR… -- PROGRAM ARGS…` (hidden): the launcher
//! papayu-patch runs check and test commands through. It confines itself (Landlock: writes only
//! beneath the given directories, no TCP; else bubblewrap when installed) and then executes
//! the command, so model-written code never runs with the user's full rights.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Result, bail};
use papayu_patch::Confinement;

use crate::exit::Exit;
use crate::global::Global;

/// Run a command confined (papayu's own launcher; not for direct use).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A directory the command may write beneath (repeatable).
    #[arg(long = "write", value_name = "DIR")]
    pub write: Vec<PathBuf>,
    /// Let the command use the network.
    #[arg(long)]
    pub allow_network: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<OsString>,
}

/// `bwrap` on `PATH`, if installed.
pub fn find_bwrap() -> Option<PathBuf> {
    #[allow(
        clippy::disallowed_methods,
        reason = "frontends read the environment once (SPEC §12)"
    )]
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
}

/// What confinement check commands get on this machine.
pub fn probe() -> Confinement {
    papayu_patch::probe(find_bwrap().as_deref())
}

/// Confine this process and become the command (returns only on failure).
pub fn run(args: &Args, _global: &Global) -> Result<Exit> {
    let (program, rest) = match args.command.split_first() {
        Some((p, r)) => (p, r),
        None => bail!("sandbox-exec: no command given"),
    };
    let err = match probe() {
        Confinement::Landlock { .. } => {
            papayu_patch::confine_current_process(&args.write, !args.allow_network)?;
            Command::new(program).args(rest).exec()
        }
        Confinement::Bubblewrap { program: bwrap } => {
            let mut cmd = Command::new(bwrap);
            cmd.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
            for dir in &args.write {
                cmd.arg("--bind").arg(dir).arg(dir);
            }
            if !args.allow_network {
                cmd.arg("--unshare-net");
            }
            cmd.args(["--die-with-parent", "--"])
                .arg(program)
                .args(rest)
                .exec()
        }
        Confinement::None { reason } => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!(
                    "papayu: sandbox-exec: {}",
                    crate::tr!("sandbox-unconfined", reason = reason.to_string())
                );
            }
            Command::new(program).args(rest).exec()
        }
        other => bail!("sandbox-exec: unknown confinement {other:?}"),
    };
    bail!(
        "sandbox-exec: cannot run {}: {err}",
        program.to_string_lossy()
    )
}
