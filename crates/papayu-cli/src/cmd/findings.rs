//! `papayu findings`: the project's static-analysis findings — refreshed from Snyk Code's
//! REST API (`--refresh`, with `PAPAYU_SNYK_SYNC=1`), imported from a SARIF file
//! (`--import FILE`, offline), and listed most severe first.

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_integrations::findings::{self, StoredFindings};
use papayu_integrations::research::block_on;

use crate::cmd::research::{fail, integrations_config};
use crate::cmd::session::print_json;
use crate::exit::{Exit, UsageError};
use crate::global::Global;

/// List (and refresh or import) the project's findings.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Fetch the code issues from Snyk's REST API first (stored in .papa-yu/findings.json).
    #[arg(long, conflicts_with = "import")]
    pub refresh: bool,
    /// Import a SARIF 2.1 file (e.g. `snyk code test --sarif` output) and store its results.
    #[arg(long, value_name = "FILE")]
    pub import: Option<Utf8PathBuf>,
    /// Only the findings of this file (project-relative; repeatable).
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<String>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Exit 0 with the list; 2 when Snyk is not configured or the SARIF file is unusable; 1 when
/// the API fails (the stored findings are left as they were).
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let config = integrations_config()?;
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let fresh = if args.refresh {
        let fetched = block_on(findings::fetch_snyk(&config.snyk))
            .ok_or_else(|| UsageError("the Snyk request thread failed".to_owned()))?;
        Some(("snyk-api", fetched))
    } else {
        args.import
            .as_ref()
            .map(|path| ("sarif", findings::import_sarif(&root, path)))
    };
    if let Some((source, result)) = fresh {
        let mut list = match result {
            Ok(list) => list,
            Err(e) => return fail(e.code(), &e.to_string(), global),
        };
        findings::sort_dedupe(&mut list);
        let stored = StoredFindings {
            fetched_unix_ms: now_ms(),
            source: source.to_owned(),
            findings: list,
        };
        if let Err(e) = findings::store(&root, &stored) {
            return fail(e.code(), &e.to_string(), global);
        }
    }
    let all = findings::known(&root, &config.snyk);
    let shown: Vec<_> = if args.files.is_empty() {
        all.iter().collect()
    } else {
        findings::for_files(&all, &args.files)
    };
    if global.json {
        print_json(&serde_json::json!({"findings": shown}))?;
    } else if shown.is_empty() {
        println!("{}", crate::tr!("findings-none"));
    } else {
        for f in &shown {
            println!("{}", findings::line(f));
        }
    }
    Ok(Exit::Ok)
}
