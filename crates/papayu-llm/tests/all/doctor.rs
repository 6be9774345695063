//! `papayu doctor` and `papayu ask` library entry points.

use std::sync::{Arc, Mutex};

use papayu_llm::{
    AskOptions, CapabilityCache, DecodeForm, DecodeSpeed, DoctorOptions, ProviderConfig,
    ProviderKind, ResponseFormat, StrictAdvice, ask, doctor, strict_advice,
};
use papayu_protocol::{ErrorCode, ProtocolVersion};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::{base, fast_retry, ok_body, plan, provider, sent_bodies};

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

fn speed(form: DecodeForm, tokens_per_s: f64, valid: bool) -> DecodeSpeed {
    DecodeSpeed {
        form,
        tokens: 50,
        tokens_per_s: Some(tokens_per_s),
        seconds: 1.0,
        answer_valid: valid,
        error: None,
    }
}

#[test]
fn strict_advice_takes_the_strongest_form_that_is_valid_and_fast() {
    use DecodeForm::{CompactSchema, FullSchema, Plain};
    let advise = |full: (f64, bool), compact: (f64, bool)| {
        strict_advice(&[
            speed(Plain, 50.0, false),
            speed(FullSchema, full.0, full.1),
            speed(CompactSchema, compact.0, compact.1),
        ])
    };
    assert_eq!(advise((40.0, true), (45.0, true)), Some(StrictAdvice::On));
    // The whole schema slow, or fast but never valid: the compact one.
    assert_eq!(
        advise((5.0, true), (45.0, true)),
        Some(StrictAdvice::Compact)
    );
    assert_eq!(
        advise((40.0, false), (30.0, true)),
        Some(StrictAdvice::Compact)
    );
    assert_eq!(
        advise((5.0, true), (10.0, true)),
        Some(StrictAdvice::OffWithRepair)
    );
    assert_eq!(
        advise((40.0, false), (40.0, false)),
        Some(StrictAdvice::OffWithRepair)
    );
    assert_eq!(strict_advice(&[speed(FullSchema, 40.0, true)]), None);
}

#[tokio::test]
async fn doctor_measures_decode_speed_under_each_form_when_asked() {
    let kind = ProviderKind::OpenAiCompatible;
    let server = MockServer::start().await;
    let text = "{\"actions\":[],\"summary\":\"ok\"}";
    let mut sse = String::new();
    for piece in text.as_bytes().chunks(4) {
        let piece = std::str::from_utf8(piece).unwrap();
        let event = json!({ "choices": [{ "index": 0, "delta": { "content": piece } }] });
        sse.push_str(&format!("data: {event}\n\n"));
    }
    sse.push_str("data: [DONE]\n\n");
    Mock::given(|r: &Request| r.body_json::<Value>().is_ok_and(|b| b["stream"] == true))
        .respond_with(ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(kind, text)))
        .mount(&server)
        .await;
    let configs =
        vec![ProviderConfig::new(kind, base(kind, &server.uri()), "m").with_retry(fast_retry())];
    let options = DoctorOptions {
        measure_decode: true,
        ..DoctorOptions::default()
    };
    let report = doctor(&configs, &CapabilityCache::new(), &options).await;
    let check = &report.providers[0];
    let forms: Vec<DecodeForm> = check.decode.iter().map(|d| d.form).collect();
    assert_eq!(
        forms,
        [
            DecodeForm::Plain,
            DecodeForm::FullSchema,
            DecodeForm::CompactSchema
        ]
    );
    assert!(
        check
            .decode
            .iter()
            .all(|d| d.answer_valid && d.tokens >= 1 && d.error.is_none()),
        "{:?}",
        check.decode
    );
    assert_eq!(check.strict_advice, strict_advice(&check.decode));
    let bodies = sent_bodies(&server).await;
    // The probe, then plain (no response_format), whole schema, compact schema.
    assert_eq!(bodies.len(), 4);
    assert!(bodies[1].get("response_format").is_none());
    let plan = papayu_protocol::RequestShape {
        apply: false,
        context_requests: false,
        ..papayu_protocol::RequestShape::default()
    };
    assert_eq!(
        bodies[3]["response_format"]["json_schema"]["schema"],
        papayu_protocol::compact_schema(&plan)
    );
    // Not measured unless asked.
    let quiet = doctor(&configs, &CapabilityCache::new(), &DoctorOptions::default()).await;
    assert!(quiet.providers[0].decode.is_empty());
    assert_eq!(quiet.providers[0].strict_advice, None);
}
