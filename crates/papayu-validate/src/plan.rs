//! The output of validation: actions the apply engine may trust.

use papayu_protocol::{Action, ActionKind, ProtocolVersion};

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatedPlan {
    /// The protocol version the plan was validated under (decides e.g. CREATE_FILE on an
    /// existing file: an error in v2/v3, an update in v1).
    pub version: ProtocolVersion,
    /// The actions, in the model's order (the engine orders them for apply).
    pub actions: Vec<ValidatedAction>,
}
