//! `papayu ui [--port N] [--no-open]`: the web UI in a browser, on the project `--project`
//! names (else the working directory's). The server (127.0.0.1, a per-launch token, Host and
//! Origin checks, the UI bundle papayu-app embeds) is papayu-app's `http` transport; this
//! module reads the environment for it, prints the URL and opens the browser on a launch page
//! (the opener's command line, which every local user can read in `ps`, never carries the
//! token).

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_app::http::{Server, ServerOptions};
use papayu_app::{ApiError, App, AppOptions, Transport};

use crate::cmd::session::{cache_dir, config_dir, env_map};
use crate::exit::{Exit, UsageError};
use crate::global::Global;

/// Serve the web UI in a browser, opened on the project (`--project`, else the current
/// directory's).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The port on 127.0.0.1 (0: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Print the URL only; do not open a browser.
    #[arg(long)]
    pub no_open: bool,
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
        .lang(crate::i18n::lang().tag())
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
    // As the CLI's commands: a cache directory that is not UTF-8 only loses research's disk cache.
    if let Ok(cache) = Utf8PathBuf::from_path_buf(cache_dir()) {
        options = options.cache_dir(cache);
    }
    if let Some(home) = std::env::var_os("HOME").and_then(|h| h.into_string().ok()) {
        options = options.home_dir(home);
    }
    if let Some(path) = std::env::var_os("PATH").filter(|p| !p.is_empty()) {
        options = options.tool_search_path(path);
    }
    options = options.tool_selectors(crate::cmd::session::tool_selectors());
    if let Some(original) = crate::cmd::memory::original_user_prefs() {
        options = options.original_user_prefs(original);
    }
    Ok(options)
}

/// The project the UI opens first: the one every other command would use (`--project`, else
/// the working directory's — [`Global::project_root`], where project-root discovery belongs),
/// which must be a directory.
fn project_to_open(global: &Global) -> Result<Utf8PathBuf> {
    let root = global.project_root()?;
    if !root.is_dir() {
        return Err(UsageError(format!("project {}: not a directory", root.display())).into());
    }
    Utf8PathBuf::from_path_buf(root)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())).into())
}

/// Where launch pages go: `$XDG_RUNTIME_DIR/papayu` (a per-user tmpfs), else
/// `<cache>/papayu/launch`.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
fn launch_dir() -> std::path::PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => std::path::PathBuf::from(dir).join("papayu"),
        None => cache_dir().join("papayu").join("launch"),
    }
}

/// Open the browser on a launch page; without one, say so and leave the printed URL to the
/// user (the token never goes on the opener's command line).
fn open_in_browser(server: &Server) {
    let page = Utf8PathBuf::from_path_buf(launch_dir())
        .map_err(|p| anyhow::anyhow!("{} is not UTF-8", p.display()))
        .and_then(|dir| Ok(server.write_launch_page(&dir)?));
    match page {
        Ok(page) => {
            println!("{}", crate::tr!("ui-opening", page = page.url()));
            println!("{}", crate::tr!("ui-sandboxed-browser"));
            open_browser(page.url());
        }
        Err(e) => eprintln!(
            "papayu: {}",
            crate::tr!("ui-no-browser", error = format!("{e:#}"))
        ),
    }
}

/// Ctrl-C, `kill` or the terminal closing: the server stops and removes its launch page. The
/// handlers are installed now, before the browser is opened, so no such stop is missed.
fn stop_requested() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    // Without a handler a signal keeps its default action: it still stops papayu.
    let mut interrupt = signal(SignalKind::interrupt()).ok();
    let mut terminate = signal(SignalKind::terminate()).ok();
    let mut hangup = signal(SignalKind::hangup()).ok();
    async fn received(s: &mut Option<Signal>) {
        match s {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    async move {
        tokio::select! {
            () = received(&mut interrupt) => {}
            () = received(&mut terminate) => {}
            () = received(&mut hangup) => {}
        }
    }
}

/// Start the browser (`$BROWSER`, else the system's opener) on `url`: a launch page's
/// `file://` URL, never the tokened one (every local user can read the opener's command line).
fn open_browser(url: &str) {
    if let Err(e) = opener::open_browser(url) {
        eprintln!(
            "papayu: {}",
            crate::tr!("ui-no-browser", error = e.to_string())
        );
    }
}

/// Serve until interrupted.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let project = project_to_open(global)?;
    let app = App::new(app_options(global)?.project(project.clone()));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let options = ServerOptions::new().port(args.port);
        let server = Server::bind(app, options).await?;
        let url = server.url();
        println!("papayu ui: {url}");
        println!(
            "{}",
            crate::tr!("ui-project", project = project.to_string())
        );
        println!("{}", crate::tr!("ui-stop-hint"));
        let stop = stop_requested();
        if !args.no_open {
            open_in_browser(&server);
        }
        use std::io::Write as _;
        std::io::stdout().flush()?;
        server.serve_until(stop).await?;
        Ok(Exit::Ok)
    })
}
