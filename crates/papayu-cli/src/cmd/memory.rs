//! `papayu memory show|set|unset`: the engineering memory (user and project preferences).

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_memory::Memory;

use crate::cmd::session::{config_dir, print_json};
use crate::exit::{Exit, UsageError};
use crate::global::Global;
use crate::tr;

/// Show or change what papayu remembers about you and this project.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: MemoryCommand,
}

/// `memory` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum MemoryCommand {
    /// Both preference files and the block the model sees.
    Show,
    /// Set a key, e.g. `project.default_test_command "cargo test"` or `user.ask_budget 1`.
    Set {
        /// A whitelisted dotted key (`user.*`, `project.*`).
        key: String,
        /// The value (lists: a JSON array or comma-separated).
        value: String,
    },
    /// Remove a key.
    Unset {
        /// The dotted key.
        key: String,
    },
}

fn load(global: &Global) -> Result<Memory> {
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let config = Utf8PathBuf::from_path_buf(config_dir())
        .map_err(|p| UsageError(format!("config directory {} is not UTF-8", p.display())))?;
    let mut memory = Memory::load(config, root).map_err(|e| UsageError(e.to_string()))?;
    if let Some(original) = original_user_prefs() {
        memory.fill_from_original_user_prefs(&original)?;
    }
    Ok(memory)
}

/// The original papa-yu app's preferences file (seed 000: `app_data_dir()/papa-yu/
/// preferences.json`), under `$XDG_DATA_HOME`, else `~/.local/share`.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
pub fn original_user_prefs() -> Option<Utf8PathBuf> {
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::PathBuf::from(std::env::var_os("HOME")?).join(".local/share"),
    };
    Utf8PathBuf::from_path_buf(data)
        .ok()
        .map(|d| d.join(papayu_memory::ORIGINAL_USER_PREFS_FILE))
}

/// Show, set or unset.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let mut memory = load(global)?;
    match &args.command {
        MemoryCommand::Show => {
            if global.json {
                let mut doc = memory.to_json();
                doc["block"] = serde_json::Value::String(memory.block());
                print_json(&doc)?;
            } else {
                println!(
                    "{}",
                    tr!("memory-user-prefs", path = memory.user_file().as_str())
                );
                println!(
                    "{}",
                    tr!(
                        "memory-project-prefs",
                        path = memory.project_file().as_str()
                    )
                );
                println!("{}", serde_json::to_string_pretty(&memory.to_json())?);
                let block = memory.block();
                if block.is_empty() {
                    println!("{}", tr!("memory-empty"));
                } else {
                    println!("\n{}\n{block}", tr!("memory-model-sees"));
                }
            }
        }
        MemoryCommand::Set { key, value } => {
            let stored = memory
                .set(key, value)
                .map_err(|e| UsageError(e.to_string()))?;
            let written = memory.save().map_err(|e| anyhow::anyhow!("{e}"))?;
            if global.json {
                print_json(&serde_json::json!({"key": key, "value": stored, "written": written}))?;
            } else {
                println!("{key} = {stored}");
            }
        }
        MemoryCommand::Unset { key } => {
            let removed = memory.unset(key).map_err(|e| UsageError(e.to_string()))?;
            memory.save().map_err(|e| anyhow::anyhow!("{e}"))?;
            if global.json {
                print_json(&serde_json::json!({"key": key, "removed": removed}))?;
            } else {
                let state = if removed {
                    tr!("memory-removed")
                } else {
                    tr!("memory-was-not-set")
                };
                println!("{key} {state}");
            }
        }
    }
    Ok(Exit::Ok)
}
