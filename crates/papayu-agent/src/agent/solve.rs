//! The verified fix (SPEC §14): run the project's tests, ask for a change, apply it as a
//! transaction whose check is those tests, keep it only if it verifies — else roll it back,
//! tell the model why, and try again, a bounded number of times.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use papayu_llm::ProviderKind;
use papayu_patch::CheckReport;
use papayu_protocol::ErrorCode;
use serde::Serialize;

use super::Agent;
use super::feedback::{Feedback, Shown};
use super::views::{ActionView, ApplyOutcome, ApplyPreview, Progress, ProgressFn};
use crate::error::AgentError;
use crate::verify::{
    Baseline, TestCommand, TestCommandSource, TestStatus, Verdict, detect_test_command,
    edited_tests, failure_digest, goal_tests, judge, parse_outcomes,
};

/// Attempts a goal gets by default.
pub const DEFAULT_ATTEMPTS: u32 = 3;

/// How long one run of the project's tests may take by default.
pub const DEFAULT_TEST_TIMEOUT: Duration = Duration::from_secs(300);

/// The temperature a retry draws at by default (see [`SolveOptions::retry_temperature`]).
pub const DEFAULT_RETRY_TEMPERATURE: f32 = 0.7;

/// Lines of the project search a completed rename looks through for the files that use a name.
const RENAME_SEARCH_HITS: usize = 20_000;

/// Changes an attempt draws by default with the in-process model (see [`SolveOptions::draws`]).
pub const LOCAL_DRAWS: u32 = 3;

/// How many times an answer that repeats a change the tests already rejected is drawn again
/// within one attempt before the attempt counts as that repeat.
pub const REPEAT_REDRAWS: u32 = 2;

/// Parts of a rejected change tried alone by default (see [`SolveOptions::parts`]).
pub const DEFAULT_PARTS: u32 = 3;

/// One-token edits of the code the failing tests exercise tried by default when the model's
/// first attempt did not verify (see [`SolveOptions::mutants`]).
pub const DEFAULT_MUTANTS: u32 = 60;

/// The least time the small edits of a goal may take together; a project whose tests take
/// longer gets four of its test runs.
const MUTANTS_TIME: Duration = Duration::from_secs(120);

/// papayu's own small edits tried by default before the model is first asked (see
/// [`SolveOptions::early_mutants`]).
pub const EARLY_MUTANTS: u32 = 20;

/// About how long the small edits before the model's first answer may take: no edit starts
/// after it, so a project whose tests take longer gets one edit (one test run) at most.
const EARLY_MUTANTS_TIME: Duration = Duration::from_secs(10);

/// Characters of failing test output the model is shown.
const FEEDBACK_CHARS: usize = 3_000;

/// How [`Agent::solve`] runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SolveOptions {
    /// The test command (`--test`); else project memory, else detection.
    pub test_command: Option<String>,
    /// At most this many changes are tried (default 3).
    pub attempts: u32,
    /// Timeout of each test run.
    pub test_timeout: Duration,
    /// The caller confirms DELETE actions up front (`--yes`). A `confirm` callback given to
    /// [`Agent::solve`] confirms the deletes of each change it accepts (it sees them in the
    /// preview); without either, a change that deletes is not applied.
    pub confirmed_deletes: bool,
    /// Changes drawn and tested per attempt, all from the attempt's one prompt, before the next
    /// attempt tells the model why they failed. `None` (default): [`LOCAL_DRAWS`] for the
    /// in-process model, whose next draw reuses the prompt it holds decoded (only the answer is
    /// generated), 1 for a provider over the network (each draw is a full request).
    pub draws: Option<u32>,
    /// Setting it stops the run at its next step; an applied change not yet verified rolls back.
    pub cancel: Option<Arc<AtomicBool>>,
    /// The temperature attempts after the first draw at (default
    /// [`DEFAULT_RETRY_TEMPERATURE`]), each from its own fixed seed, and the one an answer that
    /// repeats a rejected change is drawn again at (up to [`REPEAT_REDRAWS`] times). A greedy
    /// model answers the same prompt the same way, so a retry at the configured temperature 0
    /// mostly repeats the rejected fix. 0 keeps every call as configured.
    pub retry_temperature: f32,
    /// When the tests reject a change made of whole-file updates, at most this many smaller
    /// sets of its hunks are tried, each as its own tested transaction (default
    /// [`DEFAULT_PARTS`]; 0: none). A small model's rewrite often holds the right fix beside
    /// lines it changed by accident (D65).
    pub parts: u32,
    /// When the model's first change did not verify and tests the goal is about fail, at most
    /// this many of papayu's own small edits of the code those tests exercise are tried,
    /// each as its own tested transaction, within about two minutes or four test runs of the
    /// project (default [`DEFAULT_MUTANTS`]; 0: none, also before the model's first answer;
    /// D81). Those tried before it ([`SolveOptions::early_mutants`]) are not tried again.
    pub mutants: u32,
    /// Before the model is first asked, while tests the goal is about fail, at most this many
    /// of those edits — the first of the list, led by the goal's words and the failing tests —
    /// are tried, for about ten seconds — one edit when a test run takes longer (default
    /// [`EARLY_MUTANTS`], never more than [`SolveOptions::mutants`]; 0: none; D89). An edit
    /// tried then is not tried again after the model's change.
    pub early_mutants: u32,
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            test_command: None,
            attempts: DEFAULT_ATTEMPTS,
            test_timeout: DEFAULT_TEST_TIMEOUT,
            confirmed_deletes: false,
            draws: None,
            cancel: None,
            retry_temperature: DEFAULT_RETRY_TEMPERATURE,
            parts: DEFAULT_PARTS,
            mutants: DEFAULT_MUTANTS,
            early_mutants: EARLY_MUTANTS,
        }
    }
}

impl SolveOptions {
    /// Run `command` as the tests.
    pub fn test_command(mut self, command: impl Into<String>) -> Self {
        self.test_command = Some(command.into());
        self
    }

    /// Try at most `n` changes (at least 1).
    pub fn attempts(mut self, n: u32) -> Self {
        self.attempts = n.max(1);
        self
    }

    /// Confirm deletions up front.
    pub fn confirmed_deletes(mut self, yes: bool) -> Self {
        self.confirmed_deletes = yes;
        self
    }

    /// Each test run's timeout.
    pub fn test_timeout(mut self, timeout: Duration) -> Self {
        self.test_timeout = timeout;
        self
    }

    /// Draw and test up to `n` changes per attempt (at least 1) from its one prompt.
    pub fn draws(mut self, n: u32) -> Self {
        self.draws = Some(n.max(1));
        self
    }

    /// Draw retries at `t` (clamped to 0..=2; 0: every call as configured).
    pub fn retry_temperature(mut self, t: f32) -> Self {
        self.retry_temperature = if t.is_finite() {
            t.clamp(0.0, 2.0)
        } else {
            0.0
        };
        self
    }

    /// Try at most `n` parts of each rejected change (0: none).
    pub fn parts(mut self, n: u32) -> Self {
        self.parts = n;
        self
    }

    /// Try at most `n` of papayu's own small edits (0: none; D81).
    pub fn mutants(mut self, n: u32) -> Self {
        self.mutants = n;
        self
    }

    /// Try at most `n` of papayu's own small edits before the model is first asked (0: none;
    /// D89).
    pub fn early_mutants(mut self, n: u32) -> Self {
        self.early_mutants = n;
        self
    }

    /// How the call of attempt `number`'s draw `draw` (both 1-based), drawn again `redraw`
    /// times already, samples: as configured for the very first answer, else at the retry
    /// temperature from a seed fixed by the three (so a run can be repeated).
    fn sampling(&self, number: u32, draw: u32, redraw: u32) -> Option<papayu_llm::Sampling> {
        (self.retry_temperature > 0.0 && (number, draw, redraw) != (1, 1, 0)).then(|| {
            papayu_llm::Sampling {
                temperature: self.retry_temperature,
                seed: 0x5eed_u32
                    .wrapping_add(number.wrapping_mul(7919))
                    .wrapping_add(draw.wrapping_mul(6_007))
                    .wrapping_add(redraw.wrapping_mul(104_729)),
            }
        })
    }

    /// Cancel from another thread.
    pub fn cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }
}

/// Asked before each change is applied, with its preview; `false` stops the run, nothing written.
pub type ConfirmFn<'a> = &'a (dyn Fn(&ApplyPreview) -> bool + Send + Sync);

/// How a goal ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SolveOutcome {
    /// A change is applied and the project's tests confirm it.
    Verified,
    /// No test command is known: a change is applied after the project's usual checks only.
    AppliedUnverified,
    /// No attempt verified: every change was rolled back; the project is as it was.
    NotSolved,
    /// The model found nothing to change, and the tests (if any) already pass.
    NoChanges,
    /// The user declined a change: nothing was written.
    Declined,
}

impl SolveOutcome {
    /// Whether the project holds a change afterwards.
    pub fn changed(self) -> bool {
        matches!(self, Self::Verified | Self::AppliedUnverified)
    }
}

/// The test run before any change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineView {
    /// The command line.
    pub command: String,
    /// Whether it exited 0.
    pub exit_ok: bool,
    /// Tests that passed.
    pub passed: usize,
    /// Tests that failed.
    pub failing: Vec<String>,
    /// The failing tests the goal is about (what must pass afterwards).
    pub targets: Vec<String>,
    /// Wall time.
    pub duration_ms: u64,
}

/// Why an attempt did not verify before its tests ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttemptError {
    /// The stable code.
    pub code: ErrorCode,
    /// The message.
    pub message: String,
}

/// One attempt of a goal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptView {
    /// 1-based.
    pub number: u32,
    /// Which of the attempt's draws this is (1-based; see [`SolveOptions::draws`]).
    pub draw: u32,
    /// The trace of the attempt's model call.
    pub trace_id: Option<String>,
    /// The model's summary.
    pub summary: Option<String>,
    /// The actions proposed.
    pub actions: Vec<ActionView>,
    /// The change as unified diffs (empty when the answer was rejected).
    pub diff: String,
    /// The verdict of the test run, when the change was applied and tested.
    pub verdict: Option<Verdict>,
    /// Why it stopped short of the tests (rejected answer, blocked action, …).
    pub error: Option<AttemptError>,
    /// What the model was told about this attempt's failure.
    pub feedback: Option<String>,
    /// The temperature and seed of the answer, when it was drawn rather than configured.
    pub sampling: Option<papayu_llm::Sampling>,
    /// Answers of this attempt that repeated a change the tests had already rejected and were
    /// drawn again, untested.
    pub redrawn: u32,
    /// Set when this change is part of the draw's rejected change, tried alone (D65).
    pub part: Option<PartView>,
    /// Set when this change is the draw's rejected change with the renames it began carried
    /// out everywhere, or those renames alone (D74).
    pub renamed: Option<RenamedView>,
    /// Set when this change moved the definitions the draw's rejected change began to move
    /// into a new module (D78).
    pub moved: Option<MovedView>,
    /// Set when this change is the draw's rejected change's new definitions, added alone (D79).
    pub added: Option<AddedView>,
    /// Set when this change is papayu's own small edit, not the model's (D81).
    pub mutant: Option<MutantView>,
}

/// papayu's own small edit of the code the failing tests exercise (D81).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MutantView {
    /// The file.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// The definition it is in.
    pub name: String,
    /// The line as it was (trimmed).
    pub from: String,
    /// The line as the edit has it (trimmed).
    pub to: String,
    /// Edits tried, this one included.
    pub tried: usize,
}

impl AttemptView {
    /// The attempt `number`'s draw `draw` whose change is `preview`'s, not yet tested.
    fn of(number: u32, draw: u32, preview: &ApplyPreview) -> AttemptView {
        AttemptView::with_diff(number, draw, preview, diff_of(preview))
    }

    /// The same, when `diff` (`diff_of(preview)`) is already at hand.
    fn with_diff(number: u32, draw: u32, preview: &ApplyPreview, diff: String) -> AttemptView {
        AttemptView {
            number,
            draw,
            trace_id: Some(preview.trace_id.clone()),
            summary: preview.summary.clone(),
            actions: preview.actions.clone(),
            diff,
            verdict: None,
            error: None,
            feedback: None,
            sampling: None,
            redrawn: 0,
            part: None,
            renamed: None,
            moved: None,
            added: None,
            mutant: None,
        }
    }
}

/// Which hunks of a rejected change a part keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartView {
    /// The hunks kept, 1-based in file order.
    pub hunks: Vec<usize>,
    /// Of those, the ones whose removed lines were kept too, their new lines inserted before
    /// them (a hunk that overwrote a line it should have kept).
    pub keeping: Vec<usize>,
    /// Hunks of the whole change.
    pub of: usize,
}

/// The renames a derived change completed (D74).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RenamedView {
    /// `(old, new)` names.
    pub names: Vec<(String, String)>,
    /// Files the model's change did not touch that the completion also changes (every file it
    /// changes when `alone`).
    pub files: Vec<String>,
    /// The renames alone, on the files as they were, without the rest of the model's change
    /// (tried after the completed change).
    pub alone: bool,
    /// Module files moved to the renamed module's path, `(from, to)` (D76); the new paths are
    /// among `files`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<(String, String)>,
}

/// The definitions a derived change moved into a new module (D78).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovedView {
    /// The names moved.
    pub names: Vec<String>,
    /// The module they left.
    pub from: String,
    /// The new module.
    pub to: String,
    /// Other files whose imports now name the new module.
    pub files: Vec<String>,
}

/// The definitions a derived change added alone (D79).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddedView {
    /// The names of the definitions added.
    pub names: Vec<String>,
    /// The files they were added to.
    pub files: Vec<String>,
}

/// A change derived from one the tests rejected, tried as its own transaction.
enum Derived {
    /// A smaller set of its hunks (D65).
    Part(super::parts::Part),
    /// It with the renames it began completed, or those renames alone (D74).
    Renamed(super::rename::Renamed),
    /// The definitions it began to move into a new module, moved (D78).
    Moved(super::moves::Moved),
    /// Its new definitions added alone to the files as they are (D79).
    Added(super::addition::Added),
}

impl Derived {
    /// Its plan document.
    fn document(&self) -> &str {
        match self {
            Derived::Part(part) => &part.document,
            Derived::Renamed(r) => &r.document,
            Derived::Moved(m) => &m.document,
            Derived::Added(a) => &a.document,
        }
    }

    /// What it is, for its trace's `part_of`, naming the rejected change's trace.
    fn describe(&self, parent: &str) -> String {
        match self {
            Derived::Part(part) => part.describe(parent),
            Derived::Renamed(r) => r.describe(parent),
            Derived::Moved(m) => m.describe(parent),
            Derived::Added(a) => a.describe(parent),
        }
    }

    /// Record on its attempt's view what it is.
    fn mark(&self, view: &mut AttemptView) {
        match self {
            Derived::Part(part) => {
                view.part = Some(PartView {
                    hunks: part.hunks.clone(),
                    keeping: part.keeping.clone(),
                    of: part.of,
                })
            }
            Derived::Renamed(r) => {
                view.renamed = Some(RenamedView {
                    names: r.names.clone(),
                    files: r.files.clone(),
                    alone: r.alone,
                    moved: r.moved.clone(),
                })
            }
            Derived::Moved(m) => {
                view.moved = Some(MovedView {
                    names: m.names.clone(),
                    from: m.from.clone(),
                    to: m.to.clone(),
                    files: m.files.clone(),
                })
            }
            Derived::Added(a) => {
                view.added = Some(AddedView {
                    names: a.names.clone(),
                    files: a.files.clone(),
                })
            }
        }
    }

    /// The progress event that announces it.
    fn progress(&self) -> Progress {
        match self {
            Derived::Part(part) => Progress::Part {
                hunks: part.hunks.clone(),
                of: part.of,
            },
            Derived::Renamed(r) => Progress::Renamed {
                names: r.names.clone(),
                files: r.files.clone(),
                alone: r.alone,
            },
            Derived::Moved(m) => Progress::Moved {
                names: m.names.clone(),
                from: m.from.clone(),
                to: m.to.clone(),
            },
            Derived::Added(a) => Progress::Added {
                names: a.names.clone(),
                files: a.files.clone(),
            },
        }
    }
}

/// Model calls and tokens over a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Requests sent to the model.
    pub model_calls: u32,
    /// Prompt tokens, where the provider reports them.
    pub input_tokens: u64,
    /// Answer tokens, where the provider reports them.
    pub output_tokens: u64,
}

impl Usage {
    pub(crate) fn add(&mut self, usage: Option<papayu_llm::Usage>) {
        self.model_calls += 1;
        if let Some(u) = usage {
            self.input_tokens += u.input_tokens.unwrap_or(0);
            self.output_tokens += u.output_tokens.unwrap_or(0);
        }
    }
}

/// What [`Agent::solve`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SolveReport {
    /// The goal (mode prefix stripped).
    pub goal: String,
    /// How it ended.
    pub outcome: SolveOutcome,
    /// The test command, when one is known.
    pub test: Option<TestCommand>,
    /// The test run before any change.
    pub baseline: Option<BaselineView>,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptView>,
    /// The applied change (verified, or applied without a test command).
    pub applied: Option<ApplyOutcome>,
    /// Model calls and tokens.
    pub usage: Usage,
    /// Why the goal ended unsolved or unverified, in one sentence.
    pub reason: Option<String>,
}

/// What [`Agent::mutate`] needs of the run.
struct Trial<'a> {
    goal: &'a str,
    baseline: &'a Baseline,
    targets: &'a [String],
    touched: &'a [(String, usize)],
    rejected: &'a [(u32, String, Verdict, String)],
    command: &'a str,
    options: &'a SolveOptions,
    baseline_ms: u64,
    deletes_confirmed: bool,
    /// The attempt the edits follow (0: before the model's first).
    number: u32,
    /// At most this many edits are tried.
    limit: usize,
    /// For about this long.
    time: Duration,
}

/// How papayu's own changes are judged (see [`Agent::try_own`]).
struct Judging<'a> {
    baseline: &'a Baseline,
    targets: &'a [String],
    command: &'a str,
    options: &'a SolveOptions,
    deletes_confirmed: bool,
    /// Shown each change before it is applied, when given.
    confirm: Option<ConfirmFn<'a>>,
}

/// How one of papayu's own changes ended (see [`Agent::try_own`]).
enum Own {
    /// Not tried.
    Skipped,
    /// Verified and kept, or declined: the goal ends.
    Ended(Mutation),
    /// Tried and rolled back: its view, and its verdict with the test output's digest when the
    /// tests judged it.
    RolledBack(Box<AttemptView>, Option<(Verdict, String)>),
}

/// How papayu's own edits ended.
enum Mutation {
    /// None verified (how many were tried).
    Tried(usize),
    /// This one verified and is applied.
    Verified(Box<(AttemptView, ApplyOutcome)>),
    /// This one verified, and the user declined it.
    Declined(Box<AttemptView>),
}

/// The attempt view of papayu's own edit `m`, the `tried`-th.
fn mutant_view(
    trial: &Trial<'_>,
    piece: &ApplyPreview,
    m: &super::mutants::Mutant,
    tried: usize,
    verdict: Option<Verdict>,
) -> AttemptView {
    AttemptView {
        verdict,
        mutant: Some(MutantView {
            path: m.path.clone(),
            line: m.line,
            name: m.name.clone(),
            from: m.from.clone(),
            to: m.to.clone(),
            tried,
        }),
        ..AttemptView::of(trial.number, 0, piece)
    }
}

/// The progress event of an edit that verified.
fn mutated(m: &super::mutants::Mutant) -> Progress {
    Progress::Mutated {
        path: m.path.clone(),
        line: m.line,
        from: m.from.clone(),
        to: m.to.clone(),
    }
}

/// The (path, 1-based old line) pairs a change's diffs touch.
fn touched_by(preview: &ApplyPreview) -> Vec<(String, usize)> {
    preview
        .preview
        .files
        .iter()
        .flat_map(|f| {
            super::mutants::touched_lines(&f.diff)
                .into_iter()
                .map(|l| (f.path.clone(), l))
        })
        .collect()
}

/// A preview's unified diffs, one after the other.
fn diff_of(preview: &ApplyPreview) -> String {
    preview
        .preview
        .files
        .iter()
        .map(|f| f.diff.as_str())
        .filter(|d| !d.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The goal without a `plan:` / `apply:` prefix (SPEC §9: the prefix is for papayu, not the
/// model).
pub fn strip_mode_prefix(goal: &str) -> &str {
    let t = goal.trim();
    for prefix in ["plan:", "apply:"] {
        if t.len() >= prefix.len() && t[..prefix.len()].eq_ignore_ascii_case(prefix) {
            return t[prefix.len()..].trim_start();
        }
    }
    t
}

impl Agent {
    /// The test command for a run: `given` (`--test`), else `project.default_test_command`,
    /// else one detected from the project's files.
    pub fn test_command(&self, given: Option<&str>) -> Option<TestCommand> {
        if let Some(c) = given.map(str::trim).filter(|c| !c.is_empty()) {
            return Some(TestCommand::new(c, TestCommandSource::Given));
        }
        if let Some(c) = self.memory.project().default_test_command() {
            return Some(TestCommand::new(c, TestCommandSource::Memory));
        }
        detect_test_command(&self.root)
    }

    /// Solve `goal` (SPEC §14): the verified fix or the project exactly as it was.
    ///
    /// With a test command ([`Agent::test_command`]), the tests run first (the baseline), then
    /// up to `options.attempts` times: the model gets the base context (the files the goal and
    /// the failing tests point at, the failure output), papayu previews its change, `confirm`
    /// (when given) approves it, and the change is applied as a transaction whose check is the
    /// tests — committed only when the failing tests the goal is about pass and nothing that
    /// passed before fails; otherwise rolled back, and the next attempt is told why. Without a
    /// test command, one attempt is applied after the project's usual checks
    /// ([`SolveOutcome::AppliedUnverified`]).
    ///
    /// Transport errors (the model cannot be reached) end the run with an error; the project is
    /// unchanged then too. The observer ([`Agent::set_observer`]) is told how it ended.
    pub async fn solve(
        &mut self,
        goal: &str,
        options: &SolveOptions,
        confirm: Option<ConfirmFn<'_>>,
        progress: ProgressFn<'_>,
    ) -> Result<SolveReport, AgentError> {
        let result = self.solve_goal(goal, options, confirm, progress).await;
        self.notify(super::observe::AgentEvent::Solved {
            goal: strip_mode_prefix(goal),
            result: result.as_ref(),
        });
        result
    }

    async fn solve_goal(
        &mut self,
        goal: &str,
        options: &SolveOptions,
        confirm: Option<ConfirmFn<'_>>,
        progress: ProgressFn<'_>,
    ) -> Result<SolveReport, AgentError> {
        let result = self.solve_tested(goal, options, confirm, progress).await;
        self.tests_protected = false;
        self.failing_tests.clear();
        result
    }

    /// [`solve_goal`](Self::solve_goal), which leaves the test files unprotected afterwards.
    async fn solve_tested(
        &mut self,
        goal: &str,
        options: &SolveOptions,
        confirm: Option<ConfirmFn<'_>>,
        progress: ProgressFn<'_>,
    ) -> Result<SolveReport, AgentError> {
        let goal = strip_mode_prefix(goal).to_owned();
        self.usage = Usage::default();
        let mut report = SolveReport {
            goal: goal.clone(),
            outcome: SolveOutcome::NotSolved,
            test: self.test_command(options.test_command.as_deref()),
            baseline: None,
            attempts: Vec::new(),
            applied: None,
            usage: Usage::default(),
            reason: None,
        };
        let Some(test) = report.test.clone() else {
            return self
                .solve_unverified(report, options, confirm, progress)
                .await;
        };
        // A change is applied only after `confirm` (when given) saw its preview, deletes listed.
        let deletes_confirmed = options.confirmed_deletes || confirm.is_some();
        let cancelled = || {
            options
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Relaxed))
        };
        progress(&Progress::Testing {
            command: test.command.clone(),
            baseline: true,
        });
        let run = self.run_tests(&test.command, options);
        let baseline = Baseline {
            exit_ok: run.success,
            outcomes: parse_outcomes(&run.output),
        };
        let targets = goal_tests(&goal, &baseline);
        self.tests_protected = !run.success || !targets.is_empty();
        self.failing_tests = if self.tests_protected {
            baseline.failing()
        } else {
            Vec::new()
        };
        progress(&Progress::Tested {
            baseline: true,
            success: run.success,
            failing: baseline.failing().len(),
            duration_ms: run.duration_ms,
        });
        report.baseline = Some(BaselineView {
            command: test.command.clone(),
            exit_ok: run.success,
            passed: baseline.outcomes.with(TestStatus::Pass).len(),
            failing: baseline.failing(),
            targets: targets.clone(),
            duration_ms: run.duration_ms,
        });
        let local = self.provider.info().kind == ProviderKind::Local;
        let draws = options.draws.unwrap_or(if local { LOCAL_DRAWS } else { 1 });
        // A rejected change is shown to the in-process model by its places, not its diff (D73).
        let shown = if local { Shown::Places } else { Shown::Diff };
        // The context's check log stays the baseline's failure (the one the goal is about) in
        // every attempt: each prompt is then the first one plus what the feedback says about the
        // latest change (with its test output), so a local model decodes only that (D54).
        let failure = (!run.success).then(|| self.digest(&run.output));
        // What the model is told about the latest change; an attempt's prompt takes it when the
        // attempt begins, so its draws share one prompt.
        let mut feedback: Option<Feedback> = None;
        let mut prompt_brief: Option<String> = None;
        // The changes the tests already rejected: (attempt, diff, verdict, test output digest).
        let mut rejected: Vec<(u32, String, Verdict, String)> = Vec::new();
        // Lines the rejected changes touched, where papayu's own edits look first (D81).
        let mut touched: Vec<(String, usize)> = Vec::new();
        let mut mutants_tried: Option<usize> = None;
        // Model changes the tests judged and rejected so far.
        let mut judged_rejects = 0u32;
        // How papayu's own changes are judged: as every change is.
        let judging = Judging {
            baseline: &baseline,
            targets: &targets,
            command: &test.command,
            options,
            deletes_confirmed,
            confirm,
        };
        // The refactoring the goal asks for in words (a rename, a move), carried out by papayu
        // before the model is asked (D88); judged like any change.
        for candidate in self.asked_changes(&goal) {
            if cancelled() {
                return Err(AgentError::Apply(papayu_patch::ApplyError::Cancelled));
            }
            let Ok(piece) =
                self.preview_own(&goal, candidate.document(), candidate.describe("the goal"))
            else {
                continue;
            };
            match self.try_own(
                &piece,
                &candidate,
                (0, 0, None, 0),
                &judging,
                &rejected,
                progress,
            )? {
                Own::Skipped => {}
                Own::Ended(ended) => return Ok(self.ended_by_own(report, ended)),
                Own::RolledBack(view, judged) => {
                    if let Some((v, digest)) = judged {
                        rejected.push((0, view.diff.clone(), v, digest));
                    }
                    report.attempts.push(*view);
                }
            }
        }
        // papayu's own small edits of the code the failing tests exercise: the first few,
        // briefly, before the model is first asked (D89) — a test run each, against a model
        // call of 30–300 s here — and the rest after the model's first change (D81).
        let mut own_tried: BTreeSet<String> = BTreeSet::new();
        let early = Trial {
            goal: &goal,
            baseline: &baseline,
            targets: &targets,
            touched: &[],
            rejected: &rejected,
            command: &test.command,
            options,
            baseline_ms: run.duration_ms,
            deletes_confirmed,
            number: 0,
            limit: options.early_mutants.min(options.mutants) as usize,
            time: EARLY_MUTANTS_TIME,
        };
        let early_tried = match self.mutate(&early, &mut own_tried, confirm, progress)? {
            Mutation::Tried(n) => n,
            ended => return Ok(self.ended_by_own(report, ended)),
        };
        // Every attempt's draws, then one turn more (`None`) for what comes after the last.
        let turns = (1..=options.attempts)
            .flat_map(|n| (1..=draws).map(move |d| Some((n, d))))
            .chain(std::iter::once(None));
        for turn in turns {
            if cancelled() {
                return Err(AgentError::Apply(papayu_patch::ApplyError::Cancelled));
            }
            let (number, draw) = turn.unwrap_or((options.attempts + 1, 1));
            // The model's first change the tests judged did not verify (or its first attempt
            // ended without one): papayu's own small edits of the code the failing tests
            // exercise, before the model is asked again (D81).
            if mutants_tried.is_none() && (judged_rejects > 0 || (number > 1 && draw == 1)) {
                let trial = Trial {
                    goal: &goal,
                    baseline: &baseline,
                    targets: &targets,
                    touched: &touched,
                    rejected: &rejected,
                    command: &test.command,
                    options,
                    baseline_ms: run.duration_ms,
                    deletes_confirmed,
                    number: if draw == 1 { number - 1 } else { number },
                    limit: options.mutants as usize,
                    time: MUTANTS_TIME.max(Duration::from_millis(run.duration_ms) * 4),
                };
                match self.mutate(&trial, &mut own_tried, confirm, progress)? {
                    Mutation::Tried(n) => mutants_tried = Some(n),
                    ended => return Ok(self.ended_by_own(report, ended)),
                }
            }
            if turn.is_none() {
                break;
            }
            if draw == 1 {
                progress(&Progress::Attempt {
                    number,
                    of: options.attempts,
                });
                prompt_brief = feedback.as_ref().map(|f| f.text.clone());
            }
            let brief = prompt_brief.as_deref();
            let mut redrawn = 0;
            let drawn = loop {
                let sampling = options.sampling(number, draw, redrawn);
                self.sampling = sampling;
                let answer = self
                    .prepare_brief(&goal, failure.as_deref(), brief, progress)
                    .await;
                self.sampling = None;
                // A draw that repeats a change the tests rejected: drawn again, untested.
                if let Ok(p) = &answer
                    && redrawn < REPEAT_REDRAWS
                    && options.retry_temperature > 0.0
                    && !p.no_changes
                    && rejected.iter().any(|r| r.1 == diff_of(p))
                {
                    redrawn += 1;
                    continue;
                }
                break answer.map(|p| (p, sampling));
            };
            // An answer the model spoiled (cut off at the token cap, or its repair round did not
            // fit the context window) after it had answered before: this answer failed, not the
            // provider; the attempt ends like a rejected one.
            let spoiled = |e: &AgentError| {
                matches!(e, AgentError::Llm(l) if l.code() == ErrorCode::LlmBadResponse)
                    && report.attempts.iter().any(|a| a.error.is_none())
            };
            let (preview, sampling) = match drawn {
                Ok(p) => p,
                Err(e) if matches!(e, AgentError::Rejected { .. }) || spoiled(&e) => {
                    let f = Feedback::rejected(number, &e);
                    report.attempts.push(AttemptView {
                        number,
                        draw,
                        trace_id: None,
                        summary: None,
                        actions: Vec::new(),
                        diff: String::new(),
                        verdict: None,
                        error: Some(AttemptError {
                            code: e.code(),
                            message: e.to_string(),
                        }),
                        feedback: Some(f.text.clone()),
                        sampling: options.sampling(number, draw, redrawn),
                        redrawn,
                        part: None,
                        renamed: None,
                        moved: None,
                        added: None,
                        mutant: None,
                    });
                    feedback = Some(f);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let mut attempt = AttemptView {
                sampling,
                redrawn,
                ..AttemptView::of(number, draw, &preview)
            };
            if preview.no_changes {
                if baseline.exit_ok && targets.is_empty() {
                    report.attempts.push(attempt);
                    report.outcome = SolveOutcome::NoChanges;
                    return Ok(self.finish_report(report));
                }
                let f = Feedback::no_changes(number);
                attempt.feedback = Some(f.text.clone());
                report.attempts.push(attempt);
                feedback = Some(f);
                continue;
            }
            if preview.preview.summary.blocked > 0 {
                let f = Feedback::blocked(number, &preview);
                attempt.error = preview.preview.files.iter().find_map(|f| {
                    f.error.as_ref().map(|e| AttemptError {
                        code: e.code,
                        message: e.message.clone(),
                    })
                });
                attempt.feedback = Some(f.text.clone());
                report.attempts.push(attempt);
                feedback = Some(f);
                continue;
            }
            // The very change an earlier attempt tried: its verdict is known, so the tests do
            // not run again and the user is not asked to approve it; the model is told plainly.
            if let Some((earlier, _, verdict, digest)) =
                rejected.iter().find(|r| r.1 == attempt.diff)
            {
                let f = Feedback::repeated(number, *earlier, &attempt.diff, shown, verdict, digest);
                attempt.verdict = Some(match verdict.clone() {
                    Verdict::NotVerified {
                        reason,
                        still_failing,
                        regressed,
                    } => Verdict::NotVerified {
                        reason: format!(
                            "it is the change attempt {earlier} tried ({reason}); not tested again"
                        ),
                        still_failing,
                        regressed,
                    },
                    other => other,
                });
                attempt.feedback = Some(f.text.clone());
                report.attempts.push(attempt);
                feedback = Some(f);
                continue;
            }
            // A change that rewrites the tests that fail is judged by tests it wrote itself:
            // not applied, not tested; the model is told to fix the code instead.
            if (!run.success || !targets.is_empty())
                && let Some(path) = edited_tests(&self.root, &preview.preview)
            {
                let verdict = Verdict::NotVerified {
                    reason: format!(
                        "it edits the tests that judge it (`{path}`); the tests must pass as they \
                         are written"
                    ),
                    still_failing: targets.clone(),
                    regressed: Vec::new(),
                };
                let digest = failure.clone().unwrap_or_default();
                let f = Feedback::edited_tests(number, &attempt.diff, shown, &verdict, &path);
                rejected.push((number, attempt.diff.clone(), verdict.clone(), digest));
                attempt.verdict = Some(verdict);
                attempt.feedback = Some(f.text.clone());
                report.attempts.push(attempt);
                feedback = Some(f);
                // Judged without a test run, but judged: papayu's own edits may follow, where
                // the change touched code (a Rust file's tests share it with the code).
                judged_rejects += 1;
                touched.extend(touched_by(&preview));
                continue;
            }
            if let Some(confirm) = confirm
                && !confirm(&preview)
            {
                report.attempts.push(attempt);
                report.outcome = SolveOutcome::Declined;
                return Ok(self.finish_report(report));
            }
            let verdict: Mutex<Option<(Verdict, String)>> = Mutex::new(None);
            let digest = |output: &str| self.digest(output);
            let judged = |check: &CheckReport| -> Result<(), String> {
                let outcomes = parse_outcomes(&check.output);
                let v = judge(&baseline, check.success, &outcomes, &targets);
                let result = match &v {
                    Verdict::Verified { .. } => Ok(()),
                    Verdict::NotVerified { reason, .. } => Err(reason.clone()),
                };
                if let Ok(mut slot) = verdict.lock() {
                    *slot = Some((v, digest(&check.output)));
                }
                result
            };
            progress(&Progress::Testing {
                command: test.command.clone(),
                baseline: false,
            });
            let applied = self.apply_verified(
                &preview,
                &test.command,
                &judged,
                options,
                deletes_confirmed,
                progress,
            );
            let judged_as = verdict.lock().ok().and_then(|mut v| v.take());
            match applied {
                Ok(outcome) => {
                    attempt.verdict = judged_as.map(|(v, _)| v);
                    report.attempts.push(attempt);
                    report.applied = Some(outcome);
                    report.outcome = SolveOutcome::Verified;
                    return Ok(self.finish_report(report));
                }
                Err(AgentError::Apply(e)) if e.code() != ErrorCode::Cancelled => {
                    let f = match &judged_as {
                        Some((v, digest)) => {
                            let f = Feedback::not_verified(number, &attempt.diff, shown, v, digest);
                            rejected.push((
                                number,
                                attempt.diff.clone(),
                                v.clone(),
                                digest.clone(),
                            ));
                            f
                        }
                        None => Feedback {
                            text: format!(
                                "Attempt {number} could not be applied ({}): {e}",
                                e.code()
                            ),
                        },
                    };
                    attempt.verdict = judged_as.map(|(v, _)| v);
                    if attempt.verdict.is_none() {
                        attempt.error = Some(AttemptError {
                            code: e.code(),
                            message: e.to_string(),
                        });
                    }
                    attempt.feedback = Some(f.text.clone());
                    let (sampling, tested) = (attempt.sampling, attempt.verdict.is_some());
                    if tested {
                        judged_rejects += 1;
                        touched.extend(touched_by(&preview));
                    }
                    report.attempts.push(attempt);
                    feedback = Some(f);
                    // The tests rejected the change as a whole: its parts may still fix it
                    // (D65); each is tested as its own transaction, and the model is told
                    // about the whole change only.
                    let derived = if tested {
                        self.derived(&preview, options.parts as usize)
                    } else {
                        Vec::new()
                    };
                    for candidate in derived {
                        if cancelled() {
                            return Err(AgentError::Apply(papayu_patch::ApplyError::Cancelled));
                        }
                        let Ok(piece) = self.preview_derived(
                            &preview,
                            candidate.document(),
                            candidate.describe(&preview.trace_id),
                        ) else {
                            continue;
                        };
                        let at = (number, draw, sampling, redrawn);
                        match self.try_own(&piece, &candidate, at, &judging, &rejected, progress)? {
                            Own::Skipped => {}
                            Own::Ended(ended) => return Ok(self.ended_by_own(report, ended)),
                            Own::RolledBack(view, judged) => {
                                if let Some((v, digest)) = judged {
                                    rejected.push((number, view.diff.clone(), v, digest));
                                }
                                report.attempts.push(*view);
                            }
                        }
                    }
                }
                Err(e) => return Err(e),
            }
        }
        let own = match early_tried + mutants_tried.unwrap_or(0) {
            0 => String::new(),
            n => format!(", nor {n} small edit(s) of papayu's own"),
        };
        report.reason = Some(format!(
            "no change verified in {} attempt(s) ({} change(s) drawn){own}; the project is \
             unchanged",
            options.attempts,
            report.attempts.len()
        ));
        Ok(self.finish_report(report))
    }

    /// papayu's own small edits of the code the failing tests exercise (D81,
    /// [`super::mutants`]), each tried as a transaction whose check is the tests: kept when the
    /// tests verify it and fix at least one failing test the goal is about (after `confirm`,
    /// when given, saw it: then it is tried, rolled back, shown and applied again). Nothing is
    /// tried unless tests the goal is about fail. Bounded by `trial.limit` edits and about
    /// `trial.time`; an edit in `tried` (an earlier round's, by its plan document) is not tried
    /// again, and each edit tried here joins it.
    fn mutate(
        &self,
        trial: &Trial<'_>,
        tried: &mut BTreeSet<String>,
        confirm: Option<ConfirmFn<'_>>,
        progress: ProgressFn<'_>,
    ) -> Result<Mutation, AgentError> {
        let options = trial.options;
        if trial.limit == 0 || trial.targets.is_empty() {
            return Ok(Mutation::Tried(0));
        }
        let users = self.users();
        let is_test = |path: &str, before: &str| {
            papayu_context::is_test_path(path)
                || crate::verify::test_section(path, before).is_some()
        };
        let sites = super::mutants::sites(
            &self.root,
            trial.goal,
            trial.targets,
            trial.touched,
            &users,
            &is_test,
        );
        let mutants: Vec<_> =
            super::mutants::mutants(&self.root, trial.goal, &sites, options.mutants as usize)
                .into_iter()
                .filter(|m| !tried.contains(&m.document))
                .take(trial.limit)
                .collect();
        tracing::debug!(
            event = "MUTANT_SITES",
            sites = ?sites.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            targets = ?trial.targets,
            touched = trial.touched.len(),
            mutants = mutants.len(),
        );
        if mutants.is_empty() {
            return Ok(Mutation::Tried(0));
        }
        let mut names: Vec<String> = Vec::new();
        for s in &sites {
            if !names.contains(&s.name) {
                names.push(s.name.clone());
            }
        }
        progress(&Progress::Mutants {
            names,
            count: mutants.len(),
        });
        let baseline = Duration::from_millis(trial.baseline_ms);
        let budget = trial.time;
        let mut quick = options.clone();
        quick.test_timeout = options
            .test_timeout
            .min(Duration::from_secs(30).max(baseline * 3));
        let started = std::time::Instant::now();
        let cancelled = || {
            options
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Relaxed))
        };
        for (k, m) in mutants.iter().enumerate() {
            if cancelled() {
                return Err(AgentError::Apply(papayu_patch::ApplyError::Cancelled));
            }
            if started.elapsed() > budget {
                return Ok(Mutation::Tried(k));
            }
            tried.insert(m.document.clone());
            let piece = match self.preview_own(trial.goal, &m.document, m.describe()) {
                Ok(piece) => piece,
                Err(e) => {
                    tracing::debug!(event = "MUTANT_REJECTED", error = %e);
                    continue;
                }
            };
            let diff = diff_of(&piece);
            if piece.preview.summary.blocked > 0
                || diff.is_empty()
                || trial.rejected.iter().any(|r| r.1 == diff)
            {
                continue;
            }
            // Kept at once only when nobody is asked first.
            let keep = confirm.is_none();
            let verdict: Mutex<Option<Verdict>> = Mutex::new(None);
            let judged = |check: &CheckReport| -> Result<(), String> {
                let outcomes = parse_outcomes(&check.output);
                let v = judge(trial.baseline, check.success, &outcomes, trial.targets);
                let fixes = matches!(&v, Verdict::Verified { fixed } if !fixed.is_empty());
                if let Ok(mut slot) = verdict.lock() {
                    *slot = Some(v);
                }
                if fixes && keep {
                    Ok(())
                } else {
                    Err("papayu's own edit: tried, not kept".to_owned())
                }
            };
            let applied = self.apply_trial(&piece, trial.command, &judged, &quick);
            let judged_as = verdict.lock().ok().and_then(|mut v| v.take());
            tracing::debug!(
                event = "MUTANT_TRIED",
                edit = %m.describe(),
                verdict = ?judged_as.as_ref().map(|v| matches!(v, Verdict::Verified { .. })),
            );
            let fixes =
                matches!(&judged_as, Some(Verdict::Verified { fixed }) if !fixed.is_empty());
            let outcome = match applied {
                Ok(outcome) => outcome,
                Err(AgentError::Apply(e)) if e.code() != ErrorCode::Cancelled && !fixes => continue,
                Err(AgentError::Apply(e)) if e.code() != ErrorCode::Cancelled => {
                    // Verified but tried only: shown, then applied for good.
                    let view = mutant_view(trial, &piece, m, k + 1, judged_as.clone());
                    if let Some(confirm) = confirm
                        && !confirm(&piece)
                    {
                        return Ok(Mutation::Declined(Box::new(view)));
                    }
                    progress(&mutated(m));
                    progress(&Progress::Testing {
                        command: trial.command.to_owned(),
                        baseline: false,
                    });
                    let real = |check: &CheckReport| -> Result<(), String> {
                        let outcomes = parse_outcomes(&check.output);
                        match judge(trial.baseline, check.success, &outcomes, trial.targets) {
                            Verdict::Verified { fixed } if !fixed.is_empty() => Ok(()),
                            Verdict::Verified { .. } => Err("it fixes no failing test".to_owned()),
                            Verdict::NotVerified { reason, .. } => Err(reason),
                        }
                    };
                    match self.apply_verified(
                        &piece,
                        trial.command,
                        &real,
                        options,
                        trial.deletes_confirmed,
                        progress,
                    ) {
                        Ok(outcome) => return Ok(Mutation::Verified(Box::new((view, outcome)))),
                        Err(AgentError::Apply(e)) if e.code() != ErrorCode::Cancelled => continue,
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            };
            progress(&mutated(m));
            let view = mutant_view(trial, &piece, m, k + 1, judged_as);
            return Ok(Mutation::Verified(Box::new((view, outcome))));
        }
        Ok(Mutation::Tried(mutants.len()))
    }

    /// One of papayu's own changes — derived from a rejected one, or the refactoring the goal
    /// asks for — tried as a transaction whose check is the tests, judged as every change is.
    /// Skipped when blocked, empty, already rejected, or deleting where deletes may not be
    /// applied (D76: it is papayu's, not an answer to decline); shown to `confirm` first, when
    /// given. `at`: the attempt, draw, sampling and redraws its view carries.
    fn try_own(
        &self,
        piece: &ApplyPreview,
        candidate: &Derived,
        at: (u32, u32, Option<papayu_llm::Sampling>, u32),
        judging: &Judging<'_>,
        rejected: &[(u32, String, Verdict, String)],
        progress: ProgressFn<'_>,
    ) -> Result<Own, AgentError> {
        let diff = diff_of(piece);
        if piece.preview.summary.blocked > 0
            || diff.is_empty()
            || rejected.iter().any(|r| r.1 == diff)
            || (!judging.deletes_confirmed && !piece.deletes.is_empty())
        {
            return Ok(Own::Skipped);
        }
        let (number, draw, sampling, redrawn) = at;
        let mut view = AttemptView {
            sampling,
            redrawn,
            ..AttemptView::with_diff(number, draw, piece, diff)
        };
        candidate.mark(&mut view);
        if let Some(confirm) = judging.confirm
            && !confirm(piece)
        {
            return Ok(Own::Ended(Mutation::Declined(Box::new(view))));
        }
        progress(&candidate.progress());
        progress(&Progress::Testing {
            command: judging.command.to_owned(),
            baseline: false,
        });
        let verdict: Mutex<Option<(Verdict, String)>> = Mutex::new(None);
        let judged = |check: &CheckReport| -> Result<(), String> {
            let outcomes = parse_outcomes(&check.output);
            let v = judge(judging.baseline, check.success, &outcomes, judging.targets);
            let result = match &v {
                Verdict::Verified { .. } => Ok(()),
                Verdict::NotVerified { reason, .. } => Err(reason.clone()),
            };
            if let Ok(mut slot) = verdict.lock() {
                *slot = Some((v, self.digest(&check.output)));
            }
            result
        };
        let applied = self.apply_verified(
            piece,
            judging.command,
            &judged,
            judging.options,
            judging.deletes_confirmed,
            progress,
        );
        let judged_as = verdict.lock().ok().and_then(|mut v| v.take());
        view.verdict = judged_as.as_ref().map(|(v, _)| v.clone());
        match applied {
            Ok(outcome) => Ok(Own::Ended(Mutation::Verified(Box::new((view, outcome))))),
            Err(AgentError::Apply(e)) if e.code() != ErrorCode::Cancelled => {
                if judged_as.is_none() {
                    view.error = Some(AttemptError {
                        code: e.code(),
                        message: e.to_string(),
                    });
                }
                Ok(Own::RolledBack(Box::new(view), judged_as))
            }
            Err(e) => Err(e),
        }
    }

    /// The report of a goal papayu's own edit ended: verified and applied, or declined.
    fn ended_by_own(&self, mut report: SolveReport, ended: Mutation) -> SolveReport {
        match ended {
            Mutation::Verified(kept) => {
                let (view, outcome) = *kept;
                report.attempts.push(view);
                report.applied = Some(outcome);
                report.outcome = SolveOutcome::Verified;
            }
            Mutation::Declined(view) => {
                report.attempts.push(*view);
                report.outcome = SolveOutcome::Declined;
            }
            Mutation::Tried(_) => {}
        }
        self.finish_report(report)
    }

    /// No test command: one change, applied after the project's usual checks.
    async fn solve_unverified(
        &mut self,
        mut report: SolveReport,
        options: &SolveOptions,
        confirm: Option<ConfirmFn<'_>>,
        progress: ProgressFn<'_>,
    ) -> Result<SolveReport, AgentError> {
        report.reason = Some(
            "no test command is known (none given with --test, none in project memory, none \
             detected), so the change cannot be verified"
                .to_owned(),
        );
        progress(&Progress::Attempt { number: 1, of: 1 });
        let goal = report.goal.clone();
        let preview = self.prepare_brief(&goal, None, None, progress).await?;
        let mut attempt = AttemptView::of(1, 1, &preview);
        if preview.no_changes {
            report.attempts.push(attempt);
            report.outcome = SolveOutcome::NoChanges;
            return Ok(self.finish_report(report));
        }
        if let Some(confirm) = confirm
            && !confirm(&preview)
        {
            report.attempts.push(attempt);
            report.outcome = SolveOutcome::Declined;
            return Ok(self.finish_report(report));
        }
        match self.apply_inner(
            &preview,
            None,
            // `confirm` (when given) saw the preview, deletes listed, and accepted it.
            options.confirmed_deletes || confirm.is_some(),
            progress,
            options.cancel.clone(),
            super::apply::CheckPlan::Project,
        ) {
            Ok(outcome) => {
                report.applied = Some(outcome);
                report.outcome = SolveOutcome::AppliedUnverified;
            }
            Err(AgentError::Apply(e)) if e.code() != ErrorCode::Cancelled => {
                attempt.error = Some(AttemptError {
                    code: e.code(),
                    message: e.to_string(),
                });
                report.outcome = SolveOutcome::NotSolved;
            }
            Err(e) => return Err(e),
        }
        report.attempts.push(attempt);
        Ok(self.finish_report(report))
    }

    /// The model's account of a test run ([`failure_digest`]) with the project's absolute path
    /// left out: the model edits by project-relative paths, and a prompt that does not name the
    /// (often temporary) directory reads the same wherever the project lies.
    fn digest(&self, output: &str) -> String {
        let mut text = output.to_owned();
        let canonical = self.root.canonicalize_utf8().ok();
        for root in
            std::iter::once(self.root.as_str()).chain(canonical.as_ref().map(|c| c.as_str()))
        {
            let root = root.trim_end_matches('/');
            if root.len() > 1 {
                text = text.replace(&format!("{root}/"), "");
            }
        }
        failure_digest(&text, FEEDBACK_CHARS)
    }

    /// What is tried after the tests rejected `preview`'s change, before the model is asked
    /// again: the change with the renames it began completed, then those renames alone (D74),
    /// the definitions it began to move into a new module moved (D78), its new definitions
    /// added alone (D79), then at most `parts` of its parts (D65). (The rename or move the goal
    /// asks for in words was tried before the model was asked, D88.)
    fn derived(&self, preview: &ApplyPreview, parts: usize) -> Vec<Derived> {
        let users = self.users();
        let mut out: Vec<Derived> = super::rename::completed(&self.root, &preview.plan, &users)
            .into_iter()
            .map(Derived::Renamed)
            .collect();
        out.extend(
            super::moves::moved(&self.root, &preview.plan, &users)
                .into_iter()
                .map(Derived::Moved),
        );
        out.extend(super::addition::added(&self.root, &preview.plan).map(Derived::Added));
        out.extend(
            super::parts::parts(&self.root, &preview.plan, parts)
                .into_iter()
                .map(Derived::Part),
        );
        out
    }

    /// The refactoring `goal` asks for in words, as papayu's own changes (D88): the rename
    /// (D86), then the move — begun as a model begins one ([`super::asked::begun`]) and carried
    /// out by the completions that read a begun move: D78 for some of a module's definitions,
    /// D76 for a whole module (the completed change, then the rename alone).
    fn asked_changes(&self, goal: &str) -> Vec<Derived> {
        let asked_move = super::asked::asked_move(goal);
        if asked_move.is_none() && super::rename::asked_rename(goal).is_none() {
            // Most goals: no project search is opened.
            return Vec::new();
        }
        let users = self.users();
        let mut out: Vec<Derived> = super::rename::asked(&self.root, goal, &users)
            .into_iter()
            .map(Derived::Renamed)
            .collect();
        if let Some(asked) = asked_move
            && let Some((document, _, _)) = super::asked::begun(&self.root, &asked, &users)
            && let Ok(begun) = self.preview_own(goal, &document, String::new())
        {
            out.extend(
                super::moves::moved(&self.root, &begun.plan, &users)
                    .into_iter()
                    .map(|m| Derived::Moved(super::moves::Moved { asked: true, ..m })),
            );
            out.extend(
                super::rename::completed(&self.root, &begun.plan, &users)
                    .into_iter()
                    .map(|r| Derived::Renamed(super::rename::Renamed { asked: true, ..r })),
            );
        }
        out
    }

    /// The files a change may write whose text holds a name (the project search, with room for
    /// every use of a name rather than the model's 50).
    fn users(&self) -> impl Fn(&str) -> Vec<String> + '_ {
        let project = self.engine.project();
        let config = papayu_context::ContextConfig {
            max_search_hits: RENAME_SEARCH_HITS,
            ..project.config().clone()
        };
        let wide = papayu_context::Project::open(project.root(), config).ok();
        move |name: &str| -> Vec<String> {
            let mut paths: Vec<String> = wide
                .as_ref()
                .and_then(|p| {
                    p.search_hits(name, None, papayu_context::SearchMode::Literal)
                        .ok()
                })
                .map(|r| r.hits.into_iter().map(|h| h.path).collect())
                .unwrap_or_default();
            paths.dedup();
            // Only files a change may write: a Rust project's `target/` dep-info files name
            // every module, and a completion that rewrote them would be rejected whole.
            paths.retain(|p| {
                papayu_validate::RelPath::parse(p).is_ok_and(|rel| {
                    self.policy.forbidden_dir(&rel).is_none()
                        && self.policy.is_allowed_file_name(&rel)
                })
            });
            paths
        }
    }

    fn finish_report(&self, mut report: SolveReport) -> SolveReport {
        report.usage = self.usage;
        report
    }
}
