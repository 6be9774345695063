//! Multi-provider fan-out and both merge policies.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use papayu_llm::{
    BoxFuture, ChatRequest, Completion, LlmError, MergeMethod, MergePolicy, Provider, ProviderInfo,
    ProviderKind, ResponseFormat, fan_out,
};
use papayu_protocol::{ErrorCode, Response, Violation};
use serde_json::Value;

use crate::common::{plan_with, request};

/// A provider that replays canned answers.
struct Fake {
    model: &'static str,
    answers: Mutex<VecDeque<Result<String, LlmError>>>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl Fake {
    fn new(model: &'static str, answers: Vec<Result<String, LlmError>>) -> Arc<Self> {
        Arc::new(Self {
            model,
            answers: Mutex::new(answers.into()),
            seen: Mutex::new(Vec::new()),
        })
    }
}

impl Provider for Fake {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            kind: ProviderKind::OpenAiCompatible,
            endpoint: format!("fake://{}", self.model),
            model: self.model.into(),
        }
    }
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        self.seen.lock().unwrap().push(request.clone());
        let next = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Ok("{}".into()));
        Box::pin(async move {
            next.map(|text| Completion {
                provider: ProviderKind::OpenAiCompatible,
                model: self.model.into(),
                text,
                usage: None,
                finish_reason: None,
                format: ResponseFormat::None,
                fallbacks: Vec::new(),
                retries: 0,
                streamed: false,
                elapsed: Duration::ZERO,
            })
        })
    }
}

fn paths(plan: &Response) -> Vec<&str> {
    plan.effective_actions()
        .iter()
        .map(|a| a.path.as_str())
        .collect()
}

fn down() -> LlmError {
    LlmError::Network {
        url: "fake://down".into(),
        message: "connection refused".into(),
    }
}

#[tokio::test]
async fn deterministic_merge_keeps_order_adds_non_conflicting_and_reports_failures() {
    let a = Fake::new("a", vec![Ok(plan_with(&["src/a.rs"]).to_string())]);
    let b = Fake::new(
        "b",
        vec![Ok(plan_with(&["./src/a.rs", "src/b.rs"]).to_string())],
    );
    let c = Fake::new("c", vec![Err(down())]);
    let d = Fake::new(
        "d",
        vec![Ok("not json".into()), Ok("still not json".into())],
    );
    let providers: Vec<Arc<dyn Provider>> = vec![a, b, c, d.clone()];
    let report = fan_out(&providers, &request(), None, &MergePolicy::Deterministic).await;

    assert_eq!(report.method, MergeMethod::Deterministic);
    let merged = report.merged.as_ref().unwrap();
    assert_eq!(paths(merged), ["src/a.rs", "src/b.rs"]);
    assert_eq!(report.skipped_actions, [(1, "./src/a.rs".to_owned())]);
    let failures = report.failures();
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0].0.model, "c");
    assert_eq!(failures[0].1.code(), ErrorCode::LlmNetwork);
    assert_eq!(failures[1].0.model, "d");
    assert_eq!(failures[1].1.code(), ErrorCode::JsonParse);
    // d got its repair round.
    assert_eq!(d.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn merged_plan_is_validated_again() {
    let a = Fake::new("a", vec![Ok(plan_with(&["a.txt"]).to_string())]);
    let b = Fake::new("b", vec![Ok(plan_with(&["b.txt"]).to_string())]);
    let providers: Vec<Arc<dyn Provider>> = vec![a, b];
    let at_most_one = |r: &Response| -> Vec<Violation> {
        if r.effective_actions().len() > 1 {
            vec![Violation::new(
                ErrorCode::TooManyActions,
                "at most one action",
            )]
        } else {
            Vec::new()
        }
    };
    let report = fan_out(
        &providers,
        &request(),
        Some(&at_most_one),
        &MergePolicy::Deterministic,
    )
    .await;
    assert_eq!(report.method, MergeMethod::FirstValidOnly);
    assert_eq!(paths(report.merged.as_ref().unwrap()), ["a.txt"]);
    assert_eq!(report.merge_violations[0].code, ErrorCode::TooManyActions);
}

#[tokio::test]
async fn aggregator_merges_and_sees_every_valid_candidate() {
    let a = Fake::new("a", vec![Ok(plan_with(&["a.txt"]).to_string())]);
    let b = Fake::new("b", vec![Ok(plan_with(&["b.txt"]).to_string())]);
    let agg = Fake::new("agg", vec![Ok(plan_with(&["b.txt", "a.txt"]).to_string())]);
    let providers: Vec<Arc<dyn Provider>> = vec![a, b];
    let report = fan_out(
        &providers,
        &request(),
        None,
        &MergePolicy::Aggregator(agg.clone()),
    )
    .await;
    assert_eq!(report.method, MergeMethod::Aggregator);
    assert_eq!(paths(report.merged.as_ref().unwrap()), ["b.txt", "a.txt"]);
    let asked = agg.seen.lock().unwrap()[0].messages[1].content.clone();
    assert!(
        asked.contains("Add a README.") && asked.contains("a.txt") && asked.contains("b.txt"),
        "{asked}"
    );
}

#[tokio::test]
async fn failing_aggregator_falls_back_to_the_deterministic_rule_and_is_reported() {
    let a = Fake::new("a", vec![Ok(plan_with(&["a.txt"]).to_string())]);
    let b = Fake::new("b", vec![Ok(plan_with(&["b.txt"]).to_string())]);
    let agg = Fake::new("agg", vec![Err(down())]);
    let providers: Vec<Arc<dyn Provider>> = vec![a, b];
    let report = fan_out(&providers, &request(), None, &MergePolicy::Aggregator(agg)).await;
    assert_eq!(report.method, MergeMethod::Deterministic);
    assert_eq!(paths(report.merged.as_ref().unwrap()), ["a.txt", "b.txt"]);
    assert_eq!(
        report.aggregator.unwrap().plan.unwrap_err().code(),
        ErrorCode::LlmNetwork
    );
}

#[tokio::test]
async fn no_valid_candidate_is_an_error_naming_each_provider() {
    let providers: Vec<Arc<dyn Provider>> = vec![
        Fake::new("x", vec![Err(down())]),
        Fake::new("y", vec![Err(down())]),
    ];
    let report = fan_out(&providers, &request(), None, &MergePolicy::Deterministic).await;
    assert_eq!(report.method, MergeMethod::None);
    let err = report.merged.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmNetwork);
    let text = err.to_string();
    assert!(text.contains(" x ") && text.contains(" y "), "{text}");
    let _: Value = serde_json::to_value(&report.candidates[0].provider).unwrap();
}

/// The agent talks to one `Provider`; `FanOutProvider` puts the whole fan-out behind it.
#[tokio::test]
async fn fan_out_provider_answers_with_the_merged_plan() {
    let a = Fake::new("a", vec![Ok(plan_with(&["src/a.rs"]).to_string())]);
    let b = Fake::new("b", vec![Ok(plan_with(&["src/b.rs"]).to_string())]);
    let c = Fake::new("c", vec![Err(down())]);
    let provider =
        papayu_llm::FanOutProvider::new(vec![a, b, c], MergePolicy::Deterministic).unwrap();
    assert_eq!(provider.info().model, "fan-out(a, b, c)");
    let completion = provider.complete(&request()).await.unwrap();
    let merged =
        papayu_protocol::parse_response(&completion.text, papayu_protocol::ProtocolVersion::V2)
            .unwrap();
    assert_eq!(paths(&merged), ["src/a.rs", "src/b.rs"]);

    let all_down = papayu_llm::FanOutProvider::new(
        vec![
            Fake::new("x", vec![Err(down())]),
            Fake::new("y", vec![Err(down())]),
        ],
        MergePolicy::Deterministic,
    )
    .unwrap();
    let err = all_down.complete(&request()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmNetwork);
    assert!(papayu_llm::FanOutProvider::new(Vec::new(), MergePolicy::Deterministic).is_err());
}
