//! Snyk's REST API: `GET /orgs/{org_id}/issues?version=…&type=code` (JSON:API, paginated by
//! `links.next`), optionally for one project (`scan_item.id`, `scan_item.type=project`). Each
//! issue's title, description, effective severity, first source location and CWE become a
//! [`Finding`]. The token goes only to the configured API origin.

use papayu_protocol::agent_sync::{Finding, Severity};
use serde_json::Value;

use crate::config::SnykConfig;
use crate::error::FindingsError;

/// Issues asked for per page (the API's maximum is 100).
const PAGE_LIMIT: u32 = 100;
/// Pages read at most: 100 pages of 100 issues is far beyond any real project.
const MAX_PAGES: usize = 100;

fn not_configured(what: &str) -> FindingsError {
    FindingsError::NotConfigured {
        what: what.to_owned(),
    }
}

/// The URL of the next page: `links.next` is a path (with or without the API's `/rest`
/// prefix) or an absolute URL, which must stay on the API's origin.
fn next_url(base: &url::Url, next: &str) -> Result<url::Url, FindingsError> {
    let bad = |message: String| FindingsError::BadResponse { message };
    let url = if next.starts_with("http://") || next.starts_with("https://") {
        url::Url::parse(next).map_err(|e| bad(format!("links.next {next:?}: {e}")))?
    } else {
        let prefix = base.path().trim_end_matches('/');
        let path = if next.starts_with(&format!("{prefix}/")) {
            next.to_owned()
        } else {
            format!("{prefix}/{}", next.trim_start_matches('/'))
        };
        base.join(&path)
            .map_err(|e| bad(format!("links.next {next:?}: {e}")))?
    };
    if url.origin() != base.origin() {
        return Err(bad(format!(
            "links.next leaves the API ({}); not followed",
            url.origin().ascii_serialization()
        )));
    }
    Ok(url)
}

fn api_base(config: &SnykConfig) -> Result<url::Url, FindingsError> {
    url::Url::parse(&format!("{}/", config.api_url.trim_end_matches('/')))
        .map_err(|e| not_configured(&format!("PAPAYU_SNYK_API_URL: {e}")))
}

fn first_url(
    base: &url::Url,
    config: &SnykConfig,
    org_id: &str,
) -> Result<url::Url, FindingsError> {
    let mut url = base
        .join(&format!("orgs/{org_id}/issues"))
        .map_err(|e| not_configured(&format!("PAPAYU_SNYK_ORG_ID: {e}")))?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("version", &config.api_version)
            .append_pair("type", "code")
            .append_pair("limit", &PAGE_LIMIT.to_string());
        if let Some(project) = &config.project_id {
            q.append_pair("scan_item.id", project)
                .append_pair("scan_item.type", "project");
        }
    }
    Ok(url)
}

fn issue(v: &Value) -> Finding {
    let a = v.get("attributes").unwrap_or(&Value::Null);
    let s = |p: &str| a.pointer(p).and_then(Value::as_str).map(str::to_owned);
    let location = a.pointer("/coordinates/0/representations/0/sourceLocation");
    let cwe = a
        .get("classes")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .filter_map(|c| c.get("id").and_then(Value::as_str))
                .find(|id| id.starts_with("CWE-"))
        })
        .map(str::to_owned);
    Finding {
        title: s("/title").unwrap_or_else(|| "Snyk Code issue".to_owned()),
        details: s("/description").unwrap_or_default(),
        path: location
            .and_then(|l| l.get("file")?.as_str())
            .map(|f| f.trim_start_matches("./").to_owned()),
        line: location.and_then(|l| l.pointer("/region/start/line")?.as_u64()),
        severity: s("/effective_severity_level")
            .and_then(|l| Severity::parse(&l))
            .unwrap_or(Severity::Medium),
        rule_id: s("/key").or(cwe),
        source: "snyk-api".to_owned(),
    }
}

/// Every open Snyk Code issue of the configured organisation (and project): fails with
/// [`FindingsError::NotConfigured`] before any request when sync is off or a setting is
/// missing.
pub async fn fetch_snyk(config: &SnykConfig) -> Result<Vec<Finding>, FindingsError> {
    if !config.sync {
        return Err(not_configured("PAPAYU_SNYK_SYNC is off"));
    }
    let token = config
        .token
        .as_deref()
        .ok_or_else(|| not_configured("set PAPAYU_SNYK_TOKEN or SNYK_TOKEN"))?;
    let org_id = config
        .org_id
        .as_deref()
        .ok_or_else(|| not_configured("set PAPAYU_SNYK_ORG_ID"))?;
    let http = reqwest::Client::builder()
        .timeout(config.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(format!("papayu/{}", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| FindingsError::Unreachable {
            url: config.api_url.clone(),
            message: e.to_string(),
        })?;
    let base = api_base(config)?;
    let mut url = first_url(&base, config, org_id)?;
    let mut out = Vec::new();
    for _ in 0..MAX_PAGES {
        let response = http
            .get(url.clone())
            .header(reqwest::header::AUTHORIZATION, format!("token {token}"))
            .header(reqwest::header::ACCEPT, "application/vnd.api+json")
            .send()
            .await
            .map_err(|e| FindingsError::Unreachable {
                url: url.to_string(),
                message: if e.is_timeout() {
                    "timed out".to_owned()
                } else {
                    e.to_string()
                },
            })?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| FindingsError::Unreachable {
                url: url.to_string(),
                message: e.to_string(),
            })?;
        let value: Option<Value> = serde_json::from_str(&body).ok();
        if !status.is_success() {
            let detail = value
                .as_ref()
                .and_then(|v| v.pointer("/errors/0/detail")?.as_str())
                .map(str::to_owned)
                .unwrap_or_else(|| body.chars().take(300).collect());
            return Err(FindingsError::Status {
                status: status.as_u16(),
                detail,
            });
        }
        let value = value.ok_or_else(|| FindingsError::BadResponse {
            message: "not JSON".to_owned(),
        })?;
        let data = value.get("data").and_then(Value::as_array).ok_or_else(|| {
            FindingsError::BadResponse {
                message: "no `data` array".to_owned(),
            }
        })?;
        out.extend(
            data.iter()
                .filter(|v| {
                    v.pointer("/attributes/status").and_then(Value::as_str) != Some("resolved")
                        && v.pointer("/attributes/ignored").and_then(Value::as_bool) != Some(true)
                })
                .map(issue),
        );
        match value.pointer("/links/next").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => url = next_url(&base, next)?,
            _ => return Ok(out),
        }
    }
    Err(FindingsError::TooManyPages { pages: MAX_PAGES })
}
