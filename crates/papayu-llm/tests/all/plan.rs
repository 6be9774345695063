//! Answer checks, the repair request and the repair round.

use papayu_llm::{
    LlmError, Message, Provider, ProviderKind, REPAIR_INSTRUCTION, check_answer, repair_request,
    request_plan,
};
use papayu_protocol::{ErrorCode, ProtocolVersion, Response, Violation};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{base, ok_body, plan, provider, request};

#[test]
fn check_answer_accepts_fenced_json_and_lists_every_problem() {
    let fenced = format!("Sure:\n```json\n{}\n```", plan());
    let ok = check_answer(&fenced, ProtocolVersion::V2, None).unwrap();
    assert_eq!(ok.effective_actions()[0].path, "README.md");

    let err = check_answer("no json here", ProtocolVersion::V2, None).unwrap_err();
    assert_eq!(err[0].code, ErrorCode::JsonParse);

    let bad =
        json!({ "actions": [{ "kind": "MOVE_FILE", "path": "a" }], "summary": 3, "bogus": true })
            .to_string();
    let err = check_answer(&bad, ProtocolVersion::V2, None).unwrap_err();
    assert!(err.len() >= 2, "{err:?}");
    assert!(
        err.iter().any(|v| v.pointer.as_deref() == Some("/summary")),
        "{err:?}"
    );

    let no_readme = |r: &Response| -> Vec<Violation> {
        r.effective_actions()
            .iter()
            .filter(|a| a.path == "README.md")
            .map(|a| {
                Violation::new(ErrorCode::ProtectedPath, "README.md is protected")
                    .at_action(0, &a.path)
            })
            .collect()
    };
    let err = check_answer(&plan().to_string(), ProtocolVersion::V2, Some(&no_readme)).unwrap_err();
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].code, ErrorCode::ProtectedPath);
}

#[test]
fn repair_request_carries_previous_output_every_violation_and_the_instruction() {
    let violations = vec![
        Violation::new(
            ErrorCode::JsonParse,
            "invalid JSON at line 1, column 2: expected value",
        ),
        Violation::new(ErrorCode::InvalidPath, "absolute path")
            .at_action(0, "/etc/passwd")
            .with_pointer("/actions/0/path"),
    ];
    let repaired = repair_request(&request(), "{oops", &violations);
    assert_eq!(repaired.messages.len(), 4);
    assert_eq!(repaired.messages[2], Message::assistant("{oops"));
    let prompt = &repaired.messages[3].content;
    assert!(prompt.starts_with(REPAIR_INSTRUCTION));
    insta::assert_snapshot!("repair_prompt", prompt);
}

#[tokio::test]
async fn one_repair_round_then_success() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(ok_body(kind, "I think you should {\"actions\": [")),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(kind, &plan().to_string())))
        .with_priority(2)
        .mount(&server)
        .await;
    let p = provider(kind, &base(kind, &server.uri()));
    let outcome = request_plan(&p, &request(), None).await;
    let plan = outcome.plan.unwrap();
    assert_eq!(plan.effective_actions().len(), 1);
    assert_eq!(outcome.attempts.len(), 2);
    assert!(!outcome.attempts[0].repair && outcome.attempts[1].repair);
    assert_eq!(outcome.attempts[0].violations[0].code, ErrorCode::JsonParse);
    let sent: serde_json::Value = server.received_requests().await.unwrap()[1]
        .body_json()
        .unwrap();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2]["content"], "I think you should {\"actions\": [");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("ERR_JSON_PARSE")
    );
}

#[tokio::test]
async fn the_error_stands_after_the_repair_round() {
    let kind = ProviderKind::Ollama;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(kind, &plan().to_string())))
        .mount(&server)
        .await;
    let reject_all = |_: &Response| {
        vec![Violation::new(
            ErrorCode::PlanHasActions,
            "PLAN mode answers carry no actions",
        )]
    };
    let outcome = request_plan(
        &provider(kind, &server.uri()),
        &request(),
        Some(&reject_all),
    )
    .await;
    assert_eq!(outcome.attempts.len(), 2);
    let err = outcome.plan.unwrap_err();
    assert_eq!(err.code(), ErrorCode::PlanHasActions);
    assert!(matches!(err, LlmError::InvalidAnswer { .. }));
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn transport_errors_are_not_repaired() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(404).set_body_string("no such model"))
        .mount(&server)
        .await;
    let p = provider(kind, &base(kind, &server.uri()));
    let outcome = request_plan(&p, &request(), None).await;
    assert!(outcome.attempts.is_empty());
    assert_eq!(outcome.plan.unwrap_err().status(), Some(404));
    assert_eq!(p.info().model, "test-model");
}
