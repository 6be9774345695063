//! [`PapayuMcp`]: the MCP server (rmcp's `ServerHandler`, written by hand so the tool list can
//! follow `--read-only` and the provider) and its stdio session.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use camino::Utf8Path;
use papayu_agent::Progress;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::transport::IntoTransport;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

use crate::error::{OpenError, ServeError};
use crate::options::McpOptions;
use crate::resources;
use crate::served::Served;
use crate::tools::{AgentSlot, ArgError, McpTool, Reply, args, parse_args};

/// What the server tells a client about itself, for the model.
const INSTRUCTIONS: &str = "papayu applies file changes to this project transactionally. \
Workflow: read_file (or search/context) to see a file and its sha256; build a plan whose edits \
of existing files carry that sha256 as base_sha256 (PATCH_FILE with a unified diff, EDIT_FILE \
with anchored replacements, REPLACE_RANGE with line numbers; CREATE_FILE for new files); \
preview_plan to see the diffs and anything blocked; apply_plan to write it all-or-nothing \
(a failure leaves the project byte-for-byte unchanged and answers a stable ERR_* code); undo \
to revert. A file changed since you read it is ERR_BASE_MISMATCH (ERR_EDIT_BASE_MISMATCH for EDIT_FILE): \
read it again.";

/// The MCP server over one project. Cheap to clone (the clones share the project).
///
/// Every tool call runs papayu's engine on a blocking thread; the calls that write (applies,
/// undo, redo, papayu's own loop) run one at a time, and each is cancelled — rolled back —
/// when its request is cancelled or the client goes away.
#[derive(Clone)]
pub struct PapayuMcp {
    inner: Arc<Inner>,
}

struct Inner {
    served: Arc<Served>,
    read_only: bool,
    agent: Option<AgentSlot>,
    /// Held by every call that writes: one transaction at a time, and the end of a session
    /// waits for the one in flight.
    writes: Mutex<()>,
}

impl std::fmt::Debug for PapayuMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PapayuMcp")
            .field("root", &self.inner.served.root)
            .field("read_only", &self.inner.read_only)
            .field("agent", &self.inner.agent.is_some())
            .finish_non_exhaustive()
    }
}

/// How a call reports progress to the client that asked for it.
type ProgressSink = Box<dyn Fn(String) + Send + Sync>;

impl PapayuMcp {
    /// Open the project of `options` (rolling back any transaction a crash left unfinished).
    ///
    /// # Errors
    ///
    /// [`OpenError`]: the root is not a directory, its policy is invalid, recovery failed or
    /// the protocol version is not 2 or 3.
    pub fn new(options: McpOptions) -> Result<PapayuMcp, OpenError> {
        let served = Served::open(&options)?;
        let agent = options
            .agent
            .map(|setup| AgentSlot::new(setup, served.root.clone()));
        Ok(PapayuMcp {
            inner: Arc::new(Inner {
                served: Arc::new(served),
                read_only: options.read_only,
                agent,
                writes: Mutex::new(()),
            }),
        })
    }

    /// The canonical project root.
    pub fn root(&self) -> &Utf8Path {
        &self.inner.served.root
    }

    /// The tools this server offers: without the writing ones when read-only, without
    /// `plan_goal`/`run_goal` when no provider is configured.
    pub fn tools(&self) -> Vec<McpTool> {
        McpTool::ALL
            .into_iter()
            .filter(|t| self.offers(*t))
            .collect()
    }

    fn offers(&self, tool: McpTool) -> bool {
        let hidden_by_read_only = tool.writes() && self.inner.read_only;
        let lacks_model = tool.needs_model() && self.inner.agent.is_none();
        !(hidden_by_read_only || lacks_model)
    }

    /// Call the tool `name` with `arguments`, as `tools/call` does (no cancellation, no
    /// progress).
    ///
    /// # Errors
    ///
    /// A JSON-RPC error (`-32602`) for an unknown tool or arguments that do not fit its
    /// schema; nothing ran. A rejection by papayu (a broken rule, a blocked action) is an
    /// `Ok` result with `isError` and its code.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.dispatch(name, arguments, Arc::new(AtomicBool::new(false)), None)
            .await
    }

    async fn dispatch(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        cancel: Arc<AtomicBool>,
        progress: Option<ProgressSink>,
    ) -> Result<CallToolResult, ErrorData> {
        let tool = self.tool(name).map_err(ArgError::into_error_data)?;
        let reply = self
            .run(tool, arguments, cancel, progress)
            .await
            .map_err(ArgError::into_error_data)?;
        tracing::info!(target: "papayu", event = "MCP_TOOL", tool = tool.name(), code = ?reply.code());
        Ok(reply.into_result())
    }

    /// The offered tool `name`.
    fn tool(&self, name: &str) -> Result<McpTool, ArgError> {
        let unknown = |why: &str| ArgError {
            tool: None,
            message: format!("unknown tool `{name}`{why}"),
        };
        match McpTool::from_name(name) {
            Some(t) if self.offers(t) => Ok(t),
            Some(t) if t.writes() && self.inner.read_only => Err(unknown(
                ": this server is read-only (papayu mcp --read-only)",
            )),
            Some(_) => Err(unknown(
                ": papayu has no model configured (set PAPAYU_LLM_API_URL and PAPAYU_LLM_MODEL, or papayu model fetch)",
            )),
            None => Err(unknown("")),
        }
    }

    async fn run(
        &self,
        tool: McpTool,
        arguments: Option<JsonObject>,
        cancel: Arc<AtomicBool>,
        progress: Option<ProgressSink>,
    ) -> Result<Reply, ArgError> {
        let redo = tool == McpTool::Redo;
        match tool {
            McpTool::ValidatePlan => self.parsed(tool, arguments, Served::validate_plan).await,
            McpTool::PreviewPlan => self.parsed(tool, arguments, Served::preview_plan).await,
            McpTool::ReadFile => self.parsed(tool, arguments, Served::read_file).await,
            McpTool::Search => self.parsed(tool, arguments, Served::search).await,
            McpTool::Context => self.parsed(tool, arguments, Served::context).await,
            McpTool::History => {
                self.parsed(tool, arguments, |s, _: args::NoArgs| Ok(s.history()))
                    .await
            }
            McpTool::ApplyPlan => {
                self.parsed(tool, arguments, move |s, a| s.apply_plan(a, cancel))
                    .await
            }
            McpTool::ApplyPatch => {
                self.parsed(tool, arguments, move |s, a| s.apply_patch(a, cancel))
                    .await
            }
            McpTool::Undo | McpTool::Redo => {
                self.parsed(tool, arguments, move |s, a| Ok(s.revert(a, redo, cancel)))
                    .await
            }
            McpTool::PlanGoal | McpTool::RunGoal => {
                self.run_agent(tool, arguments, cancel, progress).await
            }
        }
    }

    async fn run_agent(
        &self,
        tool: McpTool,
        arguments: Option<JsonObject>,
        cancel: Arc<AtomicBool>,
        progress: Option<ProgressSink>,
    ) -> Result<Reply, ArgError> {
        let Some(slot) = &self.inner.agent else {
            return Err(self
                .tool(tool.name())
                .err()
                .unwrap_or_else(|| ArgError::new(tool.name(), "papayu has no model configured")));
        };
        let report = move |p: &Progress| {
            if let Some(sink) = &progress {
                sink(progress_line(p));
            }
        };
        let _one = self.inner.writes.lock().await;
        Ok(match tool {
            McpTool::PlanGoal => slot.plan_goal(parse_args(tool, arguments)?, &report).await,
            _ => {
                slot.run_goal(parse_args(tool, arguments)?, cancel, &report)
                    .await
            }
        })
    }

    /// Read the arguments of `tool` (a malformed call fails here, without waiting), then run
    /// `job` with them on a blocking thread — after the writes before it when `tool` writes.
    async fn parsed<A: DeserializeOwned + Send + 'static>(
        &self,
        tool: McpTool,
        arguments: Option<JsonObject>,
        job: impl FnOnce(&Served, A) -> Result<Reply, ArgError> + Send + 'static,
    ) -> Result<Reply, ArgError> {
        let a = parse_args(tool, arguments)?;
        let _one = match tool.writes() {
            true => Some(self.inner.writes.lock().await),
            false => None,
        };
        self.blocking(move |s| job(s, a)).await
    }

    /// Run `job` on a blocking thread (the engine does file I/O and fsyncs).
    async fn blocking(
        &self,
        job: impl FnOnce(&Served) -> Result<Reply, ArgError> + Send + 'static,
    ) -> Result<Reply, ArgError> {
        let served = Arc::clone(&self.inner.served);
        match tokio::task::spawn_blocking(move || job(&served)).await {
            Ok(result) => result,
            Err(e) => Ok(Reply::rejected(
                papayu_protocol::ErrorCode::Io,
                format!(
                    "the tool stopped unexpectedly ({e}); a transaction it began is rolled back by the next call"
                ),
            )),
        }
    }

    /// Wait until no call that writes is in flight.
    pub async fn quiesce(&self) {
        drop(self.inner.writes.lock().await);
    }

    /// Serve one MCP session on `transport` until the client disconnects; a write still in
    /// flight then is cancelled (rolled back) or finishes before this returns.
    ///
    /// # Errors
    ///
    /// [`ServeError`] when the session cannot start or ends abnormally.
    pub async fn serve<T, E, A>(self, transport: T) -> Result<(), ServeError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let handle = self.clone();
        let running = ServiceExt::serve(self, transport)
            .await
            .map_err(|e| ServeError::Initialize(e.to_string()))?;
        let quit = running.waiting().await;
        handle.quiesce().await;
        quit.map(|_| ())
            .map_err(|e| ServeError::Session(e.to_string()))
    }

    /// [`PapayuMcp::serve`] on this process's stdin and stdout (which then carry nothing but
    /// the protocol).
    ///
    /// # Errors
    ///
    /// As [`PapayuMcp::serve`].
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve(rmcp::transport::stdio()).await
    }
}

/// One line about a progress event of papayu's loop.
fn progress_line(p: &Progress) -> String {
    serde_json::to_string(p).unwrap_or_default()
}

/// Progress notifications to `peer` for the request with `token`, numbered in order.
fn progress_sink(peer: Peer<RoleServer>, token: rmcp::model::ProgressToken) -> ProgressSink {
    let step = std::sync::atomic::AtomicU32::new(0);
    Box::new(move |message: String| {
        let n = step.fetch_add(1, Ordering::Relaxed) + 1;
        let peer = peer.clone();
        let param =
            ProgressNotificationParam::new(token.clone(), f64::from(n)).with_message(message);
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    })
}

impl ServerHandler for PapayuMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(
            Implementation::new("papayu", env!("CARGO_PKG_VERSION")).with_title("papayu"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.tools().into_iter().map(McpTool::definition).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A cancelled request, or a client gone, rolls a running transaction back.
        let cancel = Arc::new(AtomicBool::new(false));
        let watcher = {
            let cancel = Arc::clone(&cancel);
            let ct = context.ct.clone();
            tokio::spawn(async move {
                ct.cancelled().await;
                cancel.store(true, Ordering::Relaxed);
            })
        };
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| progress_sink(context.peer.clone(), token));
        let result = self
            .dispatch(&request.name, request.arguments, cancel, progress)
            .await;
        watcher.abort();
        result.map(CallToolResponse::Complete)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let served = Arc::clone(&self.inner.served);
        let uri = request.uri;
        tokio::task::spawn_blocking(move || resources::read(&served, &uri))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map(ReadResourceResponse::Complete)
    }
}
