//! Global flags, shared by every command, and tracing setup.

use std::path::PathBuf;

use clap::Args;
use papayu_protocol::ProtocolVersion;

use crate::exit::UsageError;

/// Flags every command accepts.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// Project root (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Protocol version 1, 2 or 3 (default: $PAPAYU_PROTOCOL_VERSION, else
    /// $PAPAYU_PROTOCOL_DEFAULT, else 2).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=3))]
    pub protocol: Option<u8>,
    /// Provider kind: openai | openai-compatible | ollama | anthropic | local (default:
    /// $PAPAYU_LLM_PROVIDER, else inferred from the URL; with nothing configured, local).
    #[arg(long, global = true, value_name = "KIND")]
    pub provider: Option<String>,
    /// Model name (default: $PAPAYU_LLM_MODEL).
    #[arg(long, global = true, value_name = "NAME")]
    pub model: Option<String>,
    /// A GGUF model file for the in-process `local` provider (default: $PAPAYU_LOCAL_MODEL,
    /// else the cached default model from `papayu model fetch`).
    #[arg(long, global = true, value_name = "FILE")]
    pub model_path: Option<PathBuf>,
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
        self.given_project_root()
            .map(|p| std::path::absolute(&p).unwrap_or(p))
    }

    fn given_project_root(&self) -> anyhow::Result<PathBuf> {
        match &self.project {
            Some(p) => Ok(p.clone()),
            None => Ok(std::env::current_dir()?),
        }
    }
}

impl Global {
    /// The effective protocol version (SPEC §3.1): the flag, else `PAPAYU_PROTOCOL_VERSION`
    /// (forces), else `PAPAYU_PROTOCOL_DEFAULT`, else v2.
    #[allow(
        clippy::disallowed_methods,
        reason = "frontends read the environment once (SPEC §12)"
    )]
    pub fn protocol_version(&self) -> anyhow::Result<ProtocolVersion> {
        if let Some(n) = self.protocol {
            return version(n);
        }
        for var in ["PAPAYU_PROTOCOL_VERSION", "PAPAYU_PROTOCOL_DEFAULT"] {
            if let Ok(value) = std::env::var(var) {
                let n: u8 = value.trim().parse().map_err(|_| {
                    UsageError(format!(
                        "{var}={value:?} is not a protocol version (1, 2 or 3)"
                    ))
                })?;
                return version(n).map_err(|_| {
                    UsageError(format!(
                        "{var}={value:?} is not a protocol version (1, 2 or 3)"
                    ))
                    .into()
                });
            }
        }
        Ok(ProtocolVersion::V2)
    }
}

/// The protocol version for a number the user gave (clap already bounds the flag to 1..=3).
fn version(n: u8) -> anyhow::Result<ProtocolVersion> {
    ProtocolVersion::from_number(n)
        .ok_or_else(|| UsageError(format!("protocol version must be 1, 2 or 3, not {n}")).into())
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
    // Colour only on a terminal: logs piped to a file or a CI log stay plain text.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}
