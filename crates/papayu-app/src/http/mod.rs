//! The HTTP transport of docs/UI-API.md (feature `http`): the UI's files, one route per command.
//! It touches its socket on 127.0.0.1 and the one launch page it may write for the browser, and
//! answers the API only to the launch's token.

mod assets;
mod guard;
mod launch;

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, Uri};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use camino::{Utf8Path, Utf8PathBuf};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;

pub use self::assets::Assets;
use self::guard::Guard;
pub use self::launch::{LAUNCH_PAGE_LIFETIME, LaunchDirProblem, LaunchPage};
use crate::{ApiError, App};

/// Request bodies larger than this are refused (413).
pub const BODY_LIMIT: usize = 8 << 20;

/// How to serve.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The port on 127.0.0.1 (0: a free one).
    pub port: u16,
    /// The UI's files (default: the bundle built into papayu-app).
    pub assets: Assets,
    /// How long a launch page nobody used stays on disk.
    pub launch_page_lifetime: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerOptions {
    /// Serve the bundled UI on a free port.
    pub fn new() -> Self {
        Self {
            port: 0,
            assets: Assets::Bundled,
            launch_page_lifetime: LAUNCH_PAGE_LIFETIME,
        }
    }

    /// Serve these files instead of the bundled UI.
    pub fn assets(mut self, assets: Assets) -> Self {
        self.assets = assets;
        self
    }

    /// Listen on this port instead (0: a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Remove an unused launch page after this long instead of [`LAUNCH_PAGE_LIFETIME`].
    pub fn launch_page_lifetime(mut self, lifetime: Duration) -> Self {
        self.launch_page_lifetime = lifetime;
        self
    }
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The port is taken or not allowed.
    #[error("cannot listen on 127.0.0.1:{port}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The system has no randomness for the token.
    #[error("no randomness for the token: {message}")]
    Token {
        /// What the system said.
        message: String,
    },
    /// The launch page could not be written.
    #[error("cannot write the browser's launch page {path}")]
    LaunchPage {
        /// The page, or the directory meant to hold it.
        path: Utf8PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The directory meant to hold the launch page is not one only this user can enter.
    #[error("will not put the browser's launch page in {dir}: {problem}")]
    LaunchDir {
        /// The directory.
        dir: Utf8PathBuf,
        /// What is wrong with it.
        problem: LaunchDirProblem,
    },
    /// Accepting connections failed.
    #[error("the UI server failed")]
    Serve {
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// A bound server: the URL is known (the port is chosen, the token made) before it serves.
pub struct Server {
    listener: TcpListener,
    guard: Guard,
    app: App,
    assets: Assets,
    launch_page_lifetime: Duration,
}

impl Server {
    /// Listen on 127.0.0.1 and make the launch's token; [`serve`](Self::serve) answers with
    /// `app`.
    pub async fn bind(app: App, options: ServerOptions) -> Result<Server, HttpError> {
        let bind = |source| HttpError::Bind {
            port: options.port,
            source,
        };
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, options.port)))
            .await
            .map_err(bind)?;
        let port = listener.local_addr().map_err(bind)?.port();
        let guard = Guard::new(port).map_err(|e| HttpError::Token {
            message: e.to_string(),
        })?;
        Ok(Server {
            listener,
            guard,
            app,
            assets: options.assets,
            launch_page_lifetime: options.launch_page_lifetime,
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.guard.port
    }

    /// The launch's token (32 random bytes, hex).
    pub fn token(&self) -> &str {
        &self.guard.token
    }

    /// The UI's URL: `http://127.0.0.1:PORT/#token=TOKEN` (the UI reads the token from the
    /// fragment, which the browser never sends). It is for the user's own terminal or a
    /// [launch page](Self::write_launch_page), never for a command line.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/#token={}", self.port(), self.token())
    }

    /// Whether the assets hold a UI (an `index.html`; without one every page is 404 and only
    /// the API answers). The bundled UI always does.
    pub fn has_ui(&self) -> bool {
        self.assets.has_ui()
    }

    /// Write a page into `dir` that sends a browser on to [`url`](Self::url), for a browser
    /// opener to open instead of the URL: an opener's command line is visible to every local
    /// user, the page (mode 0600, a random name) only to this one. `dir` is created with mode
    /// 0700 (an existing one of this user is set to 0700; a link or another user's directory
    /// is refused). The page is removed at the first API request that carries the token, when
    /// it has waited [`ServerOptions::launch_page_lifetime`] from the start of
    /// [`serve_until`](Self::serve_until), or when the server stops; a page written before is
    /// removed now.
    pub fn write_launch_page(&self, dir: &Utf8Path) -> Result<LaunchPage, HttpError> {
        let (page, file) = launch::write(dir, &self.url())?;
        self.guard.hold_launch_page(file);
        Ok(page)
    }

    /// Serve until the process ends.
    pub async fn serve(self) -> Result<(), HttpError> {
        self.serve_until(std::future::pending()).await
    }

    /// Serve until `stop` completes (connections still open are dropped with the runtime),
    /// then remove the launch page.
    pub async fn serve_until(
        self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), HttpError> {
        let guard = self.guard.clone();
        let expiry = tokio::spawn({
            let guard = guard.clone();
            let lifetime = self.launch_page_lifetime;
            async move {
                tokio::time::sleep(lifetime).await;
                guard.retire_launch_page();
            }
        });
        let router = router(self.app, self.guard, self.assets);
        let result = tokio::select! {
            served = axum::serve(self.listener, router) => {
                served.map_err(|source| HttpError::Serve { source })
            }
            () = stop => Ok(()),
        };
        expiry.abort();
        guard.retire_launch_page();
        result
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token: a log line must not hand out the UI.
        f.debug_struct("Server")
            .field("port", &self.guard.port)
            .field("assets", &self.assets.len())
            .finish_non_exhaustive()
    }
}

fn error_response(e: &ApiError) -> Response {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(e)).into_response()
}

fn respond<R: Serialize>(result: Result<R, ApiError>) -> Response {
    match result {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => error_response(&e),
    }
}

/// `POST /api/<command>`: the JSON body (none: `{}`) is the command's args.
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

/// One route per command of docs/UI-API.md: `/api/<name>` → `App::<name>`.
macro_rules! commands {
    ($router:expr, $($name:ident),* $(,)?) => {
        $router$(.route(
            concat!("/api/", stringify!($name)),
            api(|a: App, x| async move { a.$name(x).await }),
        ))*
    };
}

fn router(app: App, guard: Guard, assets: Assets) -> Router {
    let api_routes = commands!(
        Router::new(),
        app_info,
        recent_projects,
        list_dir,
        open_project,
        get_settings,
        save_settings,
        provider_info,
        test_connection,
        start_chat,
        start_plan,
        start_prepare_apply,
        start_preview_plan,
        start_apply,
        job_status,
        cancel_job,
        undo,
        redo,
        history,
        traces,
        trace,
        report,
        trends,
        open_url,
    )
    .route_layer(middleware::from_fn_with_state(
        guard.clone(),
        guard::check_api,
    ));
    api_routes
        .fallback(move |uri: Uri| async move { assets::static_file(assets, &uri) })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(middleware::from_fn_with_state(guard, guard::check_host))
        .layer(middleware::from_fn(guard::security_headers))
        .with_state(app)
}
