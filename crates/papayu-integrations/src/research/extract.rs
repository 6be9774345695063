//! Readable text from a web page: the title, the publication date from the page's metadata,
//! and the text of the main content's paragraphs, headings, list items and code — navigation,
//! headers, footers, asides, forms and scripts left out (html5ever through `scraper`).

use scraper::{ElementRef, Html, Selector};
use serde::{Deserialize, Serialize};

/// Extracted text is cut to this many characters.
const MAX_TEXT_CHARS: usize = 60_000;

/// What a page says, as text.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Extracted {
    /// `og:title`, else `<title>`.
    pub title: Option<String>,
    /// `article:published_time`, `datePublished`-like metadata, or the first `<time datetime>`.
    pub published: Option<String>,
    /// The readable text, one block per line.
    pub text: String,
}

const SKIP: &[&str] = &[
    "nav", "header", "footer", "aside", "script", "style", "noscript", "form", "svg", "template",
    "iframe", "button",
];

fn selector(css: &str) -> Option<Selector> {
    Selector::parse(css).ok()
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn skipped(element: &ElementRef<'_>) -> bool {
    element.ancestors().filter_map(ElementRef::wrap).any(|a| {
        let v = a.value();
        SKIP.contains(&v.name())
            || v.attr("aria-hidden") == Some("true")
            || v.attr("hidden").is_some()
            || matches!(
                v.attr("role"),
                Some("navigation" | "banner" | "contentinfo")
            )
    })
}

fn meta(doc: &Html, css: &str) -> Option<String> {
    let sel = selector(css)?;
    doc.select(&sel)
        .filter_map(|m| m.value().attr("content"))
        .map(squash)
        .find(|s| !s.is_empty())
}

/// Extract a page: HTML when `is_html`, else plain text (whitespace squashed per line).
pub fn extract_html(body: &str, is_html: bool) -> Extracted {
    if !is_html {
        let text: Vec<String> = body.lines().map(squash).filter(|l| !l.is_empty()).collect();
        return Extracted {
            title: None,
            published: None,
            text: cap(text.join("\n")),
        };
    }
    let doc = Html::parse_document(body);
    let title = meta(&doc, r#"meta[property="og:title"]"#).or_else(|| {
        let sel = selector("title")?;
        doc.select(&sel)
            .map(|t| squash(&t.text().collect::<String>()))
            .find(|t| !t.is_empty())
    });
    let published = meta(&doc, r#"meta[property="article:published_time"]"#)
        .or_else(|| meta(&doc, r#"meta[name="date"]"#))
        .or_else(|| meta(&doc, r#"meta[itemprop="datePublished"]"#))
        .or_else(|| {
            let sel = selector("time[datetime]")?;
            doc.select(&sel)
                .filter_map(|t| t.value().attr("datetime"))
                .map(squash)
                .find(|s| !s.is_empty())
        });
    let container = ["article", "main", "[role=main]", "body"]
        .iter()
        .filter_map(|css| selector(css))
        .find_map(|sel| doc.select(&sel).next());
    let blocks = selector("h1, h2, h3, h4, p, li, pre, blockquote, td, dt, dd");
    let mut lines: Vec<String> = Vec::new();
    if let (Some(container), Some(blocks)) = (container, blocks) {
        for el in container.select(&blocks) {
            if skipped(&el) {
                continue;
            }
            // A block inside another block (a <p> in an <li>) is read with its parent.
            let nested = el
                .ancestors()
                .filter_map(ElementRef::wrap)
                .take_while(|a| a.id() != container.id())
                .any(|a| blocks.matches(&a));
            if nested {
                continue;
            }
            let text = squash(&el.text().collect::<String>());
            if !text.is_empty() {
                lines.push(text);
            }
        }
    }
    Extracted {
        title,
        published,
        text: cap(lines.join("\n")),
    }
}

fn cap(text: String) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((i, _)) => text[..i].to_owned(),
        None => text,
    }
}
