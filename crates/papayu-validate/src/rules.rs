//! The rules of SPEC §4 applied to a whole answer, collecting every violation.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

use papayu_protocol::{
    Action, ActionKind, Document, ErrorCode, ProtocolVersion, Response, Violation, parse_document,
};

use crate::content::{find_placeholder, pseudo_binary_reason};
use crate::path::RelPath;
use crate::plan::{Report, ValidatedAction};
use crate::policy::Policy;
use crate::unified::parse_unified_diff;

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
    fn action(&mut self, i: usize, code: ErrorCode, message: impl Into<String>) {
        let index = (self.input.index)(i);
        let path = self
            .input
            .actions
            .get(i)
            .map(|a| a.path.clone())
            .unwrap_or_default();
        self.violations
            .push(Violation::new(code, message).at_action(index, path));
    }

    fn field(&mut self, i: usize, field: &str, code: ErrorCode, message: impl Into<String>) {
        let index = (self.input.index)(i);
        let path = self
            .input
            .actions
            .get(i)
            .map(|a| a.path.clone())
            .unwrap_or_default();
        let pointer = format!("{}/{index}/{field}", self.input.pointer_base);
        self.violations.push(
            Violation::new(code, message)
                .at_action(index, path)
                .with_pointer(pointer),
        );
    }

    fn plan(&mut self, code: ErrorCode, message: impl Into<String>) {
        self.violations.push(Violation::new(code, message));
    }
}

fn kind_list(version: ProtocolVersion) -> String {
    version
        .kinds()
        .iter()
        .map(ActionKind::as_str)
        .collect::<Vec<_>>()
        .join(", ")
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

fn check_kind(sink: &mut Sink<'_>, i: usize, action: &Action, version: ProtocolVersion) -> bool {
    match &action.kind {
        ActionKind::Unknown(name) if name.is_empty() => {
            sink.field(
                i,
                "kind",
                ErrorCode::UnknownKind,
                format!(
                    "the action has no `kind`; use one of {}",
                    kind_list(version)
                ),
            );
            false
        }
        ActionKind::Unknown(name) => {
            sink.field(
                i,
                "kind",
                ErrorCode::UnknownKind,
                format!("unknown kind `{name}`; use one of {}", kind_list(version)),
            );
            false
        }
        kind if !version.allows(kind) => {
            sink.field(
                i,
                "kind",
                ErrorCode::UnknownKind,
                format!(
                    "{kind} is not part of protocol {version}; use one of {}",
                    kind_list(version)
                ),
            );
            false
        }
        _ => true,
    }
}

fn check_path_policy(
    sink: &mut Sink<'_>,
    i: usize,
    action: &Action,
    path: &RelPath,
    policy: &Policy,
) {
    if let Some(pattern) = policy.protected_by(path) {
        sink.action(
            i,
            ErrorCode::ProtectedPath,
            format!("`{path}` is protected (`{pattern}`); papayu never touches it"),
        );
        // The stronger rule alone: an extension complaint would invite renaming the secret.
        return;
    }
    if !action.kind.is_file_writer() {
        return;
    }
    if let Some(dir) = policy.forbidden_dir(path) {
        sink.action(
            i,
            ErrorCode::ForbiddenPath,
            format!("`{path}` lies under `{dir}/`, which holds generated or vendored files; change the sources instead"),
        );
    } else if !policy.is_allowed_file_name(path) {
        sink.action(
            i,
            ErrorCode::ForbiddenPath,
            match path.extension() {
                Some(ext) => {
                    format!("`.{ext}` files are not in the project's extension allow-list")
                }
                None => format!(
                    "`{}` has no extension and is not a known extension-less file name",
                    path.file_name()
                ),
            },
        );
    }
}

fn check_fields(sink: &mut Sink<'_>, i: usize, action: &Action, version: ProtocolVersion) {
    if !version.denies_foreign_action_fields() {
        return;
    }
    let allowed = action.kind.fields();
    for field in action.present_fields() {
        if !allowed.contains(&field) {
            let expected = if allowed.is_empty() {
                "none".to_owned()
            } else {
                allowed.join(", ")
            };
            sink.field(
                i,
                field,
                ErrorCode::FieldNotAllowed,
                format!("`{field}` does not belong to {} (its fields: kind, path, {expected}); remove it", action.kind),
            );
        }
    }
}

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn check_base(sink: &mut Sink<'_>, i: usize, action: &Action) {
    match &action.base_sha256 {
        None => sink.field(
            i,
            "base_sha256",
            ErrorCode::BaseSha256Invalid,
            format!(
                "{} needs `base_sha256`, the sha256 of the file as it was sent to you",
                action.kind
            ),
        ),
        Some(h) if !is_sha256_hex(h) => sink.field(
            i,
            "base_sha256",
            ErrorCode::BaseSha256Invalid,
            "`base_sha256` must be 64 lowercase hex digits (the sha256 shown with the file)",
        ),
        Some(_) => {}
    }
}

fn check_binary(sink: &mut Sink<'_>, i: usize, field: &str, text: &str) -> bool {
    match pseudo_binary_reason(text) {
        Some(reason) => {
            sink.field(i, field, ErrorCode::PseudoBinary, reason);
            true
        }
        None => false,
    }
}

fn check_shape(
    sink: &mut Sink<'_>,
    i: usize,
    action: &Action,
    path: Option<&RelPath>,
    version: ProtocolVersion,
    policy: &Policy,
) {
    let limits = policy.config();
    let payload = action.payload_bytes() as u64;
    if payload > limits.max_file_bytes {
        sink.action(
            i,
            ErrorCode::ContentTooLarge,
            format!(
                "this action carries {payload} bytes; the limit for one file is {}",
                limits.max_file_bytes
            ),
        );
    }
    match action.kind {
        ActionKind::CreateFile | ActionKind::UpdateFile => match action.content.as_deref() {
            None => sink.field(
                i,
                "content",
                ErrorCode::ContentRequired,
                format!("{} needs `content`", action.kind),
            ),
            Some("") if version == ProtocolVersion::V1 => sink.field(
                i,
                "content",
                ErrorCode::ContentRequired,
                "protocol v1 treats empty `content` as missing; send the full file content",
            ),
            Some(content) => {
                if !check_binary(sink, i, "content", content) && policy.config().reject_placeholders
                {
                    let ext = path.and_then(RelPath::extension).unwrap_or("");
                    if let Some((line, text)) = find_placeholder(content, ext) {
                        sink.field(
                            i,
                            "content",
                            ErrorCode::PlaceholderContent,
                            format!(
                                "line {line} `{}` elides code; {} replaces the whole file, so send the complete content (or use a patch/edit action)",
                                text.trim(),
                                action.kind
                            ),
                        );
                    }
                }
            }
        },
        ActionKind::PatchFile => {
            match action.patch.as_deref() {
                None => sink.field(
                    i,
                    "patch",
                    ErrorCode::PatchRequired,
                    "PATCH_FILE needs `patch`, a unified diff",
                ),
                Some(p) if p.trim().is_empty() => sink.field(
                    i,
                    "patch",
                    ErrorCode::PatchRequired,
                    "`patch` is empty; send a unified diff",
                ),
                Some(p) => {
                    if !check_binary(sink, i, "patch", p)
                        && let Err(e) = parse_unified_diff(p)
                    {
                        sink.field(
                            i,
                            "patch",
                            ErrorCode::PatchNotUnified,
                            format!("`patch` is not a unified diff: {e}"),
                        );
                    }
                }
            }
            check_base(sink, i, action);
        }
        ActionKind::EditFile => {
            check_edits(sink, i, action);
            check_base(sink, i, action);
        }
        ActionKind::ReplaceRange => {
            match action.content.as_deref() {
                None => sink.field(
                    i,
                    "content",
                    ErrorCode::ContentRequired,
                    "REPLACE_RANGE needs `content`, the replacement lines (empty to delete the range)",
                ),
                Some(c) => {
                    check_binary(sink, i, "content", c);
                }
            }
            match (action.start_line, action.end_line) {
                (None, _) | (_, None) => sink.action(
                    i,
                    ErrorCode::RangeInvalid,
                    "REPLACE_RANGE needs both `start_line` and `end_line` (1-based, inclusive)",
                ),
                (Some(0), _) => sink.field(
                    i,
                    "start_line",
                    ErrorCode::RangeInvalid,
                    "`start_line` is 1-based; 0 is not a line",
                ),
                (Some(s), Some(e)) if e < s => sink.field(
                    i,
                    "end_line",
                    ErrorCode::RangeInvalid,
                    format!("`end_line` {e} is before `start_line` {s}; the range is inclusive"),
                ),
                _ => {}
            }
            check_base(sink, i, action);
        }
        ActionKind::CreateDir
        | ActionKind::DeleteFile
        | ActionKind::DeleteDir
        | ActionKind::Unknown(_) => {}
    }
}

fn check_edits(sink: &mut Sink<'_>, i: usize, action: &Action) {
    let edits = match action.edits.as_deref() {
        None | Some([]) => {
            sink.field(
                i,
                "edits",
                ErrorCode::PatchRequired,
                "EDIT_FILE needs a non-empty `edits` list",
            );
            return;
        }
        Some(e) => e,
    };
    if edits.len() > MAX_EDITS {
        sink.field(
            i,
            "edits",
            ErrorCode::EditApplyFailed,
            format!("{} edits; the limit is {MAX_EDITS} per EDIT_FILE (send a PATCH_FILE or several actions)", edits.len()),
        );
    }
    let bytes: usize = edits.iter().map(|e| e.before.len() + e.after.len()).sum();
    if bytes > MAX_EDIT_BYTES {
        sink.field(
            i,
            "edits",
            ErrorCode::EditApplyFailed,
            format!(
                "the edits' before+after texts total {bytes} bytes; the limit is {MAX_EDIT_BYTES}"
            ),
        );
    }
    for (j, edit) in edits.iter().enumerate() {
        if edit.anchor.is_empty() {
            sink.field(
                i,
                &format!("edits/{j}/anchor"),
                ErrorCode::EditApplyFailed,
                format!("edit {j} has an empty `anchor`"),
            );
        }
        if edit.before.is_empty() {
            sink.field(
                i,
                &format!("edits/{j}/before"),
                ErrorCode::EditApplyFailed,
                format!("edit {j} has an empty `before`; quote the exact text to replace"),
            );
        }
        if edit.occurrence == Some(0) {
            sink.field(
                i,
                &format!("edits/{j}/occurrence"),
                ErrorCode::EditApplyFailed,
                format!("edit {j} has `occurrence` 0; occurrences are 1-based"),
            );
        }
        if check_binary(sink, i, &format!("edits/{j}/after"), &edit.after) {
            break;
        }
    }
}

/// How two actions on the same (case-folded) path conflict, if they do.
fn same_path_conflict(a: &ActionKind, b: &ActionKind) -> Option<&'static str> {
    use ActionKind::*;
    match (a, b) {
        (EditFile, EditFile) => None,
        (x, y) if x.is_file_writer() && y.is_file_writer() => Some("both write the file"),
        (x, y)
            if (x.is_file_writer() && y.is_delete()) || (x.is_delete() && y.is_file_writer()) =>
        {
            Some("one writes and the other deletes it")
        }
        (DeleteDir, _) | (_, DeleteDir) => Some("the directory is deleted"),
        (CreateDir, y) | (y, CreateDir) if y.is_file_writer() => {
            Some("one makes it a directory, the other a file")
        }
        _ => None,
    }
}

fn check_conflicts(sink: &mut Sink<'_>, candidates: &[(usize, ValidatedAction)]) {
    let folded: Vec<String> = candidates.iter().map(|(_, a)| a.path.folded()).collect();
    let mut deleted_dirs: HashMap<&str, usize> = HashMap::new();
    let mut created_files: HashMap<&str, usize> = HashMap::new();
    for ((_, a), f) in candidates.iter().zip(&folded) {
        match a.kind() {
            ActionKind::DeleteDir => {
                deleted_dirs.entry(f).or_insert(a.index);
            }
            ActionKind::CreateFile => {
                created_files.entry(f).or_insert(a.index);
            }
            _ => {}
        }
    }
    let mut seen: HashMap<&str, Vec<(usize, &ActionKind)>> = HashMap::new();
    for ((i, a), f) in candidates.iter().zip(&folded) {
        let earlier = seen.entry(f).or_default();
        if let Some((j, why)) = earlier
            .iter()
            .find_map(|(j, k)| same_path_conflict(k, a.kind()).map(|w| (*j, w)))
        {
            sink.action(
                *i,
                ErrorCode::ActionConflict,
                format!("{} conflicts with action {j} on the same path ({why}); merge them into one action", a.kind()),
            );
        }
        earlier.push((a.index, a.kind()));
        let ancestors: Vec<&str> = ancestors_of(f).collect();
        if let Some((dir, j)) = ancestors
            .iter()
            .find_map(|d| deleted_dirs.get(d).map(|j| (*d, *j)))
        {
            sink.action(
                *i,
                ErrorCode::ActionConflict,
                format!("`{}` lies inside `{dir}`, which action {j} deletes", a.path),
            );
        }
        if let Some((file, j)) = ancestors
            .iter()
            .find_map(|d| created_files.get(d).map(|j| (*d, *j)))
        {
            sink.action(
                *i,
                ErrorCode::ActionConflict,
                format!(
                    "`{}` needs `{file}` to be a directory, but action {j} creates it as a file",
                    a.path
                ),
            );
        }
    }
}

fn ancestors_of(folded: &str) -> impl Iterator<Item = &str> {
    folded.match_indices('/').rev().map(|(i, _)| &folded[..i])
}
