//! Global flags, shared by every command, and tracing setup.

use std::path::PathBuf;

use clap::Args;
use papayu_protocol::ProtocolVersion;

use crate::exit::UsageError;

/// Flags every command accepts. A flag with a `PAPAYU_*` variable takes it as its default
/// (shown as `[env: …]` in `--help`); the configuration files are below both.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// Project root (default: the nearest directory holding .papa-yu/, else the repository or
    /// manifest root above the current directory, else the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Protocol version 1, 2 or 3 (default: protocol.version, else protocol.default, else 2).
    #[arg(long, global = true, value_name = "N", env = "PAPAYU_PROTOCOL_VERSION")]
    pub protocol: Option<u8>,
    /// Provider kind: openai | openai-compatible | ollama | anthropic | local (default:
    /// llm.provider, else inferred from the URL; with nothing configured, local).
    #[arg(long, global = true, value_name = "KIND", env = "PAPAYU_LLM_PROVIDER")]
    pub provider: Option<String>,
    /// Model name (default: llm.model).
    #[arg(long, global = true, value_name = "NAME", env = "PAPAYU_LLM_MODEL")]
    pub model: Option<String>,
    /// A GGUF model file for the in-process `local` provider (default: local.model, else the
    /// cached default model from `papayu model fetch`).
    #[arg(long, global = true, value_name = "FILE", env = "PAPAYU_LOCAL_MODEL")]
    pub model_path: Option<PathBuf>,
    /// Commit each applied transaction to git, with the plan's summary as the message (default:
    /// git.commit).
    #[arg(long, global = true)]
    pub commit: bool,
    /// Print one machine-readable JSON document instead of human output.
    #[arg(long, global = true)]
    pub json: bool,
    /// More log output on stderr (-v: the project root chosen and why, info; -vv debug;
    /// -vvv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl Global {
    /// The project root: `--project`, else discovered from the current directory.
    pub fn project_root(&self) -> anyhow::Result<PathBuf> {
        Ok(crate::layers::project_root(self)?.root.into_std_path_buf())
    }

    /// The effective protocol version (SPEC §3.1): `--protocol` / `PAPAYU_PROTOCOL_VERSION` /
    /// `protocol.version` (forces), else `protocol.default` (its variable or a file), else v2.
    pub fn protocol_version(&self) -> anyhow::Result<ProtocolVersion> {
        let layered = crate::layers::layered(self)?;
        for key in ["protocol.version", "protocol.default"] {
            if let Some(setting) = layered.get(key)
                && let Some(value) = setting.value.as_deref()
            {
                let from = setting.origin.as_deref().unwrap_or(key);
                let bad = || {
                    UsageError(format!(
                        "{from}: {key} = {value:?} is not a protocol version (1, 2 or 3)"
                    ))
                };
                let n: u8 = value.trim().parse().map_err(|_| bad())?;
                return version(n).map_err(|_| bad().into());
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
