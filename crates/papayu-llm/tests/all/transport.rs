//! Retries, error bodies, timeouts and malformed answers.

use std::time::{Duration, Instant, SystemTime};

use papayu_llm::{
    CapabilityCache, HttpProvider, LlmError, Provider, ProviderConfig, ProviderKind, RetryPolicy,
    parse_retry_after,
};
use papayu_protocol::ErrorCode;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{base, capture_events, ok_body, plan, provider, request};

const KIND: ProviderKind = ProviderKind::OpenAiCompatible;

async fn server_with(first: ResponseTemplate, times: u64) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(first)
        .up_to_n_times(times)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(KIND, &plan().to_string())))
        .with_priority(2)
        .mount(&server)
        .await;
    server
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

#[tokio::test]
async fn r_500_then_success_is_retried_once() {
    let server = server_with(
        ResponseTemplate::new(500).set_body_string("upstream hiccup"),
        1,
    )
    .await;
    let c = provider(KIND, &base(KIND, &server.uri()))
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(c.retries, 1);
    assert_eq!(requests(&server).await, 2);
}

#[tokio::test]
async fn persistent_503_gives_up_after_two_retries() {
    let server = server_with(
        ResponseTemplate::new(503).set_body_string("overloaded"),
        100,
    )
    .await;
    let (events, _guard) = capture_events();
    let err = provider(KIND, &base(KIND, &server.uri()))
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(503));
    assert_eq!(err.code(), ErrorCode::LlmHttp);
    assert_eq!(requests(&server).await, 3);
    assert_eq!(
        events
            .names()
            .iter()
            .filter(|e| e.starts_with("event=LLM_RETRY"))
            .count(),
        2
    );
}

#[tokio::test]
async fn r_429_honours_retry_after() {
    let server = server_with(
        ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .set_body_json(json!({"error": {"message": "slow down"}})),
        1,
    )
    .await;
    let config =
        ProviderConfig::new(KIND, base(KIND, &server.uri()), "m").with_retry(RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_secs(5),
        });
    let p = HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new());
    let started = Instant::now();
    let c = p.complete(&request()).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "waited only {:?}",
        started.elapsed()
    );
    assert_eq!(c.retries, 1);
}

#[tokio::test]
async fn retry_after_is_capped_by_max_delay() {
    let server = server_with(
        ResponseTemplate::new(429).insert_header("retry-after", "3600"),
        1,
    )
    .await;
    let started = Instant::now();
    let c = provider(KIND, &base(KIND, &server.uri()))
        .complete(&request())
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(c.retries, 1);
}

#[test]
fn retry_after_values() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
    assert_eq!(
        parse_retry_after("0.5", now),
        Some(Duration::from_millis(500))
    );
    let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
    assert_eq!(
        parse_retry_after(&later, now),
        Some(Duration::from_secs(30))
    );
    let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
    assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
    assert_eq!(parse_retry_after("soon", now), None);
    assert_eq!(parse_retry_after("-1", now), None);
}

#[tokio::test]
async fn other_4xx_are_not_retried_and_bodies_are_redacted() {
    let leaked = format!("sk-{}", "a1B2".repeat(12));
    let server = server_with(
        ResponseTemplate::new(401).set_body_json(
            json!({"error": {"message": format!("Incorrect API key provided: {leaked}")}}),
        ),
        100,
    )
    .await;
    let err = provider(KIND, &base(KIND, &server.uri()))
        .complete(&request().strict(false))
        .await
        .unwrap_err();
    assert_eq!(requests(&server).await, 1);
    match &err {
        LlmError::Http {
            status: 401, body, ..
        } => {
            assert!(
                body.contains("Incorrect API key provided: [REDACTED:openai_key]"),
                "{body}"
            );
            assert!(!body.contains(&leaked));
        }
        other => panic!("expected HTTP 401, got {other:?}"),
    }
    assert!(!err.to_string().contains(&leaked));
}

#[tokio::test]
async fn timeout_is_its_own_error_and_is_not_retried() {
    let server = server_with(
        ResponseTemplate::new(200).set_delay(Duration::from_secs(5)),
        100,
    )
    .await;
    let config = ProviderConfig::new(KIND, base(KIND, &server.uri()), "m")
        .with_retry(crate::common::fast_retry())
        .with_timeout(Duration::from_millis(300));
    let p = HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new());
    let (events, _guard) = capture_events();
    let started = Instant::now();
    let err = p.complete(&request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err:?}");
    assert_eq!(err.code(), ErrorCode::LlmTimeout);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(requests(&server).await, 1);
    assert!(
        events
            .names()
            .iter()
            .any(|e| e == "event=LLM_REQUEST_TIMEOUT"),
        "{:?}",
        events.names()
    );
}

#[tokio::test]
async fn malformed_json_envelope_is_a_bad_response() {
    let server = server_with(
        ResponseTemplate::new(200).set_body_string("{\"choices\": [ oops"),
        100,
    )
    .await;
    let err = provider(KIND, &base(KIND, &server.uri()))
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmBadResponse);
    assert!(err.to_string().contains("not JSON"), "{err}");
    assert_eq!(requests(&server).await, 1);

    let server = server_with(
        ResponseTemplate::new(200).set_body_json(json!({"choices": []})),
        100,
    )
    .await;
    let err = provider(KIND, &base(KIND, &server.uri()))
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmBadResponse);
}

#[tokio::test]
async fn unreachable_server_is_a_network_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let err = provider(KIND, &format!("http://127.0.0.1:{port}/v1"))
        .complete(&request())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmNetwork, "{err:?}");
}

#[test]
fn invalid_configuration_is_rejected() {
    let err = HttpProvider::new(ProviderConfig::new(KIND, "ftp://x", "")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmConfig);
    assert!(err.to_string().contains("no model"), "{err}");
}

/// Issue 18 item 8: a URL without `/v1` says what was requested and suggests the path.
#[tokio::test]
async fn a_404_names_the_request_and_suggests_v1() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(404).set_body_string("Not Found"))
        .mount(&server)
        .await;
    let uri = server.uri();
    let e = provider(KIND, &uri).complete(&request()).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::LlmHttp);
    let message = e.to_string();
    assert!(
        message.contains(&format!("papayu sent POST {uri}/chat/completions"))
            && message.contains(&format!("set the API URL to {uri}/v1")),
        "{message}"
    );
    let with_v1 = provider(KIND, &format!("{uri}/v1"))
        .complete(&request())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        with_v1.contains("no such path") && !with_v1.contains("set the API URL"),
        "{with_v1}"
    );
}

/// Issue 18 item 8: a server that is down is named once, not once per error in the chain.
#[tokio::test]
async fn a_server_that_is_down_is_named_once() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{closed}/v1");
    let e = provider(KIND, &url).complete(&request()).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::LlmNetwork);
    let message = e.to_string();
    assert_eq!(
        message.matches(&format!("127.0.0.1:{closed}")).count(),
        1,
        "{message}"
    );
}
