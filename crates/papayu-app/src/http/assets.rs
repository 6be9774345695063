//! The web UI's files, as the binary embedded them; a placeholder page when it embedded none.

use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::{Assets, error_response};
use crate::ApiError;

/// `index.html` of a binary built without the web UI: how to build it.
pub(super) const PLACEHOLDER: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>papayu</title></head>\
<body style=\"font-family:sans-serif;max-width:40em;margin:4em auto\"><h1>papayu ui</h1>\
<p>This <code>papayu</code> binary was built without the web UI.</p>\
<p>Run <code>npm --prefix ui ci &amp;&amp; npm --prefix ui run build</code> in the repository, then \
rebuild papayu (<code>cargo build -p papayu-cli</code>).</p></body></html>\n";

/// Whether `assets` hold a built UI (else the placeholder is served).
pub(super) fn has_ui(assets: Assets) -> bool {
    assets.iter().any(|(p, _)| *p == "index.html")
}

fn mime(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The file for a request path: `/` and unknown extension-less paths (the UI's own routes) are
/// `index.html`.
fn find(assets: Assets, path: &str) -> Option<(&'static str, &'static [u8])> {
    let want = if path.is_empty() { "index.html" } else { path };
    let file = |name: &str| {
        assets
            .iter()
            .find(|(p, _)| *p == name)
            .copied()
            .or_else(|| (name == "index.html").then_some(("index.html", PLACEHOLDER.as_bytes())))
    };
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
                    (header::CONTENT_TYPE, HeaderValue::from_static(mime(p))),
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

    const BUILT: Assets = &[
        ("index.html", b"<html>ui</html>"),
        ("assets/app-1234.js", b"js"),
        ("favicon.ico", b"ico"),
    ];

    #[test]
    fn paths_find_their_files_and_routes_find_the_index() {
        let name = |path| find(BUILT, path).map(|(p, _)| p);
        assert_eq!(name(""), Some("index.html"));
        assert_eq!(name("assets/app-1234.js"), Some("assets/app-1234.js"));
        assert_eq!(name("projects/settings"), Some("index.html"));
        assert_eq!(name("missing.js"), None);
        assert_eq!(mime("assets/app-1234.js"), "text/javascript; charset=utf-8");
        assert_eq!(mime("index.html"), "text/html; charset=utf-8");
        assert_eq!(mime("blob"), "application/octet-stream");
        assert!(has_ui(BUILT));
    }

    #[test]
    fn without_a_built_ui_the_index_is_the_placeholder() {
        assert!(!has_ui(&[]));
        for path in ["", "index.html", "projects"] {
            assert_eq!(
                find(&[], path),
                Some(("index.html", PLACEHOLDER.as_bytes()))
            );
        }
        assert_eq!(find(&[], "assets/app.js"), None);
        assert!(PLACEHOLDER.contains("npm --prefix ui run build"));
    }
}
