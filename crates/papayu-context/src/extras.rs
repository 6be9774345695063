//! [`ContextExtras`]: what an integration adds to the context — blocks for the base context
//! (findings, the architecture summary, research on an unknown library), the answer to a
//! `web_search` request, named log sources, and the system-prompt line that offers them.
//! papayu-context stays free of network code: papayu-integrations implements this trait.

use std::fmt;

use crate::block::{Block, BlockKind};

/// What a `web_search` returned: the `ONLINE[query]` block's body and the sources it cites.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebAnswer {
    /// The summary, each part marked with its source number (`[1]`), then the sources.
    pub body: String,
    /// The URLs cited, in their numbered order.
    pub sources: Vec<String>,
}

/// The base context of a goal as an extension sees it (SPEC §14).
#[derive(Debug, Clone, Copy)]
pub struct BaseRequest<'a> {
    /// The goal.
    pub goal: &'a str,
    /// The output of the test run before the change, when it failed.
    pub failure: Option<&'a str>,
    /// Project files whose content the base context carries, before the diet.
    pub files: &'a [String],
}

/// An integration's additions to the context. Every method has a default that adds nothing,
/// so an implementation provides only what it has.
pub trait ContextExtras: Send + Sync + fmt::Debug {
    /// Blocks for the base context of a goal (made with [`Block::extra`]); the diet treats
    /// them by their kind.
    fn base_blocks(&self, request: &BaseRequest<'_>) -> Vec<Block> {
        let _ = request;
        Vec::new()
    }

    /// Answer a `web_search` request: `None` when online research is not enabled, else the
    /// answer or why there is none (a short English sentence).
    fn web_search(&self, query: &str, domains: &[String]) -> Option<Result<WebAnswer, String>> {
        let _ = (query, domains);
        None
    }

    /// The text of a log source papayu-context does not know (`check` and the project's
    /// `log_files` come first), or `None` when this extension has no such source either.
    fn log_text(&self, source: &str) -> Option<Result<String, String>> {
        let _ = source;
        None
    }

    /// Lines appended to the system prompt describing what this extension offers the model
    /// (the `web_search` request, an extra log source), or `None`.
    fn prompt_note(&self) -> Option<String> {
        None
    }
}

impl Block {
    /// A block an extension adds (kind [`BlockKind::Online`], [`BlockKind::Findings`] or
    /// [`BlockKind::Architecture`]): auto-gathered, kept whole until the diet decides, deduplicated by `key`.
    pub fn extra(
        kind: BlockKind,
        key: impl Into<String>,
        header: impl Into<String>,
        body: impl Into<String>,
    ) -> Block {
        let mut block = Block::new(kind, key.into(), header.into(), body.into(), None);
        block.origin = crate::block::Origin::Auto;
        block
    }
}
