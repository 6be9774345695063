//! Static-analysis findings: Snyk Code issues from the REST API, or a local SARIF file (e.g.
//! `snyk code test --sarif`), stored in `.papa-yu/findings.json`, filtered to the files in
//! context for the prompt's `FINDINGS` block and listed by `papayu findings`.
//! It touches Snyk's API (only when sync is on), the SARIF file and `.papa-yu/findings.json`.

mod sarif;
mod snyk;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_context::{Block, BlockKind};
use papayu_protocol::agent_sync::Finding;
use serde::{Deserialize, Serialize};

pub use self::sarif::parse_sarif;
pub use self::snyk::fetch_snyk;
use crate::config::SnykConfig;
use crate::error::FindingsError;
use crate::project_file;

/// Where fetched findings are kept, relative to the project root.
pub const FINDINGS_FILE: &str = ".papa-yu/findings.json";

/// The stored findings of a project.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StoredFindings {
    /// When they were fetched (ms since the Unix epoch).
    pub fetched_unix_ms: u64,
    /// `snyk-api` or `sarif`.
    pub source: String,
    /// The findings.
    pub findings: Vec<Finding>,
}

/// The stored findings of the project at `root` (none when nothing was stored or the file is
/// unreadable).
pub fn stored(root: &Utf8Path) -> StoredFindings {
    fs_err::read_to_string(root.join(FINDINGS_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Store `findings` as the project's, atomically (papayu-fs).
pub fn store(root: &Utf8Path, findings: &StoredFindings) -> Result<Utf8PathBuf, FindingsError> {
    let path = root.join(FINDINGS_FILE);
    let bytes = serde_json::to_vec_pretty(findings).map_err(|e| FindingsError::BadResponse {
        message: e.to_string(),
    })?;
    papayu_fs::write_atomic(&path, &bytes).map_err(|source| FindingsError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Import the SARIF file at `path` (relative paths are taken from `root`).
pub fn import_sarif(root: &Utf8Path, path: &Utf8Path) -> Result<Vec<Finding>, FindingsError> {
    let full = if path.is_absolute() {
        path.to_owned()
    } else {
        root.join(path)
    };
    let text = fs_err::read_to_string(&full).map_err(|source| FindingsError::Read {
        path: full.clone(),
        source,
    })?;
    parse_sarif(&text, root).map_err(|message| FindingsError::Sarif {
        path: full,
        message,
    })
}

/// Every finding papayu knows for the project without the network: the stored ones and, when
/// `PAPAYU_SNYK_SARIF` names a file, that file's (read now; a broken file adds nothing and is
/// reported by `papayu findings`). Sorted by severity, path and line; duplicates removed.
pub fn known(root: &Utf8Path, config: &SnykConfig) -> Vec<Finding> {
    let mut all = stored(root).findings;
    if let Some(sarif) = &config.sarif
        && let Ok(more) = project_file(root, sarif)
            .map_err(|e| e.to_string())
            .and_then(|p| import_sarif(root, &p).map_err(|e| e.to_string()))
    {
        all.extend(more);
    }
    sort_dedupe(&mut all);
    all
}

/// Sort by severity (most severe first), path, line; drop exact duplicates.
pub fn sort_dedupe(findings: &mut Vec<Finding>) {
    findings.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.title.cmp(&b.title))
    });
    findings.dedup();
}

/// The findings located in one of `files` (normalised project paths).
pub fn for_files<'a>(findings: &'a [Finding], files: &[String]) -> Vec<&'a Finding> {
    findings
        .iter()
        .filter(|f| f.path.as_ref().is_some_and(|p| files.contains(p)))
        .collect()
}

/// One line per finding: `high src/a.js:12 Cross-site Scripting (XSS) — details [rule]`.
pub fn line(f: &Finding) -> String {
    let place = match (&f.path, f.line) {
        (Some(p), Some(l)) => format!("{p}:{l}"),
        (Some(p), None) => p.clone(),
        _ => "(no location)".to_owned(),
    };
    let details = f.details.split_whitespace().collect::<Vec<_>>().join(" ");
    let details = if details.is_empty() || details == f.title {
        String::new()
    } else {
        format!(" — {}", details.chars().take(300).collect::<String>())
    };
    let rule = f
        .rule_id
        .as_deref()
        .map(|r| format!(" [{r}]"))
        .unwrap_or_default();
    format!("{} {place} {}{details}{rule}", f.severity, f.title)
}

/// The `FINDINGS` block for the files in context: at most `max` findings, most severe first;
/// `None` when none of the files has one.
pub fn block(findings: &[Finding], files: &[String], max: usize) -> Option<Block> {
    let relevant = for_files(findings, files);
    if relevant.is_empty() {
        return None;
    }
    let mut body: Vec<String> = relevant.iter().take(max).map(|f| line(f)).collect();
    if relevant.len() > max {
        body.push(format!("[{} more not shown]", relevant.len() - max));
    }
    Some(Block::extra(
        BlockKind::Findings,
        "findings{files}",
        "FINDINGS (static analysis of the files above; fix them only when the goal is about them):",
        body.join("\n"),
    ))
}
