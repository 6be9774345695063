//! `search`: a literal (by default) search over the project with the ripgrep crates.
//!
//! Order is deterministic — hits sorted by path, then line — yet the walk stays parallel and
//! does not search everything: the threads share the current best `max_hits` hits, and a file
//! whose path sorts after the worst of a full set cannot contribute, so it is skipped unread.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Mutex;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, sinks};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use serde::Serialize;

use crate::block::{Block, BlockKind};
use crate::confine::{display_raw, is_cache_dir, is_protected_entry};
use crate::project::{Project, cache_key};

/// How the query is interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchMode {
    /// The query is literal text (what model requests always use).
    #[default]
    Literal,
    /// The query is a regular expression (Rust `regex` syntax).
    Regex,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// Project-relative path, `/`-separated.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The line, cut to `search_line_max_chars`.
    pub text: String,
}

impl Ord for Hit {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.path.as_str(), self.line).cmp(&(other.path.as_str(), other.line))
    }
}

impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Result of a search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchResult {
    /// At most `max_search_hits` hits, sorted by path then line.
    pub hits: Vec<Hit>,
    /// Whether more hits exist than are shown.
    pub more: bool,
}

/// Why a search was not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchRefusal {
    /// Empty query.
    #[error("refused: the query is empty")]
    EmptyQuery,
    /// The query cannot be compiled (a newline in a literal, bad regex syntax).
    #[error("refused: the query cannot be searched ({0})")]
    BadQuery(String),
    /// The glob does not parse.
    #[error("refused: invalid glob ({0})")]
    BadGlob(String),
}

struct TopK {
    heap: BinaryHeap<Hit>,
    k: usize,
    more: bool,
}

impl TopK {
    /// Whether a file at `path` could still place a hit in the top k.
    fn admits(&self, path: &str) -> bool {
        self.heap.len() < self.k
            || self
                .heap
                .peek()
                .is_some_and(|worst| path <= worst.path.as_str())
    }

    fn push(&mut self, hit: Hit) {
        if self.heap.len() < self.k {
            self.heap.push(hit);
        } else if self.heap.peek().is_some_and(|worst| hit < *worst) {
            self.heap.pop();
            self.heap.push(hit);
            self.more = true;
        } else {
            self.more = true;
        }
    }
}

fn lock(m: &Mutex<TopK>) -> std::sync::MutexGuard<'_, TopK> {
    // A poisoned lock only means another search thread panicked; the heap is still consistent.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn cut_line(line: &str, max: usize) -> String {
    let line = line.trim_end_matches(['\n', '\r']);
    match line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

impl Project {
    /// `search` as a block: `SEARCH[query]:` then at most `max_search_hits` lines
    /// `path:line: text`, sorted by path then line. Literal; honours `.gitignore`,
    /// `.papayuignore` and `glob`; skips binary, hidden and protected files.
    pub fn search(&self, query: &str, glob: Option<&str>) -> Block {
        let key = cache_key(
            &self.config,
            &papayu_protocol::ContextRequest::Search {
                query: query.to_owned(),
                glob: glob.map(str::to_owned),
            },
        );
        let header = match glob {
            Some(g) => format!("SEARCH[{}] (glob={}):", display_raw(query), display_raw(g)),
            None => format!("SEARCH[{}]:", display_raw(query)),
        };
        let body = match self.search_hits(query, glob, SearchMode::Literal) {
            Ok(result) if result.hits.is_empty() => "[no matches]".to_owned(),
            Ok(result) => {
                let mut body = String::new();
                for h in &result.hits {
                    body.push_str(&format!("{}:{}: {}\n", h.path, h.line, h.text));
                }
                if result.more {
                    body.push_str(&format!(
                        "[more matches exist; showing the first {} by path]",
                        result.hits.len()
                    ));
                } else {
                    body.pop();
                }
                body
            }
            Err(e) => format!("[{e}]"),
        };
        Block::new(BlockKind::Search, key, header, body, None)
    }

    /// The search itself, for callers that want the hits rather than a block.
    pub fn search_hits(
        &self,
        query: &str,
        glob: Option<&str>,
        mode: SearchMode,
    ) -> Result<SearchResult, SearchRefusal> {
        if query.is_empty() {
            return Err(SearchRefusal::EmptyQuery);
        }
        let matcher = build_matcher(query, mode)?;
        let root = self.root.canonical().as_std_path();
        let mut builder = WalkBuilder::new(root);
        builder
            .require_git(false)
            .add_custom_ignore_filename(".papayuignore")
            .follow_links(false)
            .threads(self.config.search_threads)
            .filter_entry({
                // Prune `.git/`, `.papa-yu/`, `secrets/` and secret files before reading them, and
                // build caches (`target/`, `__pycache__`): generated, never the code to change.
                let policy = self.root.policy().clone();
                let root = root.to_path_buf();
                move |entry| !is_protected_entry(&policy, &root, entry) && !is_cache_dir(entry)
            });
        if let Some(g) = glob {
            let mut ob = OverrideBuilder::new(root);
            ob.add(g)
                .map_err(|e| SearchRefusal::BadGlob(e.to_string()))?;
            builder.overrides(
                ob.build()
                    .map_err(|e| SearchRefusal::BadGlob(e.to_string()))?,
            );
        }
        let k = self.config.max_search_hits;
        let top = Mutex::new(TopK {
            heap: BinaryHeap::with_capacity(k + 1),
            k,
            more: false,
        });
        let line_max = self.config.search_line_max_chars;
        if k > 0 {
            builder.build_parallel().run(|| {
                let matcher = matcher.clone();
                let mut searcher = new_searcher();
                let top = &top;
                Box::new(move |entry| {
                    let Ok(entry) = entry else {
                        return WalkState::Continue;
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        return WalkState::Continue;
                    }
                    let Ok(rel) = entry.path().strip_prefix(root) else {
                        return WalkState::Continue;
                    };
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    let (admitted, more_known) = {
                        let t = lock(top);
                        (t.admits(&rel), t.more)
                    };
                    if !admitted {
                        // The file cannot place a hit in the top k, but whether *any* match
                        // exists beyond the shown ones must not depend on thread scheduling:
                        // until `more` is known, look for a first match and stop there.
                        if !more_known {
                            let mut found = false;
                            let _ = searcher.search_path(
                                &matcher,
                                entry.path(),
                                sinks::Lossy(|_, _| {
                                    found = true;
                                    Ok(false)
                                }),
                            );
                            if found {
                                lock(top).more = true;
                            }
                        }
                        return WalkState::Continue;
                    }
                    let mut local: Vec<Hit> = Vec::new();
                    let mut truncated = false;
                    let _ = searcher.search_path(
                        &matcher,
                        entry.path(),
                        sinks::Lossy(|line, text| {
                            if local.len() == k {
                                truncated = true;
                                return Ok(false);
                            }
                            local.push(Hit {
                                path: rel.clone(),
                                line,
                                text: cut_line(text, line_max),
                            });
                            Ok(true)
                        }),
                    );
                    if !local.is_empty() {
                        let mut t = lock(top);
                        t.more |= truncated;
                        for h in local {
                            t.push(h);
                        }
                    }
                    WalkState::Continue
                })
            });
        }
        let top = top
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(SearchResult {
            hits: top.heap.into_sorted_vec(),
            more: top.more,
        })
    }
}

fn build_matcher(query: &str, mode: SearchMode) -> Result<RegexMatcher, SearchRefusal> {
    let mut b = RegexMatcherBuilder::new();
    b.line_terminator(Some(b'\n'));
    if mode == SearchMode::Literal {
        b.fixed_strings(true);
    }
    b.build(query)
        .map_err(|e| SearchRefusal::BadQuery(e.to_string()))
}

pub(crate) fn new_searcher() -> Searcher {
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(true)
        .build()
}
