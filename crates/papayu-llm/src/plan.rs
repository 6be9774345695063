//! From answer text to a checked plan: parsing, the caller's validation rules, and the single
//! repair round (SPEC §7 "Repair").

use std::sync::Arc;

use papayu_protocol::{
    ProtocolVersion, Response, Violation, document_from_value, extract_json, parse_value,
    strip_nulls,
};
use serde::Serialize;

use crate::error::LlmError;
use crate::provider::{Provider, ProviderInfo};
use crate::request::{ChatRequest, Completion, Message};

/// Extra rules run on every parsed answer, such as papayu-validate's path, limit and mode
/// rules. This crate does not depend on papayu-validate; the agent passes its rules in.
pub type PlanValidator = dyn Fn(&Response) -> Vec<Violation> + Send + Sync;

/// The fixed instruction of the repair round.
pub const REPAIR_INSTRUCTION: &str = "Your previous answer was rejected by papayu's validator. \
Fix every problem listed below and answer again with exactly one JSON document that follows the \
protocol schema. Do not add prose, comments or Markdown fences around it, do not explain the \
changes, and keep the parts of your previous answer that were correct.";

/// Parse `text` against `version` and run `validator`, collecting **every** violation.
///
/// Returns the response when nothing is wrong. The JSON is extracted once (SPEC §3.3); the
/// envelope is read leniently so that all problems are listed, then strictly to catch what the
/// lenient reader lets through.
pub fn check_answer(
    text: &str,
    version: ProtocolVersion,
    validator: Option<&PlanValidator>,
) -> Result<Response, Vec<Violation>> {
    let mut value = extract_json(text).map_err(|e| vec![Violation::from(&e)])?;
    strip_nulls(&mut value);
    check_value(value, version, validator)
}

/// [`check_answer`] for a JSON value (used to re-validate a merged plan).
pub fn check_value(
    value: serde_json::Value,
    version: ProtocolVersion,
    validator: Option<&PlanValidator>,
) -> Result<Response, Vec<Violation>> {
    let document = document_from_value(value.clone(), version);
    let mut violations = document.violations;
    let strict = parse_value(value, version);
    let response = match strict {
        Ok(response) => response,
        Err(e) => {
            let v = Violation::from(&e);
            if !violations
                .iter()
                .any(|known| known.code == v.code && known.pointer == v.pointer)
            {
                violations.push(v);
            }
            document.response
        }
    };
    if let Some(validate) = validator {
        violations.extend(validate(&response));
    }
    if violations.is_empty() {
        Ok(response)
    } else {
        Err(violations)
    }
}

/// The repair request: the original conversation, the rejected answer as the assistant's turn,
/// then [`REPAIR_INSTRUCTION`] with every violation, one per line.
pub fn repair_request(
    original: &ChatRequest,
    previous_output: &str,
    violations: &[Violation],
) -> ChatRequest {
    let mut prompt = String::from(REPAIR_INSTRUCTION);
    prompt.push_str("\n\nProblems:");
    for v in violations {
        prompt.push_str("\n- ");
        prompt.push_str(&v.to_string());
    }
    let mut request = original.clone();
    request.messages.push(Message::assistant(previous_output));
    request.messages.push(Message::user(prompt));
    request
}

/// One model call of a plan request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanAttempt {
    /// The answer.
    pub completion: Completion,
    /// What was wrong with it (empty for the accepted answer).
    pub violations: Vec<Violation>,
    /// Whether this was the repair round.
    pub repair: bool,
}

/// The result of [`request_plan`]: every attempt, and the plan or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOutcome {
    /// Which provider answered.
    pub provider: ProviderInfo,
    /// The calls made (one, or two with the repair round).
    pub attempts: Vec<PlanAttempt>,
    /// The checked plan, or the error that stands.
    pub plan: Result<Response, LlmError>,
}

impl PlanOutcome {
    /// The raw text of the last answer, if any call succeeded.
    pub fn last_text(&self) -> Option<&str> {
        self.attempts.last().map(|a| a.completion.text.as_str())
    }
}

/// Ask for a plan, check it, and run at most one repair round.
///
/// Transport errors end the request at once (they were already retried by the provider);
/// an answer that breaks the protocol or `validator` gets one repair round with every
/// violation, then its error stands as [`LlmError::InvalidAnswer`].
pub async fn request_plan(
    provider: &dyn Provider,
    request: &ChatRequest,
    validator: Option<&PlanValidator>,
) -> PlanOutcome {
    let info = provider.info();
    let mut attempts = Vec::new();
    let mut current = request.clone();
    for repair in [false, true] {
        let completion = match provider.complete(&current).await {
            Ok(c) => c,
            Err(e) => {
                return PlanOutcome {
                    provider: info,
                    attempts,
                    plan: Err(e),
                };
            }
        };
        match check_answer(&completion.text, request.protocol, validator) {
            Ok(response) => {
                attempts.push(PlanAttempt {
                    completion,
                    violations: Vec::new(),
                    repair,
                });
                return PlanOutcome {
                    provider: info,
                    attempts,
                    plan: Ok(response),
                };
            }
            Err(violations) => {
                for v in &violations {
                    tracing::info!(
                        event = "VALIDATION_FAILED",
                        provider = info.kind.as_str(),
                        model = %info.model,
                        code = v.code.as_str(),
                        reason = %crate::redact(&v.to_string()),
                        repair,
                    );
                }
                if !repair {
                    tracing::info!(
                        event = "LLM_RESPONSE_REPAIR",
                        provider = info.kind.as_str(),
                        model = %info.model,
                        violations = violations.len(),
                    );
                    current = repair_request(request, &completion.text, &violations);
                }
                attempts.push(PlanAttempt {
                    completion,
                    violations,
                    repair,
                });
            }
        }
    }
    let violations = attempts
        .last()
        .map(|a| a.violations.clone())
        .unwrap_or_default();
    PlanOutcome {
        provider: info,
        attempts,
        plan: Err(LlmError::InvalidAnswer { violations }),
    }
}

/// A validator shared across tasks.
pub type SharedValidator = Arc<PlanValidator>;
