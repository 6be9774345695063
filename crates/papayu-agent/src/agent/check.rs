//! Judging one model answer: parse, validate and (APPLY) preview it, shared by the agent and
//! the golden replay so both judge answers the same way.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use camino::{Utf8Path, Utf8PathBuf};
use papayu_llm::check_answer;
use papayu_patch::{ApplyOptions, Preview};
use papayu_protocol::{ContextRequest, ProtocolVersion, Response, Violation};
use papayu_validate::{Context, Mode, Policy, RelPath, Report, ValidatedPlan, validate};

use super::Agent;
use super::converse::Call;
use super::views::{Progress, ProgressFn, Stage};

/// An accepted answer: the response and, in APPLY, its validated plan and preview.
pub(crate) struct Accepted {
    pub(crate) response: Response,
    pub(crate) plan: Option<(ValidatedPlan, Preview)>,
    pub(crate) unanswered: Vec<ContextRequest>,
}

/// Everything [`check_full`] needs to judge one answer.
pub(crate) struct Checker<'a> {
    pub(crate) patch: &'a papayu_patch::Project,
    pub(crate) root: &'a Utf8Path,
    pub(crate) policy: &'a Policy,
    pub(crate) version: ProtocolVersion,
    pub(crate) mode: Mode,
    pub(crate) sent: &'a BTreeSet<RelPath>,
    pub(crate) normalize_eol_lf: bool,
}

/// papayu-validate's rules over owned inputs, because papayu-llm's validator must be
/// `'static`. It keeps the report of the answer it judged last, so an accepted APPLY answer
/// becomes a plan without being validated a second time.
struct Rules {
    version: ProtocolVersion,
    mode: Mode,
    sent: BTreeSet<RelPath>,
    root: Utf8PathBuf,
    policy: Policy,
    last: Mutex<Option<Report>>,
}

impl Rules {
    fn run(&self, response: &Response) -> Report {
        let exists = |p: &RelPath| fs_err::symlink_metadata(self.root.join(p.as_str())).is_ok();
        let ctx = Context::new(self.version)
            .with_mode(self.mode)
            .with_sent_files(&self.sent)
            .with_exists(&exists);
        validate(response, &ctx, &self.policy)
    }

    /// The validator papayu-llm calls: the violations, with the report kept.
    fn violations(&self, response: &Response) -> Vec<Violation> {
        let report = self.run(response);
        let violations = report.violations().to_vec();
        if let Ok(mut last) = self.last.lock() {
            *last = Some(report);
        }
        violations
    }

    /// The report of `response`, which papayu-llm's checker has just accepted (and so
    /// validated); it is computed again only if the kept one is somehow missing.
    fn report(&self, response: &Response) -> Report {
        self.last
            .lock()
            .ok()
            .and_then(|mut last| last.take())
            .unwrap_or_else(|| self.run(response))
    }
}

/// Parse and validate one answer (papayu-llm's checker with papayu-validate's rules, the
/// existence oracle and the sent files), and in APPLY preview it with papayu-patch.
pub(crate) fn check_full(
    c: &Checker<'_>,
    text: &str,
    progress: ProgressFn<'_>,
) -> Result<Accepted, (Vec<Violation>, Stage)> {
    let rules = Arc::new(Rules {
        version: c.version,
        mode: c.mode,
        sent: c.sent.clone(),
        root: c.root.to_owned(),
        policy: c.policy.clone(),
        last: Mutex::new(None),
    });
    let validator = {
        let rules = Arc::clone(&rules);
        move |r: &Response| rules.violations(r)
    };
    let response = check_answer(text, c.version, Some(&validator)).map_err(|violations| {
        let stage = Stage::of(&violations);
        (violations, stage)
    })?;
    let unanswered = if response.effective_actions().is_empty() {
        response.context_requests.clone()
    } else {
        Vec::new()
    };
    if c.mode == Mode::Plan {
        return Ok(Accepted {
            response,
            plan: None,
            unanswered,
        });
    }
    let plan = rules
        .report(&response)
        .into_plan()
        .map_err(|rejected| (rejected.into_violations(), Stage::Validate))?;
    progress(&Progress::Previewing);
    let options = ApplyOptions::default().normalize_eol_lf(c.normalize_eol_lf);
    let preview = match c.patch.transaction(&plan).options(options).preview() {
        Ok(p) => p,
        Err(e) => {
            let v = Violation::new(e.code(), e.to_string());
            return Err((vec![v], Stage::Preview));
        }
    };
    if !preview.is_ok() {
        let violations = preview
            .files
            .iter()
            .filter_map(|f| {
                f.error.as_ref().map(|e| {
                    Violation::new(e.code, e.message.clone()).at_action(f.index, f.path.clone())
                })
            })
            .collect();
        return Err((violations, Stage::Preview));
    }
    Ok(Accepted {
        response,
        plan: Some((plan, preview)),
        unanswered,
    })
}

impl Agent {
    /// Parse, validate and (APPLY) preview one answer of `call`.
    pub(super) fn check(
        &self,
        call: &Call,
        text: &str,
        progress: ProgressFn<'_>,
    ) -> Result<Accepted, (Vec<Violation>, Stage)> {
        let sent: BTreeSet<RelPath> = call
            .sent
            .keys()
            .filter_map(|p| RelPath::parse(p).ok())
            .collect();
        check_full(
            &Checker {
                patch: &self.patch,
                root: &self.root,
                policy: &self.policy,
                version: call.version,
                mode: call.mode,
                sent: &sent,
                normalize_eol_lf: self.config.normalize_eol_lf,
            },
            text,
            progress,
        )
    }
}
