//! Multi-provider fan-out (SPEC §7): ask every provider in parallel, check each answer with the
//! repair round, merge, and check the merged plan again.

use std::sync::Arc;

use futures_util::future::join_all;
use papayu_protocol::{Action, ErrorCode, Response, Violation};
use serde::Serialize;

use crate::error::LlmError;
use crate::plan::{PlanOutcome, PlanValidator, check_value, request_plan};
use crate::provider::{Provider, ProviderInfo};
use crate::request::{ChatRequest, Message};

/// How candidate plans become one.
#[derive(Clone)]
pub enum MergePolicy {
    /// The first valid plan in provider order, plus the actions of later valid plans that touch
    /// no path the merged plan already touches.
    Deterministic,
    /// Ask this provider (`PAPAYU_LLM_AGGREGATOR_URL`) to merge the valid candidates. When its
    /// answer fails, the deterministic rule is used and the failure is reported.
    Aggregator(Arc<dyn Provider>),
}

impl std::fmt::Debug for MergePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Deterministic => f.write_str("Deterministic"),
            Self::Aggregator(p) => write!(f, "Aggregator({:?})", p.info()),
        }
    }
}

/// Which rule produced the merged plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeMethod {
    /// The aggregator model's answer.
    Aggregator,
    /// The deterministic rule.
    Deterministic,
    /// The first valid plan alone (the merged plan failed re-validation).
    FirstValidOnly,
    /// No valid candidate.
    None,
}

/// Everything a fan-out did, failures included.
#[derive(Debug)]
pub struct FanOutReport {
    /// One outcome per provider, in provider order.
    pub candidates: Vec<PlanOutcome>,
    /// The merged, re-validated plan.
    pub merged: Result<Response, LlmError>,
    /// Which rule produced it.
    pub method: MergeMethod,
    /// The aggregator call, when there was one.
    pub aggregator: Option<PlanOutcome>,
    /// Violations of a merged plan that was rejected in favour of the first valid plan alone.
    pub merge_violations: Vec<Violation>,
    /// Actions of later candidates left out because they conflict, as `(provider index, path)`.
    pub skipped_actions: Vec<(usize, String)>,
}

impl FanOutReport {
    /// Providers whose plan failed, with the error.
    pub fn failures(&self) -> Vec<(&ProviderInfo, &LlmError)> {
        self.candidates
            .iter()
            .filter_map(|c| c.plan.as_ref().err().map(|e| (&c.provider, e)))
            .collect()
    }
}

/// Ask every provider in parallel and merge (see [`MergePolicy`]).
pub async fn fan_out(
    providers: &[Arc<dyn Provider>],
    request: &ChatRequest,
    validator: Option<&PlanValidator>,
    policy: &MergePolicy,
) -> FanOutReport {
    let candidates: Vec<PlanOutcome> = join_all(
        providers
            .iter()
            .map(|p| request_plan(p.as_ref(), request, validator)),
    )
    .await;
    for c in &candidates {
        if let Err(e) = &c.plan {
            tracing::warn!(
                event = "LLM_PROVIDER_FAILED",
                provider = c.provider.kind.as_str(),
                model = %c.provider.model,
                code = e.code().as_str(),
                error = %crate::redact(&e.to_string()),
            );
        }
    }
    let valid: Vec<(usize, &Response)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.plan.as_ref().ok().map(|r| (i, r)))
        .collect();
    let mut report = FanOutReport {
        merged: Err(no_valid(&candidates)),
        method: MergeMethod::None,
        aggregator: None,
        merge_violations: Vec::new(),
        skipped_actions: Vec::new(),
        candidates: Vec::new(),
    };
    if valid.is_empty() {
        report.candidates = candidates;
        return report;
    }

    if let MergePolicy::Aggregator(aggregator) = policy
        && valid.len() > 1
    {
        let merge_request = aggregator_request(request, &valid, &candidates);
        let outcome = request_plan(aggregator.as_ref(), &merge_request, validator).await;
        if let Ok(plan) = &outcome.plan {
            report.merged = Ok(plan.clone());
            report.method = MergeMethod::Aggregator;
            report.aggregator = Some(outcome);
            report.candidates = candidates;
            return report;
        }
        report.aggregator = Some(outcome);
    }

    let (merged, skipped) = merge_deterministic(&valid);
    report.skipped_actions = skipped;
    let first = valid[0].1.clone();
    let revalidated = serde_json::to_value(&merged)
        .map_err(|e| vec![Violation::new(ErrorCode::SchemaValidation, e.to_string())])
        .and_then(|value| check_value(value, request.protocol, validator));
    match revalidated {
        Ok(plan) => {
            report.merged = Ok(plan);
            report.method = MergeMethod::Deterministic;
        }
        Err(violations) => {
            tracing::warn!(
                event = "VALIDATION_FAILED",
                stage = "merge",
                violations = violations.len()
            );
            report.merge_violations = violations;
            report.merged = Ok(first);
            report.method = MergeMethod::FirstValidOnly;
        }
    }
    report.candidates = candidates;
    report
}

fn no_valid(candidates: &[PlanOutcome]) -> LlmError {
    let failures = candidates
        .iter()
        .map(|c| {
            let reason = match &c.plan {
                Ok(_) => "ok".to_owned(),
                Err(e) => format!("{}: {e}", e.code()),
            };
            format!(
                "{} {} ({}): {}",
                c.provider.kind, c.provider.model, c.provider.endpoint, reason
            )
        })
        .collect();
    let first_code = candidates
        .iter()
        .find_map(|c| c.plan.as_ref().err().map(LlmError::code))
        .unwrap_or(ErrorCode::LlmConfig);
    LlmError::NoValidCandidate {
        first_code,
        failures,
    }
}

fn normalise(path: &str) -> String {
    let p = path.replace('\\', "/");
    let p = p.strip_prefix("./").unwrap_or(&p);
    p.trim_end_matches('/').to_owned()
}

fn overlaps(a: &str, b: &str) -> bool {
    a == b
        || a.strip_prefix(b).is_some_and(|r| r.starts_with('/'))
        || b.strip_prefix(a).is_some_and(|r| r.starts_with('/'))
}

/// The deterministic merge: the first valid plan, plus each later plan's actions whose path
/// (or a parent or child of it) no action in the merged plan touches yet.
pub fn merge_deterministic(valid: &[(usize, &Response)]) -> (Response, Vec<(usize, String)>) {
    let Some((_, first)) = valid.first() else {
        return (Response::default(), Vec::new());
    };
    let mut merged = (*first).clone();
    let mut touched: Vec<String> = merged
        .effective_actions()
        .iter()
        .map(|a| normalise(&a.path))
        .collect();
    let mut extra: Vec<Action> = Vec::new();
    let mut skipped = Vec::new();
    for (index, plan) in valid.iter().skip(1) {
        for action in plan.effective_actions() {
            let path = normalise(&action.path);
            if touched.iter().any(|t| overlaps(t, &path)) {
                if !extra.contains(action) && !first.effective_actions().contains(action) {
                    skipped.push((*index, action.path.clone()));
                }
                continue;
            }
            touched.push(path);
            extra.push(action.clone());
        }
    }
    match merged
        .proposed_changes
        .as_mut()
        .and_then(|p| p.actions.as_mut())
    {
        Some(actions) => actions.extend(extra),
        None => merged.actions.extend(extra),
    }
    (merged, skipped)
}

fn aggregator_request(
    request: &ChatRequest,
    valid: &[(usize, &Response)],
    candidates: &[PlanOutcome],
) -> ChatRequest {
    let goal = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == crate::request::Role::User)
        .map(|m| m.content.as_str())
        .unwrap_or_default();
    let mut listing = String::new();
    for (n, (index, plan)) in valid.iter().enumerate() {
        let json = serde_json::to_string_pretty(plan).unwrap_or_default();
        let who = &candidates[*index].provider;
        listing.push_str(&format!(
            "\n\nCandidate {} (from {} {}):\n{json}",
            n + 1,
            who.kind,
            who.model
        ));
    }
    let system = format!(
        "You merge candidate plans from several models into one. Answer with exactly one JSON \
         document in papayu protocol v{v} (LLM_PLAN_SCHEMA_VERSION={v}). Keep every action that \
         is correct and needed, never two actions on the same path, and nothing that is not in a \
         candidate.",
        v = request.protocol.number()
    );
    let mut merged = request.clone();
    merged.messages = vec![
        Message::system(system),
        Message::user(format!("The goal was:\n{goal}\n\nThe candidates:{listing}")),
    ];
    merged.stream = false;
    merged.progress = None;
    merged
}

/// Several providers behind one [`Provider`] (`PAPAYU_LLM_PROVIDERS`): every request goes to
/// all of them in parallel through [`fan_out`] (each answer checked, with its own repair round),
/// and the merged, re-validated plan comes back as the completion text. Callers that validate
/// answers themselves (papayu-agent) check the merged plan once more, with their full rules.
///
/// Providers that failed are never hidden: each is logged as `LLM_PROVIDER_FAILED`, and when no
/// provider produced a valid plan the error names every failure.
pub struct FanOutProvider {
    providers: Vec<Arc<dyn Provider>>,
    policy: MergePolicy,
    validator: Option<crate::plan::SharedValidator>,
}

impl std::fmt::Debug for FanOutProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FanOutProvider")
            .field(
                "providers",
                &self.providers.iter().map(|p| p.info()).collect::<Vec<_>>(),
            )
            .field("policy", &self.policy)
            .finish()
    }
}

impl FanOutProvider {
    /// Fan out over `providers` (at least one) and merge by `policy`.
    pub fn new(providers: Vec<Arc<dyn Provider>>, policy: MergePolicy) -> Result<Self, LlmError> {
        if providers.is_empty() {
            return Err(LlmError::Config {
                message: "multi-provider fan-out needs at least one provider".into(),
            });
        }
        Ok(Self {
            providers,
            policy,
            validator: None,
        })
    }

    /// Also check each candidate (and the merged plan) with `validator`.
    pub fn with_validator(mut self, validator: crate::plan::SharedValidator) -> Self {
        self.validator = Some(validator);
        self
    }
}

impl Provider for FanOutProvider {
    fn info(&self) -> ProviderInfo {
        let infos: Vec<ProviderInfo> = self.providers.iter().map(|p| p.info()).collect();
        ProviderInfo {
            kind: infos[0].kind,
            endpoint: infos
                .iter()
                .map(|i| i.endpoint.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            model: format!(
                "fan-out({})",
                infos
                    .iter()
                    .map(|i| i.model.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> crate::provider::BoxFuture<'a, Result<crate::request::Completion, LlmError>> {
        Box::pin(async move {
            let started = std::time::Instant::now();
            let report = fan_out(
                &self.providers,
                request,
                self.validator.as_deref(),
                &self.policy,
            )
            .await;
            let merged = report.merged?;
            let info = self.info();
            let completions: Vec<&crate::request::Completion> = report
                .candidates
                .iter()
                .flat_map(|c| c.attempts.iter().map(|a| &a.completion))
                .collect();
            let first = completions.first();
            Ok(crate::request::Completion {
                provider: info.kind,
                model: info.model,
                text: serde_json::to_string(&merged).map_err(|e| LlmError::BadResponse {
                    url: self.info().endpoint,
                    message: format!("cannot serialise the merged plan: {e}"),
                })?,
                usage: None,
                finish_reason: Some("stop".into()),
                format: first.map_or(crate::capability::ResponseFormat::None, |c| c.format),
                fallbacks: completions
                    .iter()
                    .flat_map(|c| c.fallbacks.iter().cloned())
                    .collect(),
                retries: completions.iter().map(|c| c.retries).sum(),
                streamed: false,
                elapsed: started.elapsed(),
            })
        })
    }
}
