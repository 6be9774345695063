//! Strict-mode capability detection: json_schema → json_object+schema → json_object → none.

use papayu_llm::{CapabilityKey, Provider, ProviderKind, ResponseFormat};
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::{base, capture_events, ok_body, plan, provider, request};

fn format_of(r: &Request) -> (Option<String>, bool) {
    let body: Value = r.body_json().unwrap_or(Value::Null);
    let rf = &body["response_format"];
    (
        rf["type"].as_str().map(str::to_owned),
        rf.get("schema").is_some(),
    )
}

/// A server that refuses json_schema and json_object+schema (each in its own words) and
/// accepts plain json_object.
async fn picky_server(kind: ProviderKind) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(|r: &Request| format_of(r).0.as_deref() == Some("json_schema"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "error": { "message": "response_format type json_schema is not supported by this server" }
        })))
        .mount(&server)
        .await;
    Mock::given(|r: &Request| format_of(r) == (Some("json_object".into()), true))
        .respond_with(ResponseTemplate::new(500).set_body_string("Unsupported parameter: schema"))
        .mount(&server)
        .await;
    Mock::given(|r: &Request| format_of(r) == (Some("json_object".into()), false))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(kind, &plan().to_string())))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn walks_the_ladder_records_the_fallback_and_remembers_it() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = picky_server(kind).await;
    let p = provider(kind, &base(kind, &server.uri()));
    let (events, _guard) = capture_events();

    let c = p.complete(&request()).await.unwrap();
    assert_eq!(c.format, ResponseFormat::JsonObject);
    let steps: Vec<(ResponseFormat, ResponseFormat, u16)> = c
        .fallbacks
        .iter()
        .map(|f| (f.from, f.to, f.status))
        .collect();
    assert_eq!(
        steps,
        [
            (
                ResponseFormat::JsonSchema,
                ResponseFormat::JsonObjectWithSchema,
                400
            ),
            (
                ResponseFormat::JsonObjectWithSchema,
                ResponseFormat::JsonObject,
                500
            ),
        ]
    );
    assert!(
        c.fallbacks[0]
            .reason
            .contains("json_schema is not supported")
    );
    // The 500 naming the format is a refusal, not a transient error: no retries were spent.
    assert_eq!(c.retries, 0);
    let fallbacks: Vec<String> = events
        .names()
        .into_iter()
        .filter(|e| e.starts_with("event=LLM_RESPONSE_FORMAT_FALLBACK"))
        .collect();
    assert_eq!(
        fallbacks,
        [
            "event=LLM_RESPONSE_FORMAT_FALLBACK from=json_schema to=json_object_schema",
            "event=LLM_RESPONSE_FORMAT_FALLBACK from=json_object_schema to=json_object",
        ]
    );
    let key = CapabilityKey {
        kind,
        endpoint: p.endpoint().to_owned(),
        model: "test-model".into(),
    };
    assert_eq!(p.cache().get(&key), Some(ResponseFormat::JsonObject));

    // The next call starts where the last one ended: one request, no fallback.
    let before = server.received_requests().await.unwrap().len();
    let c = p.complete(&request()).await.unwrap();
    assert!(c.fallbacks.is_empty());
    assert_eq!(server.received_requests().await.unwrap().len(), before + 1);
    let seen: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(format_of)
        .collect();
    assert_eq!(
        seen,
        [
            (Some("json_schema".into()), false),
            (Some("json_object".into()), true),
            (Some("json_object".into()), false),
            (Some("json_object".into()), false),
        ]
    );
}

#[tokio::test]
async fn bottom_of_the_ladder_sends_no_response_format() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = MockServer::start().await;
    Mock::given(|r: &Request| format_of(r).0.is_some())
        .respond_with(
            ResponseTemplate::new(400).set_body_string("'response_format' is unsupported"),
        )
        .mount(&server)
        .await;
    Mock::given(|r: &Request| format_of(r).0.is_none())
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(ok_body(kind, "prose {\"actions\":[],\"summary\":\"s\"}")),
        )
        .mount(&server)
        .await;
    let c = provider(kind, &base(kind, &server.uri()))
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(c.format, ResponseFormat::None);
    assert_eq!(c.fallbacks.len(), 3);
}

#[tokio::test]
async fn a_refusal_at_the_bottom_or_in_best_effort_is_an_error() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string("unsupported everything"))
        .mount(&server)
        .await;
    let err = provider(kind, &base(kind, &server.uri()))
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
    let err = provider(kind, &base(kind, &server.uri()))
        .complete(&request().strict(false))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(server.received_requests().await.unwrap().len(), 5);
}

#[tokio::test]
async fn anthropic_falls_back_from_the_forced_tool_to_plain_text() {
    let kind = ProviderKind::Anthropic;
    let server = MockServer::start().await;
    Mock::given(|r: &Request| r.body_json::<Value>().is_ok_and(|b| b.get("tool_choice").is_some()))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "type": "error", "error": { "type": "invalid_request_error", "message": "tool_choice: not supported for this model" }
        })))
        .mount(&server)
        .await;
    Mock::given(|r: &Request| {
        r.body_json::<Value>()
            .is_ok_and(|b| b.get("tool_choice").is_none())
    })
    .respond_with(ResponseTemplate::new(200).set_body_json(json!({
        "content": [{ "type": "text", "text": plan().to_string() }], "stop_reason": "end_turn"
    })))
    .mount(&server)
    .await;
    let c = provider(kind, &server.uri())
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(c.format, ResponseFormat::None);
    assert_eq!(c.fallbacks.len(), 1);
    assert_eq!(serde_json::from_str::<Value>(&c.text).unwrap(), plan());
}

#[tokio::test]
async fn ollama_ladder_is_schema_then_json_then_none() {
    let kind = ProviderKind::Ollama;
    let server = MockServer::start().await;
    Mock::given(|r: &Request| {
        r.body_json::<Value>()
            .is_ok_and(|b| b["format"].is_object())
    })
    .respond_with(
        ResponseTemplate::new(400)
            .set_body_json(json!({ "error": "json_schema format unsupported" })),
    )
    .mount(&server)
    .await;
    Mock::given(|r: &Request| r.body_json::<Value>().is_ok_and(|b| b["format"] == "json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(kind, &plan().to_string())))
        .mount(&server)
        .await;
    let c = provider(kind, &server.uri())
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(c.format, ResponseFormat::JsonObject);
    assert_eq!(c.fallbacks.len(), 1);
    assert_eq!(
        ResponseFormat::JsonObject.weaker(kind),
        Some(ResponseFormat::None)
    );
}
