//! The search services: Tavily's `POST /search` and SearXNG's `GET /search?format=json`, each
//! in its documented request and response shape.

use serde_json::{Value, json};

use super::SearchHit;
use crate::config::SearchBackend;
use crate::error::ResearchError;

/// Longest part of an error body kept in an error.
const ERROR_BODY_CHARS: usize = 300;

/// Ask `backend` for `query`, restricted to `domains` (Tavily: `include_domains`; SearXNG has
/// no such parameter, so a single domain becomes a `site:` operator and the caller filters).
pub(super) async fn search(
    http: &reqwest::Client,
    backend: &SearchBackend,
    query: &str,
    domains: &[String],
    max_results: usize,
) -> Result<Vec<SearchHit>, ResearchError> {
    match backend {
        SearchBackend::Tavily { url, key } => {
            tavily(http, url, key, query, domains, max_results).await
        }
        SearchBackend::Searxng { url } => searxng(http, url, query, domains).await,
    }
}

fn unreachable(service: &'static str, url: &str, e: &reqwest::Error) -> ResearchError {
    ResearchError::Unreachable {
        service,
        url: url.to_owned(),
        message: if e.is_timeout() {
            "timed out".to_owned()
        } else {
            e.to_string()
        },
    }
}

async fn checked_json(
    service: &'static str,
    url: &str,
    response: reqwest::Response,
) -> Result<Value, ResearchError> {
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| unreachable(service, url, &e))?;
    if !status.is_success() {
        let excerpt: String = body.chars().take(ERROR_BODY_CHARS).collect();
        return Err(ResearchError::Status {
            service,
            status: status.as_u16(),
            body: excerpt,
        });
    }
    serde_json::from_str(&body).map_err(|e| ResearchError::BadResponse {
        service,
        message: e.to_string(),
    })
}

fn text(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The `results` of a search answer: both services name the title, URL and snippet `title`,
/// `url` and `content`; the date is `date_key`.
fn hits(
    service: &'static str,
    value: &Value,
    date_key: &str,
) -> Result<Vec<SearchHit>, ResearchError> {
    let results = value
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| ResearchError::BadResponse {
            service,
            message: "no `results` array".to_owned(),
        })?;
    Ok(results
        .iter()
        .map(|r| SearchHit {
            title: text(r, "title"),
            url: text(r, "url"),
            snippet: text(r, "content"),
            published: r.get(date_key).and_then(Value::as_str).map(str::to_owned),
            score: r.get("score").and_then(Value::as_f64),
        })
        .collect())
}

async fn tavily(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    query: &str,
    domains: &[String],
    max_results: usize,
) -> Result<Vec<SearchHit>, ResearchError> {
    let url = format!("{base}/search");
    let body = json!({
        "query": query,
        "topic": "general",
        "search_depth": "basic",
        "max_results": max_results,
        "include_domains": domains,
        "include_answer": false,
        "include_raw_content": false,
        "include_images": false,
    });
    let response = http
        .post(&url)
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .map_err(|e| unreachable("tavily", &url, &e))?;
    let value = checked_json("tavily", &url, response).await?;
    hits("tavily", &value, "published_date")
}

async fn searxng(
    http: &reqwest::Client,
    base: &str,
    query: &str,
    domains: &[String],
) -> Result<Vec<SearchHit>, ResearchError> {
    let url = format!("{base}/search");
    let q = match domains {
        [one] => format!("{query} site:{one}"),
        _ => query.to_owned(),
    };
    let mut request =
        url::Url::parse(&url).map_err(|_| ResearchError::BadUrl { url: url.clone() })?;
    request
        .query_pairs_mut()
        .append_pair("q", &q)
        .append_pair("format", "json")
        .append_pair("categories", "general")
        .append_pair("safesearch", "1");
    let response = http
        .get(request)
        .send()
        .await
        .map_err(|e| unreachable("searxng", &url, &e))?;
    if response.status() == reqwest::StatusCode::FORBIDDEN {
        return Err(ResearchError::Status {
            service: "searxng",
            status: 403,
            body: "the instance refuses JSON: add `json` to `search.formats` in its settings.yml"
                .to_owned(),
        });
    }
    let value = checked_json("searxng", &url, response).await?;
    hits("searxng", &value, "publishedDate")
}
