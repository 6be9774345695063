//! `papayu ask <prompt>`: one request, the raw answer and what papayu makes of it.

use anyhow::Result;
use papayu_llm::{AskOptions, ask};

use crate::cmd::session::{agent_config, provider, runtime};
use crate::exit::Exit;
use crate::global::Global;

/// Send one prompt and show the raw and the parsed answer.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The prompt.
    #[arg(required = true, num_args = 1..)]
    pub prompt: Vec<String>,
    /// Override max_tokens.
    #[arg(long)]
    pub max_tokens: Option<u32>,
}

/// Exit 0 when the answer parses, 3 when it violates the protocol.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let config = agent_config(global)?;
    let provider = provider(&config, global)?;
    let options = AskOptions {
        protocol: config.effective_protocol(),
        strict_json: config.strict_json,
        max_tokens: args.max_tokens,
        ..AskOptions::default()
    };
    let outcome = runtime()?.block_on(ask(provider.as_ref(), &args.prompt.join(" "), options))?;
    let exit = if outcome.parsed.is_some() {
        Exit::Ok
    } else {
        Exit::Rejected
    };
    if global.json {
        let code = outcome.violations.first().map(|v| v.code);
        let body = serde_json::to_value(&outcome)?;
        crate::json::print(&crate::json::document(outcome.parsed.is_some(), code, body));
        return Ok(exit);
    }
    println!(
        "--- {}\n{}",
        crate::tr!("ask-raw", format = outcome.completion.format.to_string()),
        outcome.completion.text
    );
    match &outcome.parsed {
        Some(r) => println!(
            "--- {}\n{}",
            crate::tr!("ask-parsed"),
            serde_json::to_string_pretty(r)?
        ),
        None => {
            println!("--- {}", crate::tr!("ask-rejected"));
            for v in &outcome.violations {
                println!("  {v}");
            }
        }
    }
    Ok(exit)
}
