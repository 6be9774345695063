//! `papayu trace list|show <id>`: the project's trace files (`PAPAYU_TRACE=1` writes them).

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_agent::trace::{list_traces, show_trace};

use crate::cmd::session::{print_json, report_agent_error};
use crate::exit::Exit;
use crate::global::Global;

/// Inspect traces under `.papa-yu/traces/`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: TraceCommand,
}

/// `trace` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TraceCommand {
    /// One line per trace, oldest first.
    List,
    /// One trace in full (JSON).
    Show {
        /// Trace id (or a unique prefix).
        id: String,
    },
}

fn root(global: &Global) -> Result<Utf8PathBuf> {
    Utf8PathBuf::from_path_buf(global.project_root()?).map_err(|p| {
        crate::exit::UsageError(format!("project {} is not UTF-8", p.display())).into()
    })
}

/// List or show.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let root = root(global)?;
    match &args.command {
        TraceCommand::List => match list_traces(&root) {
            Ok(list) => {
                if global.json {
                    print_json(&serde_json::json!({ "traces": list }))?;
                } else if list.is_empty() {
                    println!("{}", crate::tr!("trace-none"));
                } else {
                    for t in &list {
                        println!(
                            "{}  {:<5} v{}  {:<12} {}",
                            t.trace_id,
                            t.mode,
                            t.schema_version,
                            t.error_code.map_or("ok", |c| c.as_str()),
                            t.apply_outcome.as_deref().unwrap_or("-")
                        );
                    }
                }
                Ok(Exit::Ok)
            }
            Err(e) => report_agent_error(&e, global),
        },
        TraceCommand::Show { id } => match show_trace(&root, id) {
            Ok(trace) if global.json => {
                print_json(&trace)?;
                Ok(Exit::Ok)
            }
            Ok(trace) => {
                println!("{}", serde_json::to_string_pretty(&trace)?);
                Ok(Exit::Ok)
            }
            Err(e) => report_agent_error(&e, global),
        },
    }
}
