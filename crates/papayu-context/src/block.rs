//! Context blocks: what the model reads.

use serde::Serialize;

/// Which request type produced a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// `FILE[path] (sha256=…):` numbered lines, or a note.
    File,
    /// `SEARCH[query]:` hits.
    Search,
    /// `LOGS[source]:` tail of a log.
    Logs,
    /// `ENV:` OS, tools, package manager.
    Env,
    /// `PROJECT MAP:` the project's files with their sizes (base context, SPEC §14).
    Map,
    /// `ONLINE[query]:` a summary of web pages with their sources (a `web_search` request or
    /// research an integration started; see [`crate::ContextExtras`]).
    Online,
    /// `FINDINGS:` static-analysis findings (Snyk Code, SARIF) for the files in context.
    Findings,
    /// `ARCHITECTURE:` the project's architecture summary (`.papa-yu/architecture.md`).
    Architecture,
}

/// Who asked for a block; decides what the diet keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The model (or the user) asked for it: priority 0.
    Requested,
    /// Gathered automatically from error text (§6.4).
    Auto,
}

/// A file whose content a block carries: the normalised project path and the sha256 of the
/// whole file's raw bytes (what `base_sha256` must equal).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct FileRef {
    /// Normalised project-relative path.
    pub path: String,
    /// Lowercase hex sha256 of the whole file.
    pub sha256: String,
}

/// What the diet did to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum DietState {
    /// Sent whole.
    Kept,
    /// Sent with the middle cut out.
    Truncated {
        /// Characters removed.
        removed_chars: usize,
    },
    /// Not sent.
    Dropped,
}

/// One block of context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block {
    /// Request type.
    pub kind: BlockKind,
    /// Requested or auto-gathered.
    pub origin: Origin,
    /// The cache key (SPEC §6.2), e.g. `read_file{path="src/a.rs",start=1,end=200}`.
    pub key: String,
    /// First line, e.g. `FILE[src/a.rs] (sha256=…):`; never cut.
    pub header: String,
    /// The content under the header (possibly cut by the diet).
    pub body: String,
    /// The file whose content the body carries; `None` for notes and non-file blocks.
    pub file: Option<FileRef>,
    /// What the diet did.
    pub diet: DietState,
    /// The URLs an `ONLINE` block cites, in their numbered order (empty for other kinds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

impl Block {
    pub(crate) fn new(
        kind: BlockKind,
        key: String,
        header: String,
        body: String,
        file: Option<FileRef>,
    ) -> Self {
        Self {
            kind,
            origin: Origin::Requested,
            key,
            header,
            body,
            file,
            diet: DietState::Kept,
            sources: Vec::new(),
        }
    }

    /// Header and body as sent.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(self.header.len() + 1 + self.body.len());
        out.push_str(&self.header);
        out.push('\n');
        out.push_str(&self.body);
        out
    }

    /// Length of [`Block::render`] in characters.
    pub fn rendered_chars(&self) -> usize {
        self.header.chars().count() + 1 + self.body.chars().count()
    }

    /// Whether the diet dropped this block (it was not sent).
    pub fn is_dropped(&self) -> bool {
        self.diet == DietState::Dropped
    }

    /// Whether this is a FILE block carrying file content (not a note).
    pub fn carries_file(&self) -> bool {
        self.kind == BlockKind::File && self.file.is_some()
    }
}

/// Separator between rendered blocks.
pub(crate) const SEPARATOR: &str = "\n\n";

/// Render the blocks that were not dropped, separated by a blank line.
pub fn render_blocks(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks.iter().filter(|b| !b.is_dropped()) {
        if !out.is_empty() {
            out.push_str(SEPARATOR);
        }
        out.push_str(&b.render());
    }
    out
}
