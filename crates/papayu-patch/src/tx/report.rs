//! What previews, applies and the history report: plain serialisable data, built from a
//! computed plan without touching the disk.

use papayu_protocol::ActionKind;
use serde::Serialize;

use super::diff::{DIFF_BUDGET, unified_diff};
use crate::checks::CheckReport;
use crate::engine::HunkTier;
use crate::journal::{ActionRecord, Displaced, TxKind};
use crate::plan;

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
    /// How it found its place (serialised as `exact`, `offset`, `trailing_whitespace`,
    /// `indentation`, `realigned` or `punctuation`).
    pub tier: HunkTier,
    /// 1-based line where it applied.
    pub old_start: usize,
}

/// An error an action would hit (an [`ApplyError`](crate::ApplyError) as the preview shows it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionError {
    /// The stable code.
    pub code: papayu_protocol::ErrorCode,
    /// The message (without the code).
    pub message: String,
}

/// Preview of one action (SPEC §5.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    /// The action's index in the plan.
    pub index: usize,
    /// `CREATE_FILE`, …
    pub kind: ActionKind,
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
    /// the diffs are what [`Transaction::preview`](crate::Transaction::preview) showed before
    /// apply).
    pub files: Vec<FileDiff>,
    /// Counts.
    pub summary: Summary,
    /// The checks that ran.
    pub checks: Vec<CheckReport>,
    /// For a forced undo or redo: the files it replaced although they had changed since the
    /// transaction, and where their content went (`.papa-yu/displaced/<tx>/<path>`, never
    /// pruned). Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub displaced: Vec<Displaced>,
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

/// Per-action results and counts; unified diffs only when `with_diffs` (the preview): apply has
/// already been previewed, and rendering megabytes of diff there only costs time and memory.
pub(super) fn build_files(
    computed: &plan::Computed<'_>,
    with_diffs: bool,
) -> (Vec<FileDiff>, Summary) {
    let mut summary = Summary::default();
    let mut files = Vec::new();
    let deadline = std::time::Instant::now() + DIFF_BUDGET;
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
            kind: a.kind().clone(),
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
                        fd.diff = unified_diff(
                            a.path.as_str(),
                            e.old.as_deref(),
                            e.new.as_deref(),
                            deadline,
                        );
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
                        tier: h.tier,
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
