//! [`Extras`]: the integrations as papayu-context sees them ([`ContextExtras`]) — the
//! architecture summary and the findings of the files in context in every base context, a
//! research block when an import error names a library the project lacks (auto research),
//! `web_search` answers, and the `commands` log source of personal automation. It reads the
//! project's `.papa-yu/` files and, for research only, the network.

use std::sync::LazyLock;

use camino::Utf8PathBuf;
use papayu_context::{BaseRequest, Block, BlockKind, ContextExtras, WebAnswer};
use regex::Regex;

use crate::config::IntegrationsConfig;
use crate::research::{Researcher, block_on};
use crate::{architecture, automation, findings};

/// Import errors that name a library: Python, Node, Rust, Go.
static UNKNOWN_LIBRARY: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r#"No module named '([A-Za-z0-9_.\-]+)'"#,
        r#"Cannot find module '([@A-Za-z0-9_./\-]+)'"#,
        r"unresolved import `([A-Za-z0-9_]+)",
        r"use of unresolved module or unlinked crate `([A-Za-z0-9_]+)`",
        r"use of undeclared crate or module `([A-Za-z0-9_]+)`",
        r#"cannot find package "([A-Za-z0-9_./\-]+)""#,
        r"no required module provides package ([A-Za-z0-9_./\-]+)",
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// The library an import error in `text` names, if any (`requests`, `left-pad`, `serde`).
/// Relative imports (`./util`) are the project's own, not a library.
pub fn unknown_library(text: &str) -> Option<String> {
    UNKNOWN_LIBRARY.iter().find_map(|re| {
        re.captures_iter(text)
            .filter_map(|c| c.get(1))
            .map(|m| m.as_str())
            .find(|name| !name.starts_with('.') && !name.starts_with('/'))
            .map(str::to_owned)
    })
}

/// The integrations' context additions for one project.
#[derive(Debug)]
pub struct Extras {
    root: Utf8PathBuf,
    config: IntegrationsConfig,
    researcher: Option<Researcher>,
}

impl Extras {
    /// The additions for the project at `root`: research only when it is enabled and
    /// configured (otherwise nothing ever leaves the machine).
    pub fn new(root: Utf8PathBuf, config: IntegrationsConfig) -> Extras {
        let researcher = Researcher::new(config.research.clone()).ok();
        Extras {
            root,
            config,
            researcher,
        }
    }

    fn answer(
        &self,
        researcher: &Researcher,
        query: &str,
        domains: &[String],
    ) -> Result<WebAnswer, String> {
        block_on(researcher.research(query, domains))
            .ok_or_else(|| "the research thread failed".to_owned())?
            .map(|r| r.render(self.config.research.max_chars))
            .map_err(|e| e.to_string())
    }
}

impl ContextExtras for Extras {
    fn base_blocks(&self, request: &BaseRequest<'_>) -> Vec<Block> {
        let mut out = Vec::new();
        match architecture::summary(&self.root, &self.config.architecture) {
            Ok(Some(summary)) => out.push(architecture::block(&summary)),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "the architecture summary was not read"),
        }
        let known = findings::known(&self.root, &self.config.snyk);
        if let Some(block) = findings::block(&known, request.files, self.config.snyk.max_in_prompt)
        {
            out.push(block);
        }
        if let Some(researcher) = &self.researcher
            && self.config.research.auto
            && let Some(library) = request
                .failure
                .and_then(unknown_library)
                .or_else(|| unknown_library(request.goal))
        {
            let query = format!("{library} library install and usage");
            match self.answer(researcher, &query, &[]) {
                Ok(answer) => {
                    let mut block = Block::extra(
                        BlockKind::Online,
                        format!("research{{library={library:?}}}"),
                        format!("ONLINE[{library}] (looked up because an import error names it):"),
                        answer.body,
                    );
                    block.sources = answer.sources;
                    out.push(block);
                }
                Err(why) => tracing::warn!(%library, error = %why, "auto research failed"),
            }
        }
        out
    }

    fn web_search(&self, query: &str, domains: &[String]) -> Option<Result<WebAnswer, String>> {
        let researcher = self.researcher.as_ref()?;
        Some(self.answer(researcher, query, domains))
    }

    fn log_text(&self, source: &str) -> Option<Result<String, String>> {
        (source == "commands").then(|| {
            automation::log_text(&self.root)
                .ok_or_else(|| "no command has run in this project yet".to_owned())
        })
    }

    fn prompt_note(&self) -> Option<String> {
        let mut notes = Vec::new();
        if self.researcher.is_some() {
            notes.push(
                "Context request {\"type\":\"web_search\",\"query\":\"…\",\"domains\":[\"docs.rs\"]} \
                 searches the web (domains optional) and answers with a cited summary; use it only \
                 for facts about a library or API the project does not show.",
            );
        }
        if self.config.automation.enabled {
            notes.push(
                "Log source \"commands\" holds the output of commands the user ran from your \
                 commands_to_run.",
            );
        }
        (!notes.is_empty()).then(|| notes.join("\n"))
    }
}
