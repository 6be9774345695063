//! `validate_plan`, `preview_plan`, `apply_plan` and `apply_patch`: a plan goes through
//! papayu-validate (every rule, plus "updates carry a base hash") and papayu-patch (preview, or
//! the all-or-nothing apply) — the same engine and checks as the CLI.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use papayu_patch::{ApplyError, ApplyOptions, Checks};
use papayu_protocol::{
    ActionKind, Document, ErrorCode, ProtocolVersion, Violation, parse_document,
};
use papayu_validate::{Context, Mode, RelPath, ValidatedPlan, validate_document};
use serde_json::{Value, json};

use super::args::{ApplyPatchArgs, ApplyPlanArgs, CheckArgs, PlanArgs, plan_text, protocol_of};
use super::{ArgError, McpTool, Reply};
use crate::served::Served;

/// A plan that passed every rule, or every violation.
type Checked = Result<ValidatedPlan, Vec<Violation>>;

impl Served {
    /// Parse `text` under `version` and apply every rule of papayu-validate in APPLY mode, with
    /// the project's policy and existence oracle, plus this server's own: an UPDATE_FILE of an
    /// existing file (which carries no base hash) is refused.
    fn check_plan(&self, text: &str, version: ProtocolVersion) -> Checked {
        let root = self.root.clone();
        let exists = move |p: &RelPath| fs_err::symlink_metadata(root.join(p.as_str())).is_ok();
        let ctx = Context::new(version)
            .with_mode(Mode::Apply)
            .with_exists(&exists);
        let doc = match parse_document(text, version) {
            Ok(doc) => doc,
            Err(e) => return Err(vec![Violation::from(&e)]),
        };
        let unbased = updates_without_base(&doc, &exists);
        let report = validate_document(&doc, &ctx, &self.policy);
        if unbased.is_empty() {
            return report.into_plan().map_err(|r| r.into_violations());
        }
        let mut violations = report.violations().to_vec();
        violations.extend(unbased);
        violations.sort_by(|a, b| {
            (a.action_index, a.code.as_str()).cmp(&(b.action_index, b.code.as_str()))
        });
        Err(violations)
    }

    /// `validate_plan`: every violation; `valid` says whether there are none.
    pub(crate) fn validate_plan(&self, args: PlanArgs) -> Result<Reply, ArgError> {
        let tool = McpTool::ValidatePlan;
        let (text, version) = plan_input(tool, &args.plan, args.protocol, self.protocol)?;
        let reply = match self.check_plan(&text, version) {
            Ok(plan) => Reply::done(json!({
                "valid": true,
                "protocol": version.number(),
                "violation_count": 0,
                "violations": [],
                "actions": action_list(&plan),
            })),
            Err(violations) => Reply::done(json!({
                "valid": false,
                "protocol": version.number(),
                "violation_count": violations.len(),
                "violations": violations,
            })),
        };
        Ok(reply)
    }

    /// `preview_plan`: the diffs, hunk tiers and blocked actions of a valid plan, writing
    /// nothing; a plan that breaks a rule is rejected with every violation.
    pub(crate) fn preview_plan(&self, args: PlanArgs) -> Result<Reply, ArgError> {
        let tool = McpTool::PreviewPlan;
        let (text, version) = plan_input(tool, &args.plan, args.protocol, self.protocol)?;
        let plan = match self.check_plan(&text, version) {
            Ok(plan) => plan,
            Err(violations) => return Ok(rejected_plan(violations)),
        };
        let options = ApplyOptions::default().normalize_eol_lf(self.normalize_eol_lf);
        let preview = match self.patch.transaction(&plan).options(options).preview() {
            Ok(p) => p,
            Err(e) => return Ok(apply_rejection(&e)),
        };
        let blocked: Vec<Value> = preview
            .files
            .iter()
            .filter_map(|f| {
                f.error.as_ref().map(|e| {
                    json!({"index": f.index, "path": f.path, "code": e.code, "message": e.message})
                })
            })
            .collect();
        Ok(Reply::done(json!({
            "protocol": version.number(),
            "would_apply": preview.is_ok(),
            "summary": preview.summary,
            "blocked": blocked,
            "deletes": delete_paths(&plan),
            "files": preview.files,
        })))
    }

    /// `apply_plan`: all-or-nothing; the transaction id, or the code of what stopped it with
    /// the project unchanged.
    pub(crate) fn apply_plan(
        &self,
        args: ApplyPlanArgs,
        cancel: Arc<AtomicBool>,
    ) -> Result<Reply, ArgError> {
        let tool = McpTool::ApplyPlan;
        let (text, version) = plan_input(tool, &args.plan, args.protocol, self.protocol)?;
        let checks = self.checks(tool, args.checks)?;
        Ok(self.apply_text(&text, version, args.confirm_deletes, checks, cancel))
    }

    /// `apply_patch`: one file, one action (PATCH_FILE, EDIT_FILE or REPLACE_RANGE under
    /// protocol v3), through the same validation and transaction as `apply_plan`.
    pub(crate) fn apply_patch(
        &self,
        args: ApplyPatchArgs,
        cancel: Arc<AtomicBool>,
    ) -> Result<Reply, ArgError> {
        let tool = McpTool::ApplyPatch;
        let mut action = json!({"path": args.path, "base_sha256": args.base_sha256});
        match (args.patch, args.edits, args.replace_range) {
            (Some(patch), None, None) => {
                action["kind"] = json!("PATCH_FILE");
                action["patch"] = json!(patch);
            }
            (None, Some(edits), None) => {
                action["kind"] = json!("EDIT_FILE");
                action["edits"] = json!(edits);
            }
            (None, None, Some(range)) => {
                action["kind"] = json!("REPLACE_RANGE");
                action["start_line"] = json!(range.start_line);
                action["end_line"] = json!(range.end_line);
                action["content"] = json!(range.content);
            }
            _ => {
                return Err(ArgError::new(
                    tool.name(),
                    "give exactly one of `patch`, `edits` or `replace_range`",
                ));
            }
        }
        let summary = format!(
            "apply_patch {}",
            action["path"].as_str().unwrap_or_default()
        );
        let text = json!({"actions": [action], "summary": summary}).to_string();
        let checks = self.checks(tool, args.checks)?;
        Ok(self.apply_text(&text, ProtocolVersion::V3, false, checks, cancel))
    }

    fn checks(
        &self,
        tool: McpTool,
        args: Option<CheckArgs>,
    ) -> Result<(Checks, Duration), ArgError> {
        let args = args.unwrap_or_default();
        let checks = match (args.detect, args.commands.is_empty()) {
            (true, false) => {
                return Err(ArgError::new(
                    tool.name(),
                    "`checks`: give `commands` or `detect`, not both",
                ));
            }
            (true, true) => Checks::Detect,
            (false, false) => Checks::Commands(args.commands),
            (false, true) => Checks::None,
        };
        let timeout = args.timeout_secs.map_or(self.check_timeout, |s| {
            Duration::from_secs(s.clamp(1, 3600))
        });
        Ok((checks, timeout))
    }

    fn apply_text(
        &self,
        text: &str,
        version: ProtocolVersion,
        confirm_deletes: bool,
        (checks, timeout): (Checks, Duration),
        cancel: Arc<AtomicBool>,
    ) -> Reply {
        let plan = match self.check_plan(text, version) {
            Ok(plan) => plan,
            Err(violations) => return rejected_plan(violations),
        };
        let deletes = delete_paths(&plan);
        if !deletes.is_empty() && !confirm_deletes {
            return Reply::rejected(
                ErrorCode::Cancelled,
                format!(
                    "deleting {} needs confirm_deletes: true; nothing was written",
                    deletes.join(", ")
                ),
            )
            .with("stage", "confirm")
            .with("deletes", deletes);
        }
        let options = ApplyOptions::default()
            .normalize_eol_lf(self.normalize_eol_lf)
            .checks(checks)
            .check_timeout(timeout)
            .sandbox(self.sandbox.clone())
            .cancel_flag(cancel);
        match self.patch.transaction(&plan).options(options).apply() {
            Ok(report) => Reply::done(json!({
                "tx_id": report.tx_id,
                "protocol": version.number(),
                "summary": report.summary,
                "files": report.files,
                "checks": report.checks,
            })),
            Err(e) => apply_rejection(&e),
        }
    }
}

/// The plan's text and protocol version from a call's arguments.
fn plan_input(
    tool: McpTool,
    plan: &Value,
    protocol: Option<u8>,
    default: ProtocolVersion,
) -> Result<(String, ProtocolVersion), ArgError> {
    let text = plan_text(plan).map_err(|m| ArgError::new(tool.name(), m))?;
    let version = protocol_of(protocol, default).map_err(|m| ArgError::new(tool.name(), m))?;
    Ok((text, version))
}

/// A plan that broke rules: the first violation's code, and all of them.
fn rejected_plan(violations: Vec<Violation>) -> Reply {
    let code = violations
        .first()
        .map_or(ErrorCode::SchemaValidation, |v| v.code);
    Reply::rejected(
        code,
        format!(
            "the plan breaks {} rule(s); nothing was written",
            violations.len()
        ),
    )
    .with("stage", "validate")
    .with("violations", violations)
}

/// What stopped a preview or an apply (rolled back: the project is unchanged).
fn apply_rejection(e: &ApplyError) -> Reply {
    let mut reply = Reply::rejected(e.code(), e.to_string())
        .with("stage", "apply")
        .with("path", e.path());
    if let ApplyError::CheckFailed(report) = e {
        reply = reply.with("check", report);
    }
    reply
}

/// UPDATE_FILE replaces a whole file and carries no base hash: of an existing file it could
/// overwrite changes the client never saw, so this server refuses it (protocol v2 does too,
/// with its own code).
fn updates_without_base(doc: &Document, exists: &dyn Fn(&RelPath) -> bool) -> Vec<Violation> {
    doc.response
        .effective_actions()
        .iter()
        .enumerate()
        .filter(|(_, a)| a.kind == ActionKind::UpdateFile)
        .filter_map(|(i, a)| {
            let path = RelPath::parse(&a.path).ok()?;
            exists(&path).then(|| {
                Violation::new(
                    ErrorCode::UpdateWithoutBase,
                    format!(
                        "UPDATE_FILE would replace `{path}` without a base hash; change it with PATCH_FILE, EDIT_FILE or REPLACE_RANGE carrying the base_sha256 read_file returned"
                    ),
                )
                .at_action(doc.original_index(i), a.path.clone())
            })
        })
        .collect()
}

/// The paths DELETE_FILE and DELETE_DIR actions would remove.
fn delete_paths(plan: &ValidatedPlan) -> Vec<String> {
    plan.actions()
        .iter()
        .filter(|a| matches!(a.kind(), ActionKind::DeleteFile | ActionKind::DeleteDir))
        .map(|a| a.path.as_str().to_owned())
        .collect()
}

/// `[{index, kind, path}]` of a plan.
fn action_list(plan: &ValidatedPlan) -> Vec<Value> {
    plan.actions()
        .iter()
        .map(|a| json!({"index": a.index, "kind": a.kind(), "path": a.path.as_str()}))
        .collect()
}
