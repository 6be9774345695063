//! The rules of SPEC §4 applied to a whole answer, collecting every violation: this room runs
//! them (`run`); `action`, `shape` and `conflicts` hold the per-action, per-kind and cross-action rules.

mod action;
mod conflicts;
mod shape;

use std::collections::{BTreeSet, HashSet};
use std::fmt;

use papayu_protocol::{
    Action, ActionKind, Document, ErrorCode, ProtocolVersion, Response, Violation, parse_document,
};

use crate::path::RelPath;
use crate::plan::{Report, ValidatedAction};
use crate::policy::Policy;
use action::{check_fields, check_kind, check_path_policy};
use conflicts::check_conflicts;
use shape::check_shape;

/// Most edits in one EDIT_FILE action (SPEC §3.2).
pub const MAX_EDITS: usize = 50;
/// Most bytes of `before` + `after` over all edits of one EDIT_FILE action (SPEC §3.2).
pub const MAX_EDIT_BYTES: usize = 200_000;

/// What papayu asked the model for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A plan for review: the answer must carry no actions.
    Plan,
    /// Changes to apply.
    Apply,
}

/// Facts about the request that the rules need and that this crate cannot find out itself
/// (it does no I/O).
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The effective protocol version.
    pub version: ProtocolVersion,
    /// PLAN or APPLY; `None` skips the mode rules (e.g. offline `papayu validate`).
    pub mode: Option<Mode>,
    /// Files whose content papayu sent to the model, as tracked by the context layer. `None`
    /// skips the `ERR_UPDATE_WITHOUT_BASE` rule (not tracked); `Some(empty)` means nothing was
    /// sent. Compared case-insensitively.
    pub sent_files: Option<&'a BTreeSet<RelPath>>,
    /// Whether a path exists in the project, for the v2 UPDATE_FILE rule. `None` skips it.
    pub exists: Option<&'a dyn Fn(&RelPath) -> bool>,
}

impl fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("version", &self.version)
            .field("mode", &self.mode)
            .field("sent_files", &self.sent_files)
            .field("exists", &self.exists.map(|_| "<oracle>"))
            .finish()
    }
}

impl<'a> Context<'a> {
    /// A context for `version` with no mode and no oracles (only the plan-independent rules).
    pub fn new(version: ProtocolVersion) -> Self {
        Self {
            version,
            mode: None,
            sent_files: None,
            exists: None,
        }
    }

    /// Set the mode.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Set the files whose content was sent to the model.
    pub fn with_sent_files(mut self, sent: &'a BTreeSet<RelPath>) -> Self {
        self.sent_files = Some(sent);
        self
    }

    /// Set the existence oracle.
    pub fn with_exists(mut self, exists: &'a dyn Fn(&RelPath) -> bool) -> Self {
        self.exists = Some(exists);
        self
    }
}

/// Validate a parsed response: its effective actions, its summary (for `NO_CHANGES:`) and the
/// plan-level rules.
pub fn validate(response: &Response, ctx: &Context<'_>, policy: &Policy) -> Report {
    let input = Input {
        actions: response.effective_actions(),
        no_changes: response.is_no_changes(),
        pointer_base: response.effective_actions_pointer(),
        index: &|i| i,
    };
    run(&input, ctx, policy, Vec::new())
}

/// Validate a bare action list (no summary, so an empty list in APPLY mode is
/// `ERR_APPLY_EMPTY_ACTIONS`). Pointers are relative to the list (`/3/content`).
pub fn validate_actions(actions: &[Action], ctx: &Context<'_>, policy: &Policy) -> Report {
    let input = Input {
        actions,
        no_changes: false,
        pointer_base: "",
        index: &|i| i,
    };
    run(&input, ctx, policy, Vec::new())
}

/// Validate a leniently parsed [`Document`]: its envelope violations are merged in, and action
/// indices refer to the answer's original action list (unreadable actions included).
pub fn validate_document(doc: &Document, ctx: &Context<'_>, policy: &Policy) -> Report {
    let input = Input {
        actions: doc.response.effective_actions(),
        no_changes: doc.response.is_no_changes(),
        pointer_base: doc.response.effective_actions_pointer(),
        index: &|i| doc.original_index(i),
    };
    run(&input, ctx, policy, doc.violations.clone())
}

/// Parse `text` leniently under `ctx.version` and validate it. Text holding no JSON, or
/// invalid JSON, gives one `ERR_JSON_PARSE` violation.
///
/// ```
/// use papayu_validate::{check_text, Context, Policy};
/// use papayu_protocol::{ErrorCode, ProtocolVersion};
/// let report = check_text(r#"{"actions":[{"kind":"CREATE_FILE","path":"../x.rs","content":""}]}"#,
///     &Context::new(ProtocolVersion::V2), &Policy::default());
/// assert_eq!(report.codes(), [ErrorCode::InvalidPath]);
/// ```
pub fn check_text(text: &str, ctx: &Context<'_>, policy: &Policy) -> Report {
    match parse_document(text, ctx.version) {
        Ok(doc) => validate_document(&doc, ctx, policy),
        Err(e) => Report::new(ctx.version, vec![Violation::from(&e)], Vec::new()),
    }
}

struct Input<'i> {
    actions: &'i [Action],
    no_changes: bool,
    pointer_base: &'static str,
    index: &'i dyn Fn(usize) -> usize,
}

struct Sink<'i> {
    violations: Vec<Violation>,
    input: &'i Input<'i>,
}

impl Sink<'_> {
    /// A violation located at action `i`: its index in the answer and its path.
    fn at(&self, i: usize, code: ErrorCode, message: impl Into<String>) -> (usize, Violation) {
        let index = (self.input.index)(i);
        let path = self
            .input
            .actions
            .get(i)
            .map(|a| a.path.clone())
            .unwrap_or_default();
        (index, Violation::new(code, message).at_action(index, path))
    }

    fn action(&mut self, i: usize, code: ErrorCode, message: impl Into<String>) {
        let (_, violation) = self.at(i, code, message);
        self.violations.push(violation);
    }

    fn field(&mut self, i: usize, field: &str, code: ErrorCode, message: impl Into<String>) {
        let (index, violation) = self.at(i, code, message);
        let pointer = format!("{}/{index}/{field}", self.input.pointer_base);
        self.violations.push(violation.with_pointer(pointer));
    }

    fn plan(&mut self, code: ErrorCode, message: impl Into<String>) {
        self.violations.push(Violation::new(code, message));
    }
}

fn run(input: &Input<'_>, ctx: &Context<'_>, policy: &Policy, envelope: Vec<Violation>) -> Report {
    let mut sink = Sink {
        violations: envelope,
        input,
    };
    let limits = policy.config();
    let mut candidates: Vec<(usize, ValidatedAction)> = Vec::new();
    let sent: Option<HashSet<String>> = ctx
        .sent_files
        .map(|s| s.iter().map(RelPath::folded).collect());

    let count = input.actions.len();
    if count > limits.max_actions {
        sink.plan(
            ErrorCode::TooManyActions,
            format!("the plan has {count} actions; the limit is {}. Split the change into smaller plans", limits.max_actions),
        );
    }
    let total: u64 = input.actions.iter().map(|a| a.payload_bytes() as u64).sum();
    if total > limits.max_total_bytes {
        sink.plan(
            ErrorCode::ContentTooLarge,
            format!(
                "the plan carries {total} bytes of content; the limit is {}",
                limits.max_total_bytes
            ),
        );
    }
    match ctx.mode {
        Some(Mode::Plan) if count > 0 => sink.plan(
            ErrorCode::PlanHasActions,
            format!("PLAN mode answers must have `actions: []`, found {count}; describe the plan in `summary`/`plan` instead"),
        ),
        Some(Mode::Apply) if count == 0 && !input.no_changes => sink.plan(
            ErrorCode::ApplyEmptyActions,
            "APPLY mode answer has no actions; send the actions, or a summary starting with `NO_CHANGES:` if nothing needs to change",
        ),
        _ => {}
    }

    for (i, action) in input.actions.iter().enumerate() {
        let kind_ok = check_kind(&mut sink, i, action, ctx.version);
        let path = match RelPath::parse(&action.path) {
            Ok(p) => Some(p),
            Err(e) => {
                sink.action(i, e.code, e.message);
                None
            }
        };
        if let Some(path) = &path {
            check_path_policy(&mut sink, i, action, path, policy);
        }
        if !kind_ok {
            continue;
        }
        check_fields(&mut sink, i, action, ctx.version);
        check_shape(&mut sink, i, action, path.as_ref(), ctx.version, policy);
        let Some(path) = path else { continue };
        if ctx.mode == Some(Mode::Apply)
            && let Some(sent) = &sent
            && (action.kind == ActionKind::UpdateFile || action.kind.needs_base())
            && !sent.contains(&path.folded())
        {
            sink.action(
                i,
                ErrorCode::UpdateWithoutBase,
                format!(
                    "{} of `{path}`, whose content was never sent to you; request it with a read_file context request first",
                    action.kind
                ),
            );
        }
        if ctx.version == ProtocolVersion::V2
            && action.kind == ActionKind::UpdateFile
            && let Some(exists) = ctx.exists
            && exists(&path)
        {
            sink.action(
                i,
                ErrorCode::V2UpdateExistingForbidden,
                format!("protocol v2 forbids UPDATE_FILE of the existing file `{path}`; use PATCH_FILE with a unified diff and base_sha256"),
            );
        }
        candidates.push((
            i,
            ValidatedAction {
                index: (input.index)(i),
                path,
                action: action.clone(),
            },
        ));
    }

    check_conflicts(&mut sink, &candidates);

    Report::new(
        ctx.version,
        sink.violations,
        candidates.into_iter().map(|(_, a)| a).collect(),
    )
}
