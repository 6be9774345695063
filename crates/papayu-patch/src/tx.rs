//! Projects and transactions: the public face of SPEC §5.2, §5.4–§5.6.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use papayu_protocol::ActionKind;
use papayu_validate::ValidatedPlan;
use serde::Serialize;

use crate::checks::{self, CheckReport, Checks, Sandbox};
use crate::engine::EngineOptions;
use crate::error::PatchError;
use crate::fsx::Root;
use crate::journal::{
    self, ActionRecord, Manifest, Op, PlannedOp, Snapshot, State, TxKind, TxStatus,
};
use crate::lock;
use crate::plan;

/// Default depth of the undo stack.
pub const DEFAULT_UNDO_DEPTH: usize = 50;
/// Default timeout of one check command.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(120);

/// Where a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Stage {
    /// The journal is durable; files are being written.
    Writing,
    /// Running check commands.
    Checking,
    /// Committed.
    Committed,
}

/// A progress event, given to the callback of [`ApplyOptions::on_progress`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress<'a> {
    /// The stage.
    pub stage: Stage,
    /// Steps done in this stage.
    pub done: usize,
    /// Steps in this stage.
    pub total: usize,
    /// The path (or check command) just finished.
    pub item: &'a str,
    /// In the [`Stage::Checking`] stage: the report of the check just finished (its status and
    /// the tail of its output).
    pub check: Option<&'a CheckReport>,
}

type ProgressFn<'a> = Box<dyn FnMut(&Progress<'_>) + 'a>;
type JudgeFn<'a> = Box<dyn Fn(&CheckReport) -> Result<(), String> + 'a>;

/// Options of one apply (or undo/redo).
#[non_exhaustive]
pub struct ApplyOptions<'a> {
    /// Checks to run before committing.
    pub checks: Checks,
    /// Timeout of each check command.
    pub check_timeout: Duration,
    /// Engine options (`normalize_eol_lf`).
    pub engine: EngineOptions,
    /// Undo stack depth (oldest transactions beyond it are pruned).
    pub undo_depth: usize,
    /// How check commands are confined.
    pub sandbox: Sandbox,
    progress: Option<ProgressFn<'a>>,
    judge: Option<JudgeFn<'a>>,
    cancel: Option<Arc<AtomicBool>>,
    #[cfg(any(test, feature = "fault-injection"))]
    fault: Option<crate::fault::FaultPlan>,
}

impl Default for ApplyOptions<'_> {
    fn default() -> Self {
        Self {
            checks: Checks::None,
            check_timeout: DEFAULT_CHECK_TIMEOUT,
            engine: EngineOptions::default(),
            undo_depth: DEFAULT_UNDO_DEPTH,
            sandbox: Sandbox::None,
            progress: None,
            judge: None,
            cancel: None,
            #[cfg(any(test, feature = "fault-injection"))]
            fault: None,
        }
    }
}

impl std::fmt::Debug for ApplyOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApplyOptions")
            .field("checks", &self.checks)
            .field("check_timeout", &self.check_timeout)
            .field("engine", &self.engine)
            .field("undo_depth", &self.undo_depth)
            .finish_non_exhaustive()
    }
}

impl<'a> ApplyOptions<'a> {
    /// Run these checks before committing.
    pub fn checks(mut self, checks: Checks) -> Self {
        self.checks = checks;
        self
    }

    /// Timeout of each check command (default 120 s).
    pub fn check_timeout(mut self, timeout: Duration) -> Self {
        self.check_timeout = timeout;
        self
    }

    /// Write LF line endings and a final newline (`PAPAYU_NORMALIZE_EOL=lf`).
    pub fn normalize_eol_lf(mut self, on: bool) -> Self {
        self.engine.normalize_eol_lf = on;
        self
    }

    /// Undo stack depth (default 50).
    pub fn undo_depth(mut self, depth: usize) -> Self {
        self.undo_depth = depth.max(1);
        self
    }

    /// Confine check commands with `sandbox`.
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Let `judge` decide whether a check run passes (instead of its exit status): the
    /// transaction commits only when it returns `Ok` for every check; an `Err` is the reason
    /// the change is rolled back ([`PatchError::CheckFailed`]'s status). papayu-agent judges
    /// the project's tests against the run before the change this way.
    pub fn judge(mut self, judge: impl Fn(&CheckReport) -> Result<(), String> + 'a) -> Self {
        self.judge = Some(Box::new(judge));
        self
    }

    /// Call `f` after each file written and each check run.
    pub fn on_progress(mut self, f: impl FnMut(&Progress<'_>) + 'a) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Cancel from another thread: once `flag` is set, the transaction stops at its next step
    /// (a running check command's process group is killed), rolls back and returns
    /// [`PatchError::Cancelled`]. Setting it after the commit point has no effect.
    pub fn cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Test seam: make one write, fsync or rename fail (`fault-injection` feature only).
    #[cfg(any(test, feature = "fault-injection"))]
    #[doc(hidden)]
    pub fn inject_fault(mut self, plan: crate::fault::FaultPlan) -> Self {
        self.fault = Some(plan);
        self
    }

    fn report(&mut self, stage: Stage, done: usize, total: usize, item: &str) {
        self.report_check(stage, done, total, item, None);
    }

    fn report_check(
        &mut self,
        stage: Stage,
        done: usize,
        total: usize,
        item: &str,
        check: Option<&CheckReport>,
    ) {
        if let Some(f) = self.progress.as_mut() {
            f(&Progress {
                stage,
                done,
                total,
                item,
                check,
            });
        }
    }
}

/// Counts per kind (SPEC §5.4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// CREATE_FILE.
    pub create: usize,
    /// UPDATE_FILE.
    pub update: usize,
    /// PATCH_FILE.
    pub patch: usize,
    /// EDIT_FILE and REPLACE_RANGE.
    pub edit: usize,
    /// DELETE_FILE.
    pub delete: usize,
    /// CREATE_DIR.
    pub mkdir: usize,
    /// DELETE_DIR.
    pub rmdir: usize,
    /// Actions that would fail.
    pub blocked: usize,
}

/// One hunk of a PATCH_FILE, as placed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HunkPlacement {
    /// 0-based hunk index.
    pub index: usize,
    /// The `@@` header.
    pub header: String,
    /// `exact`, `offset`, `trailing_whitespace` or `indentation`.
    pub tier: String,
    /// 1-based line where it applied.
    pub old_start: usize,
}

/// An error an action would hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionError {
    /// The stable code.
    pub code: papayu_protocol::ErrorCode,
    /// The full message.
    pub message: String,
}

/// Preview of one action (SPEC §5.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    /// The action's index in the plan.
    pub index: usize,
    /// `CREATE_FILE`, …
    pub kind: String,
    /// The normalised path.
    pub path: String,
    /// Unified diff old → new with 3 lines of context (empty for directories and no-ops).
    pub diff: String,
    /// Size before, for files.
    pub old_bytes: Option<usize>,
    /// Size after, for files that exist afterwards.
    pub new_bytes: Option<usize>,
    /// Files a DELETE removes.
    pub removed_files: usize,
    /// The action changes nothing.
    pub noop: bool,
    /// PATCH_FILE hunk placements.
    pub hunks: Vec<HunkPlacement>,
    /// The error apply would hit.
    pub error: Option<ActionError>,
}

/// What apply would do (SPEC §5.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preview {
    /// Per action, in apply order.
    pub files: Vec<FileDiff>,
    /// Counts.
    pub summary: Summary,
}

impl Preview {
    /// Whether apply would succeed (before checks).
    pub fn is_ok(&self) -> bool {
        self.summary.blocked == 0
    }
}

/// The result of a committed transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApplyReport {
    /// Transaction id (a directory under `.papa-yu/tx/` while it is undoable).
    pub tx_id: String,
    /// What was done, per action (the shape of a preview without errors; `diff` is empty:
    /// the diffs are what [`Transaction::preview`] showed before apply).
    pub files: Vec<FileDiff>,
    /// Counts.
    pub summary: Summary,
    /// The checks that ran.
    pub checks: Vec<CheckReport>,
}

/// One transaction on the undo or redo stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    /// Transaction id.
    pub tx_id: String,
    /// apply, undo or redo.
    pub kind: TxKind,
    /// Milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// The actions (for an undo/redo: those of the transaction it reverts).
    pub actions: Vec<ActionRecord>,
    /// Paths touched.
    pub paths: Vec<String>,
}

/// The undo and redo stacks, most recent last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct History {
    /// What `undo` would revert, the last one first.
    pub undo: Vec<HistoryEntry>,
    /// What `redo` would re-apply, the last one first.
    pub redo: Vec<HistoryEntry>,
}

/// A project directory papayu applies transactions to.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    undo_depth: usize,
}

/// Roll back any unfinished transaction in the project at `root` (SPEC §5.2 step 7).
pub fn recover(root: impl AsRef<Path>) -> Result<journal::RecoveryReport, PatchError> {
    let r = Root::open(root.as_ref())?;
    let _lock = lock::acquire(&r)?;
    journal::recover_locked(&r, DEFAULT_UNDO_DEPTH)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn kind_name(k: &ActionKind) -> String {
    k.as_str().to_owned()
}

impl Project {
    /// Open a project, first rolling back any unfinished transaction (every entry point does).
    pub fn open(root: impl AsRef<Path>) -> Result<Project, PatchError> {
        let root = root.as_ref().to_path_buf();
        recover(&root)?;
        Ok(Project {
            root,
            undo_depth: DEFAULT_UNDO_DEPTH,
        })
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Roll back any unfinished transaction now.
    pub fn recover(&self) -> Result<journal::RecoveryReport, PatchError> {
        recover(&self.root)
    }

    /// Start a transaction for `plan` (nothing happens until [`Transaction::preview`] or
    /// [`Transaction::apply`]).
    pub fn transaction<'p>(&'p self, plan: &'p ValidatedPlan) -> Transaction<'p> {
        Transaction {
            project: self,
            plan,
            options: ApplyOptions::default().undo_depth(self.undo_depth),
        }
    }

    /// Undo the most recent transaction. Refused with `ERR_UNDO_CONFLICT` when any path it
    /// touched no longer holds its result, unless `force`.
    pub fn undo(&self, force: bool) -> Result<ApplyReport, PatchError> {
        self.revert(
            true,
            force,
            ApplyOptions::default().undo_depth(self.undo_depth),
        )
    }

    /// Redo the most recently undone transaction (same conflict rule as [`Project::undo`]).
    pub fn redo(&self, force: bool) -> Result<ApplyReport, PatchError> {
        self.revert(
            false,
            force,
            ApplyOptions::default().undo_depth(self.undo_depth),
        )
    }

    /// [`Project::undo`] / [`Project::redo`] with options (checks, progress, …).
    pub fn undo_with(
        &self,
        force: bool,
        options: ApplyOptions<'_>,
    ) -> Result<ApplyReport, PatchError> {
        self.revert(true, force, options)
    }

    /// [`Project::redo`] with options.
    pub fn redo_with(
        &self,
        force: bool,
        options: ApplyOptions<'_>,
    ) -> Result<ApplyReport, PatchError> {
        self.revert(false, force, options)
    }

    /// The undo and redo stacks.
    pub fn history(&self) -> Result<History, PatchError> {
        let root = Root::open(&self.root)?;
        let stack = journal::read_stack(&root)?;
        let entry = |id: &String| -> Result<Option<HistoryEntry>, PatchError> {
            let Some(m) = journal::read_manifest(&root, id)? else {
                return Ok(None);
            };
            let actions = match (&m.reverts, m.actions.is_empty()) {
                (Some(_), true) => Vec::new(),
                _ => m.actions.clone(),
            };
            Ok(Some(HistoryEntry {
                tx_id: m.id.clone(),
                kind: m.kind,
                created_unix_ms: m.created_unix_ms,
                actions,
                paths: m.entries.iter().map(|e| e.path.clone()).collect(),
            }))
        };
        let mut undo = Vec::new();
        for id in stack.undo.iter().rev() {
            undo.extend(entry(id)?);
        }
        let mut redo = Vec::new();
        for id in stack.redo.iter().rev() {
            redo.extend(entry(id)?);
        }
        Ok(History { undo, redo })
    }

    fn revert(
        &self,
        undo: bool,
        force: bool,
        mut options: ApplyOptions<'_>,
    ) -> Result<ApplyReport, PatchError> {
        let root = Root::open(&self.root)?;
        let _lock = lock::acquire(&root)?;
        journal::recover_locked(&root, options.undo_depth)?;
        let stack = journal::read_stack(&root)?;
        let what = if undo { "undo" } else { "redo" };
        let target = if undo {
            stack.undo.last()
        } else {
            stack.redo.last()
        };
        let target = target.ok_or(PatchError::NothingToUndo { what })?.clone();
        let m = journal::read_manifest(&root, &target)?.ok_or_else(|| PatchError::Journal {
            path: journal::tx_path(&target),
            message: "the transaction's journal is missing".to_owned(),
        })?;
        if !force {
            let mut changed = Vec::new();
            for e in &m.entries {
                // A committed manifest records every after-state; one without is not trusted.
                let holds = match &e.after {
                    Some(after) => journal::holds(&root, &e.path, after)?,
                    None => false,
                };
                if !holds {
                    changed.push(e.path.clone());
                }
            }
            // A directory the transaction created must not have gained files since.
            for e in &m.entries {
                if matches!(e.before, State::Absent)
                    && matches!(e.after, Some(State::Dir { .. }))
                    && matches!(root.node(&e.path)?, crate::fsx::Node::Dir { .. })
                {
                    for name in root.list(&e.path)? {
                        let child = format!("{}/{name}", e.path);
                        if !m.entries.iter().any(|x| x.path == child) {
                            changed.push(child);
                        }
                    }
                }
            }
            if !changed.is_empty() {
                changed.sort();
                changed.dedup();
                return Err(PatchError::UndoConflict { paths: changed });
            }
        }
        let pack = root.read(&format!("{}/orig.bin", journal::tx_path(&target)))?;
        let mut ops = Vec::new();
        for e in m.entries.iter().rev() {
            let op = match &e.before {
                State::Absent => match root.node(&e.path)? {
                    crate::fsx::Node::Dir { .. } => Op::RemoveDir {
                        path: e.path.clone(),
                    },
                    crate::fsx::Node::Absent => continue,
                    _ => Op::RemoveFile {
                        path: e.path.clone(),
                    },
                },
                State::Dir { mode } => Op::MkDir {
                    path: e.path.clone(),
                    mode: *mode,
                },
                State::Symlink { target } => Op::Symlink {
                    path: e.path.clone(),
                    target: hex::decode(target).map_err(|_| PatchError::Journal {
                        path: journal::tx_path(&m.id),
                        message: "bad symlink target".to_owned(),
                    })?,
                },
                State::File { sha256, mode, copy } => {
                    let bytes = copy
                        .and_then(|(s, l)| {
                            pack.get(usize::try_from(s).ok()?..usize::try_from(s + l).ok()?)
                        })
                        .filter(|b| papayu_protocol::sha256_hex(b) == *sha256)
                        .ok_or_else(|| PatchError::Journal {
                            path: journal::tx_path(&m.id),
                            message: format!(
                                "the copy of `{}` is missing or does not match its sha256",
                                e.path
                            ),
                        })?;
                    Op::Write {
                        path: e.path.clone(),
                        bytes: journal::Bytes::Borrowed(bytes),
                        mode: *mode,
                    }
                }
            };
            let before = Snapshot::read(&root, &e.path)?;
            ops.push(PlannedOp { op, before });
        }
        let kind = if undo { TxKind::Undo } else { TxKind::Redo };
        let manifest = execute(
            &root,
            &mut options,
            kind,
            Some(target),
            m.actions.clone(),
            m.protocol,
            ops,
        )?;
        Ok(ApplyReport {
            tx_id: manifest.id,
            files: Vec::new(),
            summary: Summary::default(),
            checks: Vec::new(),
        })
    }
}

/// A plan on its way to disk: [`Transaction::preview`] shows it, [`Transaction::apply`] writes it.
pub struct Transaction<'p> {
    project: &'p Project,
    plan: &'p ValidatedPlan,
    options: ApplyOptions<'p>,
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("root", &self.project.root)
            .field("options", &self.options)
            .finish()
    }
}

fn unified_diff(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> String {
    let old_text = old.map(String::from_utf8_lossy).unwrap_or_default();
    let new_text = new.map(String::from_utf8_lossy).unwrap_or_default();
    if old_text == new_text {
        return String::new();
    }
    let diff = similar::TextDiff::from_lines(old_text.as_ref(), new_text.as_ref());
    let a = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    let b = if new.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_owned()
    };
    diff.unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string()
}

/// Per-action results and counts; unified diffs only when `with_diffs` (the preview): apply has
/// already been previewed, and rendering megabytes of diff there only costs time and memory.
fn build_files(computed: &plan::Computed<'_>, with_diffs: bool) -> (Vec<FileDiff>, Summary) {
    let mut summary = Summary::default();
    let mut files = Vec::new();
    for o in &computed.outcomes {
        let a = o.action;
        match a.kind() {
            ActionKind::CreateFile => summary.create += 1,
            ActionKind::UpdateFile => summary.update += 1,
            ActionKind::PatchFile => summary.patch += 1,
            ActionKind::EditFile | ActionKind::ReplaceRange => summary.edit += 1,
            ActionKind::DeleteFile => summary.delete += 1,
            ActionKind::CreateDir => summary.mkdir += 1,
            ActionKind::DeleteDir => summary.rmdir += 1,
            ActionKind::Unknown(_) => {}
        }
        let mut fd = FileDiff {
            index: a.index,
            kind: kind_name(a.kind()),
            path: a.path.as_str().to_owned(),
            diff: String::new(),
            old_bytes: None,
            new_bytes: None,
            removed_files: 0,
            noop: false,
            hunks: Vec::new(),
            error: None,
        };
        match &o.result {
            Ok(e) => {
                if matches!(a.kind(), ActionKind::DeleteFile | ActionKind::DeleteDir)
                    || e.old.is_some()
                    || e.new.is_some()
                {
                    let is_file_kind =
                        !matches!(a.kind(), ActionKind::DeleteDir | ActionKind::CreateDir);
                    if with_diffs && is_file_kind && !e.noop {
                        fd.diff = unified_diff(a.path.as_str(), e.old.as_deref(), e.new.as_deref());
                    }
                }
                fd.old_bytes = e.old.as_ref().map(|b| b.len());
                fd.new_bytes = e.new.as_ref().map(|b| b.len());
                fd.removed_files = e.removed_files;
                fd.noop = e.noop;
                fd.hunks = e
                    .hunks
                    .iter()
                    .map(|h| HunkPlacement {
                        index: h.index,
                        header: h.header.clone(),
                        tier: h.tier.as_str().to_owned(),
                        old_start: h.old_start,
                    })
                    .collect();
            }
            Err(err) => {
                summary.blocked += 1;
                fd.error = Some(ActionError {
                    code: err.code(),
                    message: err.to_string(),
                });
            }
        }
        files.push(fd);
    }
    (files, summary)
}

impl<'p> Transaction<'p> {
    /// Replace the options.
    pub fn options(mut self, options: ApplyOptions<'p>) -> Self {
        self.options = options;
        self
    }

    /// What [`Transaction::apply`] would do, computed by the same code, writing nothing.
    pub fn preview(&self) -> Result<Preview, PatchError> {
        let root = Root::open(&self.project.root)?;
        let computed = plan::compute(&root, self.plan, self.options.engine);
        let (files, summary) = build_files(&computed, true);
        tracing::info!(target: "papayu", event = "PREVIEW_READY", actions = files.len(), blocked = summary.blocked);
        Ok(Preview { files, summary })
    }

    /// Apply the plan all-or-nothing (SPEC §5.2). On any error nothing has changed on disk.
    pub fn apply(mut self) -> Result<ApplyReport, PatchError> {
        let root = Root::open(&self.project.root)?;
        let _lock = lock::acquire(&root)?;
        journal::recover_locked(&root, self.options.undo_depth)?;
        let computed = plan::compute(&root, self.plan, self.options.engine);
        let (files, summary) = build_files(&computed, false);
        if let Some(err) = computed.outcomes.into_iter().find_map(|o| o.result.err()) {
            tracing::info!(target: "papayu", event = "APPLY_ROLLBACK", code = %err.code(), stage = "compute");
            return Err(err);
        }
        let actions = ordered_records(self.plan);
        let protocol = Some(self.plan.version.number());
        #[cfg(any(test, feature = "fault-injection"))]
        root.faults.set(self.options.fault);
        let checks_out = std::cell::RefCell::new(Vec::new());
        let manifest = execute_with_checks(
            &root,
            &mut self.options,
            TxKind::Apply,
            None,
            actions,
            protocol,
            computed.ops,
            &checks_out,
        )?;
        tracing::info!(target: "papayu", event = "APPLY_SUCCESS", tx = %manifest.id, actions = files.len());
        Ok(ApplyReport {
            tx_id: manifest.id,
            files,
            summary,
            checks: checks_out.into_inner(),
        })
    }
}

fn ordered_records(plan: &ValidatedPlan) -> Vec<ActionRecord> {
    plan::ordered(plan)
        .into_iter()
        .map(|a| ActionRecord {
            kind: kind_name(a.kind()),
            path: a.path.as_str().to_owned(),
        })
        .collect()
}

fn execute(
    root: &Root,
    options: &mut ApplyOptions<'_>,
    kind: TxKind,
    reverts: Option<String>,
    actions: Vec<ActionRecord>,
    protocol: Option<u8>,
    ops: Vec<PlannedOp<'_>>,
) -> Result<Manifest, PatchError> {
    #[cfg(any(test, feature = "fault-injection"))]
    root.faults.set(options.fault);
    let out = std::cell::RefCell::new(Vec::new());
    execute_with_checks(root, options, kind, reverts, actions, protocol, ops, &out)
}

#[allow(clippy::too_many_arguments)]
fn execute_with_checks(
    root: &Root,
    options: &mut ApplyOptions<'_>,
    kind: TxKind,
    reverts: Option<String>,
    actions: Vec<ActionRecord>,
    protocol: Option<u8>,
    ops: Vec<PlannedOp<'_>>,
    check_reports: &std::cell::RefCell<Vec<CheckReport>>,
) -> Result<Manifest, PatchError> {
    let seq = journal::next_seq(root)?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let id = format!("{seq:010}-{:08x}", nanos ^ std::process::id());
    let header = Manifest {
        format: 1,
        id: id.clone(),
        seq,
        kind,
        reverts,
        status: TxStatus::Pending,
        created_unix_ms: now_ms(),
        protocol,
        actions,
        entries: Vec::new(),
    };
    root.faults.arm(true);
    let manifest = match journal::write_journal(root, header, &ops) {
        Ok(m) => m,
        Err(e) => {
            root.faults.arm(false);
            // No manifest (or an unrenamed one): nothing was applied; drop the partial journal.
            let cleanup = match journal::read_manifest(root, &id) {
                Ok(Some(m)) => journal::rollback(root, &m),
                _ => root
                    .remove_tree(&journal::tx_path(&id))
                    .map_err(PatchError::from),
            };
            return Err(match cleanup {
                Ok(()) => e,
                Err(r) => PatchError::RollbackFailed {
                    error: Box::new(e),
                    rollback: Box::new(r),
                },
            });
        }
    };
    let result = (|| -> Result<Manifest, PatchError> {
        let cancel = options.cancel.clone();
        let committed = journal::apply_ops(
            root,
            &manifest,
            &ops,
            cancel.as_deref(),
            &mut |done, total, item| {
                options.report(Stage::Writing, done, total, item);
            },
        )?;
        let commands = match &options.checks {
            Checks::None => Vec::new(),
            Checks::Commands(c) => c.clone(),
            Checks::Detect => checks::detect(root),
        };
        if !commands.is_empty() {
            let mut reports = Vec::new();
            let mut failed: Option<(CheckReport, String)> = None;
            let total = commands.len();
            for (i, c) in commands.iter().enumerate() {
                let r = checks::run_check(
                    root.path(),
                    c,
                    options.check_timeout,
                    options.cancel.as_deref(),
                    &options.sandbox,
                );
                // A judge decides what a run means; without one, exit status 0 passes.
                let verdict = match &options.judge {
                    Some(judge) => judge(&r),
                    None if r.success => Ok(()),
                    None => Err(r.status.clone()),
                };
                options.report_check(Stage::Checking, i + 1, total, c, Some(&r));
                if let Err(why) = verdict {
                    failed = Some((r.clone(), why));
                    reports.push(r);
                    break;
                }
                reports.push(r);
            }
            checks::save_log(root, &reports);
            *check_reports.borrow_mut() = reports;
            if options.cancelled() {
                return Err(PatchError::Cancelled);
            }
            if let Some((r, why)) = failed {
                return Err(PatchError::CheckFailed {
                    command: r.command,
                    status: why,
                    output: r.output,
                });
            }
        }
        if options.cancelled() {
            return Err(PatchError::Cancelled);
        }
        journal::commit(root, &committed)?;
        Ok(committed)
    })();
    root.faults.arm(false);
    let committed = match result {
        Ok(m) => m,
        Err(e) => {
            tracing::info!(target: "papayu", event = "APPLY_ROLLBACK", code = %e.code(), tx = %id);
            // If the failure came after the commit rename (e.g. its directory fsync), the
            // manifest on disk may say committed: mark it pending again first so no later fold
            // sees it as done.
            let rb = journal::write_manifest(root, &manifest)
                .and_then(|()| journal::rollback(root, &manifest));
            return Err(match rb {
                Ok(()) => e,
                Err(r) => PatchError::RollbackFailed {
                    error: Box::new(e),
                    rollback: Box::new(r),
                },
            });
        }
    };
    let total = ops.len();
    options.report(Stage::Committed, total, total, &id);
    // After the commit point: a failure here only delays the stack update to the next open.
    if let Err(e) = journal::fold_committed(root, options.undo_depth) {
        tracing::warn!(error = %e, "could not update the undo stack; the next papayu run will");
    }
    Ok(committed)
}
