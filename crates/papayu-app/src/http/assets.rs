//! The web UI's files: the bundle built into this crate (`ui-dist/`, the committed build of
//! `ui/`), or the files an embedder hands the server instead.

use std::borrow::Cow;

use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::error_response;
use crate::ApiError;

/// `crates/papayu-app/ui-dist`, embedded in every build (debug ones too), so an installed
/// `papayu` serves the real UI without Node or a checkout (DECISIONS D35).
#[derive(rust_embed::RustEmbed)]
#[folder = "ui-dist/"]
struct Bundle;

/// Where the web UI's files come from.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub enum Assets {
    /// The UI built into papayu-app (`crates/papayu-app/ui-dist`).
    #[default]
    Bundled,
    /// These files instead: (path relative to the UI's root, bytes). Tests and embedders.
    Files(&'static [(&'static str, &'static [u8])]),
}

impl Assets {
    /// The file at `path` (relative, no leading `/`).
    fn get(self, path: &str) -> Option<Cow<'static, [u8]>> {
        match self {
            Assets::Bundled => Bundle::get(path).map(|f| f.data),
            Assets::Files(files) => files
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, bytes)| Cow::Borrowed(*bytes)),
        }
    }

    /// Whether these files hold a UI (an `index.html`).
    pub(super) fn has_ui(self) -> bool {
        self.get("index.html").is_some()
    }

    /// How many files there are.
    pub(super) fn len(self) -> usize {
        match self {
            Assets::Bundled => Bundle::iter().count(),
            Assets::Files(files) => files.len(),
        }
    }
}

/// The `Content-Type` for a file name; text is UTF-8 (Vite writes nothing else).
fn content_type(path: &str) -> HeaderValue {
    let mime = mime_guess::from_path(path).first_or_octet_stream();
    let text = mime.type_() == mime_guess::mime::TEXT
        || mime.subtype() == mime_guess::mime::JAVASCRIPT
        || mime.subtype() == mime_guess::mime::JSON;
    let value = if text && mime.get_param(mime_guess::mime::CHARSET).is_none() {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_string()
    };
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("application/octet-stream"))
}

/// The file for a request path: `/` and unknown extension-less paths (the UI's own routes) are
/// `index.html`.
fn find(assets: Assets, path: &str) -> Option<(String, Cow<'static, [u8]>)> {
    let want = if path.is_empty() { "index.html" } else { path };
    let file = |name: &str| assets.get(name).map(|bytes| (name.to_owned(), bytes));
    file(want).or_else(|| (!want.contains('.')).then(|| file("index.html")).flatten())
}

/// Everything that is not an API route.
pub(super) fn static_file(assets: Assets, uri: &Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if let Some(command) = path.strip_prefix("api/") {
        return error_response(&ApiError::bad_request(format!(
            "unknown command {command:?} (POST /api/<command>)"
        )));
    }
    match find(assets, path) {
        Some((p, bytes)) => {
            // Vite puts content hashes in the names under assets/: they never change.
            let cache = if p.starts_with("assets/") {
                "public, max-age=31536000, immutable"
            } else {
                "no-cache"
            };
            (
                [
                    (header::CONTENT_TYPE, content_type(&p)),
                    (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
                ],
                bytes,
            )
                .into_response()
        }
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILT: Assets = Assets::Files(&[
        ("index.html", b"<html>ui</html>"),
        ("assets/app-1234.js", b"js"),
        ("favicon.ico", b"ico"),
    ]);

    #[test]
    fn paths_find_their_files_and_routes_find_the_index() {
        let name = |path| find(BUILT, path).map(|(p, _)| p);
        assert_eq!(name("").as_deref(), Some("index.html"));
        assert_eq!(
            name("assets/app-1234.js").as_deref(),
            Some("assets/app-1234.js")
        );
        assert_eq!(name("projects/settings").as_deref(), Some("index.html"));
        assert_eq!(name("missing.js"), None);
        assert!(BUILT.has_ui());
        assert!(!Assets::Files(&[]).has_ui());
        assert_eq!(find(Assets::Files(&[]), ""), None);
    }

    #[test]
    fn content_types_come_from_the_extension_and_text_is_utf8() {
        let ct = |p| {
            content_type(p)
                .to_str()
                .map(str::to_owned)
                .unwrap_or_default()
        };
        assert_eq!(ct("assets/app-1234.js"), "text/javascript; charset=utf-8");
        assert_eq!(ct("index.html"), "text/html; charset=utf-8");
        assert_eq!(ct("assets/index-1.css"), "text/css; charset=utf-8");
        assert_eq!(ct("manifest.json"), "application/json; charset=utf-8");
        assert_eq!(ct("logo.svg"), "image/svg+xml");
        assert_eq!(ct("font.woff2"), "font/woff2");
        assert_eq!(ct("blob"), "application/octet-stream");
    }

    #[test]
    fn the_bundle_holds_the_built_ui_and_every_file_it_references() {
        let index = Assets::Bundled
            .get("index.html")
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        assert!(index.contains("<div id=\"root\">"), "{index}");
        // Every `./assets/…` the page loads is in the bundle: a stale index cannot slip in.
        let refs: Vec<&str> = index
            .split("./")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .filter(|s| s.starts_with("assets/"))
            .collect();
        assert!(refs.len() >= 2, "a script and a stylesheet: {refs:?}");
        for r in refs {
            assert!(Assets::Bundled.get(r).is_some(), "{r} is missing");
        }
        assert!(Assets::Bundled.len() >= 3);
    }
}
