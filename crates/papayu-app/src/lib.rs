#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod api;
mod connection;
mod error;
#[cfg(feature = "http")]
pub mod http;
mod integrations;
mod jobs;
mod options;
pub mod provider;
mod store;

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};
use papayu_agent::layered::Layers;
use papayu_agent::report::{parse_since, report, request_weekly_proposals, timeline};
use papayu_agent::trace::{load_traces, show_trace};
use papayu_agent::{Agent, AgentConfig, ApplyPreview, ChatTurn, Progress};
use papayu_llm::Provider;
use papayu_patch::{ApplyReport, History};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::OwnedMutexGuard;

pub use crate::api::Transport;
use crate::api::*;
pub use crate::error::{ApiError, ViolationView, codes};
pub use crate::jobs::JOB_RETENTION;
use crate::jobs::{CancelBy, Job, Jobs, lock};
pub use crate::options::{AppOptions, KeyLookup, ProviderFactory};
use crate::provider::Unconfigured;
pub use crate::provider::{ProviderError, build_provider};
use crate::store::Store;
pub use crate::store::{LEGACY_SETTINGS_FILE, MAX_RECENT, RECENT_FILE, SETTINGS_FILE};
pub use papayu_agent::is_tool_selector;

/// Previews kept per project.
pub const MAX_PREVIEWS: usize = 20;

type AgentSlot = Option<(u64, Agent)>;

/// One open project.
struct Project {
    root: Utf8PathBuf,
    agent: Arc<tokio::sync::Mutex<AgentSlot>>,
    previews: Mutex<VecDeque<(String, Arc<ApplyPreview>)>>,
    busy: AtomicBool,
}

/// Held while a job of the project runs; dropping it (the job ended or was aborted) frees it.
struct Busy(Arc<Project>);

impl Busy {
    fn acquire(p: &Arc<Project>) -> Result<Busy, ApiError> {
        p.busy
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .map_err(|_| {
                ApiError::bad_request(
                    "a job is already running for this project; wait for it or cancel it",
                )
            })?;
        Ok(Busy(p.clone()))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::SeqCst);
    }
}

struct Inner {
    options: AppOptions,
    store: Store,
    projects: Mutex<HashMap<Utf8PathBuf, Arc<Project>>>,
    jobs: Jobs,
    /// Bumped when the settings change: agents built before are rebuilt.
    generation: AtomicU64,
}

/// The backend: cheap to clone (shared state), one per process.
#[derive(Clone)]
pub struct App {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn to_value<T: Serialize>(v: &T) -> Result<Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError::internal(format!("cannot serialize: {e}")))
}

fn agent_mut(slot: &mut AgentSlot) -> Result<&mut Agent, ApiError> {
    slot.as_mut()
        .map(|(_, a)| a)
        .ok_or_else(|| ApiError::internal("the project's agent is missing"))
}

impl App {
    /// The app for a frontend. It names the user's journal key file
    /// (`<config_dir>/papayu/journal.key`, see [`papayu_patch::use_journal_key_file`]) for the
    /// process, as the CLI does: the journals either writes are recovered and undone by the
    /// other.
    pub fn new(options: AppOptions) -> App {
        papayu_patch::use_journal_key_file(
            options
                .config_dir
                .as_std_path()
                .join("papayu")
                .join("journal.key"),
        );
        App {
            inner: Arc::new(Inner {
                store: Store::new(options.config_dir.clone()),
                options,
                projects: Mutex::new(HashMap::new()),
                jobs: Jobs::default(),
                generation: AtomicU64::new(0),
            }),
        }
    }

    fn project(&self, path: &str) -> Result<Arc<Project>, ApiError> {
        let projects = lock(&self.inner.projects);
        if let Some(p) = projects.get(Utf8Path::new(path)) {
            return Ok(p.clone());
        }
        let canonical = fs_err::canonicalize(path)
            .ok()
            .and_then(|p| Utf8PathBuf::from_path_buf(p).ok());
        canonical
            .and_then(|c| projects.get(&c).cloned())
            .ok_or_else(|| {
                ApiError::new(
                    codes::NO_PROJECT,
                    format!("{path} is not open; open it first (open_project)"),
                )
            })
    }

    /// The configuration of the project at `root` (none: no project file) as the CLI layers
    /// it — defaults < the user's config file (where the settings live; `pending` ones in
    /// their place) < the project's < the environment — with the API key from the environment,
    /// answers streamed.
    pub(crate) fn agent_config(
        &self,
        root: Option<&Utf8Path>,
        pending: Option<&Settings>,
    ) -> Result<AgentConfig, ApiError> {
        let o = &self.inner.options;
        let store = &self.inner.store;
        let mut layers = Layers::read(&store.settings_file(), root)?;
        if let Some(user) = store.unsaved_user_layer(pending)? {
            layers = layers.user(Some(user));
        }
        let mut config = layers
            .env(o.env.clone())
            .resolve()
            .agent_config(o.key_lookup.as_ref())?;
        config.stream = true;
        Ok(config)
    }

    /// The project's agent, built (or rebuilt after a settings change) on first use.
    async fn agent(&self, p: &Project) -> Result<OwnedMutexGuard<AgentSlot>, ApiError> {
        let mut slot = p.agent.clone().lock_owned().await;
        let generation = self.inner.generation.load(Ordering::SeqCst);
        if slot.as_ref().is_none_or(|(g, _)| *g != generation) {
            let o = &self.inner.options;
            let mut config = self.agent_config(Some(&p.root), None)?;
            o.lay_machine_over(&mut config);
            let provider = match (o.provider_factory)(&config) {
                Ok(p) => p,
                Err(e) => Arc::new(Unconfigured(e.message)) as Arc<dyn Provider>,
            };
            let mut agent = Agent::new(config, &p.root, &o.config_dir, provider)?;
            // The integrations the CLI installs (architecture, findings, research, agent-sync).
            papayu_integrations::install(&mut agent, &p.root, self.integrations()?);
            *slot = Some((generation, agent));
        }
        Ok(slot)
    }

    fn store_preview(p: &Project, preview: ApplyPreview) -> PreviewView {
        let id = uuid::Uuid::now_v7().to_string();
        let mut previews = lock(&p.previews);
        previews.push_back((id.clone(), Arc::new(preview.clone())));
        while previews.len() > MAX_PREVIEWS {
            previews.pop_front();
        }
        PreviewView {
            preview_id: id,
            preview,
        }
    }

    /// Run `work` as a job of project `p`.
    fn spawn<T, Fut>(
        &self,
        p: &Arc<Project>,
        cancel_by: CancelBy,
        work: impl FnOnce(Arc<Job>) -> Fut,
    ) -> Result<JobStarted, ApiError>
    where
        T: Serialize,
        Fut: Future<Output = Result<T, ApiError>> + Send + 'static,
    {
        let busy = Busy::acquire(p)?;
        let job = Arc::new(Job::new(cancel_by));
        let fut = work(job.clone());
        let j = job.clone();
        let handle = tokio::spawn(async move {
            let _busy = busy;
            let result = fut.await.and_then(|v| to_value(&v));
            j.finish(result);
        });
        job.set_abort(handle.abort_handle());
        let job_id = job.id.clone();
        self.inner.jobs.insert(job);
        Ok(JobStarted { job_id })
    }

    /// `app_info`: version, transport, configuration directory and the environment's provider.
    pub async fn app_info(&self, _: NoArgs) -> Result<AppInfo, ApiError> {
        let env = &self.inner.options.env;
        let get = |k: &str| env.get(k).filter(|v| !v.trim().is_empty()).cloned();
        Ok(AppInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            transport: self.inner.options.transport,
            config_dir: self.inner.options.config_dir.to_string(),
            env: EnvView {
                provider: get("PAPAYU_LLM_PROVIDER"),
                model: get("PAPAYU_LLM_MODEL"),
                api_url: get("PAPAYU_LLM_API_URL").map(|u| papayu_llm::redact(&u).into_owned()),
                protocol: get("PAPAYU_PROTOCOL_VERSION").or_else(|| get("PAPAYU_PROTOCOL_DEFAULT")),
            },
            project: self.inner.options.project.as_ref().map(ToString::to_string),
            research: self.research_status(),
            lang: self.inner.options.lang.clone(),
        })
    }

    /// `recent_projects`: most recent first.
    pub async fn recent_projects(&self, _: NoArgs) -> Result<Vec<RecentProject>, ApiError> {
        self.inner.store.recent()
    }

    /// `list_dir`: a directory for the folder picker.
    pub async fn list_dir(&self, args: ListDirArgs) -> Result<DirListing, ApiError> {
        let dir = match args.path.filter(|p| !p.trim().is_empty()) {
            Some(p) => Utf8PathBuf::from(p),
            None => self
                .inner
                .options
                .home_dir
                .clone()
                .unwrap_or_else(|| Utf8PathBuf::from("/")),
        };
        let dir = fs_err::canonicalize(&dir)
            .ok()
            .and_then(|p| Utf8PathBuf::from_path_buf(p).ok())
            .ok_or_else(|| ApiError::bad_request(format!("{dir}: no such directory")))?;
        let read = fs_err::read_dir(&dir).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let mut entries: Vec<DirEntry> = read
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                if name.starts_with('.') {
                    return None;
                }
                let is_dir = fs_err::metadata(e.path()).is_ok_and(|m| m.is_dir());
                let is_project = is_dir
                    && (e.path().join(".git").exists() || e.path().join(".papa-yu").exists());
                Some(DirEntry {
                    name,
                    is_dir,
                    is_project,
                })
            })
            .collect();
        entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
        entries.truncate(5_000);
        Ok(DirListing {
            parent: dir.parent().map(|p| p.to_string()),
            path: dir.to_string(),
            entries,
        })
    }

    /// `open_project`: recovery of an unfinished transaction, saved plan, history; adds the
    /// project to the recent list.
    pub async fn open_project(&self, args: OpenProjectArgs) -> Result<ProjectView, ApiError> {
        let root = fs_err::canonicalize(&args.path)
            .ok()
            .and_then(|p| Utf8PathBuf::from_path_buf(p).ok())
            .filter(|p| p.is_dir())
            .ok_or_else(|| {
                ApiError::bad_request(format!("{}: not a directory (or not UTF-8)", args.path))
            })?;
        let patch = papayu_patch::Project::open(root.as_std_path())?;
        let history = patch.history()?;
        let saved_plan = papayu_agent::load_saved_plan(&root)?.map(|s| SavedPlanView {
            changed_files: s.changed_files(&root),
            llm_mode: s.llm_mode.clone(),
            goal: s.goal,
            trace_id: s.trace_id,
            protocol: s.protocol,
            summary: s.response.summary,
            created_unix_ms: s.created_unix_ms,
        });
        lock(&self.inner.projects)
            .entry(root.clone())
            .or_insert_with(|| {
                Arc::new(Project {
                    root: root.clone(),
                    agent: Arc::new(tokio::sync::Mutex::new(None)),
                    previews: Mutex::new(VecDeque::new()),
                    busy: AtomicBool::new(false),
                })
            });
        if let Err(e) = self.inner.store.touch_recent(&root, now_ms()) {
            tracing::warn!(event = "UI_RECENT_WRITE_FAILED", error = %e);
        }
        Ok(ProjectView {
            name: root.file_name().unwrap_or(root.as_str()).to_owned(),
            path: root.to_string(),
            saved_plan,
            history,
        })
    }

    /// `get_settings`.
    pub async fn get_settings(&self, _: NoArgs) -> Result<Settings, ApiError> {
        self.inner.store.settings()
    }

    /// `save_settings`: validated (the error names the field), stored, and used by the next
    /// model call of every project.
    pub async fn save_settings(&self, args: SaveSettingsArgs) -> Result<Settings, ApiError> {
        let s = args.settings;
        s.validate()?;
        // Only the values' own errors: a missing key variable is reported when a model call
        // needs it.
        s.check_fields().map_err(|e| {
            ApiError::bad_request(format!("{e} (the setting is checked as this variable)"))
        })?;
        self.inner.store.save_settings(&s)?;
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        Ok(s)
    }

    /// `start_chat`: one chat turn with the CLI's mode rules (`Agent::handle_message`).
    pub async fn start_chat(&self, args: ChatArgs) -> Result<JobStarted, ApiError> {
        let p = self.project(&args.project)?;
        let (app, proj) = (self.clone(), p.clone());
        self.spawn(&p, CancelBy::Abort, move |job| async move {
            let mut slot = app.agent(&proj).await?;
            let progress = move |e: &Progress| job.progress(e);
            let turn = agent_mut(&mut slot)?
                .handle_message(&args.message, &progress)
                .await?;
            Ok(match turn {
                ChatTurn::Plan { decision, outcome } => ChatTurnView::Plan {
                    decision,
                    outcome: Box::new(PlanView { outcome: *outcome }),
                },
                ChatTurn::Preview { decision, preview } => ChatTurnView::Preview {
                    decision,
                    preview: Box::new(Self::store_preview(&proj, *preview)),
                },
            })
        })
    }

    /// `start_plan`: a PLAN call (saved, so "ok" applies it).
    pub async fn start_plan(&self, args: PlanArgs) -> Result<JobStarted, ApiError> {
        let p = self.project(&args.project)?;
        let (app, proj) = (self.clone(), p.clone());
        self.spawn(&p, CancelBy::Abort, move |job| async move {
            let mut slot = app.agent(&proj).await?;
            let progress = move |e: &Progress| job.progress(e);
            let outcome = agent_mut(&mut slot)?.plan(&args.goal, &progress).await?;
            Ok(PlanView { outcome })
        })
    }

    /// `start_prepare_apply`: an APPLY call (of the saved plan when `goal` is `None`),
    /// validated and previewed; nothing is written.
    pub async fn start_prepare_apply(
        &self,
        args: PrepareApplyArgs,
    ) -> Result<JobStarted, ApiError> {
        let p = self.project(&args.project)?;
        let (app, proj) = (self.clone(), p.clone());
        self.spawn(&p, CancelBy::Abort, move |job| async move {
            let mut slot = app.agent(&proj).await?;
            let progress = move |e: &Progress| job.progress(e);
            let preview = agent_mut(&mut slot)?
                .prepare_apply(args.goal.as_deref(), &progress)
                .await?;
            Ok(Self::store_preview(&proj, preview))
        })
    }

    /// `start_preview_plan`: preview a plan document without a model (like `papayu preview`).
    pub async fn start_preview_plan(&self, args: PreviewPlanArgs) -> Result<JobStarted, ApiError> {
        let p = self.project(&args.project)?;
        let (app, proj) = (self.clone(), p.clone());
        self.spawn(&p, CancelBy::Abort, move |job| async move {
            let mut slot = app.agent(&proj).await?;
            let progress = move |e: &Progress| job.progress(e);
            let preview = agent_mut(&mut slot)?.preview_document(&args.plan, &progress)?;
            Ok(Self::store_preview(&proj, preview))
        })
    }

    /// `start_apply`: apply the selected actions of a preview, all-or-nothing, with the
    /// project's checks (each one's output is a `check_output` event); cancelling rolls the
    /// transaction back (a running check is killed) and ends the job with `ERR_CANCELLED`.
    pub async fn start_apply(&self, args: ApplyArgs) -> Result<JobStarted, ApiError> {
        let p = self.project(&args.project)?;
        let preview = lock(&p.previews)
            .iter()
            .find(|(id, _)| *id == args.preview_id)
            .map(|(_, pv)| pv.clone())
            .ok_or_else(|| {
                ApiError::new(
                    codes::UNKNOWN_PREVIEW,
                    format!(
                        "no preview {:?} for this project (the newest {MAX_PREVIEWS} are kept); prepare it again",
                        args.preview_id
                    ),
                )
            })?;
        let (app, proj) = (self.clone(), p.clone());
        self.spawn(&p, CancelBy::Flag, move |job| async move {
            let mut slot = app.agent(&proj).await?;
            let cancel = job.cancel_flag.clone();
            tokio::task::spawn_blocking(move || {
                let agent = agent_mut(&mut slot)?;
                let progress = move |e: &Progress| job.progress(e);
                agent
                    .apply_with_cancel(
                        &preview,
                        Some(&args.selection),
                        args.confirmed_deletes,
                        &progress,
                        cancel,
                    )
                    .map_err(ApiError::from)
            })
            .await
            .map_err(|e| ApiError::internal(format!("the apply task failed: {e}")))?
        })
    }

    /// `job_status`: state, the events from `since`, and the result or error once ended.
    pub async fn job_status(&self, args: JobStatusArgs) -> Result<JobStatus, ApiError> {
        Ok(self.inner.jobs.get(&args.job_id)?.status(args.since))
    }

    /// Wait until a job ends; its result, or its error. (For embedders and tests: the UI polls
    /// [`job_status`](Self::job_status) instead.)
    pub async fn wait(&self, job_id: &str) -> Result<Value, ApiError> {
        let job = self.inner.jobs.get(job_id)?;
        loop {
            let s = job.status(usize::MAX);
            match s.state {
                JobState::Running => tokio::time::sleep(Duration::from_millis(10)).await,
                JobState::Done => return Ok(s.result.unwrap_or(Value::Null)),
                JobState::Failed | JobState::Cancelled => {
                    return Err(s
                        .error
                        .unwrap_or_else(|| ApiError::internal("no error recorded")));
                }
            }
        }
    }

    /// `cancel_job`: a model call is dropped; an apply is rolled back.
    pub async fn cancel_job(&self, args: CancelJobArgs) -> Result<CancelResult, ApiError> {
        Ok(CancelResult {
            cancelled: self.inner.jobs.get(&args.job_id)?.cancel(),
        })
    }

    fn undo_redo(&self, args: UndoArgs, redo: bool) -> Result<ApplyReport, ApiError> {
        let p = self.project(&args.project)?;
        let _busy = Busy::acquire(&p)?;
        let patch = papayu_patch::Project::open(p.root.as_std_path())?;
        Ok(if redo {
            patch.redo(args.force)?
        } else {
            patch.undo(args.force)?
        })
    }

    /// `undo`: revert the last transaction (refused if its files changed since, unless
    /// `force`).
    pub async fn undo(&self, args: UndoArgs) -> Result<ApplyReport, ApiError> {
        self.undo_redo(args, false)
    }

    /// `redo`: re-apply the last undone transaction.
    pub async fn redo(&self, args: UndoArgs) -> Result<ApplyReport, ApiError> {
        self.undo_redo(args, true)
    }

    /// `history`: the undo and redo stacks.
    pub async fn history(&self, args: ProjectArgs) -> Result<History, ApiError> {
        let p = self.project(&args.project)?;
        Ok(papayu_patch::Project::open(p.root.as_std_path())?.history()?)
    }

    /// `traces`: one row per trace, newest first.
    pub async fn traces(&self, args: ProjectArgs) -> Result<Vec<TraceRow>, ApiError> {
        let p = self.project(&args.project)?;
        let (traces, _) = load_traces(&p.root)?;
        Ok(traces
            .into_iter()
            .rev()
            .map(|(_, t)| TraceRow {
                outcome: t.apply.as_ref().map_or_else(
                    || {
                        if t.error_code.is_some() {
                            "error"
                        } else {
                            "ok"
                        }
                        .to_owned()
                    },
                    |a| a.outcome.clone(),
                ),
                error_code: t
                    .error_code
                    .or_else(|| t.apply.as_ref().and_then(|a| a.error_code))
                    .map(|c| c.as_str().to_owned()),
                repaired: t.repair_success == Some(true),
                fallback: t.protocol_fallback_attempted,
                trace_id: t.trace_id,
                created_unix_ms: t.created_unix_ms,
                mode: t.mode,
                protocol: t.schema_version,
                provider: t.provider,
                model: t.model,
            })
            .collect())
    }

    /// `trace`: one trace record in full.
    pub async fn trace(&self, args: TraceArgs) -> Result<Value, ApiError> {
        let p = self.project(&args.project)?;
        to_value(&show_trace(&p.root, &args.trace_id)?)
    }

    /// `report`: the SPEC §10 metrics and their per-day timeline.
    pub async fn report(&self, args: ReportArgs) -> Result<ReportView, ApiError> {
        let p = self.project(&args.project)?;
        let since = match args.since.as_deref().filter(|s| !s.trim().is_empty()) {
            Some(s) => Some(parse_since(s).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "since: {s:?} is not a duration; {}",
                    papayu_agent::report::SINCE_HINT
                ))
            })?),
            None => None,
        };
        let now = now_ms();
        let r = report(&p.root, since, now)?;
        let (traces, _) = load_traces(&p.root)?;
        let records: Vec<_> = traces.into_iter().map(|(_, t)| t).collect();
        let proposals = if args.proposals {
            let config = self.agent_config(Some(&p.root), None)?;
            let provider = (self.inner.options.provider_factory)(&config)?;
            Some(request_weekly_proposals(provider.as_ref(), &r).await?)
        } else {
            None
        };
        Ok(ReportView {
            timeline: timeline(&records, since, now),
            report: r,
            proposals,
        })
    }
}
