//! The APPLY call: ask for the final actions, validate and preview them without writing, then
//! apply a confirmed selection all-or-nothing through papayu-patch.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use papayu_patch::{ApplyOptions, CheckReport, Checks};
use papayu_protocol::{ErrorCode, Violation, parse_response, sha256_hex};
use papayu_validate::{Context, Mode, RelPath, ValidatedPlan};

use super::Agent;
use super::converse::Call;
use super::solve::SolveOptions;
use super::views::{ActionView, ApplyOutcome, ApplyPreview, Progress, ProgressFn, Stage};
use crate::error::AgentError;
use crate::prompt;
use crate::state::{
    PreviewedAnswer, content_sha, load_previewed, store_previewed, store_saved_plan,
};
use crate::trace::{ApplyRecord, TraceRecord};

/// Which checks a transaction of the agent runs.
pub(super) enum CheckPlan<'j> {
    /// `project.default_test_command`, else the detected checks (SPEC §5.5).
    Project,
    /// The project's tests, committed only when `judge` accepts their run.
    Verify {
        command: &'j str,
        judge: &'j (dyn Fn(&CheckReport) -> Result<(), String> + Sync),
        timeout: std::time::Duration,
        /// One of papayu's own edits tried (D81): its trace is written only when it is kept.
        trial: bool,
    },
}

/// The actions of a validated plan as a preview lists them.
fn action_views(plan: &ValidatedPlan) -> Vec<ActionView> {
    plan.actions()
        .iter()
        .map(|a| ActionView {
            index: a.index,
            kind: a.kind().as_str().to_owned(),
            path: a.path.as_str().to_owned(),
        })
        .collect()
}

/// The paths a plan's DELETE actions remove (applying them needs confirmation).
fn delete_paths(plan: &ValidatedPlan) -> Vec<String> {
    plan.actions()
        .iter()
        .filter(|a| a.kind().is_delete())
        .map(|a| a.path.as_str().to_owned())
        .collect()
}

impl Agent {
    /// Ask for the final actions (APPLY mode), validate and preview them; nothing is written.
    ///
    /// With `goal == None` the saved plan is applied (its goal, plan and context are sent
    /// again; `ERR_NO_SAVED_PLAN` when there is none). With a goal, the APPLY request is made
    /// directly (a "create …" message). A failing answer gets one repair round; the codes of
    /// SPEC §9 make it fall back once to the previous protocol version.
    pub async fn prepare_apply(
        &mut self,
        goal: Option<&str>,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyPreview, AgentError> {
        let saved = match goal {
            None => Some(self.saved_plan()?.ok_or(AgentError::NoSavedPlan)?),
            Some(_) => None,
        };
        let version = self.protocol();
        let goal_text = saved.as_ref().map_or_else(
            || super::solve::strip_mode_prefix(goal.unwrap_or_default()).to_owned(),
            |s| s.goal.clone(),
        );
        let mut call = self.new_call(Mode::Apply, &goal_text, version);
        match &saved {
            Some(s) => {
                // A preview the user declined is judged again instead of asking the model anew,
                // while the files it touches are unchanged.
                call.reuse = load_previewed(&self.root)?
                    .filter(|p| {
                        p.plan_trace_id == s.trace_id
                            && p.protocol == version.number()
                            && p.still_matches(&self.root)
                    })
                    .map(|p| p.text);
                call.sent = s.sent_files.clone();
                call.context_text = s.context.clone();
                // The plan's context is sent again: count it as this call's too.
                call.trace.context_stats = s.context_stats;
                call.base_user = prompt::apply_saved_message(&s.goal, &s.plan_text(), &s.context);
            }
            None => self.gather_for_goal(&mut call, &goal_text, progress),
        }
        self.finish_apply_call(call, goal_text, saved.is_some(), progress)
            .await
    }

    /// An APPLY call for `goal` on its base context with the `failure` output of the last test
    /// run and `feedback` on the previous attempt ([`Agent::solve`]).
    pub(super) async fn prepare_brief(
        &mut self,
        goal: &str,
        failure: Option<&str>,
        feedback: Option<&str>,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyPreview, AgentError> {
        let version = self.protocol();
        let mut call = self.new_call(Mode::Apply, goal, version);
        self.gather_base(&mut call, goal, failure, feedback, progress);
        self.finish_apply_call(call, goal.to_owned(), false, progress)
            .await
    }

    /// Converse until an APPLY answer is accepted and previewed, and write its trace.
    async fn finish_apply_call(
        &mut self,
        mut call: Call,
        goal_text: String,
        from_saved_plan: bool,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyPreview, AgentError> {
        let (accepted, memory) = match self.run_call(&mut call, &goal_text, progress).await {
            Ok(done) => done,
            Err(e) => return Err(self.finish_err(call, e)),
        };
        let Some((plan, preview)) = accepted.plan else {
            let e = AgentError::Rejected {
                stage: Stage::Validate,
                violations: vec![Violation::new(ErrorCode::ApplyEmptyActions, "no plan")],
            };
            return Err(self.finish_err(call, e));
        };
        let no_changes = plan.actions().is_empty();
        if from_saved_plan
            && let Some(text) = call.accepted_text.take()
            && let Some(saved) = self.saved_plan()?
        {
            let bases = plan
                .actions()
                .iter()
                .map(|a| {
                    let path = a.path.as_str();
                    (path.to_owned(), content_sha(&self.root, path))
                })
                .collect();
            store_previewed(
                &self.root,
                PreviewedAnswer {
                    plan_trace_id: saved.trace_id,
                    protocol: call.version.number(),
                    text,
                    bases,
                },
            )?;
        }
        call.trace.apply = Some(ApplyRecord {
            outcome: if no_changes { "no_changes" } else { "pending" }.into(),
            tx_id: None,
            error_code: None,
            selected: Vec::new(),
            files_after: BTreeMap::new(),
        });
        let repaired = call.trace.repair_success == Some(true);
        let trace_file = self.finish_ok(&mut call, &accepted.response)?;
        let r = &accepted.response;
        Ok(ApplyPreview {
            trace_id: call.trace.trace_id.clone(),
            protocol: call.version.number(),
            goal: goal_text,
            summary: super::views::summary_of(r),
            no_changes,
            actions: action_views(&plan),
            deletes: delete_paths(&plan),
            preview,
            fallback: call.fallback.clone(),
            repaired,
            memory,
            commands_to_run: r.commands(),
            verification: r.verification.clone(),
            rollback: r.rollback.clone(),
            trace_file,
            plan,
            trace: call.trace,
            from_saved_plan,
        })
    }

    /// Apply a previewed plan: the actions whose indices are in `selection` (`None`: all).
    /// DELETE actions in the selection need `confirmed_deletes` (otherwise
    /// [`AgentError::DeleteNotConfirmed`], nothing written). Runs the project's checks
    /// (`project.default_test_command`, else detected), all-or-nothing via papayu-patch. The
    /// saved plan is cleared once applied.
    pub fn apply(
        &self,
        preview: &ApplyPreview,
        selection: Option<&[usize]>,
        confirmed_deletes: bool,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyOutcome, AgentError> {
        let result = self.apply_inner(
            preview,
            selection,
            confirmed_deletes,
            progress,
            None,
            CheckPlan::Project,
        );
        self.notify_applied(preview, &result);
        result
    }

    fn notify_applied(&self, preview: &ApplyPreview, result: &Result<ApplyOutcome, AgentError>) {
        self.notify(super::observe::AgentEvent::Applied {
            preview,
            result: result.as_ref(),
        });
    }

    /// [`apply`](Self::apply), cancellable from another thread: setting `cancel` stops the
    /// transaction at its next step (a running check is killed) and rolls it back; the error's
    /// code is `ERR_CANCELLED` and nothing is written. Too late once it has committed.
    pub fn apply_with_cancel(
        &self,
        preview: &ApplyPreview,
        selection: Option<&[usize]>,
        confirmed_deletes: bool,
        progress: ProgressFn<'_>,
        cancel: Arc<AtomicBool>,
    ) -> Result<ApplyOutcome, AgentError> {
        let result = self.apply_inner(
            preview,
            selection,
            confirmed_deletes,
            progress,
            Some(cancel),
            CheckPlan::Project,
        );
        self.notify_applied(preview, &result);
        result
    }

    /// Apply all of `preview` as a transaction whose check is `command`, committed only when
    /// `judge` accepts the run ([`Agent::solve`]); its DELETE actions only when
    /// `confirmed_deletes` (up front, or the caller's confirmation saw this preview).
    pub(super) fn apply_verified(
        &self,
        preview: &ApplyPreview,
        command: &str,
        judge: &(dyn Fn(&CheckReport) -> Result<(), String> + Sync),
        options: &SolveOptions,
        confirmed_deletes: bool,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyOutcome, AgentError> {
        self.apply_inner(
            preview,
            None,
            confirmed_deletes,
            progress,
            options.cancel.clone(),
            CheckPlan::Verify {
                command,
                judge,
                timeout: options.test_timeout,
                trial: false,
            },
        )
    }

    /// [`Self::apply_verified`] for one of papayu's own edits (D81): the same transaction, with
    /// no progress shown and no trace written unless it is kept.
    pub(super) fn apply_trial(
        &self,
        preview: &ApplyPreview,
        command: &str,
        judge: &(dyn Fn(&CheckReport) -> Result<(), String> + Sync),
        options: &SolveOptions,
    ) -> Result<ApplyOutcome, AgentError> {
        self.apply_inner(
            preview,
            None,
            false,
            &super::views::no_progress,
            options.cancel.clone(),
            CheckPlan::Verify {
                command,
                judge,
                timeout: options.test_timeout,
                trial: true,
            },
        )
    }

    /// Run the project's tests outside any transaction (the baseline of [`Agent::solve`]),
    /// confined like every check.
    pub(super) fn run_tests(&self, command: &str, options: &SolveOptions) -> CheckReport {
        papayu_patch::run_check(
            self.root.as_std_path(),
            command,
            options.test_timeout,
            options.cancel.as_deref(),
            &self.config.sandbox,
        )
    }

    pub(super) fn apply_inner(
        &self,
        preview: &ApplyPreview,
        selection: Option<&[usize]>,
        confirmed_deletes: bool,
        progress: ProgressFn<'_>,
        cancel: Option<Arc<AtomicBool>>,
        checks: CheckPlan<'_>,
    ) -> Result<ApplyOutcome, AgentError> {
        let mut trace = preview.trace.clone();
        let plan = match selection {
            None => preview.plan.clone(),
            Some(sel) => preview
                .plan
                .select(sel)
                .map_err(|e| AgentError::InvalidSelection {
                    index: e.index,
                    len: e.len,
                })?,
        };
        let selected: Vec<usize> = plan.actions().iter().map(|a| a.index).collect();
        let record = |trace: &mut TraceRecord,
                      outcome: &str,
                      tx: Option<String>,
                      code: Option<ErrorCode>,
                      after| {
            trace.apply = Some(ApplyRecord {
                outcome: outcome.into(),
                tx_id: tx,
                error_code: code,
                selected: selected.clone(),
                files_after: after,
            });
        };
        if plan.actions().is_empty() {
            record(
                &mut trace,
                if preview.no_changes {
                    "no_changes"
                } else {
                    "declined"
                },
                None,
                None,
                BTreeMap::new(),
            );
            let trace_file = self.write_trace_if_on(&trace)?;
            return Ok(ApplyOutcome {
                trace_id: trace.trace_id,
                applied: false,
                no_changes: preview.no_changes,
                selected,
                report: None,
                trace_file,
            });
        }
        let trial = matches!(checks, CheckPlan::Verify { trial: true, .. });
        let deletes = delete_paths(&plan);
        if !deletes.is_empty() && !confirmed_deletes {
            record(
                &mut trace,
                "declined",
                None,
                Some(ErrorCode::Cancelled),
                BTreeMap::new(),
            );
            self.write_trace_if_on(&trace)?;
            return Err(AgentError::DeleteNotConfirmed { paths: deletes });
        }
        let mut options = ApplyOptions::default();
        options = match checks {
            CheckPlan::Project => {
                options.checks(match self.memory.project().default_test_command() {
                    Some(cmd) => Checks::Commands(vec![cmd.to_owned()]),
                    None => Checks::Detect,
                })
            }
            CheckPlan::Verify {
                command,
                judge,
                timeout,
                ..
            } => options
                .checks(Checks::Commands(vec![command.to_owned()]))
                .check_timeout(timeout)
                .judge(judge),
        };
        let mut options = options
            .sandbox(self.config.sandbox.clone())
            .normalize_eol_lf(self.config.normalize_eol_lf)
            .on_progress(|p: &papayu_patch::Progress<'_>| match p.check {
                Some(c) => progress(&Progress::Checked {
                    done: p.done,
                    total: p.total,
                    command: c.command.clone(),
                    success: c.success,
                    status: c.status.to_string(),
                    duration_ms: c.duration_ms,
                    output: c.output.clone(),
                }),
                None => progress(&Progress::Applying {
                    done: p.done,
                    total: p.total,
                    item: p.item.to_owned(),
                }),
            });
        if let Some(flag) = cancel {
            options = options.cancel_flag(flag);
        }
        let result = self.patch.transaction(&plan).options(options).apply();
        let after: BTreeMap<String, Option<String>> = plan
            .actions()
            .iter()
            .map(|a| {
                let p = self.root.join(a.path.as_str());
                let sha = fs_err::read(&p).ok().map(|b| sha256_hex(&b));
                (a.path.as_str().to_owned(), sha)
            })
            .collect();
        match result {
            Ok(report) => {
                record(
                    &mut trace,
                    "applied",
                    Some(report.tx_id.clone()),
                    None,
                    after,
                );
                let trace_file = self.write_trace_if_on(&trace)?;
                if preview.from_saved_plan {
                    store_saved_plan(&self.root, None)?;
                }
                Ok(ApplyOutcome {
                    trace_id: trace.trace_id,
                    applied: true,
                    no_changes: false,
                    selected,
                    report: Some(report),
                    trace_file,
                })
            }
            Err(e) => {
                record(&mut trace, "rolled_back", None, Some(e.code()), after);
                trace.error_code = Some(e.code());
                trace.error = Some(e.to_string());
                if !trial {
                    self.write_trace_if_on(&trace)?;
                }
                Err(AgentError::Apply(e))
            }
        }
    }

    /// A plan `document` of protocol `version` validated for applying (its paths checked against
    /// the project as it is) and previewed; a rejected one is [`AgentError::Rejected`].
    fn checked_preview(
        &self,
        document: &str,
        version: papayu_protocol::ProtocolVersion,
    ) -> Result<(ValidatedPlan, papayu_patch::Preview), AgentError> {
        let root = self.root.clone();
        let exists = |p: &RelPath| fs_err::symlink_metadata(root.join(p.as_str())).is_ok();
        let ctx = Context::new(version)
            .with_mode(Mode::Apply)
            .with_exists(&exists);
        let plan = papayu_validate::check_text(document, &ctx, &self.policy)
            .into_plan()
            .map_err(|rejected| {
                let violations = rejected.into_violations();
                AgentError::Rejected {
                    stage: Stage::of(&violations),
                    violations,
                }
            })?;
        let options = ApplyOptions::default().normalize_eol_lf(self.config.normalize_eol_lf);
        let preview = self.patch.transaction(&plan).options(options).preview()?;
        Ok((plan, preview))
    }

    /// A change derived from `parent`'s — a part of it ([`super::parts`]) or it with a rename
    /// completed ([`super::rename`]) — as a plan `document`, validated and previewed like any
    /// plan, with its own trace whose `part_of` says what it is and names the parent.
    pub(super) fn preview_derived(
        &self,
        parent: &ApplyPreview,
        document: &str,
        derived_from: String,
    ) -> Result<ApplyPreview, AgentError> {
        let (plan, preview) = self.checked_preview(document, parent.plan.version())?;
        let mut trace = parent.trace.clone();
        trace.trace_id = super::new_trace_id();
        trace.created_unix_ms = super::finish::now_ms();
        trace.validated_json = serde_json::from_str(document).ok();
        trace.part_of = Some(derived_from);
        Ok(ApplyPreview {
            trace_id: trace.trace_id.clone(),
            actions: action_views(&plan),
            deletes: delete_paths(&plan),
            preview,
            trace_file: None,
            plan,
            trace,
            ..parent.clone()
        })
    }

    /// papayu's own change (D81) as a plan `document` of protocol v3 (whichever protocol the
    /// model speaks: v2 has no whole-file update of an existing file), validated and previewed
    /// like any plan, with a trace of its own for `goal` whose `part_of` says what it is
    /// (`what`).
    pub(super) fn preview_own(
        &self,
        goal: &str,
        document: &str,
        what: String,
    ) -> Result<ApplyPreview, AgentError> {
        let version = papayu_protocol::ProtocolVersion::V3;
        let (plan, preview) = self.checked_preview(document, version)?;
        let mut trace = self.new_call(Mode::Apply, goal, version).trace;
        trace.event = "PAPAYU_EDIT".into();
        trace.validated_json = serde_json::from_str(document).ok();
        trace.part_of = Some(what.clone());
        Ok(ApplyPreview {
            trace_id: trace.trace_id.clone(),
            protocol: version.number(),
            goal: trace.goal.clone(),
            summary: Some(what),
            no_changes: plan.actions().is_empty(),
            actions: action_views(&plan),
            deletes: delete_paths(&plan),
            preview,
            fallback: None,
            repaired: false,
            memory: None,
            commands_to_run: Vec::new(),
            verification: Vec::new(),
            rollback: Vec::new(),
            trace_file: None,
            plan,
            trace,
            from_saved_plan: false,
        })
    }

    /// Validate and preview a plan document (a model answer as text, e.g. a file the user
    /// opened) without asking the model, like `papayu preview`: blocked actions stay in the
    /// preview with their error, so a frontend can show them and apply the others with
    /// [`apply`](Self::apply). A rejected document is [`AgentError::Rejected`].
    pub fn preview_document(
        &self,
        text: &str,
        progress: ProgressFn<'_>,
    ) -> Result<ApplyPreview, AgentError> {
        let version = self.config.effective_protocol();
        let call = self.new_call(Mode::Apply, "(plan document)", version);
        let root = self.root.clone();
        let exists = |p: &RelPath| fs_err::symlink_metadata(root.join(p.as_str())).is_ok();
        let ctx = Context::new(version)
            .with_mode(Mode::Apply)
            .with_exists(&exists);
        let report = papayu_validate::check_text(text, &ctx, &self.policy);
        let plan = report.into_plan().map_err(|rejected| {
            let violations = rejected.into_violations();
            AgentError::Rejected {
                stage: Stage::of(&violations),
                violations,
            }
        })?;
        let response = parse_response(text, version).map_err(|e| AgentError::Rejected {
            stage: Stage::Schema,
            violations: vec![Violation::from(&e)],
        })?;
        progress(&Progress::Previewing);
        let options = ApplyOptions::default().normalize_eol_lf(self.config.normalize_eol_lf);
        let preview = self.patch.transaction(&plan).options(options).preview()?;
        let mut trace = call.trace;
        trace.event = "LLM_PLAN_OK".into();
        Ok(ApplyPreview {
            trace_id: trace.trace_id.clone(),
            protocol: version.number(),
            goal: trace.goal.clone(),
            summary: response.summary.clone(),
            no_changes: plan.actions().is_empty(),
            actions: action_views(&plan),
            deletes: delete_paths(&plan),
            preview,
            fallback: None,
            repaired: false,
            memory: None,
            commands_to_run: response.commands(),
            verification: response.verification.clone(),
            rollback: response.rollback.clone(),
            trace_file: None,
            plan,
            trace,
            from_saved_plan: false,
        })
    }
}
