//! Global flags, shared by every command, and tracing setup.

use std::path::PathBuf;

use clap::Args;

/// Flags every command accepts.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// Project root (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print one machine-readable JSON document instead of human output.
    #[arg(long, global = true)]
    pub json: bool,
    /// More log output on stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl Global {
    /// The project root the user chose, or the current directory.
    #[allow(dead_code)]
    pub fn project_root(&self) -> anyhow::Result<PathBuf> {
        match &self.project {
            Some(p) => Ok(p.clone()),
            None => Ok(std::env::current_dir()?),
        }
    }
}

/// Log to stderr; quiet unless `-v` (or `RUST_LOG`) asks for more.
pub fn init_tracing(global: &Global) {
    let default = match global.verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
