//! `papayu config show|get|set|unset|path`: the layered configuration, each value with where it
//! came from (default, user file, project file, environment, flag).

use anyhow::Result;
use camino::Utf8PathBuf;
use clap::Subcommand;
use papayu_agent::AgentConfig;
use papayu_agent::layered::{FileEdit, Layered, Shown, Source, keys};
use serde_json::{Value, json};

use crate::cmd::session::print_json;
use crate::exit::{Exit, UsageError};
use crate::global::Global;
use crate::layers;

/// Show or change the configuration (user file, project file, environment, flags).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Every key with its value and where it came from.
    Show,
    /// One key's value and where it came from.
    Get {
        /// The dotted key, e.g. llm.model (`papayu config show` lists them).
        key: String,
    },
    /// Write a key to the user file (or the project's, with --project-file).
    Set {
        /// The dotted key, e.g. llm.model.
        key: String,
        /// The value (API keys are refused: name their variable with llm.api_key_env).
        value: String,
        /// Write the project's file (.papa-yu/config.toml) instead of the user's.
        #[arg(long)]
        project_file: bool,
    },
    /// Remove a key from the user file (or the project's, with --project-file).
    Unset {
        /// The dotted key.
        key: String,
        /// Change the project's file instead of the user's.
        #[arg(long)]
        project_file: bool,
    },
    /// Where the config files are (and whether they exist).
    Path,
}

/// Exit 0; 2 for an unknown key, a bad value or a secret on its way to a file.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    match &args.command {
        ConfigCommand::Show => show(global, None),
        ConfigCommand::Get { key } => {
            if keys::find(key).is_none() {
                return Err(unknown(key));
            }
            show(global, Some(key))
        }
        ConfigCommand::Set {
            key,
            value,
            project_file,
        } => edit(global, key, *project_file, |file| file.set(key, value)),
        ConfigCommand::Unset { key, project_file } => {
            edit(global, key, *project_file, |file| file.unset(key).map(drop))
        }
        ConfigCommand::Path => path(global),
    }
}

fn unknown(key: &str) -> anyhow::Error {
    UsageError(
        papayu_agent::ConfigError::UnknownKey {
            path: None,
            key: key.to_owned(),
        }
        .to_string(),
    )
    .into()
}

/// The keys with their values in effect; when the configuration does not parse, the values as
/// written (and the problem, which is then the exit status).
fn shown(layered: &Layered) -> (Vec<Shown>, Option<String>) {
    match layered.agent_config(&layers::key_lookup) {
        Ok(config) => (layered.shown(&config), None),
        Err(e) => {
            let raw = layered
                .settings()
                .iter()
                .map(|s| Shown {
                    key: s.key,
                    value: if s.key == keys::API_KEY {
                        json!(if s.value.is_some() {
                            "(set)"
                        } else {
                            "(not set)"
                        })
                    } else {
                        s.value.clone().map_or(Value::Null, Value::String)
                    },
                    source: s.source,
                    origin: s.origin.clone(),
                })
                .collect();
            (raw, Some(e.to_string()))
        }
    }
}

/// Every key with its value in `config` and its source, as JSON (`doctor --json`).
pub fn settings_json(global: &Global, config: &AgentConfig) -> Result<Value> {
    let shown = layers::layered(global)?.shown(config);
    Ok(Value::Array(shown.iter().map(shown_json).collect()))
}

fn shown_json(s: &Shown) -> Value {
    json!({"key": s.key, "value": s.value, "source": s.source, "origin": s.origin})
}

/// A setting's value as `config show` prints it.
pub fn value_text(s: &Shown) -> String {
    match &s.value {
        Value::Null => crate::tr!("config-none"),
        Value::String(v) => v.clone(),
        v => v.to_string(),
    }
}

/// Where a setting's value came from: the layer, and the file or variable when there is one.
pub fn source_text(s: &Shown) -> String {
    match (&s.origin, s.source) {
        (Some(origin), Source::User | Source::Project | Source::Env | Source::Flag) => {
            format!("{} {origin}", source_name(s.source))
        }
        _ => source_name(s.source),
    }
}

/// A layer's name for people (`Source::as_str` is the JSON's).
fn source_name(source: Source) -> String {
    match source {
        Source::Default => crate::tr!("config-source-default"),
        Source::User => crate::tr!("config-source-user"),
        Source::Project => crate::tr!("config-source-project"),
        Source::Env => crate::tr!("config-source-env"),
        Source::Flag => crate::tr!("config-source-flag"),
    }
}

/// One line of `config show`: the key, its value, where it came from.
fn line(s: &Shown) -> String {
    format!("{:<28} = {}  ({})", s.key, value_text(s), source_text(s))
}

fn show(global: &Global, key: Option<&str>) -> Result<Exit> {
    let layered = layers::layered(global)?;
    let (all, problem) = shown(&layered);
    let picked: Vec<&Shown> = all
        .iter()
        .filter(|s| key.is_none_or(|k| s.key == k))
        .collect();
    if global.json {
        let settings: Vec<Value> = picked.iter().copied().map(shown_json).collect();
        let mut doc = match key {
            Some(_) => settings.into_iter().next().unwrap_or(Value::Null),
            None => json!({ "settings": settings }),
        };
        if let Some(p) = &problem {
            doc["problem"] = json!(p);
        }
        print_json(&doc)?;
    } else {
        for s in &picked {
            println!("{}", line(s));
        }
        if let Some(p) = &problem {
            eprintln!("papayu: {p}");
        }
    }
    Ok(if problem.is_some() {
        Exit::Usage
    } else {
        Exit::Ok
    })
}

/// The file `config set` / `unset` change.
fn target(global: &Global, project_file: bool) -> Result<Utf8PathBuf> {
    if project_file {
        Ok(layers::project_file(&layers::project_root(global)?.root))
    } else {
        layers::utf8(layers::user_file(), "config file")
    }
}

fn edit(
    global: &Global,
    key: &str,
    project_file: bool,
    change: impl FnOnce(&mut FileEdit) -> Result<(), papayu_agent::ConfigError>,
) -> Result<Exit> {
    let path = target(global, project_file)?;
    let usage = |e: papayu_agent::ConfigError| UsageError(e.to_string());
    let mut file = FileEdit::open(&path).map_err(usage)?;
    change(&mut file).map_err(usage)?;
    file.save().map_err(usage)?;
    let written = file.layer().map_err(usage)?;
    let value = written.get(key).map(str::to_owned);
    if global.json {
        print_json(&json!({"file": path, "key": key, "value": value}))?;
    } else {
        match value {
            Some(v) => println!("{path}: {key} = {v}"),
            None => println!("{path}: {key} {}", crate::tr!("config-removed")),
        }
        if let Some(var) = keys::find(key).and_then(|k| k.var)
            && layers::env_map().contains_key(var)
        {
            eprintln!(
                "papayu: {}: {}",
                crate::tr!("note-word"),
                crate::tr!("config-env-overrides", var = var)
            );
        }
    }
    Ok(Exit::Ok)
}

fn path(global: &Global) -> Result<Exit> {
    let root = layers::project_root(global)?;
    let files = [
        ("user", layers::utf8(layers::user_file(), "config file")?),
        ("project", layers::project_file(&root.root)),
    ];
    if global.json {
        let doc: Vec<Value> = files
            .iter()
            .map(|(which, p)| json!({"file": which, "path": p, "exists": p.is_file()}))
            .collect();
        print_json(&json!({ "files": doc }))?;
    } else {
        for (which, p) in &files {
            let state = if p.is_file() {
                String::new()
            } else {
                format!(" {}", crate::tr!("config-absent"))
            };
            let label = match *which {
                "user" => source_name(Source::User),
                _ => source_name(Source::Project),
            };
            println!("{label:<8} {p}{state}");
        }
    }
    Ok(Exit::Ok)
}
