//! The plan→apply loop (SPEC §9): [`Agent`] and its calls, one file per job.
//! It touches the project via papayu-patch and -context, `.papa-yu/`, the model via papayu-llm.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_context::ContextEngine;
use papayu_llm::Provider;
use papayu_memory::Memory;
use papayu_patch::{ApplyReport, History};
use papayu_validate::{Mode, Policy};

use crate::config::AgentConfig;
use crate::error::AgentError;
use crate::mode::{ModeDecision, resolve_mode};
use crate::state::{SavedPlan, load_saved_plan, store_saved_plan};

mod addition;
mod apply;
mod asked;
mod check;
mod converse;
mod feedback;
mod finish;
mod fragment;
mod hint;
mod merge;
mod moves;
mod mutants;
mod observe;
mod parts;
mod plan;
mod rename;
mod retarget;
mod solve;
#[cfg(test)]
mod testkit;
mod views;

pub(crate) use check::{Checker, check_full};
pub use converse::{
    FALLBACK_V2_CODES, FALLBACK_V3_CODES, MAX_CONTEXT_ROUNDS, WHOLE_FILE_MAX_BYTES, fallback_target,
};
pub use finish::new_trace_id;
pub use observe::{AgentEvent, AgentObserver};
pub use solve::{
    AddedView, AttemptError, AttemptView, BaselineView, ConfirmFn, DEFAULT_ATTEMPTS,
    DEFAULT_MUTANTS, DEFAULT_PARTS, DEFAULT_RETRY_TEMPERATURE, DEFAULT_TEST_TIMEOUT, EARLY_MUTANTS,
    LOCAL_DRAWS, MovedView, MutantView, PartView, REPEAT_REDRAWS, RenamedView, SolveOptions,
    SolveOutcome, SolveReport, Usage, strip_mode_prefix,
};
pub use views::{
    ActionView, ApplyOutcome, ApplyPreview, ChatTurn, ContextReport, DroppedBlock, FallbackInfo,
    PlanOutcome, Progress, ProgressFn, Round, Stage, no_progress,
};

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
    /// Model calls and tokens since the last [`Agent::solve`] began.
    usage: Usage,
    /// The temperature and seed of the next model calls, when a retry draws instead of
    /// answering greedily ([`SolveOptions::retry_temperature`]); `None`: as configured.
    sampling: Option<papayu_llm::Sampling>,
    /// The tests fail and judge the change ([`Agent::solve`]): narrowed answers may not change
    /// a test file (D60), so a small model's draws are not spent on them.
    tests_protected: bool,
    /// The tests that failed before the change while they judge it ([`Agent::solve`]): the
    /// base context shows them whole and the other tests of their files by name only.
    failing_tests: Vec<String>,
    /// Told how each plan, apply and solve ended ([`Agent::set_observer`]).
    observer: Option<Arc<dyn AgentObserver>>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("root", &self.root)
            .field("provider", &self.provider.info())
            .finish_non_exhaustive()
    }
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
        let mut memory = Memory::load(config_dir, &root)?;
        if let Some(original) = &config.original_user_prefs {
            memory.fill_from_original_user_prefs(original)?;
        }
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
            usage: Usage::default(),
            sampling: None,
            tests_protected: false,
            failing_tests: Vec::new(),
            observer: None,
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

    /// Where `papayu chat` keeps this project's input history (`.papa-yu/chat-history`).
    pub fn chat_history_file(&self) -> Utf8PathBuf {
        self.root.join(".papa-yu/chat-history")
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
}

/// The bytes of `path` in the project at `root`, when the file still holds what papayu sent the
/// model (`sha`, the sha256 of the FILE block); `None` when it was changed, removed or cannot be
/// read since. Readings of an answer (hints, retargeting, fragments) look only at these bytes.
fn sent_bytes(root: &Utf8Path, path: &str, sha: &str) -> Option<Vec<u8>> {
    let bytes = fs_err::read(root.join(path)).ok()?;
    (papayu_protocol::sha256_hex(&bytes) == sha).then_some(bytes)
}
