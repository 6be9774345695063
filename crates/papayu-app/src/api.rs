//! The arguments and results of the commands (`docs/UI-API.md`), as the UI sends and reads them.

use papayu_agent::report::{DayBucket, ProposalsOutcome, Report};
use papayu_agent::{ApplyPreview, ContextReport, ModeDecision, PlanOutcome};
use papayu_patch::History;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
pub use crate::store::{RecentProject, Settings, Theme};

/// Arguments of the commands that take none (`{}`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NoArgs {}

/// Which frontend serves the UI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// `papayu ui`: the browser, over HTTP on 127.0.0.1.
    Http,
    /// The desktop window (`papayu-desktop`).
    Tauri,
}

/// `app_info` result.
#[derive(Debug, Clone, Serialize)]
pub struct AppInfo {
    /// papayu's version.
    pub version: String,
    /// The transport serving this UI.
    pub transport: Transport,
    /// The configuration directory (`<config_dir>/papayu/` holds the UI's files).
    pub config_dir: String,
    /// The `PAPAYU_*` environment the app started with (never a key).
    pub env: EnvView,
    /// The project the frontend was started for (`papayu ui --project`, else the working
    /// directory's): the UI opens it first.
    pub project: Option<String>,
    /// Whether online research (the Trends tab, `web_search`) is usable, as the environment
    /// configures it.
    pub research: ResearchStatus,
    /// The language the frontend chose for people (`en`, `ru`: `PAPAYU_LANG`, else the
    /// locale); `None` leaves it to the UI (the browser's language).
    pub lang: Option<String>,
}

/// Online research as the environment configures it (Settings shows it; the Trends tab needs
/// it on).
#[derive(Debug, Clone, Serialize)]
pub struct ResearchStatus {
    /// Research is on and has a search service.
    pub on: bool,
    /// `tavily` or `searxng`, when on.
    pub backend: Option<String>,
    /// Why it is not usable (off, no search service, an invalid variable), when it is not.
    pub problem: Option<String>,
}

/// What the environment configures (SPEC §12), keys left out.
#[derive(Debug, Clone, Serialize)]
pub struct EnvView {
    /// `PAPAYU_LLM_PROVIDER`.
    pub provider: Option<String>,
    /// `PAPAYU_LLM_MODEL`.
    pub model: Option<String>,
    /// `PAPAYU_LLM_API_URL`.
    pub api_url: Option<String>,
    /// `PAPAYU_PROTOCOL_VERSION`, else `PAPAYU_PROTOCOL_DEFAULT`.
    pub protocol: Option<String>,
}

/// `list_dir` arguments.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ListDirArgs {
    /// The directory (default: the home directory).
    #[serde(default)]
    pub path: Option<String>,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, Serialize)]
pub struct DirEntry {
    /// File name.
    pub name: String,
    /// Whether it is a directory.
    pub is_dir: bool,
    /// A directory with `.git` or `.papa-yu` in it.
    pub is_project: bool,
}

/// `list_dir` result.
#[derive(Debug, Clone, Serialize)]
pub struct DirListing {
    /// The directory, absolute.
    pub path: String,
    /// Its parent (`None` at the root).
    pub parent: Option<String>,
    /// Directories first, then files, each sorted by name; hidden entries left out.
    pub entries: Vec<DirEntry>,
}

/// Arguments naming a project (a path given to `open_project` earlier).
#[derive(Debug, Clone, Deserialize)]
pub struct ProjectArgs {
    /// The project root.
    pub project: String,
}

/// `open_project` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct OpenProjectArgs {
    /// The project root.
    pub path: String,
}

/// The saved plan, as the project view shows it.
#[derive(Debug, Clone, Serialize)]
pub struct SavedPlanView {
    /// The goal.
    pub goal: String,
    /// The PLAN call's trace id.
    pub trace_id: String,
    /// Protocol version.
    pub protocol: u8,
    /// The plan's summary.
    pub summary: Option<String>,
    /// When it was saved.
    pub created_unix_ms: u64,
    /// The prompt family it was made with (its mode).
    pub llm_mode: String,
    /// Files it was based on that changed since: a stale plan is shown as such, never applied.
    pub changed_files: Vec<String>,
}

/// `open_project` result.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectView {
    /// The project root, canonical: what later commands pass as `project`.
    pub path: String,
    /// The directory's name.
    pub name: String,
    /// The saved plan ("ok" applies it).
    pub saved_plan: Option<SavedPlanView>,
    /// Undo and redo stacks.
    pub history: History,
}

/// `save_settings` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct SaveSettingsArgs {
    /// The new settings.
    pub settings: Settings,
}

/// `start_chat` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatArgs {
    /// The project root.
    pub project: String,
    /// The user's message (a goal, `plan: …`, `apply: …`, or "ok" for the saved plan).
    pub message: String,
}

/// `start_plan` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct PlanArgs {
    /// The project root.
    pub project: String,
    /// The goal.
    pub goal: String,
}

/// `start_prepare_apply` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct PrepareApplyArgs {
    /// The project root.
    pub project: String,
    /// The goal; `None` applies the saved plan.
    #[serde(default)]
    pub goal: Option<String>,
}

/// `start_preview_plan` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct PreviewPlanArgs {
    /// The project root.
    pub project: String,
    /// The plan document (a model answer, JSON text).
    pub plan: String,
}

/// `start_apply` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct ApplyArgs {
    /// The project root.
    pub project: String,
    /// The preview to apply (from a `PreviewView`).
    pub preview_id: String,
    /// Indices of the actions to apply.
    pub selection: Vec<usize>,
    /// The user confirmed the DELETE actions in the selection.
    #[serde(default)]
    pub confirmed_deletes: bool,
}

/// What every `start_*` command returns at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStarted {
    /// Poll it with `job_status`.
    pub job_id: String,
}

/// `job_status` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct JobStatusArgs {
    /// The job.
    pub job_id: String,
    /// Return the events from this index on.
    #[serde(default)]
    pub since: usize,
}

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Still working.
    Running,
    /// Finished with a result.
    Done,
    /// Finished with an error.
    Failed,
    /// Cancelled by the user.
    Cancelled,
}

/// `job_status` result.
#[derive(Debug, Clone, Serialize)]
pub struct JobStatus {
    /// The state.
    pub state: JobState,
    /// Progress events from `since` on (serialized `papayu_agent::Progress`, plus
    /// `{"stage":"check_output",…}`).
    pub events: Vec<serde_json::Value>,
    /// The `since` of the next poll.
    pub next: usize,
    /// The result, when done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// The error, when failed or cancelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

/// `cancel_job` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct CancelJobArgs {
    /// The job.
    pub job_id: String,
}

/// `cancel_job` result.
#[derive(Debug, Clone, Serialize)]
pub struct CancelResult {
    /// Whether the job was still running and is now cancelled.
    pub cancelled: bool,
}

/// `undo` / `redo` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct UndoArgs {
    /// The project root.
    pub project: String,
    /// Override the check that the files are unchanged since.
    #[serde(default)]
    pub force: bool,
}

/// `trace` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct TraceArgs {
    /// The project root.
    pub project: String,
    /// The trace id (or a unique prefix).
    pub trace_id: String,
}

/// One row of the traces list.
#[derive(Debug, Clone, Serialize)]
pub struct TraceRow {
    /// UUID v7.
    pub trace_id: String,
    /// When.
    pub created_unix_ms: u64,
    /// `PLAN` or `APPLY`.
    pub mode: String,
    /// Final protocol version.
    pub protocol: u8,
    /// The apply outcome (`applied`, `rolled_back`, …), else `ok` or `error`.
    pub outcome: String,
    /// The final error code.
    pub error_code: Option<String>,
    /// Provider kind.
    pub provider: String,
    /// Model.
    pub model: String,
    /// Whether the repair round produced the accepted answer.
    pub repaired: bool,
    /// Whether a protocol fallback happened.
    pub fallback: bool,
}

/// `report` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct ReportArgs {
    /// The project root.
    pub project: String,
    /// Only traces newer than this (`30m`, `12h`, `7d`, `2w`).
    #[serde(default)]
    pub since: Option<String>,
    /// Also ask the configured model for the weekly proposals (a model call).
    #[serde(default)]
    pub proposals: bool,
}

/// `report` result.
#[derive(Debug, Clone, Serialize)]
pub struct ReportView {
    /// The SPEC §10 metrics.
    pub report: Report,
    /// The same per UTC day, for the chart.
    pub timeline: Vec<DayBucket>,
    /// The model's weekly proposals, when asked for (`proposals: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposals: Option<ProposalsOutcome>,
}

/// A PLAN outcome with the context it was made from.
#[derive(Debug, Clone, Serialize)]
pub struct PlanView {
    /// The outcome (its `context` field: files sent, what the diet dropped, stats).
    #[serde(flatten)]
    pub outcome: PlanOutcome,
}

impl PlanView {
    /// The context summary.
    pub fn context(&self) -> &ContextReport {
        &self.outcome.context
    }
}

/// A preview the UI can apply by `preview_id`.
#[derive(Debug, Clone, Serialize)]
pub struct PreviewView {
    /// The id `start_apply` takes.
    pub preview_id: String,
    /// The preview (actions, diffs, blocked actions with their error, deletes, fallback, …).
    #[serde(flatten)]
    pub preview: ApplyPreview,
}

/// `start_chat` result.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "turn", rename_all = "snake_case")]
pub enum ChatTurnView {
    /// A plan (saved: "ok" applies it).
    Plan {
        /// How the mode was chosen.
        decision: ModeDecision,
        /// The plan.
        outcome: Box<PlanView>,
    },
    /// A preview to confirm.
    Preview {
        /// How the mode was chosen.
        decision: ModeDecision,
        /// The preview.
        preview: Box<PreviewView>,
    },
}

/// Which provider and model the model calls go to, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderView {
    /// `openai`, `openai-compatible`, `ollama`, `anthropic` or `local`.
    pub kind: String,
    /// The model (a fan-out names each).
    pub model: String,
    /// Where requests go (secrets redacted); empty for the in-process model.
    pub endpoint: String,
}

/// `provider_info` result: the provider the settings and the environment name, or why there
/// is none.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderStatus {
    /// The provider, when one could be built.
    pub provider: Option<ProviderView>,
    /// Why none could (configure one in Settings).
    pub problem: Option<ApiError>,
}

/// `test_connection` arguments.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TestConnectionArgs {
    /// Settings to test before saving them (default: the saved ones).
    #[serde(default)]
    pub settings: Option<Settings>,
}

/// `test_connection` result: `papayu doctor`'s probe of the configured provider.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionTest {
    /// The provider answered (the in-process model: its file loaded).
    pub ok: bool,
    /// The provider tested.
    pub provider: Option<ProviderView>,
    /// The probe's wall time in milliseconds (the first failing provider's, else the slowest).
    pub latency_ms: Option<f64>,
    /// `papayu doctor`'s report for each network provider (reachability, the structured-output
    /// form it accepted, latency, usage, errors).
    pub checks: Vec<papayu_llm::ProviderCheck>,
    /// What went wrong: the configuration, or the first provider that failed.
    pub error: Option<ApiError>,
}

/// `trends` arguments.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TrendsArgs {
    /// What to look for (default: UI design and icon trends).
    #[serde(default)]
    pub topic: Option<String>,
}

/// `trends` result: the topic, the query as sent, the domains searched and the cards.
pub use papayu_integrations::trends::{TrendCard, Trends};

/// `open_url` arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct OpenUrlArgs {
    /// An `http` or `https` URL.
    pub url: String,
}

/// `open_url` result.
#[derive(Debug, Clone, Serialize)]
pub struct OpenedUrl {
    /// The URL as handed to the opener (normalised).
    pub url: String,
}
