//! The output of validation: the [`Report`] of every violation, and the [`ValidatedPlan`] the
//! apply engine may trust — which only validation can make.

use std::fmt;

use papayu_protocol::{Action, ActionKind, ErrorCode, ProtocolVersion, Violation};

use crate::path::RelPath;

/// One action that passed every rule: a known kind for its protocol version and a checked path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatedAction {
    /// Index in the answer's effective action list.
    pub index: usize,
    /// The checked, normalised path.
    pub path: RelPath,
    /// The action as the model sent it (its `kind` is never [`ActionKind::Unknown`]).
    pub action: Action,
}

impl ValidatedAction {
    /// The action's kind.
    pub fn kind(&self) -> &ActionKind {
        &self.action.kind
    }
}

/// A whole plan that passed validation, ready for preview and apply.
///
/// Only this crate's validation makes one ([`Report::into_plan`]), and [`ValidatedPlan::select`]
/// narrows one down; so whoever holds a `ValidatedPlan` holds actions that passed every rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatedPlan {
    version: ProtocolVersion,
    actions: Vec<ValidatedAction>,
}

impl ValidatedPlan {
    /// The protocol version the plan was validated under (decides e.g. CREATE_FILE on an
    /// existing file: an error in v2/v3, an update in v1).
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// The actions, in the model's order (the engine orders them for apply).
    pub fn actions(&self) -> &[ValidatedAction] {
        &self.actions
    }

    /// The plan of only the actions whose [`ValidatedAction::index`] is in `indices`, in the
    /// plan's order (an index given twice counts once). Every action passed the rules on its
    /// own, so a part of a plan needs no new validation.
    ///
    /// # Errors
    ///
    /// [`SelectError`] naming the first index that no action of the plan has.
    pub fn select(&self, indices: &[usize]) -> Result<ValidatedPlan, SelectError> {
        if let Some(&index) = indices
            .iter()
            .find(|&&i| !self.actions.iter().any(|a| a.index == i))
        {
            return Err(SelectError {
                index,
                len: self.actions.len(),
            });
        }
        Ok(ValidatedPlan {
            version: self.version,
            actions: self
                .actions
                .iter()
                .filter(|a| indices.contains(&a.index))
                .cloned()
                .collect(),
        })
    }
}

/// [`ValidatedPlan::select`] was given an action index the plan does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("action index {index} is not in the plan (it has {len} actions)")]
#[non_exhaustive]
pub struct SelectError {
    /// The index no action of the plan has.
    pub index: usize,
    /// How many actions the plan has.
    pub len: usize,
}

/// The outcome of validation: every violation, sorted by action index (plan-level ones first)
/// then code, and the actions that passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    version: ProtocolVersion,
    violations: Vec<Violation>,
    actions: Vec<ValidatedAction>,
}

impl Report {
    /// A report of `violations` (in any order) and the actions that passed.
    pub(crate) fn new(
        version: ProtocolVersion,
        violations: Vec<Violation>,
        actions: Vec<ValidatedAction>,
    ) -> Self {
        let mut violations = violations;
        violations.sort_by(|a, b| {
            (a.action_index, a.code.as_str()).cmp(&(b.action_index, b.code.as_str()))
        });
        Self {
            version,
            violations,
            actions,
        }
    }

    /// Every violation, in deterministic order.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// The codes of every violation, in order.
    pub fn codes(&self) -> Vec<ErrorCode> {
        codes(&self.violations)
    }

    /// Whether the answer passed every rule.
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }

    /// The plan for the apply engine.
    ///
    /// # Errors
    ///
    /// [`Rejected`] with every violation when the answer broke any rule.
    pub fn into_plan(self) -> Result<ValidatedPlan, Rejected> {
        if self.violations.is_empty() {
            Ok(ValidatedPlan {
                version: self.version,
                actions: self.actions,
            })
        } else {
            Err(Rejected {
                violations: self.violations,
            })
        }
    }
}

impl fmt::Display for Report {
    /// One violation per line, or `ok: N action(s)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.violations.is_empty() {
            return write!(
                f,
                "ok: {} action(s) under protocol {}",
                self.actions.len(),
                self.version
            );
        }
        write_lines(f, &self.violations)
    }
}

/// An answer that broke at least one rule: every violation, in the [`Report`]'s order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    violations: Vec<Violation>,
}

impl Rejected {
    /// Every violation (never empty), in deterministic order.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// The violations, owned.
    pub fn into_violations(self) -> Vec<Violation> {
        self.violations
    }

    /// The codes of every violation, in order.
    pub fn codes(&self) -> Vec<ErrorCode> {
        codes(&self.violations)
    }
}

impl fmt::Display for Rejected {
    /// One violation per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_lines(f, &self.violations)
    }
}

impl std::error::Error for Rejected {}

fn codes(violations: &[Violation]) -> Vec<ErrorCode> {
    violations.iter().map(|v| v.code).collect()
}

fn write_lines(f: &mut fmt::Formatter<'_>, violations: &[Violation]) -> fmt::Result {
    for (i, v) in violations.iter().enumerate() {
        if i > 0 {
            writeln!(f)?;
        }
        write!(f, "{v}")?;
    }
    Ok(())
}
