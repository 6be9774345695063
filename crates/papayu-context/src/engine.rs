//! [`ContextEngine`]: one plan cycle's cache, the diet, auto-gathering and the record of what
//! was sent; and [`assemble`], the one-call API the CLI uses.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use camino::Utf8Path;
use papayu_protocol::ContextRequest;
use papayu_validate::RelPath;
use serde::Serialize;

use crate::auto::AutoItem;
use crate::base::{Pointer, is_test_path, map_block};
use crate::block::{Block, BlockKind, DietState, Origin, render_blocks};
use crate::diet::{ContextStats, apply_diet, truncate_middle};
use crate::extras::{BaseRequest, ContextExtras};
use crate::files::FileIndex;
use crate::project::{Project, cache_key, online_block};
use crate::{ContextConfig, ContextError};

/// Hits and misses of one request type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HitMiss {
    /// Served from the cache.
    pub hits: u64,
    /// Computed.
    pub misses: u64,
}

/// Cache counters per request type (SPEC §6.2), recorded in traces as `cache_stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// `env`.
    pub env: HitMiss,
    /// `logs{source,last_n}`.
    pub logs: HitMiss,
    /// `read_file{path,start,end}`.
    pub read_file: HitMiss,
    /// `search{query,glob}`.
    pub search: HitMiss,
}

impl CacheStats {
    /// Sum over the four types.
    pub fn total(&self) -> HitMiss {
        let all = [self.env, self.logs, self.read_file, self.search];
        HitMiss {
            hits: all.iter().map(|h| h.hits).sum(),
            misses: all.iter().map(|h| h.misses).sum(),
        }
    }

    fn slot(&mut self, kind: BlockKind) -> &mut HitMiss {
        match kind {
            // The map and an extension's blocks are built once per base context and never
            // cached: counted with env.
            BlockKind::Env | BlockKind::Map | BlockKind::Findings | BlockKind::Architecture => {
                &mut self.env
            }
            BlockKind::Logs => &mut self.logs,
            BlockKind::File => &mut self.read_file,
            // Both look something up: a web search is counted with the project search.
            BlockKind::Search | BlockKind::Online => &mut self.search,
        }
    }
}

/// The files whose content was actually sent to the model (after the diet: a dropped block
/// was not sent), as normalised project paths with the sha256 of the whole file.
///
/// papayu-agent checks APPLY-mode edits against it (`ERR_UPDATE_WITHOUT_BASE`) and injects the
/// right `base_sha256` from it. Paths compare exactly as normalised by
/// [`RelPath::parse`]; a file read twice keeps the hash of the latest read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SentFiles(BTreeMap<String, String>);

impl SentFiles {
    /// Whether the content of `path` was sent.
    pub fn contains(&self, path: &RelPath) -> bool {
        self.0.contains_key(path.as_str())
    }

    /// The sha256 of `path` as sent.
    pub fn sha256(&self, path: &RelPath) -> Option<&str> {
        self.0.get(path.as_str()).map(String::as_str)
    }

    /// `(path, sha256)` in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(p, h)| (p.as_str(), h.as_str()))
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing was sent.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Add every file in `other`.
    pub fn extend(&mut self, other: &SentFiles) {
        self.0
            .extend(other.0.iter().map(|(p, h)| (p.clone(), h.clone())));
    }

    fn record(&mut self, blocks: &[Block]) {
        for b in blocks.iter().filter(|b| !b.is_dropped()) {
            if let (BlockKind::File, Some(f)) = (b.kind, &b.file) {
                self.0.insert(f.path.clone(), f.sha256.clone());
            }
        }
    }
}

/// The context for one model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssembledContext {
    /// The rendered blocks that were kept, separated by blank lines: what the model reads.
    pub text: String,
    /// Every block, requested first then auto-gathered, each with its diet state (dropped
    /// blocks included so a frontend can show what was left out).
    pub blocks: Vec<Block>,
    /// `context_stats`.
    pub stats: ContextStats,
    /// Files whose content is in `text`.
    pub sent_files: SentFiles,
    /// Cache counters of the engine after this call.
    pub cache: CacheStats,
}

impl AssembledContext {
    /// The URLs cited by the `ONLINE` blocks that were sent, in order, each once.
    pub fn online_sources(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for url in self
            .blocks
            .iter()
            .filter(|b| b.kind == BlockKind::Online && !b.is_dropped())
            .flat_map(|b| b.sources.iter())
        {
            if !out.contains(url) {
                out.push(url.clone());
            }
        }
        out
    }
}

/// One plan cycle of context gathering: a [`Project`] plus the request cache, the last check
/// output, and the union of files sent so far.
///
/// Start a new cycle (a new PLAN call) with [`ContextEngine::new_cycle`].
#[derive(Debug)]
pub struct ContextEngine {
    project: Project,
    cache: HashMap<String, Block>,
    stats: CacheStats,
    check_output: Option<String>,
    sent: SentFiles,
    extras: Option<Arc<dyn ContextExtras>>,
}

impl ContextEngine {
    /// Open `root` with `config`.
    pub fn new(root: impl AsRef<Utf8Path>, config: ContextConfig) -> Result<Self, ContextError> {
        Ok(Self::from_project(Project::open(root, config)?))
    }

    /// Wrap an opened project.
    pub fn from_project(project: Project) -> Self {
        Self {
            project,
            cache: HashMap::new(),
            stats: CacheStats::default(),
            check_output: None,
            sent: SentFiles::default(),
            extras: None,
        }
    }

    /// Install (or with `None` remove) an integration's additions: blocks in the base context,
    /// `web_search` answers, extra log sources. Cached blocks are discarded.
    pub fn set_extras(&mut self, extras: Option<Arc<dyn ContextExtras>>) {
        self.extras = extras;
        self.cache.clear();
    }

    /// What the installed extension says to the model about what it offers, if anything.
    pub fn extras_prompt_note(&self) -> Option<String> {
        self.extras.as_ref().and_then(|e| e.prompt_note())
    }

    /// The project.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// Set the last check-command output, served as the `check` log source. Cached `check`
    /// blocks are discarded.
    pub fn set_check_output(&mut self, output: impl Into<String>) {
        self.check_output = Some(output.into());
        self.cache
            .retain(|key, _| !key.starts_with("logs{source=\"check\""));
    }

    /// Forget the cache, the counters and the sent files: a new PLAN call begins.
    pub fn new_cycle(&mut self) {
        self.cache.clear();
        self.stats = CacheStats::default();
        self.sent = SentFiles::default();
    }

    /// Cache counters so far.
    pub fn cache_stats(&self) -> CacheStats {
        self.stats
    }

    /// Every file whose content was sent in this cycle (union over [`ContextEngine::assemble`]
    /// calls).
    pub fn sent_files(&self) -> &SentFiles {
        &self.sent
    }

    /// Fulfil one request through the cache (no diet). Logs `CONTEXT_CACHE_HIT` or
    /// `CONTEXT_CACHE_MISS` at debug level with `key`.
    pub fn fulfil(&mut self, request: &ContextRequest) -> Block {
        self.fulfil_with(request, Origin::Requested, None)
    }

    fn fulfil_with(
        &mut self,
        request: &ContextRequest,
        origin: Origin,
        precomputed: Option<Block>,
    ) -> Block {
        let key = cache_key(&self.project.config, request);
        let kind = match request {
            ContextRequest::ReadFile { .. } => BlockKind::File,
            ContextRequest::Search { .. } => BlockKind::Search,
            ContextRequest::Logs { .. } => BlockKind::Logs,
            ContextRequest::Env => BlockKind::Env,
            ContextRequest::WebSearch { .. } => BlockKind::Online,
        };
        let mut block = if let Some(hit) = self.cache.get(&key) {
            self.stats.slot(kind).hits += 1;
            tracing::debug!(event = "CONTEXT_CACHE_HIT", key = %key);
            hit.clone()
        } else {
            self.stats.slot(kind).misses += 1;
            tracing::debug!(event = "CONTEXT_CACHE_MISS", key = %key);
            let block = precomputed
                .or_else(|| self.extension_block(request))
                .unwrap_or_else(|| self.project.fulfil(request, self.check_output.as_deref()));
            self.cache.insert(key, block.clone());
            block
        };
        block.origin = origin;
        block
    }

    /// The block the installed extension answers `request` with: a `web_search` (a note when
    /// none is installed), or a log source the project does not know.
    fn extension_block(&self, request: &ContextRequest) -> Option<Block> {
        match request {
            ContextRequest::WebSearch { query, domains } => {
                let answer = self
                    .extras
                    .as_ref()
                    .and_then(|e| e.web_search(query, domains));
                Some(online_block(&self.project.config, request, answer))
            }
            ContextRequest::Logs { source, last_n } if !self.project.knows_log(source) => {
                let text = self.extras.as_ref()?.log_text(source)?;
                Some(self.project.logs_of(source, *last_n, text))
            }
            _ => None,
        }
    }

    /// The blocks auto-gathering (SPEC §6.4) fetches for `text` (a goal, a report, a log),
    /// through the cache, before any diet: frame snippets, then test files, then ENV and
    /// capped manifests for import errors.
    pub fn auto_gather(&mut self, text: &str) -> Vec<Block> {
        let items = self.project.plan_auto(text);
        self.fetch_auto(&items, None)
    }

    fn fetch_auto(&mut self, items: &[AutoItem], mut env: Option<Block>) -> Vec<Block> {
        let mut out = Vec::new();
        for item in items {
            let block = match item {
                AutoItem::Read { path, start, end } => {
                    let req = ContextRequest::ReadFile {
                        path: path.as_str().to_owned(),
                        start_line: Some(*start),
                        end_line: Some(*end),
                    };
                    self.fulfil_with(&req, Origin::Auto, None)
                }
                AutoItem::Env => self.fulfil_with(&ContextRequest::Env, Origin::Auto, env.take()),
                AutoItem::Manifest(path) => {
                    let req = ContextRequest::ReadFile {
                        path: path.as_str().to_owned(),
                        start_line: Some(1),
                        end_line: Some(MANIFEST_LINES),
                    };
                    let mut block = self.fulfil_with(&req, Origin::Auto, None);
                    let t = truncate_middle(&block.body, self.project.config.manifest_max_chars);
                    if t.removed > 0 {
                        block.body = t.text;
                        block.diet = DietState::Truncated {
                            removed_chars: t.removed,
                        };
                    }
                    block
                }
            };
            out.push(block);
        }
        out
    }

    /// Fulfil `requests`, auto-gather from `goal_text`, deduplicate, apply the diet, and
    /// record the files sent. ENV probes (when needed and not cached) run concurrently with
    /// the file reads and searches.
    pub fn assemble(
        &mut self,
        requests: &[ContextRequest],
        goal_text: Option<&str>,
    ) -> AssembledContext {
        let items = goal_text
            .map(|t| self.project.plan_auto(t))
            .unwrap_or_default();
        let needs_env = requests.iter().any(|r| matches!(r, ContextRequest::Env))
            || items.iter().any(|i| matches!(i, AutoItem::Env));
        let env_cached = self.cache.contains_key("env");
        let project = self.project.clone();
        let (slots, env_block) = std::thread::scope(|s| {
            let env_thread = (needs_env && !env_cached).then(|| s.spawn(move || project.env()));
            let slots: Vec<Option<Block>> = requests
                .iter()
                .map(|r| {
                    (!matches!(r, ContextRequest::Env))
                        .then(|| self.fulfil_with(r, Origin::Requested, None))
                })
                .collect();
            (slots, env_thread.and_then(|h| h.join().ok()))
        });
        let mut env_block = env_block;
        let mut blocks = Vec::with_capacity(requests.len() + items.len());
        for (r, slot) in requests.iter().zip(slots) {
            match slot {
                Some(b) => blocks.push(b),
                None => blocks.push(self.fulfil_with(r, Origin::Requested, env_block.take())),
            }
        }
        blocks.extend(self.fetch_auto(&items, env_block));
        self.finish(blocks)
    }
}

impl ContextEngine {
    /// The base context of a goal's first request (SPEC §14): what [`assemble`](Self::assemble)
    /// auto-gathers for `goal` (stack traces, failing tests, import errors), the files the goal
    /// points at (by path, by a name it calls out, by its words) read whole, the whole project
    /// when it is small, the frames and failing tests in `failure` (the output of the test run
    /// before the change) with that output as the `check` log, the `env` block and the project
    /// map — under one diet, most specific first, so the budget drops the least specific. An
    /// installed [`ContextExtras`] adds its blocks (findings for the files read, the
    /// architecture summary, research) after the files.
    pub fn base(&mut self, goal: &str, failure: Option<&str>) -> AssembledContext {
        self.base_focused(goal, failure, &[])
    }

    /// [`base`](Self::base), with the test files it sends focused on the `failing` tests (their
    /// names as the test runner reports them: `test_mod.Class.test_x`, `tests/a.rs::name`,
    /// `suite > title`): those are shown whole, the other tests of the file by name only, in one
    /// comment line per run of them. Pass the failing tests only while test files are not the
    /// model's to change — a model shown part of a file must not rewrite it. A file in which no
    /// failing test is recognised is sent whole.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # std::fs::write(dir.path().join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    /// # std::fs::write(
    /// #     dir.path().join("test_calc.py"),
    /// #     "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    /// # ).unwrap();
    /// use papayu_context::{ContextConfig, ContextEngine};
    ///
    /// let root = camino::Utf8Path::from_path(dir.path()).unwrap();
    /// let mut engine = ContextEngine::new(root, ContextConfig::default())?;
    /// let failing = ["test_calc.py::test_add".to_owned()];
    /// let ctx = engine.base_focused("add() in calc.py subtracts", None, &failing);
    /// assert!(ctx.text.contains("assert add(2, 3) == 5"));
    /// assert!(ctx.text.contains("# … 1 passing test is not shown: test_zero"));
    /// assert!(!ctx.text.contains("add(0, 0)"));
    /// # Ok::<(), papayu_context::ContextError>(())
    /// ```
    pub fn base_focused(
        &mut self,
        goal: &str,
        failure: Option<&str>,
        failing: &[String],
    ) -> AssembledContext {
        let mut index = FileIndex::default();
        let max_files = self.project.config.goal_max_files;
        let pointed = self.project.goal_files(goal, &mut index, max_files);
        let small = self
            .project
            .small_project_files(&mut index, self.project.config.small_project_bytes);
        let whole = |path: &RelPath| AutoItem::Read {
            path: path.clone(),
            start: 1,
            end: WHOLE_FILE_LINES,
        };
        let mut items: Vec<AutoItem> = Vec::new();
        let (specific, loose): (Vec<_>, Vec<_>) = pointed
            .iter()
            .partition(|(_, why)| matches!(why, Pointer::Path | Pointer::Defines));
        items.extend(specific.iter().map(|(p, _)| whole(p)));
        items.extend(self.project.plan_auto(goal));
        if let Some(text) = failure {
            items.extend(self.project.plan_auto(text));
        }
        items.extend(loose.iter().map(|(p, _)| whole(p)));
        items.extend(small.iter().map(whole));
        if !items.iter().any(|i| matches!(i, AutoItem::Env)) {
            items.push(AutoItem::Env);
        }
        // A file read whole makes its snippets redundant.
        let read_whole: Vec<RelPath> = items
            .iter()
            .filter_map(|i| match i {
                AutoItem::Read {
                    path,
                    start: 1,
                    end,
                } if *end == WHOLE_FILE_LINES => Some(path.clone()),
                _ => None,
            })
            .collect();
        items.retain(|i| match i {
            AutoItem::Read { path, end, .. } => {
                *end == WHOLE_FILE_LINES || !read_whole.contains(path)
            }
            _ => true,
        });
        let mut blocks = self.fetch_auto(&items, None);
        if !failing.is_empty() {
            for block in &mut blocks {
                let Some(file) = &block.file else { continue };
                if !is_test_path(&file.path) {
                    continue;
                }
                if let Some(body) = crate::focus::focus_tests(&file.path, &block.body, failing) {
                    block.body = body;
                }
            }
        }
        if let Some(extras) = &self.extras {
            let files: Vec<String> = blocks
                .iter()
                .filter_map(|b| b.file.as_ref().map(|f| f.path.clone()))
                .collect();
            blocks.extend(extras.base_blocks(&BaseRequest {
                goal,
                failure,
                files: &files,
            }));
        }
        if let Some(text) = failure {
            self.set_check_output(text);
            let logs = ContextRequest::Logs {
                source: "check".to_owned(),
                last_n: None,
            };
            blocks.push(self.fulfil_with(&logs, Origin::Auto, None));
        }
        let config = &self.project.config;
        blocks.push(map_block(
            index.get(&self.project),
            config.map_max_entries,
            config.map_recent_files,
        ));
        self.finish(blocks)
    }

    /// Deduplicate, apply the diet, record the files sent.
    fn finish(&mut self, mut blocks: Vec<Block>) -> AssembledContext {
        dedupe(&mut blocks);
        let stats = apply_diet(&mut blocks, &self.project.config);
        let mut sent = SentFiles::default();
        sent.record(&blocks);
        self.sent.extend(&sent);
        AssembledContext {
            text: render_blocks(&blocks),
            blocks,
            stats,
            sent_files: sent,
            cache: self.stats,
        }
    }
}

/// `end_line` of a read that means the whole file (the diet still caps its characters).
const WHOLE_FILE_LINES: u64 = 100_000;

/// Lines read from a manifest before it is capped to `manifest_max_chars`.
const MANIFEST_LINES: u64 = 2_000;

/// Keep the first block of each key (requested blocks come before auto-gathered ones).
fn dedupe(blocks: &mut Vec<Block>) {
    let mut seen = std::collections::HashSet::new();
    blocks.retain(|b| seen.insert(b.key.clone()));
}

/// One call for a frontend: open `project_root`, fulfil `requests`, auto-gather from
/// `goal_text`, apply the diet. `papayu context [--request JSON]... [--from-text FILE] [--json]`
/// prints `text` (or the whole value as JSON).
pub fn assemble(
    project_root: &Utf8Path,
    requests: &[ContextRequest],
    goal_text: Option<&str>,
    config: &ContextConfig,
) -> Result<AssembledContext, ContextError> {
    let mut engine = ContextEngine::new(project_root, config.clone())?;
    Ok(engine.assemble(requests, goal_text))
}
