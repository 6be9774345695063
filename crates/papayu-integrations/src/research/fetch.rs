//! Fetching pages politely: robots.txt read once per origin (a 4xx means no rules, a 5xx or an
//! unreachable file means stay away), then the page itself, HTML or plain text only, read up to
//! a byte limit within the client's timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use texting_robots::Robot;

use crate::config::ResearchConfig;
use crate::error::ResearchError;

/// robots.txt files are read up to this many bytes (Google reads 500 KiB).
const ROBOTS_MAX_BYTES: usize = 512 * 1024;

/// What an origin's robots.txt says.
#[derive(Debug, Clone)]
enum Rules {
    /// No file (4xx): everything is allowed.
    AllowAll,
    /// The file could not be read (5xx, network): nothing is fetched from the origin.
    DisallowAll,
    /// The file's rules for papayu's agent.
    Parsed(Arc<Robot>),
}

/// robots.txt rules per origin, for the life of a [`super::Researcher`].
#[derive(Debug, Default)]
pub(super) struct RobotsCache(HashMap<String, Rules>);

fn lock(cache: &Mutex<RobotsCache>) -> std::sync::MutexGuard<'_, RobotsCache> {
    cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether robots.txt lets papayu's agent fetch `url`.
pub(super) async fn allowed(
    http: &reqwest::Client,
    cache: &Mutex<RobotsCache>,
    url: &str,
    config: &ResearchConfig,
) -> Result<bool, ResearchError> {
    let parsed = url::Url::parse(url).map_err(|_| ResearchError::BadUrl {
        url: url.to_owned(),
    })?;
    let origin = parsed.origin().ascii_serialization();
    let known = lock(cache).0.get(&origin).cloned();
    let rules = match known {
        Some(r) => r,
        None => {
            let r = read_rules(http, &origin, &config.user_agent).await;
            lock(cache).0.insert(origin, r.clone());
            r
        }
    };
    Ok(match rules {
        Rules::AllowAll => true,
        Rules::DisallowAll => false,
        Rules::Parsed(robot) => robot.allowed(url),
    })
}

async fn read_rules(http: &reqwest::Client, origin: &str, agent: &str) -> Rules {
    let robots_url = format!("{origin}/robots.txt");
    let Ok(response) = http.get(&robots_url).send().await else {
        return Rules::DisallowAll;
    };
    let status = response.status();
    if status.is_client_error() {
        return Rules::AllowAll;
    }
    if !status.is_success() {
        return Rules::DisallowAll;
    }
    let Ok(body) = read_capped(response, ROBOTS_MAX_BYTES).await else {
        return Rules::DisallowAll;
    };
    // The agent is matched by its product token (`papayu`), as robots.txt groups name it.
    let token = agent.split('/').next().unwrap_or(agent);
    match Robot::new(token, &body.0) {
        Ok(robot) => Rules::Parsed(Arc::new(robot)),
        Err(_) => Rules::AllowAll,
    }
}

/// Read a body up to `limit` bytes; the flag says whether it was cut.
async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit.saturating_sub(out.len());
        if chunk.len() > room {
            out.extend_from_slice(&chunk[..room]);
            return Ok((out, true));
        }
        out.extend_from_slice(&chunk);
    }
    Ok((out, false))
}

/// A fetched page.
pub(super) struct Body {
    pub(super) text: String,
    pub(super) is_html: bool,
}

/// Fetch `url` (HTML or plain text), reading at most `max_bytes`.
pub(super) async fn page(
    http: &reqwest::Client,
    url: &str,
    max_bytes: usize,
) -> Result<Body, ResearchError> {
    let failed = |message: String| ResearchError::Fetch {
        url: url.to_owned(),
        message,
    };
    let response = http
        .get(url)
        .header(
            reqwest::header::ACCEPT,
            "text/html,application/xhtml+xml,text/plain;q=0.8",
        )
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    if !response.status().is_success() {
        return Err(failed(format!("HTTP {}", response.status().as_u16())));
    }
    let kind = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("text/html")
        .to_ascii_lowercase();
    let is_html = kind.contains("html");
    if !is_html && !kind.starts_with("text/plain") {
        return Err(failed(format!("not a web page ({kind})")));
    }
    let (bytes, _cut) = read_capped(response, max_bytes)
        .await
        .map_err(|e| failed(e.to_string()))?;
    Ok(Body {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        is_html,
    })
}
