//! `papayu analyze`: a structured report of the project — languages, size, manifests, the test
//! command, findings, hot spots from papayu's history (`--json` for the document); it writes
//! agent-sync when `PAPAYU_AGENT_SYNC` is on.

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_integrations::{analyze, findings, sync};
use papayu_protocol::agent_sync::{SyncKind, SyncStatus};

use crate::cmd::research::{fail, integrations_config};
use crate::cmd::session::print_json;
use crate::exit::{Exit, UsageError};
use crate::global::Global;

/// Describe the project.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Exit 0 with the report; 1 when the root is not a directory.
pub fn run(_args: &Args, global: &Global) -> Result<Exit> {
    let config = integrations_config()?;
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let analysis = match analyze::analyze(&root, &config) {
        Ok(a) => a,
        Err(e) => return fail(e.code(), &e.to_string(), global),
    };
    let synced = if config.agent_sync {
        let mut last = sync::last(SyncKind::Analysis, None, SyncStatus::Analyzed);
        last.result.message = Some(format!(
            "{} files; {} findings",
            analysis.files,
            analysis.findings.len()
        ));
        match sync::write(
            &root,
            &config,
            last,
            None,
            None,
            analysis.test_command.clone(),
        ) {
            Ok(path) => Some(path),
            Err(e) => return fail(e.code(), &e.to_string(), global),
        }
    } else {
        None
    };
    if global.json {
        let mut doc = serde_json::to_value(&analysis)?;
        doc["agent_sync"] = serde_json::json!(synced);
        print_json(&doc)?;
    } else {
        println!("{}", render(&analysis));
        if let Some(path) = synced {
            println!("agent-sync: {path}");
        }
    }
    Ok(Exit::Ok)
}

/// The report for people, in this process's language (English is the library's
/// `Analysis::render` word for word; the findings' own lines stay as the library writes them).
fn render(a: &analyze::Analysis) -> String {
    use crate::tr;
    let mut out = vec![
        tr!("analyze-project", root = a.root.as_str()),
        tr!(
            "analyze-size",
            files = a.files,
            bytes = a.bytes,
            truncated = if a.truncated { "yes" } else { "no" }
        ),
        tr!("analyze-languages"),
    ];
    for l in &a.languages {
        out.push(format!(
            "  {:<12} {:>6} {} {:>9} {}",
            l.language,
            l.files,
            tr!("analyze-files-word", count = l.files),
            l.lines,
            tr!("analyze-lines-word", count = l.lines)
        ));
    }
    let manifests: Vec<String> = a
        .manifests
        .iter()
        .map(|(m, e)| format!("{m} ({e})"))
        .collect();
    let none = tr!("analyze-none");
    out.push(tr!(
        "analyze-manifests",
        list = if manifests.is_empty() {
            none.clone()
        } else {
            manifests.join(", ")
        }
    ));
    out.push(tr!(
        "analyze-test-command",
        command = a
            .test_command
            .clone()
            .unwrap_or_else(|| tr!("analyze-none-detected"))
    ));
    out.push(tr!(
        "analyze-architecture",
        state = if a.architecture_summary {
            tr!("analyze-present")
        } else {
            none
        }
    ));
    out.push(tr!("analyze-findings", count = a.findings.len()));
    for f in a.findings.iter().take(10) {
        out.push(format!("  {}", findings::line(f)));
    }
    if !a.hot_spots.is_empty() {
        out.push(tr!("analyze-hot-spots"));
        for h in &a.hot_spots {
            out.push(format!("  {:>3}  {}", h.changes, h.path));
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use papayu_integrations::analyze::{Analysis, HotSpot, LanguageShare};

    use super::render;

    fn analysis(truncated: bool, rich: bool) -> Analysis {
        Analysis {
            root: "/p".to_owned(),
            files: 21,
            bytes: 1234,
            truncated,
            languages: vec![LanguageShare {
                language: "Rust".to_owned(),
                files: 3,
                lines: 101,
            }],
            manifests: if rich {
                vec![("Cargo.toml".to_owned(), "cargo".to_owned())]
            } else {
                Vec::new()
            },
            test_command: rich.then(|| "cargo test".to_owned()),
            findings: Vec::new(),
            architecture_summary: rich,
            hot_spots: if rich {
                vec![HotSpot {
                    path: "src/a.rs".to_owned(),
                    changes: 4,
                }]
            } else {
                Vec::new()
            },
        }
    }

    /// The English report is the library's, byte for byte (the language is English until
    /// `main` chooses one).
    #[test]
    fn english_report_is_the_librarys_rendering() {
        for (truncated, rich) in [(false, false), (true, true)] {
            let a = analysis(truncated, rich);
            assert_eq!(render(&a), a.render());
        }
    }
}
