//! The plan→apply loop (SPEC §9): [`Agent`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};
use papayu_context::ContextEngine;
use papayu_llm::{
    ChatRequest, Completion, LlmError, Message, Provider, check_answer, repair_request,
};
use papayu_memory::{Memory, PatchReport};
use papayu_patch::{ApplyOptions, ApplyReport, Checks, History, Preview};
use papayu_protocol::{
    ContextRequest, ErrorCode, PlanStep, ProtocolVersion, Response, Violation, parse_response,
    schema_hash, sha256_hex,
};
use papayu_validate::{Context, Mode, Policy, RelPath, ValidatedPlan, validate};
use serde::Serialize;
use tracing::Instrument as _;

use crate::config::AgentConfig;
use crate::error::AgentError;
use crate::mode::{ModeDecision, mode_name, resolve_mode};
use crate::prompt;
use crate::state::{SavedPlan, load_saved_plan, store_saved_plan};
use crate::trace::{
    ApplyRecord, AttemptRecord, CacheStatsRecord, ContextStatsRecord, FixtureFile, TraceRecord,
    write_trace,
};

/// At most this many extra rounds answer a model's `context_requests` (SPEC §9).
pub const MAX_CONTEXT_ROUNDS: u32 = 2;

/// Codes that make an APPLY under v3 fall back to v2.
pub const FALLBACK_V3_CODES: &[ErrorCode] = &[
    ErrorCode::EditApplyFailed,
    ErrorCode::NonUtf8File,
    ErrorCode::EditBaseMismatch,
    ErrorCode::EditAnchorNotFound,
    ErrorCode::EditBeforeNotFound,
    ErrorCode::EditAmbiguous,
];

/// Codes that make an APPLY under v2 fall back to v1 (when `fallback_to_v1` is on).
pub const FALLBACK_V2_CODES: &[ErrorCode] = &[
    ErrorCode::PatchApplyFailed,
    ErrorCode::NonUtf8File,
    ErrorCode::V2UpdateExistingForbidden,
];

/// What the agent is doing, for a progress indicator.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Progress {
    /// Reading files named in the goal (stack traces, failing tests).
    GatheringContext,
    /// A request to the model is on its way.
    Requesting {
        /// `initial`, `context`, `repair` or `fallback`.
        attempt: String,
        /// Protocol version of the request.
        protocol: u8,
    },
    /// Characters of a streamed answer received so far.
    Receiving {
        /// Characters.
        chars: usize,
    },
    /// Fulfilling the model's context requests.
    ContextRound {
        /// 1 or 2.
        round: u32,
        /// Number of requests.
        requests: usize,
    },
    /// The answer was rejected; one repair round follows.
    Repair {
        /// The codes of the violations.
        codes: Vec<ErrorCode>,
    },
    /// Protocol fallback.
    Fallback {
        /// From version.
        from: u8,
        /// To version.
        to: u8,
        /// The code that caused it.
        reason: ErrorCode,
    },
    /// Computing the preview.
    Previewing,
    /// Writing files.
    Applying {
        /// Steps done.
        done: usize,
        /// Steps in total.
        total: usize,
        /// The current path.
        item: String,
    },
    /// A check command finished (the transaction commits only if every check passes).
    Checked {
        /// Checks done.
        done: usize,
        /// Checks in total.
        total: usize,
        /// The command line.
        command: String,
        /// Whether it exited 0 within the timeout.
        success: bool,
        /// `exited with 0`, `timed out after 120 s and was killed`, …
        status: String,
        /// The tail of its combined output.
        output: String,
    },
}

/// The progress callback: called from the task that runs the agent.
pub type ProgressFn<'a> = &'a (dyn Fn(&Progress) + Send + Sync);

/// A progress callback that ignores everything.
pub fn no_progress(_: &Progress) {}

/// Result of a PLAN call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanOutcome {
    /// UUID v7 of the call.
    pub trace_id: String,
    /// Protocol version.
    pub protocol: u8,
    /// Diagnosis, steps and the check command.
    pub summary: Option<String>,
    /// Plan steps (fix-plan).
    pub plan: Vec<PlanStep>,
    /// Questions for the user (at most two).
    pub questions: Vec<String>,
    /// Risks named by the model.
    pub risks: Vec<String>,
    /// How to verify.
    pub verification: Vec<String>,
    /// Commands the model suggests.
    pub commands_to_run: Vec<String>,
    /// Context requests still open when the round cap was reached.
    pub unanswered_context_requests: Vec<ContextRequest>,
    /// Extra context rounds used.
    pub context_rounds: u32,
    /// Whether the repair round produced the accepted answer.
    pub repaired: bool,
    /// What happened to the answer's `memory_patch`.
    pub memory: Option<PatchReport>,
    /// The trace file, when tracing is on.
    pub trace_file: Option<Utf8PathBuf>,
    /// The accepted answer.
    pub response: Response,
    /// What context was sent and what the diet left out.
    pub context: ContextReport,
}

/// The context of a call as a frontend shows it: the files sent, and the blocks the diet
/// dropped or cut (SPEC §6.3).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ContextReport {
    /// Files whose content was sent, sorted.
    pub sent_files: Vec<String>,
    /// Blocks that were not sent whole.
    pub dropped: Vec<DroppedBlock>,
    /// `context_stats`, summed over the rounds.
    pub stats: ContextStatsRecord,
}

/// A context block the diet dropped or truncated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedBlock {
    /// The file, for FILE blocks.
    pub path: Option<String>,
    /// The block's cache key (`read_file{path=…}`, `search{query=…}`, …).
    pub key: String,
    /// `file`, `search`, `logs` or `env`.
    pub kind: String,
    /// `dropped` (not sent) or `truncated: N chars removed`.
    pub reason: String,
}

impl ContextReport {
    fn record(&mut self, assembled: &papayu_context::AssembledContext) {
        use papayu_context::DietState;
        for b in &assembled.blocks {
            let reason = match b.diet {
                DietState::Kept => continue,
                DietState::Dropped => {
                    "dropped by the context diet (over the file count or character budget)"
                        .to_owned()
                }
                DietState::Truncated { removed_chars } => {
                    format!("truncated: {removed_chars} chars removed")
                }
            };
            let kind = serde_json::to_value(b.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            self.dropped.push(DroppedBlock {
                path: b.file.as_ref().map(|f| f.path.clone()),
                key: b.key.clone(),
                kind,
                reason,
            });
        }
    }
}

/// One action of a previewed plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionView {
    /// Index in the answer's action list (what `selection` refers to).
    pub index: usize,
    /// `CREATE_FILE`, …
    pub kind: String,
    /// Normalised path.
    pub path: String,
}

/// A protocol fallback that happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FallbackInfo {
    /// From version.
    pub from: u8,
    /// To version.
    pub to: u8,
    /// The code that caused it.
    pub reason: ErrorCode,
    /// `schema`, `validate` or `preview`.
    pub stage: String,
}

/// A validated, previewed APPLY answer: nothing has been written yet. Show it, ask, then call
/// [`Agent::apply`].
#[derive(Debug, Clone, Serialize)]
pub struct ApplyPreview {
    /// UUID v7 of the APPLY call.
    pub trace_id: String,
    /// Protocol version of the accepted answer.
    pub protocol: u8,
    /// The goal.
    pub goal: String,
    /// The model's summary.
    pub summary: Option<String>,
    /// The answer says nothing needs to change (`NO_CHANGES:`).
    pub no_changes: bool,
    /// The actions, in the model's order.
    pub actions: Vec<ActionView>,
    /// Diffs and counts, computed by the apply engine without writing.
    pub preview: Preview,
    /// Paths DELETE actions would remove: apply needs `confirmed_deletes` for them.
    pub deletes: Vec<String>,
    /// The protocol fallback, if one happened.
    pub fallback: Option<FallbackInfo>,
    /// Whether the repair round produced the accepted answer.
    pub repaired: bool,
    /// What happened to the answer's `memory_patch`.
    pub memory: Option<PatchReport>,
    /// Commands the model suggests.
    pub commands_to_run: Vec<String>,
    /// How to verify.
    pub verification: Vec<String>,
    /// The trace file, when tracing is on.
    pub trace_file: Option<Utf8PathBuf>,
    #[serde(skip)]
    plan: ValidatedPlan,
    #[serde(skip)]
    trace: TraceRecord,
    #[serde(skip)]
    from_saved_plan: bool,
}

impl ApplyPreview {
    /// The validated plan the preview was computed for.
    pub fn plan(&self) -> &ValidatedPlan {
        &self.plan
    }

    /// Whether this preview applies the saved plan (which stays saved if it is not applied).
    pub fn from_saved_plan(&self) -> bool {
        self.from_saved_plan
    }
}

/// Result of [`Agent::apply`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApplyOutcome {
    /// UUID v7 of the APPLY call.
    pub trace_id: String,
    /// Whether files were written.
    pub applied: bool,
    /// The answer said nothing needs to change.
    pub no_changes: bool,
    /// Indices of the actions applied.
    pub selected: Vec<usize>,
    /// The engine's report (transaction id, diffs, checks).
    pub report: Option<ApplyReport>,
    /// The trace file, when tracing is on.
    pub trace_file: Option<Utf8PathBuf>,
}

/// One chat turn ([`Agent::handle_message`]).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "turn", rename_all = "snake_case")]
pub enum ChatTurn {
    /// A PLAN answer; it is saved, so "ok" applies it.
    Plan {
        /// How the mode was chosen.
        decision: ModeDecision,
        /// The plan.
        outcome: Box<PlanOutcome>,
    },
    /// An APPLY answer, previewed: confirm, then call [`Agent::apply`].
    Preview {
        /// How the mode was chosen.
        decision: ModeDecision,
        /// The preview.
        preview: Box<ApplyPreview>,
    },
}

/// The plan→apply loop for one project. Frontends (CLI, desktop) create one per project and
/// call [`plan`](Self::plan), [`prepare_apply`](Self::prepare_apply), [`apply`](Self::apply),
/// [`handle_message`](Self::handle_message), [`undo`](Self::undo) …
pub struct Agent {
    config: AgentConfig,
    root: Utf8PathBuf,
    provider: Arc<dyn Provider>,
    memory: Memory,
    engine: ContextEngine,
    policy: Policy,
    patch: papayu_patch::Project,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("root", &self.root)
            .field("provider", &self.provider.info())
            .finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The actions of a validated plan as a preview lists them.
fn action_views(plan: &ValidatedPlan) -> Vec<ActionView> {
    plan.actions()
        .iter()
        .map(|a| ActionView {
            index: a.index,
            kind: a.kind().as_str().to_owned(),
            path: a.path.as_str().to_owned(),
        })
        .collect()
}

/// The paths a plan's DELETE actions remove (applying them needs confirmation).
fn delete_paths(plan: &ValidatedPlan) -> Vec<String> {
    plan.actions()
        .iter()
        .filter(|a| a.kind().is_delete())
        .map(|a| a.path.as_str().to_owned())
        .collect()
}

/// A new trace id (UUID v7).
pub fn new_trace_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

fn stage_of(violations: &[Violation]) -> &'static str {
    if violations.iter().any(|v| {
        matches!(
            v.code,
            ErrorCode::JsonParse
                | ErrorCode::SchemaValidation
                | ErrorCode::UnknownKind
                | ErrorCode::FieldNotAllowed
        )
    }) {
        "schema"
    } else {
        "validate"
    }
}

/// The version an APPLY falls back to for `code`, if any.
pub fn fallback_target(
    version: ProtocolVersion,
    code: ErrorCode,
    fallback_to_v1: bool,
) -> Option<ProtocolVersion> {
    match version {
        ProtocolVersion::V3 if FALLBACK_V3_CODES.contains(&code) => Some(ProtocolVersion::V2),
        ProtocolVersion::V2 if fallback_to_v1 && FALLBACK_V2_CODES.contains(&code) => {
            Some(ProtocolVersion::V1)
        }
        _ => None,
    }
}

/// One model conversation (a PLAN or APPLY call) in progress.
struct Call {
    mode: Mode,
    version: ProtocolVersion,
    base_user: String,
    context_text: String,
    messages: Vec<Message>,
    sent: BTreeMap<String, String>,
    repair_used: bool,
    fallback: Option<FallbackInfo>,
    rounds: u32,
    trace: TraceRecord,
    next_kind: &'static str,
    context: ContextReport,
}

/// What a conversation ended with.
pub(crate) struct Accepted {
    pub(crate) response: Response,
    pub(crate) plan: Option<(ValidatedPlan, Preview)>,
    pub(crate) unanswered: Vec<ContextRequest>,
}

impl Agent {
    /// Open the project at `project_root` (recovering any unfinished transaction first), load
    /// the preferences from `config_dir` and the project, and the project policy
    /// (`.papa-yu/policy.json`, when present).
    pub fn new(
        config: AgentConfig,
        project_root: impl AsRef<Utf8Path>,
        config_dir: impl AsRef<Utf8Path>,
        provider: Arc<dyn Provider>,
    ) -> Result<Agent, AgentError> {
        let root = project_root.as_ref().to_owned();
        let patch = papayu_patch::Project::open(root.as_std_path())?;
        let policy_file = root.join(".papa-yu/policy.json");
        let policy = match fs_err::read_to_string(&policy_file) {
            Ok(text) => Policy::from_json(&text).map_err(|e| AgentError::State {
                path: policy_file.clone(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Policy::default(),
            Err(e) => {
                return Err(AgentError::Io {
                    path: policy_file,
                    source: e,
                });
            }
        };
        let memory = Memory::load(config_dir, &root)?;
        let mut ctx = config.context_config();
        ctx.policy = policy.clone();
        ctx.log_files = memory.project().log_files().clone();
        let engine = ContextEngine::new(&root, ctx)?;
        Ok(Agent {
            config,
            root,
            provider,
            memory,
            engine,
            policy,
            patch,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The project root.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }

    /// The loaded preferences.
    pub fn memory(&self) -> &Memory {
        &self.memory
    }

    /// The saved plan, if any (`.papa-yu/state.json`).
    pub fn saved_plan(&self) -> Result<Option<SavedPlan>, AgentError> {
        load_saved_plan(&self.root)
    }

    /// Forget the saved plan.
    pub fn discard_saved_plan(&self) -> Result<(), AgentError> {
        store_saved_plan(&self.root, None)
    }

    /// Decide the mode of a chat message (SPEC §9) against the saved plan and memory.
    pub fn resolve(&self, message: &str) -> Result<ModeDecision, AgentError> {
        let saved = self.saved_plan()?.is_some();
        Ok(resolve_mode(
            message,
            saved,
            self.memory.user().output_format(),
        ))
    }

    /// One chat turn: resolve the mode, then plan, or prepare the APPLY (of the saved plan
    /// for a trigger such as "ok"/"да"). The frontend shows a [`ChatTurn::Preview`], asks for
    /// confirmation, and calls [`apply`](Self::apply).
    pub async fn handle_message(
        &mut self,
        message: &str,
        progress: ProgressFn<'_>,
    ) -> Result<ChatTurn, AgentError> {
        let decision = self.resolve(message)?;
        if decision.apply_saved_plan {
            let preview = self.prepare_apply(None, progress).await?;
            return Ok(ChatTurn::Preview {
                decision,
                preview: Box::new(preview),
            });
        }
        match decision.mode {
            Mode::Plan => {
                let outcome = self.plan(&decision.text, progress).await?;
                Ok(ChatTurn::Plan {
                    decision,
                    outcome: Box::new(outcome),
                })
            }
            Mode::Apply => {
                let preview = self.prepare_apply(Some(&decision.text), progress).await?;
                Ok(ChatTurn::Preview {
                    decision,
                    preview: Box::new(preview),
                })
            }
        }
    }

    fn new_call(&self, mode: Mode, goal: &str, version: ProtocolVersion) -> Call {
        let info = self.provider.info();
        let trace = TraceRecord {
            trace_id: new_trace_id(),
            created_unix_ms: now_ms(),
            event: "LLM_PLAN_ERR".into(),
            mode: mode_name(mode).into(),
            llm_mode: self.config.llm_mode.as_str().into(),
            goal: goal.to_owned(),
            schema_version: version.number(),
            schema_hash: schema_hash(version),
            provider: info.kind.as_str().into(),
            model: info.model,
            input_chars: 0,
            token_budget: 0,
            strict_json: self.config.strict_json,
            validated_json: None,
            context_stats: ContextStatsRecord::default(),
            cache_stats: CacheStatsRecord::default(),
            context_rounds: 0,
            protocol_default: version.number(),
            protocol_attempts: vec![version.number()],
            protocol_fallback_attempted: false,
            protocol_fallback_reason: None,
            protocol_fallback_stage: None,
            protocol_repair_attempt: 0,
            repair_success: None,
            repair_injected_paths: Vec::new(),
            attempts: Vec::new(),
            sent_files: BTreeMap::new(),
            fixture: Vec::new(),
            error_code: None,
            error: None,
            memory_patch: None,
            apply: None,
            config_snapshot: self.config.config_snapshot(),
        };
        Call {
            mode,
            version,
            base_user: String::new(),
            context_text: String::new(),
            messages: Vec::new(),
            sent: BTreeMap::new(),
            repair_used: false,
            fallback: None,
            rounds: 0,
            trace,
            next_kind: "initial",
            context: ContextReport::default(),
        }
    }

    fn system(&self, mode: Mode, version: ProtocolVersion) -> Message {
        Message::system(prompt::system_prompt(
            self.config.llm_mode,
            mode,
            version,
            &self.memory.block(),
        ))
    }

    /// Ask for a plan (PLAN mode: no actions). Auto-gathers context from the goal, answers up
    /// to [`MAX_CONTEXT_ROUNDS`] rounds of context requests, runs at most one repair, applies
    /// the `memory_patch` (when the user asked to remember), saves the plan in
    /// `.papa-yu/state.json`, and writes the trace when tracing is on.
    pub async fn plan(
        &mut self,
        goal: &str,
        progress: ProgressFn<'_>,
    ) -> Result<PlanOutcome, AgentError> {
        self.engine.new_cycle();
        let version = self.config.effective_protocol();
        let mut call = self.new_call(Mode::Plan, goal, version);
        progress(&Progress::GatheringContext);
        let assembled = self.engine.assemble(&[], Some(goal));
        call.trace.context_stats.add(&assembled.stats);
        call.context.record(&assembled);
        call.context_text = assembled.text.clone();
        call.sent.extend(
            assembled
                .sent_files
                .iter()
                .map(|(p, h)| (p.to_owned(), h.to_owned())),
        );
        call.base_user = prompt::user_message(goal, &assembled.text);
        call.messages = vec![
            self.system(Mode::Plan, version),
            Message::user(call.base_user.clone()),
        ];
        let span = tracing::info_span!("papayu_call", trace_id = %call.trace.trace_id);
        let result = self.converse(&mut call, progress).instrument(span).await;
        let accepted = match result {
            Ok(a) => a,
            Err(e) => return Err(self.finish_err(call, e)),
        };
        let memory = match self.apply_memory(&accepted.response, goal) {
            Ok(m) => m,
            Err(e) => return Err(self.finish_err(call, e)),
        };
        call.trace.memory_patch = memory.as_ref().and_then(|m| serde_json::to_value(m).ok());
        let saved = SavedPlan {
            trace_id: call.trace.trace_id.clone(),
            created_unix_ms: call.trace.created_unix_ms,
            goal: goal.to_owned(),
            protocol: call.version.number(),
            llm_mode: self.config.llm_mode.as_str().into(),
            response: accepted.response.clone(),
            context: call.context_text.clone(),
            sent_files: call.sent.clone(),
        };
        if let Err(e) = store_saved_plan(&self.root, Some(&saved)) {
            return Err(self.finish_err(call, e));
        }
        let repaired = call.trace.repair_success == Some(true);
        let trace_file = self.finish_ok(&mut call, &accepted.response)?;
        let r = accepted.response;
        Ok(PlanOutcome {
            trace_id: call.trace.trace_id,
            protocol: call.version.number(),
            summary: r.summary.clone(),
            plan: r.plan.clone(),
            questions: r.questions.iter().take(2).cloned().collect(),
            risks: r.risks.clone(),
            verification: r.verification.clone(),
            commands_to_run: r.commands_to_run.clone(),
            unanswered_context_requests: accepted.unanswered,
            context_rounds: call.rounds,
            repaired,
            memory,
            trace_file,
            response: r,
            context: ContextReport {
                sent_files: call.sent.keys().cloned().collect(),
                dropped: call.context.dropped,
                stats: call.trace.context_stats,
            },
        })
    }

    /// Ask for the final actions (APPLY mode), validate and preview them; nothing is written.
    ///
    /// With `goal == None` the saved plan is applied (its goal, plan and context are sent
    /// again; `ERR_NO_SAVED_PLAN` when there is none). With a goal, the APPLY request is made
    /// directly (a "create …" message). A failing answer gets one repair round; the codes of
    /// SPEC §9 make it fall back once to the previous protocol version.
    pub async fn prepare_apply(
        &mut self,
        goal: Option<&str>,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyPreview, AgentError> {
        let saved = match goal {
            None => Some(self.saved_plan()?.ok_or(AgentError::NoSavedPlan)?),
            Some(_) => None,
        };
        let version = self.config.effective_protocol();
        let goal_text = saved
            .as_ref()
            .map_or_else(|| goal.unwrap_or_default().to_owned(), |s| s.goal.clone());
        let mut call = self.new_call(Mode::Apply, &goal_text, version);
        match &saved {
            Some(s) => {
                call.sent = s.sent_files.clone();
                call.context_text = s.context.clone();
                call.base_user = prompt::apply_saved_message(&s.goal, &s.plan_text(), &s.context);
            }
            None => {
                self.engine.new_cycle();
                progress(&Progress::GatheringContext);
                let assembled = self.engine.assemble(&[], Some(&goal_text));
                call.trace.context_stats.add(&assembled.stats);
                call.context.record(&assembled);
                call.context_text = assembled.text.clone();
                call.sent.extend(
                    assembled
                        .sent_files
                        .iter()
                        .map(|(p, h)| (p.to_owned(), h.to_owned())),
                );
                call.base_user = prompt::user_message(&goal_text, &assembled.text);
            }
        }
        call.messages = vec![
            self.system(Mode::Apply, version),
            Message::user(call.base_user.clone()),
        ];
        let span = tracing::info_span!("papayu_call", trace_id = %call.trace.trace_id);
        let result = self.converse(&mut call, progress).instrument(span).await;
        self.capture_fixture(&mut call, result.as_ref().ok());
        let accepted = match result {
            Ok(a) => a,
            Err(e) => return Err(self.finish_err(call, e)),
        };
        let memory = match self.apply_memory(&accepted.response, &goal_text) {
            Ok(m) => m,
            Err(e) => return Err(self.finish_err(call, e)),
        };
        call.trace.memory_patch = memory.as_ref().and_then(|m| serde_json::to_value(m).ok());
        let Some((plan, preview)) = accepted.plan else {
            let e = AgentError::Rejected {
                stage: "validate".into(),
                violations: vec![Violation::new(ErrorCode::ApplyEmptyActions, "no plan")],
            };
            return Err(self.finish_err(call, e));
        };
        let no_changes = plan.actions().is_empty();
        call.trace.apply = Some(ApplyRecord {
            outcome: if no_changes { "no_changes" } else { "pending" }.into(),
            tx_id: None,
            error_code: None,
            selected: Vec::new(),
            files_after: BTreeMap::new(),
        });
        let repaired = call.trace.repair_success == Some(true);
        let trace_file = self.finish_ok(&mut call, &accepted.response)?;
        let r = &accepted.response;
        Ok(ApplyPreview {
            trace_id: call.trace.trace_id.clone(),
            protocol: call.version.number(),
            goal: goal_text,
            summary: r.summary.clone(),
            no_changes,
            actions: action_views(&plan),
            deletes: delete_paths(&plan),
            preview,
            fallback: call.fallback.clone(),
            repaired,
            memory,
            commands_to_run: r.commands_to_run.clone(),
            verification: r.verification.clone(),
            trace_file,
            plan,
            trace: call.trace,
            from_saved_plan: saved.is_some(),
        })
    }

    /// Apply a previewed plan: the actions whose indices are in `selection` (`None`: all).
    /// DELETE actions in the selection need `confirmed_deletes` (otherwise
    /// [`AgentError::DeleteNotConfirmed`], nothing written). Runs the project's checks
    /// (`project.default_test_command`, else detected), all-or-nothing via papayu-patch. The
    /// saved plan is cleared once applied.
    pub fn apply(
        &self,
        preview: &ApplyPreview,
        selection: Option<&[usize]>,
        confirmed_deletes: bool,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyOutcome, AgentError> {
        self.apply_inner(preview, selection, confirmed_deletes, progress, None)
    }

    /// [`apply`](Self::apply), cancellable from another thread: setting `cancel` stops the
    /// transaction at its next step (a running check is killed) and rolls it back; the error's
    /// code is `ERR_CANCELLED` and nothing is written. Too late once it has committed.
    pub fn apply_with_cancel(
        &self,
        preview: &ApplyPreview,
        selection: Option<&[usize]>,
        confirmed_deletes: bool,
        progress: ProgressFn<'_>,
        cancel: Arc<AtomicBool>,
    ) -> Result<ApplyOutcome, AgentError> {
        self.apply_inner(
            preview,
            selection,
            confirmed_deletes,
            progress,
            Some(cancel),
        )
    }

    fn apply_inner(
        &self,
        preview: &ApplyPreview,
        selection: Option<&[usize]>,
        confirmed_deletes: bool,
        progress: ProgressFn<'_>,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Result<ApplyOutcome, AgentError> {
        let mut trace = preview.trace.clone();
        let plan = match selection {
            None => preview.plan.clone(),
            Some(sel) => preview
                .plan
                .select(sel)
                .map_err(|e| AgentError::InvalidSelection {
                    index: e.index,
                    len: e.len,
                })?,
        };
        let selected: Vec<usize> = plan.actions().iter().map(|a| a.index).collect();
        let record = |trace: &mut TraceRecord,
                      outcome: &str,
                      tx: Option<String>,
                      code: Option<ErrorCode>,
                      after| {
            trace.apply = Some(ApplyRecord {
                outcome: outcome.into(),
                tx_id: tx,
                error_code: code,
                selected: selected.clone(),
                files_after: after,
            });
        };
        if plan.actions().is_empty() {
            record(
                &mut trace,
                if preview.no_changes {
                    "no_changes"
                } else {
                    "declined"
                },
                None,
                None,
                BTreeMap::new(),
            );
            let trace_file = self.write_trace_if_on(&trace)?;
            return Ok(ApplyOutcome {
                trace_id: trace.trace_id,
                applied: false,
                no_changes: preview.no_changes,
                selected,
                report: None,
                trace_file,
            });
        }
        let deletes = delete_paths(&plan);
        if !deletes.is_empty() && !confirmed_deletes {
            record(
                &mut trace,
                "declined",
                None,
                Some(ErrorCode::Cancelled),
                BTreeMap::new(),
            );
            self.write_trace_if_on(&trace)?;
            return Err(AgentError::DeleteNotConfirmed { paths: deletes });
        }
        let checks = match self.memory.project().default_test_command() {
            Some(cmd) => Checks::Commands(vec![cmd.to_owned()]),
            None => Checks::Detect,
        };
        let mut options = ApplyOptions::default()
            .checks(checks)
            .normalize_eol_lf(self.config.normalize_eol_lf)
            .on_progress(|p: &papayu_patch::Progress<'_>| match p.check {
                Some(c) => progress(&Progress::Checked {
                    done: p.done,
                    total: p.total,
                    command: c.command.clone(),
                    success: c.success,
                    status: c.status.to_string(),
                    output: c.output.clone(),
                }),
                None => progress(&Progress::Applying {
                    done: p.done,
                    total: p.total,
                    item: p.item.to_owned(),
                }),
            });
        if let Some(flag) = cancel {
            options = options.cancel_flag(flag);
        }
        let result = self.patch.transaction(&plan).options(options).apply();
        let after: BTreeMap<String, Option<String>> = plan
            .actions()
            .iter()
            .map(|a| {
                let p = self.root.join(a.path.as_str());
                let sha = fs_err::read(&p).ok().map(|b| sha256_hex(&b));
                (a.path.as_str().to_owned(), sha)
            })
            .collect();
        match result {
            Ok(report) => {
                record(
                    &mut trace,
                    "applied",
                    Some(report.tx_id.clone()),
                    None,
                    after,
                );
                let trace_file = self.write_trace_if_on(&trace)?;
                if preview.from_saved_plan {
                    store_saved_plan(&self.root, None)?;
                }
                Ok(ApplyOutcome {
                    trace_id: trace.trace_id,
                    applied: true,
                    no_changes: false,
                    selected,
                    report: Some(report),
                    trace_file,
                })
            }
            Err(e) => {
                record(&mut trace, "rolled_back", None, Some(e.code()), after);
                trace.error_code = Some(e.code());
                trace.error = Some(e.to_string());
                self.write_trace_if_on(&trace)?;
                Err(AgentError::Apply(e))
            }
        }
    }

    /// Validate and preview a plan document (a model answer as text, e.g. a file the user
    /// opened) without asking the model, like `papayu preview`: blocked actions stay in the
    /// preview with their error, so a frontend can show them and apply the others with
    /// [`apply`](Self::apply). A rejected document is [`AgentError::Rejected`].
    pub fn preview_document(
        &self,
        text: &str,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyPreview, AgentError> {
        let version = self.config.effective_protocol();
        let call = self.new_call(Mode::Apply, "(plan document)", version);
        let root = self.root.clone();
        let exists = |p: &RelPath| fs_err::symlink_metadata(root.join(p.as_str())).is_ok();
        let ctx = Context::new(version)
            .with_mode(Mode::Apply)
            .with_exists(&exists);
        let report = papayu_validate::check_text(text, &ctx, &self.policy);
        let plan = report.into_plan().map_err(|rejected| {
            let violations = rejected.into_violations();
            AgentError::Rejected {
                stage: stage_of(&violations).into(),
                violations,
            }
        })?;
        let response = parse_response(text, version).map_err(|e| AgentError::Rejected {
            stage: "schema".into(),
            violations: vec![Violation::from(&e)],
        })?;
        progress(&Progress::Previewing);
        let options = ApplyOptions::default().normalize_eol_lf(self.config.normalize_eol_lf);
        let preview = self.patch.transaction(&plan).options(options).preview()?;
        let mut trace = call.trace;
        trace.event = "LLM_PLAN_OK".into();
        Ok(ApplyPreview {
            trace_id: trace.trace_id.clone(),
            protocol: version.number(),
            goal: trace.goal.clone(),
            summary: response.summary.clone(),
            no_changes: plan.actions().is_empty(),
            actions: action_views(&plan),
            deletes: delete_paths(&plan),
            preview,
            fallback: None,
            repaired: false,
            memory: None,
            commands_to_run: response.commands_to_run.clone(),
            verification: response.verification.clone(),
            trace_file: None,
            plan,
            trace,
            from_saved_plan: false,
        })
    }

    /// Undo the last transaction (`force` overrides the conflict check).
    pub fn undo(&self, force: bool) -> Result<ApplyReport, AgentError> {
        Ok(self.patch.undo(force)?)
    }

    /// Redo the last undone transaction.
    pub fn redo(&self, force: bool) -> Result<ApplyReport, AgentError> {
        Ok(self.patch.redo(force)?)
    }

    /// The undo and redo stacks.
    pub fn history(&self) -> Result<History, AgentError> {
        Ok(self.patch.history()?)
    }

    fn apply_memory(
        &mut self,
        response: &Response,
        user_message: &str,
    ) -> Result<Option<PatchReport>, AgentError> {
        match &response.memory_patch {
            Some(patch) if !patch.is_empty() => {
                let report =
                    self.memory
                        .apply_patch(patch, user_message, self.config.memory_autopatch)?;
                if report.is_empty() {
                    return Ok(None);
                }
                tracing::info!(
                    event = "MEMORY_PATCH",
                    applied = report.applied.len(),
                    rejected = report.rejected.len(),
                );
                Ok(Some(report))
            }
            _ => Ok(None),
        }
    }

    fn write_trace_if_on(&self, trace: &TraceRecord) -> Result<Option<Utf8PathBuf>, AgentError> {
        if self.config.trace {
            write_trace(&self.root, trace).map(Some)
        } else {
            Ok(None)
        }
    }

    fn finish_common(&self, call: &mut Call) {
        call.trace.schema_version = call.version.number();
        call.trace.schema_hash = schema_hash(call.version);
        call.trace.context_rounds = call.rounds;
        call.trace.cache_stats = self.engine.cache_stats().into();
        call.trace.sent_files = call.sent.clone();
        call.trace.protocol_repair_attempt = u8::from(call.repair_used);
        if call.repair_used && call.trace.repair_success.is_none() {
            call.trace.repair_success = Some(false);
        }
        if let Some(f) = &call.fallback {
            call.trace.protocol_fallback_attempted = true;
            call.trace.protocol_fallback_reason = Some(f.reason);
            call.trace.protocol_fallback_stage = Some(f.stage.clone());
        }
    }

    fn finish_ok(
        &self,
        call: &mut Call,
        response: &Response,
    ) -> Result<Option<Utf8PathBuf>, AgentError> {
        self.finish_common(call);
        call.trace.event = "LLM_PLAN_OK".into();
        call.trace.validated_json = serde_json::to_value(response).ok();
        self.write_trace_if_on(&call.trace)
    }

    fn finish_err(&self, mut call: Call, error: AgentError) -> AgentError {
        self.finish_common(&mut call);
        call.trace.event = "LLM_PLAN_ERR".into();
        call.trace.error_code = Some(error.code());
        call.trace.error = Some(error.to_string());
        if call.mode == Mode::Apply {
            call.trace.apply = Some(ApplyRecord {
                outcome: "rejected".into(),
                tx_id: None,
                error_code: Some(error.code()),
                selected: Vec::new(),
                files_after: BTreeMap::new(),
            });
        }
        match self.write_trace_if_on(&call.trace) {
            Ok(_) => error,
            Err(trace_error) => {
                tracing::warn!(event = "TRACE_WRITE_FAILED", error = %trace_error);
                error
            }
        }
    }

    /// With `PAPAYU_TRACE_RAW`, keep the pre-apply bytes of every file the call involved, so
    /// the trace can become a replayable golden trace.
    fn capture_fixture(&self, call: &mut Call, accepted: Option<&Accepted>) {
        if !(self.config.trace && self.config.trace_raw) {
            return;
        }
        let mut paths: BTreeSet<String> = call.sent.keys().cloned().collect();
        for a in &call.trace.attempts {
            for v in &a.violations {
                if let Some(p) = &v.path {
                    paths.insert(p.clone());
                }
            }
            if let Some(raw) = &a.raw
                && let Ok(doc) = papayu_protocol::parse_document(raw, ProtocolVersion::V3)
            {
                paths.extend(
                    doc.response
                        .effective_actions()
                        .iter()
                        .map(|x| x.path.clone()),
                );
            }
        }
        if let Some(a) = accepted {
            paths.extend(
                a.response
                    .effective_actions()
                    .iter()
                    .map(|x| x.path.clone()),
            );
        }
        for p in paths {
            let Ok(rel) = RelPath::parse(&p) else {
                continue;
            };
            let abs = self.root.join(rel.as_str());
            let is_file =
                fs_err::symlink_metadata(&abs).is_ok_and(|m| m.is_file() && m.len() <= 1 << 20);
            if is_file && let Ok(bytes) = fs_err::read(&abs) {
                call.trace
                    .fixture
                    .push(FixtureFile::from_bytes(rel.as_str(), bytes));
            }
        }
    }

    async fn complete(
        &self,
        request: ChatRequest,
        progress: ProgressFn<'_>,
    ) -> Result<Completion, LlmError> {
        if !self.config.stream {
            return self.provider.complete(&request).await;
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<usize>();
        let request = request.streaming(Some(Arc::new(move |n| {
            let _ = tx.send(n);
        })));
        let fut = self.provider.complete(&request);
        tokio::pin!(fut);
        loop {
            tokio::select! {
                r = &mut fut => return r,
                Some(n) = rx.recv() => progress(&Progress::Receiving { chars: n }),
            }
        }
    }

    /// Rounds, repair and fallback until an answer is accepted or the error stands.
    async fn converse(
        &mut self,
        call: &mut Call,
        progress: ProgressFn<'_>,
    ) -> Result<Accepted, AgentError> {
        loop {
            let request = ChatRequest::new(call.messages.clone())
                .protocol(call.version)
                .strict(self.config.strict_json);
            let input_chars = request.input_chars();
            call.trace.input_chars = input_chars;
            let max_tokens = self.config.max_tokens_for(self.provider.info().kind);
            call.trace.token_budget = if input_chars > papayu_llm::LARGE_INPUT_CHARS {
                max_tokens.min(papayu_llm::LARGE_INPUT_MAX_TOKENS)
            } else {
                max_tokens
            };
            progress(&Progress::Requesting {
                attempt: call.next_kind.into(),
                protocol: call.version.number(),
            });
            let completion = self.complete(request.clone(), progress).await?;
            let text = completion.text;
            let mut attempt = AttemptRecord {
                kind: call.next_kind.into(),
                protocol: call.version.number(),
                input_chars,
                output_chars: text.chars().count(),
                violations: Vec::new(),
                stage: None,
                raw: self.config.trace_raw.then(|| text.clone()),
            };

            // A round of context requests, while rounds remain.
            if let Ok(r) = parse_response(&text, call.version)
                && !r.context_requests.is_empty()
                && r.effective_actions().is_empty()
                && call.rounds < MAX_CONTEXT_ROUNDS
            {
                call.rounds += 1;
                progress(&Progress::ContextRound {
                    round: call.rounds,
                    requests: r.context_requests.len(),
                });
                let assembled = self.engine.assemble(&r.context_requests, None);
                call.trace.context_stats.add(&assembled.stats);
                call.context.record(&assembled);
                call.sent.extend(
                    assembled
                        .sent_files
                        .iter()
                        .map(|(p, h)| (p.to_owned(), h.to_owned())),
                );
                let msg = prompt::context_round_message(
                    call.rounds,
                    &assembled.text,
                    call.rounds == MAX_CONTEXT_ROUNDS,
                );
                call.context_text.push_str("\n\n");
                call.context_text.push_str(&assembled.text);
                call.messages.push(Message::assistant(text));
                call.messages.push(Message::user(msg));
                call.trace.attempts.push(attempt);
                call.next_kind = "context";
                continue;
            }

            let (violations, stage) = match self.check(call, &text, progress) {
                Ok(accepted) => {
                    if call.repair_used && call.next_kind == "repair" {
                        call.trace.repair_success = Some(true);
                    }
                    call.trace.attempts.push(attempt);
                    return Ok(accepted);
                }
                Err((violations, stage)) => (violations, stage),
            };
            for v in &violations {
                tracing::info!(
                    event = "VALIDATION_FAILED",
                    code = v.code.as_str(),
                    reason = %papayu_llm::redact(&v.to_string()),
                    stage,
                    protocol = call.version.number(),
                );
            }
            attempt.violations = violations.clone();
            attempt.stage = Some(stage.into());
            call.trace.attempts.push(attempt);

            let fallback = (call.mode == Mode::Apply && call.fallback.is_none())
                .then(|| {
                    violations.iter().find_map(|v| {
                        fallback_target(call.version, v.code, self.config.fallback_to_v1)
                            .map(|to| (v.code, to))
                    })
                })
                .flatten();
            if let Some((reason, to)) = fallback
                && (reason == ErrorCode::NonUtf8File || call.repair_used)
            {
                let from = call.version;
                tracing::info!(
                    event = "PROTOCOL_FALLBACK",
                    from = %format!("v{}", from.number()),
                    to = %format!("v{}", to.number()),
                    reason = reason.as_str(),
                    stage,
                    "PROTOCOL_FALLBACK from=v{} to=v{} reason={} stage={}",
                    from.number(),
                    to.number(),
                    reason,
                    stage
                );
                progress(&Progress::Fallback {
                    from: from.number(),
                    to: to.number(),
                    reason,
                });
                if call.repair_used && call.trace.repair_success.is_none() {
                    call.trace.repair_success = Some(false);
                }
                call.fallback = Some(FallbackInfo {
                    from: from.number(),
                    to: to.number(),
                    reason,
                    stage: stage.into(),
                });
                call.version = to;
                call.trace.protocol_attempts.push(to.number());
                let note = format!(
                    "\nNOTE: your answer under protocol v{} failed with {}; answer with protocol v{} \
as described in the system prompt.\n",
                    from.number(),
                    reason,
                    to.number()
                );
                let user = if call.context_text.trim().is_empty()
                    || call.base_user.contains(call.context_text.trim())
                {
                    format!("{}{note}", call.base_user)
                } else {
                    format!(
                        "{}\nCONTEXT:\n{}\n{note}",
                        call.base_user,
                        call.context_text.trim()
                    )
                };
                call.messages = vec![self.system(call.mode, to), Message::user(user)];
                call.next_kind = "fallback";
                continue;
            }

            if !call.repair_used {
                call.repair_used = true;
                let mut injected = Vec::new();
                for v in &violations {
                    if matches!(
                        v.code,
                        ErrorCode::BaseMismatch | ErrorCode::EditBaseMismatch
                    ) && let Some(path) = &v.path
                        && let Ok(rel) = RelPath::parse(path)
                        && let Some(sha) = call.sent.get(rel.as_str())
                        && !injected
                            .iter()
                            .any(|(p, _): &(String, String)| p == rel.as_str())
                    {
                        injected.push((rel.as_str().to_owned(), sha.clone()));
                    }
                }
                tracing::info!(
                    event = "LLM_RESPONSE_REPAIR",
                    violations = violations.len(),
                    injected_base_sha256 = injected.len(),
                    protocol = call.version.number(),
                );
                progress(&Progress::Repair {
                    codes: violations.iter().map(|v| v.code).collect(),
                });
                let mut repair = repair_request(&request, &text, &violations);
                if !injected.is_empty()
                    && let Some(last) = repair.messages.last_mut()
                {
                    last.content.push('\n');
                    last.content.push_str(&prompt::base_injection(&injected));
                }
                call.trace
                    .repair_injected_paths
                    .extend(injected.into_iter().map(|(p, _)| p));
                call.messages = repair.messages;
                call.next_kind = "repair";
                continue;
            }
            return Err(AgentError::Rejected {
                stage: stage.into(),
                violations,
            });
        }
    }

    /// Parse, validate and (APPLY) preview one answer.
    fn check(
        &self,
        call: &Call,
        text: &str,
        progress: ProgressFn<'_>,
    ) -> Result<Accepted, (Vec<Violation>, &'static str)> {
        let sent: BTreeSet<RelPath> = call
            .sent
            .keys()
            .filter_map(|p| RelPath::parse(p).ok())
            .collect();
        let checked = check_full(
            &Checker {
                patch: &self.patch,
                root: &self.root,
                policy: &self.policy,
                version: call.version,
                mode: call.mode,
                sent: &sent,
                normalize_eol_lf: self.config.normalize_eol_lf,
            },
            text,
            progress,
        )?;
        Ok(checked)
    }
}

/// Everything [`check_full`] needs to judge one answer.
pub(crate) struct Checker<'a> {
    pub(crate) patch: &'a papayu_patch::Project,
    pub(crate) root: &'a Utf8Path,
    pub(crate) policy: &'a Policy,
    pub(crate) version: ProtocolVersion,
    pub(crate) mode: Mode,
    pub(crate) sent: &'a BTreeSet<RelPath>,
    pub(crate) normalize_eol_lf: bool,
}

/// Parse and validate one answer (papayu-llm's checker with papayu-validate's rules, the
/// existence oracle and the sent files), and in APPLY preview it with papayu-patch. Shared by
/// the agent and the golden replay so both judge answers the same way.
pub(crate) fn check_full(
    c: &Checker<'_>,
    text: &str,
    progress: ProgressFn<'_>,
) -> Result<Accepted, (Vec<Violation>, &'static str)> {
    let root = c.root;
    let exists = |p: &RelPath| fs_err::symlink_metadata(root.join(p.as_str())).is_ok();
    let ctx = Context::new(c.version)
        .with_mode(c.mode)
        .with_sent_files(c.sent)
        .with_exists(&exists);
    let (version, mode) = (c.version, c.mode);
    let (owned_sent, owned_root, owned_policy) =
        (c.sent.clone(), c.root.to_owned(), c.policy.clone());
    let validator = move |r: &Response| {
        let exists = |p: &RelPath| fs_err::symlink_metadata(owned_root.join(p.as_str())).is_ok();
        let ctx = Context::new(version)
            .with_mode(mode)
            .with_sent_files(&owned_sent)
            .with_exists(&exists);
        validate(r, &ctx, &owned_policy).violations().to_vec()
    };
    let response = match check_answer(text, c.version, Some(&validator)) {
        Ok(r) => r,
        Err(violations) => {
            let stage = stage_of(&violations);
            return Err((violations, stage));
        }
    };
    let unanswered = if response.effective_actions().is_empty() {
        response.context_requests.clone()
    } else {
        Vec::new()
    };
    if c.mode == Mode::Plan {
        return Ok(Accepted {
            response,
            plan: None,
            unanswered,
        });
    }
    let plan = match validate(&response, &ctx, c.policy).into_plan() {
        Ok(p) => p,
        Err(rejected) => return Err((rejected.into_violations(), "validate")),
    };
    progress(&Progress::Previewing);
    let options = ApplyOptions::default().normalize_eol_lf(c.normalize_eol_lf);
    let preview = match c.patch.transaction(&plan).options(options).preview() {
        Ok(p) => p,
        Err(e) => {
            let v = Violation::new(e.code(), e.to_string());
            return Err((vec![v], "preview"));
        }
    };
    if !preview.is_ok() {
        let violations = preview
            .files
            .iter()
            .filter_map(|f| {
                f.error.as_ref().map(|e| {
                    Violation::new(e.code, e.message.clone()).at_action(f.index, f.path.clone())
                })
            })
            .collect();
        return Err((violations, "preview"));
    }
    Ok(Accepted {
        response,
        plan: Some((plan, preview)),
        unanswered,
    })
}
