//! Online research: search (Tavily or SearXNG) → fetch the top pages (robots.txt honoured,
//! size and time capped, cached by URL) → extract readable text → summarise → an `ONLINE`
//! block that cites its sources. It touches the network only through the configured search
//! service and the pages it returns, and the disk only in the page cache directory.

mod backend;
mod cache;
mod extract;
mod fetch;
mod summary;

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use papayu_context::WebAnswer;
use serde::Serialize;

pub use self::extract::{Extracted, extract_html};
pub use self::summary::summarise;
use crate::config::{ResearchConfig, SearchBackend};
use crate::error::ResearchError;

/// One search result, as the service gave it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// Page title.
    pub title: String,
    /// Page URL.
    pub url: String,
    /// The service's snippet of the page.
    pub snippet: String,
    /// Publication date, when the service knows it.
    pub published: Option<String>,
    /// The service's relevance score, when it gives one.
    pub score: Option<f64>,
}

/// What happened when a page was fetched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum FetchState {
    /// Read from the network now.
    Fetched,
    /// Read from the page cache.
    Cached,
    /// Not fetched: only the search snippet is used (the page limit was reached).
    NotFetched,
    /// robots.txt forbids papayu to read it.
    RobotsDisallowed,
    /// The fetch failed (the reason); the search snippet is used.
    Failed(String),
}

/// One source of a research answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// Its number in the answer (`[1]`).
    pub number: usize,
    /// Title (the page's own, else the search result's).
    pub title: String,
    /// URL.
    pub url: String,
    /// Its domain.
    pub domain: String,
    /// Publication date, when known (the service's, else the page's own metadata).
    pub published: Option<String>,
    /// A short summary of what it says about the query.
    pub summary: String,
    /// How the page was read.
    pub fetch: FetchState,
}

/// The result of one research question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Research {
    /// The query as sent (secrets redacted).
    pub query: String,
    /// The service asked.
    pub backend: String,
    /// Domains the search was restricted to.
    pub domains: Vec<String>,
    /// The sources, best first.
    pub sources: Vec<Source>,
    /// When it ran (ms since the Unix epoch).
    pub at_unix_ms: u64,
}

impl Research {
    /// The `ONLINE` block's body: a numbered summary per source and the list of sources, in
    /// at most `max_chars` characters (summaries are shortened first; the sources stay).
    pub fn render(&self, max_chars: usize) -> WebAnswer {
        summary::render(self, max_chars)
    }
}

/// A domain as written by a user or a model (`https://docs.rs/`, `*.mozilla.org`), reduced to
/// its host name; `None` when it is not one.
pub fn normalize_domain(raw: &str) -> Option<String> {
    let mut d = raw.trim().to_ascii_lowercase();
    for prefix in ["https://", "http://", "*."] {
        if let Some(rest) = d.strip_prefix(prefix) {
            d = rest.to_owned();
        }
    }
    let d = d
        .split('/')
        .next()
        .unwrap_or_default()
        .trim_end_matches('.');
    let ok = !d.is_empty()
        && d.len() <= 253
        && d.contains('.')
        && d.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    ok.then(|| d.to_owned())
}

/// Whether `url`'s host is one of `domains` or a subdomain of one (any host when `domains` is
/// empty).
pub fn in_domains(url: &str, domains: &[String]) -> bool {
    if domains.is_empty() {
        return true;
    }
    let Some(host) = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return false;
    };
    domains
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Runs research questions: one HTTP client, the robots.txt rules and the page cache of this
/// process.
#[derive(Debug)]
pub struct Researcher {
    config: ResearchConfig,
    robots: Mutex<fetch::RobotsCache>,
    pages: cache::PageCache,
}

impl Researcher {
    /// A researcher for `config`. Fails with [`ResearchError::Disabled`] when research is off
    /// and [`ResearchError::NotConfigured`] when no search service is configured, so nothing
    /// can leave the machine unless the user turned it on.
    pub fn new(config: ResearchConfig) -> Result<Researcher, ResearchError> {
        if !config.enabled {
            return Err(ResearchError::Disabled);
        }
        if config.backend.is_none() {
            return Err(ResearchError::NotConfigured {
                what: config
                    .backend_problem
                    .clone()
                    .unwrap_or_else(|| "no search service".to_owned()),
            });
        }
        Ok(Researcher {
            pages: cache::PageCache::new(config.cache_dir.clone(), config.cache_ttl),
            config,
            robots: Mutex::new(fetch::RobotsCache::default()),
        })
    }

    /// A client for one question: its connections belong to the runtime that asks (a client
    /// kept across runtimes would hold connections of a runtime that is gone).
    fn client(&self) -> Result<reqwest::Client, ResearchError> {
        reqwest::Client::builder()
            .user_agent(self.config.user_agent.clone())
            .timeout(self.config.timeout)
            .connect_timeout(self.config.timeout.min(Duration::from_secs(5)))
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|e| ResearchError::Client {
                message: e.to_string(),
            })
    }

    /// The configuration.
    pub fn config(&self) -> &ResearchConfig {
        &self.config
    }

    fn backend(&self) -> Result<&SearchBackend, ResearchError> {
        self.config
            .backend
            .as_ref()
            .ok_or_else(|| ResearchError::NotConfigured {
                what: "no search service".to_owned(),
            })
    }

    /// The domains a search is restricted to: those asked for, else the configured ones.
    fn domains(&self, asked: &[String]) -> Result<Vec<String>, ResearchError> {
        let mut out = Vec::new();
        for raw in asked {
            let d = normalize_domain(raw).ok_or_else(|| ResearchError::BadDomain {
                domain: raw.clone(),
            })?;
            if !out.contains(&d) {
                out.push(d);
            }
        }
        if out.is_empty() {
            out.clone_from(&self.config.domains);
        }
        Ok(out)
    }

    /// Search only: the results of the configured service for `query` (secrets redacted before
    /// it is sent), restricted to `domains` (each normalised; empty: the configured ones).
    pub async fn search(
        &self,
        query: &str,
        domains: &[String],
    ) -> Result<(String, Vec<String>, Vec<SearchHit>), ResearchError> {
        self.search_with(&self.client()?, query, domains).await
    }

    async fn search_with(
        &self,
        http: &reqwest::Client,
        query: &str,
        domains: &[String],
    ) -> Result<(String, Vec<String>, Vec<SearchHit>), ResearchError> {
        let query = papayu_llm::redact(query.trim()).into_owned();
        if query.is_empty() {
            return Err(ResearchError::EmptyQuery);
        }
        let domains = self.domains(domains)?;
        let hits = backend::search(
            http,
            self.backend()?,
            &query,
            &domains,
            self.config.max_results,
        )
        .await?;
        let hits: Vec<SearchHit> = hits
            .into_iter()
            .filter(|h| is_web_url(&h.url) && in_domains(&h.url, &domains))
            .take(self.config.max_results)
            .collect();
        Ok((query, domains, hits))
    }

    /// The whole pipeline for `query`: search, fetch the top pages (robots.txt honoured, each
    /// capped in size and time, cached by URL), extract their text, and summarise each for the
    /// query. A page that cannot be read keeps its search snippet, with the reason.
    pub async fn research(
        &self,
        query: &str,
        domains: &[String],
    ) -> Result<Research, ResearchError> {
        let http = self.client()?;
        let (query, domains, hits) = self.search_with(&http, query, domains).await?;
        let mut sources = Vec::with_capacity(hits.len());
        for (i, hit) in hits.into_iter().enumerate() {
            let (page, fetch) = if i < self.config.fetch_pages {
                self.page(&http, &hit.url).await
            } else {
                (None, FetchState::NotFetched)
            };
            let text = page.as_ref().map(|p| p.text.as_str()).unwrap_or_default();
            let summary = summarise(text, &hit.snippet, &query, 700);
            let title = page
                .as_ref()
                .and_then(|p| p.title.clone())
                .filter(|_| hit.title.trim().is_empty())
                .unwrap_or_else(|| hit.title.clone());
            let published = hit
                .published
                .clone()
                .or_else(|| page.as_ref().and_then(|p| p.published.clone()));
            sources.push(Source {
                number: i + 1,
                title: one_line(&title),
                domain: url::Url::parse(&hit.url)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_owned))
                    .unwrap_or_default(),
                url: hit.url,
                published,
                summary,
                fetch,
            });
        }
        let research = Research {
            query,
            backend: self.backend()?.name().to_owned(),
            domains,
            sources,
            at_unix_ms: now_ms(),
        };
        tracing::info!(
            event = "ONLINE_RESEARCH",
            backend = %research.backend,
            query = %research.query,
            sources = ?research.sources.iter().map(|s| s.url.as_str()).collect::<Vec<_>>(),
        );
        Ok(research)
    }

    /// A page's extracted text: from the cache, else fetched when robots.txt allows it.
    async fn page(&self, http: &reqwest::Client, url: &str) -> (Option<Extracted>, FetchState) {
        if let Some(page) = self.pages.get(url) {
            return (Some(page), FetchState::Cached);
        }
        match fetch::allowed(http, &self.robots, url, &self.config).await {
            Ok(true) => {}
            Ok(false) => return (None, FetchState::RobotsDisallowed),
            Err(e) => return (None, FetchState::Failed(e.to_string())),
        }
        match fetch::page(http, url, self.config.max_page_bytes).await {
            Ok(body) => {
                let page = extract_html(&body.text, body.is_html);
                self.pages.put(url, &page);
                (Some(page), FetchState::Fetched)
            }
            Err(e) => (None, FetchState::Failed(e.to_string())),
        }
    }
}

/// Only `http` and `https` pages are fetched or shown.
pub(crate) fn is_web_url(raw: &str) -> bool {
    url::Url::parse(raw).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Run `future` to completion on a runtime of its own in a thread of its own: the way
/// synchronous callers (the context engine, which may itself run inside an async task) use
/// the async pipeline without blocking a runtime from within.
pub fn block_on<T: Send>(future: impl Future<Output = T> + Send) -> Option<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()
                .map(|rt| rt.block_on(future))
        })
        .join()
        .ok()
        .flatten()
    })
}
