//! `papayu doctor` and `papayu ask` library entry points.

use std::sync::{Arc, Mutex};

use papayu_llm::{
    AskOptions, CapabilityCache, DoctorOptions, ProviderConfig, ProviderKind, ResponseFormat, ask,
    doctor,
};
use papayu_protocol::{ErrorCode, ProtocolVersion};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::{base, fast_retry, ok_body, plan, provider};

#[tokio::test]
async fn doctor_reports_format_latency_reachability_and_config_problems() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = MockServer::start().await;
    Mock::given(|r: &Request| {
        r.body_json::<Value>()
            .is_ok_and(|b| b["response_format"]["type"] == "json_schema")
    })
    .respond_with(
        ResponseTemplate::new(400).set_body_json(
            json!({"error": {"message": "response_format json_schema unsupported"}}),
        ),
    )
    .mount(&server)
    .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(ok_body(kind, "{\"actions\":[],\"summary\":\"ok\"}")),
        )
        .mount(&server)
        .await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let configs = vec![
        ProviderConfig::new(kind, base(kind, &server.uri()), "good").with_retry(fast_retry()),
        ProviderConfig::new(kind, format!("http://127.0.0.1:{closed}/v1"), "down")
            .with_retry(fast_retry()),
        ProviderConfig::new(ProviderKind::Anthropic, "", "claude"),
    ];
    let cache = CapabilityCache::new();
    let report = doctor(&configs, &cache, &DoctorOptions::default()).await;
    let [good, down, unconfigured] = &report.providers[..] else {
        panic!("{report:?}")
    };

    assert!(good.ok(), "{good:?}");
    assert_eq!(good.reachable, Some(true));
    assert_eq!(
        good.structured_output,
        Some(ResponseFormat::JsonObjectWithSchema)
    );
    assert_eq!(good.fallbacks.len(), 1);
    assert!(good.latency_ms.is_some_and(|ms| ms > 0.0));
    assert_eq!(good.answer_valid, Some(true));
    assert_eq!(cache.entries().len(), 1);

    assert_eq!(down.reachable, Some(false));
    assert_eq!(down.error.as_ref().unwrap().code, ErrorCode::LlmNetwork);
    assert!(!down.ok());

    assert_eq!(unconfigured.reachable, None, "not probed without a key");
    assert!(
        unconfigured
            .config_problems
            .iter()
            .any(|p| p.contains("API key"))
    );
    assert!(!report.ok());

    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        json["providers"][0]["structured_output"],
        "json_object_schema"
    );
    assert_eq!(json["providers"][1]["error"]["code"], "ERR_LLM_NETWORK");
    assert_eq!(json["providers"][2]["api_key_set"], false);
}

#[tokio::test]
async fn ask_returns_raw_and_parsed_answers() {
    let kind = ProviderKind::Ollama;
    let server = MockServer::start().await;
    let raw = format!("Here you go:\n```json\n{}\n```", plan());
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(kind, &raw)))
        .mount(&server)
        .await;
    let p = provider(kind, &server.uri());
    let counted = Arc::new(Mutex::new(0usize));
    let sink = counted.clone();
    let options = AskOptions {
        protocol: ProtocolVersion::V3,
        stream: Some(Arc::new(move |n| *sink.lock().unwrap() = n)),
        ..AskOptions::default()
    };
    let outcome = ask(&p, "add a readme", options).await.unwrap();
    assert_eq!(outcome.completion.text, raw);
    assert_eq!(
        outcome.parsed.as_ref().unwrap().effective_actions()[0].path,
        "README.md"
    );
    assert!(outcome.violations.is_empty());
    // A server that answers a stream request with one JSON line still reports progress.
    assert_eq!(*counted.lock().unwrap(), raw.chars().count());
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert!(
        sent["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("LLM_PLAN_SCHEMA_VERSION=3")
    );

    let bad = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(kind, "nope")))
        .mount(&bad)
        .await;
    let outcome = ask(&provider(kind, &bad.uri()), "x", AskOptions::default())
        .await
        .unwrap();
    assert!(outcome.parsed.is_none());
    assert_eq!(outcome.violations[0].code, ErrorCode::JsonParse);
    assert_eq!(
        serde_json::to_value(&outcome).unwrap()["completion"]["text"],
        "nope"
    );
}
