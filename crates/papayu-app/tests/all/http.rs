//! The HTTP transport through a real socket: the guard, the bundled UI, the body cap and one
//! command end to end (the e2e tests of `papayu ui` drive the rest through the binary).

use papayu_app::http::{Assets, BODY_LIMIT, Server, ServerOptions};
use papayu_app::{App, AppOptions, Transport};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Running {
    port: u16,
    token: String,
    _dir: tempfile::TempDir,
}

async fn bind(dir: &tempfile::TempDir, options: ServerOptions) -> Server {
    let config = camino::Utf8Path::from_path(dir.path())
        .unwrap()
        .join("config");
    let app = App::new(AppOptions::new(config, Transport::Http));
    Server::bind(app, options).await.unwrap()
}

async fn start(assets: Assets) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let server = bind(&dir, ServerOptions::new().assets(assets)).await;
    let (port, token) = (server.port(), server.token().to_owned());
    assert_eq!(
        server.url(),
        format!("http://127.0.0.1:{port}/#token={token}")
    );
    assert!(
        !format!("{server:?}").contains(&token),
        "Debug hides the token"
    );
    tokio::spawn(server.serve());
    Running {
        port,
        token,
        _dir: dir,
    }
}

impl Running {
    /// One HTTP/1.1 request: the status, the headers (lowercase) and the body.
    async fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> (u16, String, String) {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .unwrap();
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).await.unwrap();
        // A server that answers before reading a refused body may close early.
        let _ = s.write_all(body.as_bytes()).await;
        let mut resp = Vec::new();
        let _ = s.read_to_end(&mut resp).await;
        let resp = String::from_utf8_lossy(&resp).into_owned();
        let (head, body) = resp.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, head.to_lowercase(), body.to_owned())
    }

    fn host(&self) -> (&'static str, String) {
        ("Host", format!("127.0.0.1:{}", self.port))
    }

    fn auth(&self) -> (&'static str, String) {
        ("Authorization", format!("Bearer {}", self.token))
    }
}

fn code(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    v["code"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_answers_only_the_token_on_a_loopback_host_from_its_own_origin() {
    let s = start(Assets::Files(&[])).await;
    let (status, head, body) = s
        .raw("POST", "/api/app_info", &[s.host(), s.auth()], "")
        .await;
    assert_eq!(status, 200, "{body}");
    let info: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(info["transport"], "http");
    for h in [
        "x-content-type-options: nosniff",
        "x-frame-options: deny",
        "content-security-policy: default-src 'self'",
    ] {
        assert!(head.contains(h), "{h}: {head}");
    }
    let origin = ("Origin", format!("http://localhost:{}", s.port));
    let (status, _, _) = s
        .raw("POST", "/api/app_info", &[s.host(), s.auth(), origin], "{}")
        .await;
    assert_eq!(status, 200);
    for headers in [
        vec![s.host()],
        vec![
            s.host(),
            ("Authorization", format!("Bearer {}", "0".repeat(64))),
        ],
        vec![
            s.host(),
            s.auth(),
            ("Origin", "http://evil.example".to_owned()),
        ],
        vec![("Host", format!("evil.example:{}", s.port)), s.auth()],
    ] {
        let (status, _, body) = s.raw("POST", "/api/app_info", &headers, "{}").await;
        assert_eq!(
            (status, code(&body)),
            (403, "ERR_UI_FORBIDDEN".to_owned()),
            "{headers:?}"
        );
    }
    let (status, _, body) = s
        .raw("POST", "/api/no_such_command", &[s.host(), s.auth()], "{}")
        .await;
    assert_eq!(
        (status, code(&body)),
        (400, "ERR_UI_BAD_REQUEST".to_owned())
    );
    let (status, _, body) = s
        .raw(
            "POST",
            "/api/open_project",
            &[s.host(), s.auth()],
            "{\"wrong\": 1}",
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (400, "ERR_UI_BAD_REQUEST".to_owned())
    );
    let big = format!("{{\"path\": \"{}\"}}", "x".repeat(BODY_LIMIT + 1));
    let (status, _, _) = s
        .raw("POST", "/api/list_dir", &[s.host(), s.auth()], &big)
        .await;
    assert_eq!(status, 413);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundled_ui_is_served_on_every_route_with_its_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let server = bind(&dir, ServerOptions::new()).await;
    assert!(server.has_ui(), "every build has the UI");
    let s = Running {
        port: server.port(),
        token: server.token().to_owned(),
        _dir: dir,
    };
    tokio::spawn(server.serve());
    let mut index = String::new();
    for path in ["/", "/index.html", "/projects"] {
        let (status, head, body) = s.raw("GET", path, &[s.host()], "").await;
        assert_eq!(status, 200, "{path}");
        assert!(
            head.contains("content-type: text/html; charset=utf-8"),
            "{head}"
        );
        assert!(body.contains("<div id=\"root\">"), "{body}");
        index = body;
    }
    let script = index
        .split("src=\"./")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    let (status, head, body) = s.raw("GET", &format!("/{script}"), &[s.host()], "").await;
    assert_eq!(status, 200, "{script}");
    assert!(head.contains("content-type: text/javascript"), "{head}");
    assert!(head.contains("immutable"), "{head}");
    assert!(body.len() > 1000, "the real bundle, not a stub");
    let (status, _, _) = s.raw("GET", "/assets/missing.js", &[s.host()], "").await;
    assert_eq!(status, 404);
    let (status, _, _) = s
        .raw("GET", "/", &[("Host", "evil.example".to_owned())], "")
        .await;
    assert_eq!(status, 403, "static files need a loopback Host too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_without_an_index_serve_no_pages_but_the_api() {
    let s = start(Assets::Files(&[])).await;
    for path in ["/", "/index.html", "/projects"] {
        let (status, _, _) = s.raw("GET", path, &[s.host()], "").await;
        assert_eq!(status, 404, "{path}");
    }
    let (status, _, _) = s
        .raw("POST", "/api/app_info", &[s.host(), s.auth()], "")
        .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_built_ui_is_served_with_its_types_and_cache_rules() {
    const UI: Assets = Assets::Files(&[
        ("index.html", b"<!doctype html><p>the ui</p>"),
        ("assets/app-1a2b.js", b"console.log(1)"),
    ]);
    let s = start(UI).await;
    let (status, head, body) = s.raw("GET", "/settings", &[s.host()], "").await;
    assert_eq!(
        (status, body.as_str()),
        (200, "<!doctype html><p>the ui</p>")
    );
    assert!(head.contains("cache-control: no-cache"), "{head}");
    let (status, head, body) = s.raw("GET", "/assets/app-1a2b.js", &[s.host()], "").await;
    assert_eq!((status, body.as_str()), (200, "console.log(1)"));
    assert!(head.contains("content-type: text/javascript"), "{head}");
    assert!(head.contains("immutable"), "{head}");
}

fn launch_dir(dir: &tempfile::TempDir) -> camino::Utf8PathBuf {
    camino::Utf8Path::from_path(dir.path())
        .unwrap()
        .join("run/papayu")
}

/// Wait (at most 5 s) for `path` to disappear.
async fn gone(path: &camino::Utf8Path) -> bool {
    for _ in 0..250 {
        if !path.exists() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_launch_page_goes_at_the_first_request_with_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let server = bind(&dir, ServerOptions::new()).await;
    let page = server.write_launch_page(&launch_dir(&dir)).unwrap();
    let html = fs_err::read_to_string(page.path()).unwrap();
    assert!(html.contains(&server.url()), "{html}");
    assert!(!page.url().contains(server.token()));
    let s = Running {
        port: server.port(),
        token: server.token().to_owned(),
        _dir: dir,
    };
    tokio::spawn(server.serve());
    // The static page and a refused request leave it for the browser.
    let (status, _, _) = s.raw("GET", "/", &[s.host()], "").await;
    assert_eq!(status, 200);
    let (status, _, _) = s.raw("POST", "/api/app_info", &[s.host()], "").await;
    assert_eq!(status, 403);
    assert!(page.path().exists());
    let (status, _, _) = s
        .raw("POST", "/api/app_info", &[s.host(), s.auth()], "")
        .await;
    assert_eq!(status, 200);
    assert!(
        !page.path().exists(),
        "answered before the page was removed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unused_launch_page_goes_after_its_lifetime_or_when_the_server_stops() {
    let dir = tempfile::tempdir().unwrap();
    let short = ServerOptions::new().launch_page_lifetime(std::time::Duration::from_millis(50));
    let server = bind(&dir, short).await;
    let page = server.write_launch_page(&launch_dir(&dir)).unwrap();
    tokio::spawn(server.serve());
    assert!(gone(page.path()).await, "the page outlived its lifetime");

    let server = bind(&dir, ServerOptions::new()).await;
    let first = server.write_launch_page(&launch_dir(&dir)).unwrap();
    let page = server.write_launch_page(&launch_dir(&dir)).unwrap();
    assert!(!first.path().exists(), "a second page replaces the first");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_until(async {
        let _ = stopped.await;
    }));
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(page.path().exists(), "the default lifetime is longer");
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
    assert!(!page.path().exists(), "the page outlived the server");
}
