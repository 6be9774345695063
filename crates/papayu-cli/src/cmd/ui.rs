//! `papayu ui [--port N] [--no-open]`: the web UI in a browser, served on 127.0.0.1 with a
//! per-launch token (docs/UI-API.md "Transports"). Every handler is a one-line adapter over a
//! `papayu_app::App` command; this module only adds the transport's security checks.

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};

use anyhow::{Context as _, Result};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use camino::Utf8PathBuf;
use papayu_app::{ApiError, App, AppOptions, Transport, codes};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::cmd::session::{config_dir, env_map};
use crate::exit::{Exit, UsageError};
use crate::global::Global;

mod assets {
    include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));
}

/// Request bodies larger than this are refused.
pub const BODY_LIMIT: usize = 8 << 20;

/// Serve the web UI in a browser.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The port on 127.0.0.1 (0: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Print the URL only; do not open a browser.
    #[arg(long)]
    pub no_open: bool,
}

/// What every API request is checked against.
#[derive(Clone)]
struct Guard {
    token: String,
    port: u16,
}

fn forbidden(message: &str) -> Response {
    error_response(&ApiError::new(codes::FORBIDDEN, message))
}

fn error_response(e: &ApiError) -> Response {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(e)).into_response()
}

/// Constant-time equality (the token must not leak through response timing).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `Host` must name this server on loopback: a DNS-rebinding page has its own host name.
fn host_ok(g: &Guard, headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    host == format!("127.0.0.1:{}", g.port) || host == format!("localhost:{}", g.port)
}

async fn check_host(State(g): State<Guard>, req: Request, next: Next) -> Response {
    if !host_ok(&g, req.headers()) {
        return forbidden(
            "wrong Host header: open the URL papayu ui printed (http://127.0.0.1:PORT/)",
        );
    }
    next.run(req).await
}

async fn check_api(State(g): State<Guard>, req: Request, next: Next) -> Response {
    let h = req.headers();
    if let Some(origin) = h.get(header::ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| {
            o == format!("http://127.0.0.1:{}", g.port)
                || o == format!("http://localhost:{}", g.port)
        });
        if !ok {
            return forbidden("requests from another origin are refused");
        }
    }
    let bearer = h
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match bearer {
        Some(t) if same(t.as_bytes(), g.token.as_bytes()) => next.run(req).await,
        _ => forbidden(
            "missing or wrong token: open the URL papayu ui printed (it carries #token=…)",
        ),
    }
}

fn respond<R: Serialize>(result: Result<R, ApiError>) -> Response {
    match result {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => error_response(&e),
    }
}

/// `POST /api/<command>`: the JSON body is the command's args.
fn api<A, R, F, Fut>(f: F) -> MethodRouter<App>
where
    A: DeserializeOwned + Send + 'static,
    R: Serialize + 'static,
    F: Fn(App, A) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ApiError>> + Send + 'static,
{
    post(move |State(app): State<App>, body: Bytes| async move {
        let body: &[u8] = if body.is_empty() { b"{}" } else { &body };
        match serde_json::from_slice::<A>(body) {
            Ok(args) => respond(f(app, args).await),
            Err(e) => error_response(&ApiError::bad_request(format!("arguments: {e}"))),
        }
    })
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

/// The embedded UI: `/` and unknown extension-less paths are `index.html`.
async fn static_file(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    if let Some(command) = path.strip_prefix("api/") {
        return error_response(&ApiError::new(
            codes::BAD_REQUEST,
            format!("unknown command {command:?} (POST /api/<command>)"),
        ));
    }
    let want = if path.is_empty() { "index.html" } else { path };
    let found = assets::ASSETS.iter().find(|(p, _)| *p == want).or_else(|| {
        (!want.contains('.'))
            .then(|| assets::ASSETS.iter().find(|(p, _)| *p == "index.html"))
            .flatten()
    });
    match found {
        Some((p, bytes)) => {
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
                *bytes,
            )
                .into_response()
        }
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

async fn security_headers(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
        ),
    );
    res
}

/// The routes: one adapter per command of docs/UI-API.md.
fn router(app: App, guard: Guard) -> Router {
    let api_routes = Router::new()
        .route(
            "/api/app_info",
            api(|a: App, x| async move { a.app_info(x).await }),
        )
        .route(
            "/api/recent_projects",
            api(|a: App, x| async move { a.recent_projects(x).await }),
        )
        .route(
            "/api/list_dir",
            api(|a: App, x| async move { a.list_dir(x).await }),
        )
        .route(
            "/api/open_project",
            api(|a: App, x| async move { a.open_project(x).await }),
        )
        .route(
            "/api/get_settings",
            api(|a: App, x| async move { a.get_settings(x).await }),
        )
        .route(
            "/api/save_settings",
            api(|a: App, x| async move { a.save_settings(x).await }),
        )
        .route(
            "/api/start_chat",
            api(|a: App, x| async move { a.start_chat(x).await }),
        )
        .route(
            "/api/start_plan",
            api(|a: App, x| async move { a.start_plan(x).await }),
        )
        .route(
            "/api/start_prepare_apply",
            api(|a: App, x| async move { a.start_prepare_apply(x).await }),
        )
        .route(
            "/api/start_preview_plan",
            api(|a: App, x| async move { a.start_preview_plan(x).await }),
        )
        .route(
            "/api/start_apply",
            api(|a: App, x| async move { a.start_apply(x).await }),
        )
        .route(
            "/api/job_status",
            api(|a: App, x| async move { a.job_status(x).await }),
        )
        .route(
            "/api/cancel_job",
            api(|a: App, x| async move { a.cancel_job(x).await }),
        )
        .route("/api/undo", api(|a: App, x| async move { a.undo(x).await }))
        .route("/api/redo", api(|a: App, x| async move { a.redo(x).await }))
        .route(
            "/api/history",
            api(|a: App, x| async move { a.history(x).await }),
        )
        .route(
            "/api/traces",
            api(|a: App, x| async move { a.traces(x).await }),
        )
        .route(
            "/api/trace",
            api(|a: App, x| async move { a.trace(x).await }),
        )
        .route(
            "/api/report",
            api(|a: App, x| async move { a.report(x).await }),
        )
        .route_layer(middleware::from_fn_with_state(guard.clone(), check_api));
    api_routes
        .fallback(static_file)
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .layer(middleware::from_fn_with_state(guard, check_host))
        .layer(middleware::from_fn(security_headers))
        .with_state(app)
}

/// 32 random bytes, hex.
fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for the token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
fn app_options(global: &Global) -> Result<AppOptions> {
    let config = Utf8PathBuf::from_path_buf(config_dir())
        .map_err(|p| UsageError(format!("config directory {} is not UTF-8", p.display())))?;
    let mut options = AppOptions::new(config, Transport::Http)
        .env(env_map())
        .key_lookup(|name| std::env::var(name).ok())
        .provider_factory({
            // The CLI's own choice (the local model included), not only the network providers.
            let global = global.clone();
            move |config| {
                crate::cmd::session::provider(config, &global).map_err(|e| {
                    if let Some(l) = e.downcast_ref::<papayu_llm::LlmError>() {
                        ApiError::new(l.code().as_str(), l.to_string())
                    } else if e.downcast_ref::<UsageError>().is_some() {
                        ApiError::new(
                            papayu_protocol::ErrorCode::LlmConfig.as_str(),
                            e.to_string(),
                        )
                    } else {
                        ApiError::internal(format!("{e:#}"))
                    }
                })
            }
        });
    if let Some(home) = std::env::var_os("HOME").and_then(|h| h.into_string().ok()) {
        options = options.home_dir(home);
    }
    Ok(options)
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        eprintln!("papayu: could not start {opener}; open the URL above yourself");
    }
}

/// Serve until interrupted.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let app = App::new(app_options(global)?);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, args.port)))
            .await
            .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
        let port = listener.local_addr()?.port();
        let guard = Guard {
            token: new_token()?,
            port,
        };
        let url = format!("http://127.0.0.1:{port}/#token={}", guard.token);
        if assets::EMBEDDED_PLACEHOLDER {
            eprintln!("papayu: this binary has no web UI built in (npm --prefix ui run build, then rebuild); the API works");
        }
        println!("papayu ui: {url}");
        println!("(Ctrl-C stops the server; anyone with this URL can drive papayu as you)");
        use std::io::Write as _;
        std::io::stdout().flush()?;
        if !args.no_open {
            open_browser(&url);
        }
        axum::serve(listener, router(app, guard))
            .await
            .context("the UI server failed")?;
        Ok(Exit::Ok)
    })
}
