//! `papayu schema [--protocol N] [--strict]`.

use anyhow::Result;
use papayu_protocol::{SchemaVariant, schema};

use crate::exit::Exit;
use crate::global::Global;

/// Print the JSON schema of a protocol version.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Protocol version (1, 2 or 3).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub protocol: u8,
    /// The provider-strict variant (for OpenAI-style strict structured output).
    #[arg(long)]
    pub strict: bool,
}

/// Print the schema text exactly as shipped (so its sha256 equals `schema_hash`).
pub fn run(args: &Args, _global: &Global) -> Result<Exit> {
    let version = crate::cmd::version(args.protocol)?;
    let variant = if args.strict { SchemaVariant::Strict } else { SchemaVariant::Normal };
    print!("{}", schema::schema_text(version, variant));
    Ok(Exit::Ok)
}
