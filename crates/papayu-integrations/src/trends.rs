//! Design and icon trends: online research restricted to a curated list of design domains
//! (`include_domains`), shaped as cards — title, source link, date, short summary — for
//! `papayu trends` and the UI's Trends tab.

use serde::Serialize;

use crate::error::ResearchError;
use crate::research::Researcher;

/// The curated design and icon domains trends research may use (`PAPAYU_TRENDS_DOMAINS`
/// replaces the list): design-system documentation, reference publications and the icon
/// sets' own sites.
pub const SAFE_DESIGN_DOMAINS: &[&str] = &[
    "m3.material.io",
    "developer.apple.com",
    "fluent2.microsoft.design",
    "nngroup.com",
    "smashingmagazine.com",
    "web.dev",
    "developer.mozilla.org",
    "css-tricks.com",
    "alistapart.com",
    "uxdesign.cc",
    "fonts.google.com",
    "lucide.dev",
    "heroicons.com",
    "phosphoricons.com",
    "tabler.io",
    "fontawesome.com",
];

/// The topic when none is given.
pub const DEFAULT_TOPIC: &str = "UI design and icon trends";

/// One trend card.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendCard {
    /// Title.
    pub title: String,
    /// The page (an `http`/`https` URL on one of the curated domains).
    pub url: String,
    /// Its domain.
    pub source: String,
    /// Publication date, when known.
    pub date: Option<String>,
    /// A short summary.
    pub summary: String,
}

/// The cards of one trends search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trends {
    /// The topic searched.
    pub topic: String,
    /// The query as sent.
    pub query: String,
    /// The domains it was restricted to.
    pub domains: Vec<String>,
    /// The cards, best first.
    pub cards: Vec<TrendCard>,
}

/// Search `topic` (default [`DEFAULT_TOPIC`]) on `domains` only and return it as cards.
pub async fn trends(
    researcher: &Researcher,
    topic: Option<&str>,
    domains: &[String],
) -> Result<Trends, ResearchError> {
    let topic = topic
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(DEFAULT_TOPIC)
        .to_owned();
    if domains.is_empty() {
        return Err(ResearchError::NotConfigured {
            what: "PAPAYU_TRENDS_DOMAINS is empty: trends search no domain at all".to_owned(),
        });
    }
    // "latest": trends are about now, and the services rank recent pages up for it.
    let query = format!("{topic} latest");
    let research = researcher.research(&query, domains).await?;
    let cards = research
        .sources
        .into_iter()
        .map(|s| TrendCard {
            title: s.title,
            source: s.domain,
            date: s.published,
            summary: short(&s.summary, 280),
            url: s.url,
        })
        .collect();
    Ok(Trends {
        topic,
        query: research.query,
        domains: research.domains,
        cards,
    })
}

fn short(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        return s.to_owned();
    }
    let keep: String = s.chars().take(max_chars - 1).collect();
    format!("{}…", keep.trim_end())
}
