//! The PyPI side of a download: the JSON API document of a release and the wheel it names,
//! and an HTTP client that only ever talks to the index and its file hosts.

use serde::{Deserialize, Serialize};

use super::fetch::{FetchError, FetchOptions};

/// The index `papayu model fetch` asks by default.
pub const DEFAULT_INDEX_URL: &str = "https://pypi.org";
/// Where pypi.org's JSON API points wheel downloads.
pub const DEFAULT_FILE_HOSTS: &[&str] = &["files.pythonhosted.org"];
/// The largest JSON API document papayu reads.
const MAX_INDEX_BYTES: u64 = 8 << 20;

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
    hosts.check(url)?;
    let response = client.get(url).send().await.map_err(network(url))?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Http {
            url: url.to_owned(),
            status: status.as_u16(),
        });
    }
    Ok(response)
}

/// The wheel of one release, from the index's JSON API.
pub(super) async fn resolve(
    client: &reqwest::Client,
    hosts: &Hosts,
    json_url: &str,
) -> Result<WheelFile, FetchError> {
    let mut response = get(client, hosts, json_url).await?;
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network(json_url))? {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > MAX_INDEX_BYTES {
            return Err(FetchError::TooLarge {
                url: json_url.to_owned(),
                limit: MAX_INDEX_BYTES,
            });
        }
    }
    let wheel = parse_release(json_url, &body)?;
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
