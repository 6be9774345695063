//! What the agent hands a frontend: progress events, outcomes, previews, and the [`Round`] and
//! [`Stage`] vocabulary that progress, errors and traces share.

use std::fmt;

use camino::Utf8PathBuf;
use papayu_memory::PatchReport;
use papayu_patch::{ApplyReport, Preview};
use papayu_protocol::{ContextRequest, ErrorCode, PlanStep, Response, Violation};
use papayu_validate::ValidatedPlan;
use serde::{Deserialize, Serialize};

use crate::mode::ModeDecision;
use crate::trace::{ContextStatsRecord, TraceRecord};

/// Which request of a call a model answer replied to (a trace's `attempts[].kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Round {
    /// The call's first request.
    Initial,
    /// A request carrying the context the model asked for.
    Context,
    /// The one repair request after a rejected answer.
    Repair,
    /// The first request under the protocol version the call fell back to.
    Fallback,
}

impl Round {
    /// `initial`, `context`, `repair` or `fallback`: the serialised form.
    pub fn as_str(self) -> &'static str {
        match self {
            Round::Initial => "initial",
            Round::Context => "context",
            Round::Repair => "repair",
            Round::Fallback => "fallback",
        }
    }
}

impl fmt::Display for Round {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an answer was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Extracting or parsing the JSON, or the schema of the effective protocol version.
    Schema,
    /// papayu-validate's rules (paths, limits, mode, bases).
    Validate,
    /// papayu-patch's preview (a patch or edit that does not apply).
    Preview,
}

impl Stage {
    /// `schema`, `validate` or `preview`: the serialised form.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Schema => "schema",
            Stage::Validate => "validate",
            Stage::Preview => "preview",
        }
    }

    /// The stage of a parse-and-validate rejection: `schema` when any violation is about the
    /// answer's shape, `validate` otherwise.
    pub(crate) fn of(violations: &[Violation]) -> Stage {
        let shape = |v: &Violation| {
            matches!(
                v.code,
                ErrorCode::JsonParse
                    | ErrorCode::SchemaValidation
                    | ErrorCode::UnknownKind
                    | ErrorCode::FieldNotAllowed
            )
        };
        if violations.iter().any(shape) {
            Stage::Schema
        } else {
            Stage::Validate
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The answer's summary, or — when the model gave none — one built from its actions, else its
/// plan steps (the seeds build it in code too): a preview or a saved plan always says what it is.
pub(crate) fn summary_of(r: &Response) -> Option<String> {
    if let Some(s) = r
        .summary
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        return Some(s.to_owned());
    }
    let actions = r.effective_actions();
    if !actions.is_empty() {
        let list: Vec<String> = actions
            .iter()
            .map(|a| format!("{} {}", a.kind.as_str(), a.path))
            .collect();
        return Some(format!("Changes: {}", list.join(", ")));
    }
    if !r.plan.is_empty() {
        let steps: Vec<String> = r
            .plan
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}. {}: {}", i + 1, s.step, s.details))
            .collect();
        return Some(steps.join("\n"));
    }
    None
}

/// What the agent is doing, for a progress indicator.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Progress {
    /// Reading files named in the goal (stack traces, failing tests).
    GatheringContext,
    /// A request to the model is on its way.
    Requesting {
        /// Which request of the call it is.
        attempt: Round,
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
    /// An edit whose text the file it named lacks was pointed at the one other sent file it
    /// fits; no repair round was needed.
    Retargeted {
        /// The path the model named.
        from: String,
        /// The file the edit was moved to.
        to: String,
    },
    /// The model's first change did not verify: papayu tries `count` small edits of its
    /// own in `names`, the definitions the failing tests exercise (D81), each tested and rolled
    /// back unless it verifies.
    Mutants {
        /// The definitions edited, in the order tried.
        names: Vec<String>,
        /// Edits to try at most.
        count: usize,
    },
    /// One of papayu's own edits made the failing tests pass (D81).
    Mutated {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The line as it was (trimmed).
        from: String,
        /// The line as the edit has it (trimmed).
        to: String,
    },
    /// Several actions of one answer named one file and were read as one (D80): the same
    /// action repeated (`how` `repeated`), the file deleted and written again (`rewritten`), or
    /// several whole-file writes read in turn into one update (`in_turn`); no repair round was
    /// needed.
    Merged {
        /// The file.
        path: String,
        /// How many actions named it.
        actions: usize,
        /// `repeated`, `rewritten` or `in_turn`.
        how: &'static str,
    },
    /// A whole-file answer (UPDATE_FILE) held one stretch of a sent file, edited: it replaces
    /// lines `first..=last` and the rest of the file is kept (`kept` lines; 0 when the content
    /// is the whole file and only a Markdown code fence or copied line numbers were removed, a
    /// `\n` escape written as a line break joined back, or the text moved to the file's depth
    /// (D67, D68), or when it was a diff of the file, applied as a patch).
    Widened {
        /// The file.
        path: String,
        /// 1-based first line the content replaces.
        first: usize,
        /// 1-based last line it replaces.
        last: usize,
        /// Lines of the file kept around it.
        kept: usize,
        /// A Markdown code fence around the content was removed.
        fenced: bool,
        /// The `N|` line numbers copied from the FILE block were removed from every line.
        numbered: bool,
        /// The content was a unified diff of the file, applied as a patch (`first..=last` is
        /// then the whole file and `kept` 0).
        as_patch: bool,
        /// The content was a new definition (a function, a method), added to the file before
        /// line `first`; nothing was replaced (D66).
        added: bool,
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
    /// The project's tests are running: before any change (`baseline`), or as the check of
    /// an applied change.
    Testing {
        /// The command line.
        command: String,
        /// The run before any change.
        baseline: bool,
    },
    /// The baseline test run finished.
    Tested {
        /// The run before any change.
        baseline: bool,
        /// Whether the command exited 0.
        success: bool,
        /// Tests that failed.
        failing: usize,
        /// Wall time.
        duration_ms: u64,
    },
    /// The tests rejected a change; a part of it is tried alone (D65): the hunks it keeps
    /// (1-based, in file order) of how many.
    Part {
        /// The hunks kept.
        hunks: Vec<usize>,
        /// Hunks of the whole change.
        of: usize,
    },
    /// The tests rejected a change that began renaming names; the change with the renames
    /// carried out everywhere is tried, then the renames alone (D74).
    Renamed {
        /// `(old, new)` names.
        names: Vec<(String, String)>,
        /// Files the model's change did not touch that the completion changes (every file it
        /// changes when `alone`).
        files: Vec<String>,
        /// The renames alone, without the rest of the model's change.
        alone: bool,
    },
    /// The tests rejected a whole-file change that defines new names; those definitions alone
    /// are tried, added to the files as they are (D79).
    Added {
        /// The names of the definitions.
        names: Vec<String>,
        /// The files they are added to.
        files: Vec<String>,
    },
    /// The tests rejected a change that began moving definitions into a new module; the move
    /// itself is tried (D78).
    Moved {
        /// The names moved.
        names: Vec<String>,
        /// The module they leave.
        from: String,
        /// The new module.
        to: String,
    },
    /// An attempt at a goal begins ([`crate::Agent::solve`]).
    Attempt {
        /// 1-based.
        number: u32,
        /// Attempts at most.
        of: u32,
    },
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
        /// Wall time in milliseconds.
        duration_ms: u64,
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
    /// Commands the model suggests (root and `proposed_changes.commands_to_run`).
    pub commands_to_run: Vec<String>,
    /// How to undo the change by hand, as the model describes it (`rollback[]`).
    pub rollback: Vec<String>,
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
    pub(super) fn record(&mut self, assembled: &papayu_context::AssembledContext) {
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FallbackInfo {
    /// From version.
    pub from: u8,
    /// To version.
    pub to: u8,
    /// The code that caused it.
    pub reason: ErrorCode,
    /// Where the answer that caused it was rejected.
    pub stage: Stage,
}

/// A validated, previewed APPLY answer: nothing has been written yet. Show it, ask, then call
/// [`Agent::apply`](super::Agent::apply).
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
    /// Commands the model suggests (root and `proposed_changes.commands_to_run`).
    pub commands_to_run: Vec<String>,
    /// How to verify.
    pub verification: Vec<String>,
    /// How to undo the change by hand, as the model describes it (`rollback[]`).
    pub rollback: Vec<String>,
    /// The trace file, when tracing is on.
    pub trace_file: Option<Utf8PathBuf>,
    #[serde(skip)]
    pub(super) plan: ValidatedPlan,
    #[serde(skip)]
    pub(super) trace: TraceRecord,
    #[serde(skip)]
    pub(super) from_saved_plan: bool,
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

/// Result of [`Agent::apply`](super::Agent::apply).
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

/// One chat turn ([`Agent::handle_message`](super::Agent::handle_message)).
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
    /// An APPLY answer, previewed: confirm, then call [`Agent::apply`](super::Agent::apply).
    Preview {
        /// How the mode was chosen.
        decision: ModeDecision,
        /// The preview.
        preview: Box<ApplyPreview>,
    },
}
