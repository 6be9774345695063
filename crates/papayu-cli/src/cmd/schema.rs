//! `papayu schema [--protocol N] [--strict]`.

use anyhow::Result;
use papayu_protocol::{SchemaVariant, schema};

use crate::exit::Exit;
use crate::global::Global;

/// Print the JSON schema of a protocol version.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The provider-strict variant (for OpenAI-style strict structured output).
    #[arg(long)]
    pub strict: bool,
}

/// Print the schema text exactly as shipped (so its sha256 equals `schema_hash`).
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let version = global.protocol_version()?;
    let variant = if args.strict {
        SchemaVariant::Strict
    } else {
        SchemaVariant::Normal
    };
    let text = schema::schema_text(version, variant);
    if global.json {
        let schema: serde_json::Value = serde_json::from_str(text)?;
        crate::cmd::session::print_json(
            &serde_json::json!({"protocol": version.number(), "schema": schema}),
        )?;
    } else {
        print!("{text}");
    }
    Ok(Exit::Ok)
}
