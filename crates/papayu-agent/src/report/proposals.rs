//! The model's weekly proposals: the report's numbers go to the configured provider, and the
//! answer is extracted, checked against its own schema (`llm_weekly_report_schema.json`) and
//! repaired once, as a plan would be.

use papayu_llm::{ChatRequest, Message, Provider, repair_request};
use papayu_protocol::{WeeklyProposals, parse_weekly_proposals, weekly_schema, weekly_schema_text};
use serde::Serialize;

use super::Report;
use crate::agent::Stage;
use crate::error::AgentError;

/// Answer tokens the proposals may take.
const PROPOSALS_MAX_TOKENS: u32 = 2_048;

const SYSTEM: &str = "You review the weekly metrics of papayu, a tool that applies a language \
model's JSON plans to code. Read the report (fallback rate, its reasons and stages, repairs, the \
paths whose base hash had to be injected, error codes, context size, cache hits, and the \
graduation verdict for switching the protocol v2 -> v1 fallback off) and propose at most 10 \
concrete changes, most important first. Every rationale cites the report's numbers. Answer with \
exactly one JSON object, no prose and no Markdown fence, valid against this JSON schema:\n";

/// The accepted proposals and how they were obtained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposalsOutcome {
    /// The proposals.
    pub proposals: WeeklyProposals,
    /// Whether the repair round produced them.
    pub repaired: bool,
    /// The model that wrote them.
    pub model: String,
}

/// The request for the weekly proposals: the schema in the system prompt, the report (redacted)
/// as the user message, and the answer narrowed to the schema for the in-process model.
pub fn weekly_request(report: &Report) -> ChatRequest {
    let numbers = serde_json::to_string(report).unwrap_or_default();
    ChatRequest::new(vec![
        Message::system(format!("{SYSTEM}{}", weekly_schema_text())),
        Message::user(format!("WEEKLY_REPORT:\n{}", papayu_llm::redact(&numbers))),
    ])
    .answer_schema(weekly_schema())
    .max_tokens(PROPOSALS_MAX_TOKENS)
}

/// Ask `provider` for the weekly proposals on `report`; one repair round with every
/// violation, then the rejection stands ([`AgentError::Rejected`] at the schema stage).
pub async fn request_weekly_proposals(
    provider: &dyn Provider,
    report: &Report,
) -> Result<ProposalsOutcome, AgentError> {
    let request = weekly_request(report);
    let mut current = request.clone();
    let mut last = Vec::new();
    for repaired in [false, true] {
        let answer = provider.complete(&current).await?;
        match parse_weekly_proposals(&answer.text) {
            Ok(proposals) => {
                return Ok(ProposalsOutcome {
                    proposals,
                    repaired,
                    model: answer.model,
                });
            }
            Err(violations) => {
                current = repair_request(&request, &answer.text, &violations);
                last = violations;
            }
        }
    }
    Err(AgentError::Rejected {
        stage: Stage::Schema,
        violations: last,
    })
}
