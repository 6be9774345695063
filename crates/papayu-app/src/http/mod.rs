//! The HTTP transport of docs/UI-API.md (feature `http`): the UI's files, one route per command.
//! It touches only its socket on 127.0.0.1 and answers the API only to the launch's token.

mod assets;
mod guard;

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, Uri};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;

use self::guard::Guard;
use crate::{ApiError, App};

/// Request bodies larger than this are refused (413).
pub const BODY_LIMIT: usize = 8 << 20;

/// The web UI's files: (path relative to `ui/dist`, bytes), as a binary embeds them. Without
/// an `index.html` the server answers with a page that says how to build the UI.
pub type Assets = &'static [(&'static str, &'static [u8])];

/// How to serve.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The port on 127.0.0.1 (0: a free one).
    pub port: u16,
    /// The UI's files.
    pub assets: Assets,
}

impl ServerOptions {
    /// Serve `assets` on a free port.
    pub fn new(assets: Assets) -> Self {
        Self { port: 0, assets }
    }

    /// Listen on this port instead (0: a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
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

    /// The URL to open: `http://127.0.0.1:PORT/#token=TOKEN` (the UI reads the token from the
    /// fragment, which the browser never sends).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/#token={}", self.port(), self.token())
    }

    /// Whether the assets hold a built UI (else every page is the placeholder; the API works).
    pub fn has_ui(&self) -> bool {
        assets::has_ui(self.assets)
    }

    /// Serve until the process ends.
    pub async fn serve(self) -> Result<(), HttpError> {
        let router = router(self.app, self.guard, self.assets);
        axum::serve(self.listener, router)
            .await
            .map_err(|source| HttpError::Serve { source })
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
