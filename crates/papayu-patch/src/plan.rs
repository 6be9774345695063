//! From a validated plan to primitive operations, entirely in memory (SPEC §5.1, §5.2 step 2).
//!
//! Preview and apply both call [`compute`]: preview renders its per-action outcomes, apply
//! refuses the plan if any outcome is an error and otherwise journals and runs the ops.

use std::collections::HashMap;
use std::sync::Arc;

use papayu_protocol::{ActionKind, ProtocolVersion};
use papayu_validate::{RelPath, ValidatedAction};

use crate::engine::{self, EngineOptions, HunkReport};
use crate::error::{ApplyError, EscapeReason, InvalidAction, IoOp, StoreError};
use crate::fsx::{Node, Root};
use crate::journal::{Bytes, Op, PlannedOp, Snapshot};

/// Sort key of SPEC §5.1: CREATE_DIR (shallow first) → CREATE_FILE / UPDATE_FILE →
/// PATCH_FILE / EDIT_FILE / REPLACE_RANGE → DELETE_FILE → DELETE_DIR (deepest first); ties by
/// path. The sort is stable, so several EDIT_FILEs of one file keep the model's order.
fn order_key(a: &ValidatedAction) -> (u8, i64, String) {
    let depth = a.path.depth() as i64;
    let path = a.path.as_str().to_owned();
    match a.kind() {
        ActionKind::CreateDir => (0, depth, path),
        ActionKind::CreateFile | ActionKind::UpdateFile => (1, 0, path),
        ActionKind::PatchFile | ActionKind::EditFile | ActionKind::ReplaceRange => (2, 0, path),
        ActionKind::DeleteFile => (3, 0, path),
        ActionKind::DeleteDir => (4, -depth, path),
        ActionKind::Unknown(_) => (5, 0, path),
    }
}

/// The plan's actions in apply order.
pub(crate) fn ordered(actions: &[ValidatedAction]) -> Vec<&ValidatedAction> {
    let mut v: Vec<&ValidatedAction> = actions.iter().collect();
    v.sort_by_cached_key(|a| order_key(a));
    v
}

/// The checks the engine repeats itself before touching the disk, whatever the caller did.
///
/// Integration point: papayu-validate's full plan validation (policy, limits, content rules)
/// runs in the caller (the CLI and papayu-agent call it, and only it makes a
/// [`papayu_validate::ValidatedPlan`]);
/// what is repeated here is what the engine's own safety depends on — known kind for the
/// version, a canonical path, and never papayu's state or git's.
pub(crate) fn revalidate(version: ProtocolVersion, a: &ValidatedAction) -> Result<(), ApplyError> {
    if !version.allows(a.kind()) {
        return Err(invalid(
            a,
            InvalidAction::KindNotInProtocol {
                kind: a.kind().clone(),
                version,
            },
        ));
    }
    match RelPath::parse(a.path.as_str()) {
        Ok(p) if p == a.path => {}
        Ok(_) | Err(_) => return Err(invalid(a, InvalidAction::NotCanonical)),
    }
    // The full rule set, aliases included (`.GIT`, `.git.`, `GIT~1`, `.g\u{200c}it`, …): a
    // first-segment comparison once let those through.
    if let Some(rule) = POLICY.protected_by(&a.path) {
        return Err(invalid(a, InvalidAction::Protected { rule }));
    }
    Ok(())
}

fn invalid(a: &ValidatedAction, reason: InvalidAction) -> ApplyError {
    ApplyError::Invalid {
        index: a.index,
        path: a.path.clone(),
        reason,
    }
}

/// [`ApplyError::FileExists`] for `a`.
fn exists(a: &ValidatedAction) -> ApplyError {
    ApplyError::FileExists {
        index: a.index,
        path: a.path.clone(),
    }
}

/// What one action will do (or why it cannot).
#[derive(Debug, Clone)]
pub(crate) struct Effect<'p> {
    /// Bytes before (files only; `None` = absent or not a file).
    pub(crate) old: Option<Bytes<'p>>,
    /// Bytes after (`None` = the file is removed or the action is not about file content).
    pub(crate) new: Option<Bytes<'p>>,
    pub(crate) hunks: Vec<HunkReport>,
    /// The action changes nothing (CREATE_DIR of an existing dir, DELETE of a missing path).
    pub(crate) noop: bool,
    /// Files removed (DELETE_FILE: 1; DELETE_DIR: every file below it).
    pub(crate) removed_files: usize,
}

pub(crate) struct ActionOutcome<'p> {
    pub(crate) action: &'p ValidatedAction,
    pub(crate) result: Result<Effect<'p>, ApplyError>,
}

/// The simulated tree: paths already touched by earlier actions of the plan.
#[derive(Default)]
struct Overlay<'p> {
    /// path → (state after the plan so far, index of its op in `ops`)
    state: HashMap<String, (Sim<'p>, usize)>,
    /// path → original bytes (for EDIT chains checking the base against the original).
    original: HashMap<String, Option<Bytes<'p>>>,
    /// What the current action changed in `state` and in earlier ops, to undo it if the action
    /// fails (cloning the whole map per action instead made a plan's compute quadratic).
    log: Vec<Undo<'p>>,
}

/// One change to undo: a path's previous overlay entry, or an earlier op's previous value.
enum Undo<'p> {
    State(String, Option<(Sim<'p>, usize)>),
    Op(usize, Op<'p>),
}

#[derive(Clone)]
enum Sim<'p> {
    Absent,
    /// Shared (or borrowed from the plan), so that the overlay, the write op and the preview
    /// hold the same bytes: planning copies no file content.
    File(Bytes<'p>),
    Dir,
}

pub(crate) struct Computed<'p> {
    pub(crate) ops: Vec<PlannedOp<'p>>,
    pub(crate) outcomes: Vec<ActionOutcome<'p>>,
}

struct Ctx<'r, 'p> {
    root: &'r Root,
    version: ProtocolVersion,
    engine: EngineOptions,
    overlay: Overlay<'p>,
    ops: Vec<PlannedOp<'p>>,
}

/// Compute every new content and the op list of `actions` (a plan validated under `version`),
/// touching nothing on disk.
pub(crate) fn compute<'p>(
    root: &Root,
    version: ProtocolVersion,
    actions: &'p [ValidatedAction],
    engine: EngineOptions,
) -> Computed<'p> {
    let mut ctx = Ctx {
        root,
        version,
        engine,
        overlay: Overlay::default(),
        ops: Vec::new(),
    };
    let mut outcomes = Vec::new();
    for a in ordered(actions) {
        let mark = ctx.ops.len();
        ctx.overlay.log.clear();
        let result = revalidate(version, a).and_then(|()| ctx.action(a));
        if result.is_err() {
            // Undo this action's partial effect so later actions are previewed on a consistent tree.
            while let Some(undo) = ctx.overlay.log.pop() {
                match undo {
                    Undo::State(path, Some(prev)) => {
                        ctx.overlay.state.insert(path, prev);
                    }
                    Undo::State(path, None) => {
                        ctx.overlay.state.remove(&path);
                    }
                    Undo::Op(idx, op) => ctx.ops[idx].op = op,
                }
            }
            ctx.ops.truncate(mark);
        }
        outcomes.push(ActionOutcome { action: a, result });
    }
    Computed {
        ops: ctx.ops,
        outcomes,
    }
}

impl<'p> Ctx<'_, 'p> {
    /// Whether `path` lies below a directory that this plan creates where nothing was, so that
    /// nothing can be there on disk: a new tree costs no lookups (three per file before).
    fn below_new_dir(&self, path: &str) -> bool {
        let mut dir = path;
        while let Some(i) = dir.rfind('/') {
            dir = &dir[..i];
            if let Some((Sim::Dir, idx)) = self.overlay.state.get(dir) {
                return matches!(
                    self.ops.get(*idx),
                    Some(PlannedOp {
                        op: Op::MkDir { .. },
                        before: Snapshot::Absent,
                    })
                );
            }
        }
        false
    }

    fn sim(&self, path: &str) -> Result<Sim<'p>, StoreError> {
        if let Some((s, _)) = self.overlay.state.get(path) {
            return Ok(s.clone());
        }
        if self.below_new_dir(path) {
            return Ok(Sim::Absent);
        }
        Ok(match Snapshot::read(self.root, path)? {
            Snapshot::Absent => Sim::Absent,
            Snapshot::File { bytes, .. } => Sim::File(Bytes::Shared(bytes)),
            Snapshot::Dir { .. } => Sim::Dir,
            Snapshot::Symlink { .. } => {
                return Err(StoreError::escape(path, EscapeReason::Symlink));
            }
        })
    }

    fn push(&mut self, op: Op<'p>, after: Sim<'p>) -> Result<(), StoreError> {
        let path = op.path().to_owned();
        if let Some(&(_, idx)) = self.overlay.state.get(&path) {
            // A second op on one path (several EDIT_FILEs): keep the first op's before-state.
            let prev_op = std::mem::replace(&mut self.ops[idx].op, op);
            self.overlay.log.push(Undo::Op(idx, prev_op));
            let prev = self.overlay.state.insert(path.clone(), (after, idx));
            self.overlay.log.push(Undo::State(path, prev));
            return Ok(());
        }
        let before = if self.below_new_dir(&path) {
            Snapshot::Absent
        } else {
            Snapshot::read(self.root, &path)?
        };
        if matches!(before, Snapshot::Symlink { .. }) && !matches!(op, Op::RemoveFile { .. }) {
            return Err(StoreError::escape(&path, EscapeReason::Symlink));
        }
        if let Snapshot::File { bytes, .. } = &before {
            self.overlay
                .original
                .entry(path.clone())
                .or_insert_with(|| Some(Bytes::Shared(Arc::clone(bytes))));
        }
        self.ops.push(PlannedOp { op, before });
        let prev = self
            .overlay
            .state
            .insert(path.clone(), (after, self.ops.len() - 1));
        self.overlay.log.push(Undo::State(path, prev));
        Ok(())
    }

    fn mode_of(&self, path: &str) -> Result<Option<u32>, StoreError> {
        if self.below_new_dir(path) {
            return Ok(None);
        }
        Ok(match self.root.node(path)? {
            Node::File { mode } => Some(mode),
            _ => None,
        })
    }

    /// Make sure every ancestor of `path` is (or will be) a directory.
    fn ensure_parents(&mut self, path: &RelPath) -> Result<(), StoreError> {
        let ancestors: Vec<String> = path.ancestors().map(str::to_owned).collect();
        for dir in ancestors.into_iter().rev() {
            match self.sim(&dir)? {
                Sim::Dir => {}
                Sim::Absent => self.push(
                    Op::MkDir {
                        path: dir,
                        mode: None,
                    },
                    Sim::Dir,
                )?,
                Sim::File(_) => {
                    return Err(StoreError::unusable(
                        IoOp::CreateParentDir,
                        &dir,
                        std::io::ErrorKind::NotADirectory,
                        "a file is in the way",
                    ));
                }
            }
        }
        Ok(())
    }

    fn engine_err(a: &ValidatedAction, source: engine::EngineError) -> ApplyError {
        ApplyError::Engine {
            index: a.index,
            path: a.path.clone(),
            source,
        }
    }

    fn action(&mut self, a: &'p ValidatedAction) -> Result<Effect<'p>, ApplyError> {
        let path = a.path.as_str().to_owned();
        let empty = Effect {
            old: None,
            new: None,
            hunks: Vec::new(),
            noop: false,
            removed_files: 0,
        };
        match a.kind() {
            ActionKind::CreateDir => {
                self.ensure_parents(&a.path)?;
                match self.sim(&path)? {
                    Sim::Dir => Ok(Effect {
                        noop: true,
                        ..empty
                    }),
                    Sim::Absent => {
                        self.push(Op::MkDir { path, mode: None }, Sim::Dir)?;
                        Ok(empty)
                    }
                    Sim::File(_) => Err(exists(a)),
                }
            }
            ActionKind::CreateFile | ActionKind::UpdateFile => {
                let existing = self.sim(&path)?;
                let old = match existing {
                    Sim::Dir => return Err(exists(a)),
                    Sim::File(b) => Some(b),
                    Sim::Absent => None,
                };
                if old.is_some() {
                    match (a.kind(), self.version) {
                        (ActionKind::CreateFile, ProtocolVersion::V2 | ProtocolVersion::V3) => {
                            return Err(exists(a));
                        }
                        (ActionKind::UpdateFile, ProtocolVersion::V2) => {
                            return Err(ApplyError::UpdateExistingForbidden {
                                index: a.index,
                                path: a.path.clone(),
                            });
                        }
                        _ => {}
                    }
                } else {
                    self.ensure_parents(&a.path)?;
                }
                let base = old.clone();
                self.compute_write(a, path, old, base)
            }
            ActionKind::PatchFile | ActionKind::EditFile | ActionKind::ReplaceRange => {
                let current = match self.sim(&path)? {
                    Sim::File(b) => Some(b),
                    Sim::Absent | Sim::Dir => None,
                };
                let base = match self.overlay.original.get(&path) {
                    Some(orig) => orig.clone(),
                    None => current.clone(),
                };
                self.compute_write(a, path, current, base)
            }
            ActionKind::DeleteFile => match self.sim(&path)? {
                Sim::Absent => Ok(Effect {
                    noop: true,
                    ..empty
                }),
                Sim::File(b) => {
                    self.push(Op::RemoveFile { path }, Sim::Absent)?;
                    Ok(Effect {
                        old: Some(b),
                        removed_files: 1,
                        ..empty
                    })
                }
                Sim::Dir => Err(StoreError::unusable(
                    IoOp::DeleteFile,
                    &path,
                    std::io::ErrorKind::IsADirectory,
                    "is a directory; use DELETE_DIR",
                )
                .into()),
            },
            ActionKind::DeleteDir => match self.sim(&path)? {
                Sim::Absent => Ok(Effect {
                    noop: true,
                    ..empty
                }),
                Sim::File(_) => Err(StoreError::unusable(
                    IoOp::DeleteDir,
                    &path,
                    std::io::ErrorKind::NotADirectory,
                    "is a file; use DELETE_FILE",
                )
                .into()),
                Sim::Dir => {
                    let mut removed = 0;
                    self.delete_tree(a, &path, &mut removed)?;
                    Ok(Effect {
                        removed_files: removed,
                        ..empty
                    })
                }
            },
            ActionKind::Unknown(k) => {
                Err(invalid(a, InvalidAction::UnknownKind { kind: k.clone() }))
            }
        }
    }

    /// Compute `a`'s new bytes from `old` (its base hash checked against `base`, the file before
    /// the plan) and record the write.
    fn compute_write(
        &mut self,
        a: &'p ValidatedAction,
        path: String,
        old: Option<Bytes<'p>>,
        base: Option<Bytes<'p>>,
    ) -> Result<Effect<'p>, ApplyError> {
        let out =
            engine::compute_borrowing(old.as_deref(), base.as_deref(), &a.action, &self.engine)
                .map_err(|e| Self::engine_err(a, e))?;
        Ok(self.write(path, old, out)?)
    }

    /// Record a file write: the op for the journal and the simulated state share the bytes.
    fn write(
        &mut self,
        path: String,
        old: Option<Bytes<'p>>,
        (new, hunks): (std::borrow::Cow<'p, [u8]>, Vec<HunkReport>),
    ) -> Result<Effect<'p>, StoreError> {
        let mode = self.mode_of(&path)?;
        let new = Bytes::from(new);
        self.push(
            Op::Write {
                path,
                bytes: new.clone(),
                mode,
            },
            Sim::File(new.clone()),
        )?;
        Ok(Effect {
            old,
            new: Some(new),
            hunks,
            noop: false,
            removed_files: 0,
        })
    }

    /// Remove a directory recursively, deepest first; every file is journaled (by `push`).
    /// A protected entry anywhere below (`.env`, keys, a nested `.git/`) refuses the whole
    /// DELETE_DIR: SPEC §4 protects those files from every kind of action, and validation,
    /// which does no I/O, cannot see inside the directory.
    fn delete_tree(
        &mut self,
        a: &ValidatedAction,
        dir: &str,
        removed: &mut usize,
    ) -> Result<(), ApplyError> {
        let on_disk = matches!(self.root.node(dir)?, Node::Dir { .. });
        let names = if on_disk {
            self.root.list(dir)?
        } else {
            Vec::new()
        };
        for name in names {
            let child = format!("{dir}/{name}");
            if let Some(rule) = protected_by(&child) {
                return Err(invalid(
                    a,
                    InvalidAction::ProtectedBelow {
                        dir: dir.to_owned(),
                        child,
                        rule,
                    },
                ));
            }
            match self.root.node(&child)? {
                Node::Dir { .. } => self.delete_tree(a, &child, removed)?,
                Node::File { .. } | Node::Symlink => {
                    self.push(Op::RemoveFile { path: child }, Sim::Absent)?;
                    *removed += 1;
                }
                Node::Absent => {}
                Node::Other => return Err(StoreError::not_a_node(IoOp::DeleteDir, &child).into()),
            }
        }
        Ok(self.push(
            Op::RemoveDir {
                path: dir.to_owned(),
            },
            Sim::Absent,
        )?)
    }
}

/// The built-in rules: what no plan, rollback or undo ever writes.
static POLICY: std::sync::LazyLock<papayu_validate::Policy> =
    std::sync::LazyLock::new(papayu_validate::Policy::default);

/// Why papayu must not write `path` — a plan's or a journal's — if it must not: the built-in
/// protection rule it falls under (`.git/`, `.papa-yu/` and their HFS+/NTFS/8.3 aliases,
/// secrets), or that it is not a canonical relative path (papayu does not touch what it cannot
/// name safely).
pub(crate) fn protected_by(path: &str) -> Option<String> {
    match RelPath::parse(path) {
        Ok(rel) if rel.as_str() == path => POLICY.protected_by(&rel),
        Ok(_) => Some("not in canonical form".to_owned()),
        Err(e) => Some(format!("unsafe name: {}", e.message)),
    }
}
