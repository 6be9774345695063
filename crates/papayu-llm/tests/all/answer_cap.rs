//! The answer size cap: a provider answering (or streaming) more than the cap is cut off
//! there with `LlmError::AnswerTooLarge` (`ERR_CONTENT_TOO_LARGE`), not retried, and the
//! connection is dropped; error bodies are read only as far as their message needs.

use std::time::{Duration, Instant};

use papayu_llm::{ChatRequest, LlmError, Message, Provider, ProviderKind};
use papayu_protocol::{ErrorCode, MAX_ANSWER_BYTES};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{base, ok_body, provider, request};

const KIND: ProviderKind = ProviderKind::OpenAiCompatible;
const CAP: usize = 64 * 1024;

fn sse_event(text: &str) -> String {
    let event =
        json!({ "choices": [{ "index": 0, "delta": { "content": text }, "finish_reason": null }] });
    format!("data: {event}\n\n")
}

#[track_caller]
fn assert_too_large(err: &LlmError, cap: usize) {
    assert_eq!(err.code(), ErrorCode::ContentTooLarge, "{err}");
    assert!(
        matches!(err, LlmError::AnswerTooLarge { limit, .. } if *limit == cap),
        "{err:?}"
    );
}

#[test]
fn requests_are_capped_at_the_protocol_ceiling_by_default() {
    assert_eq!(
        ChatRequest::new(vec![Message::user("hi")]).max_answer_bytes,
        MAX_ANSWER_BYTES
    );
}

#[tokio::test]
async fn r_huge_non_streamed_answer_is_refused_at_the_cap_and_not_retried() {
    let server = MockServer::start().await;
    let huge = "x".repeat(CAP * 16);
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(KIND, &huge)))
        .expect(1)
        .mount(&server)
        .await;
    let p = provider(KIND, &base(KIND, &server.uri()));
    let err = p
        .complete(&request().max_answer_bytes(CAP))
        .await
        .unwrap_err();
    assert_too_large(&err, CAP);
    // Just over the cap in text, well under the wire limit: refused after parsing.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(KIND, &"y".repeat(CAP + 1))))
        .mount(&server)
        .await;
    let p = provider(KIND, &base(KIND, &server.uri()));
    let err = p
        .complete(&request().max_answer_bytes(CAP))
        .await
        .unwrap_err();
    assert_too_large(&err, CAP);
    // At the cap exactly: accepted.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(KIND, &"z".repeat(CAP))))
        .mount(&server)
        .await;
    let p = provider(KIND, &base(KIND, &server.uri()));
    let ok = p.complete(&request().max_answer_bytes(CAP)).await.unwrap();
    assert_eq!(ok.text.len(), CAP);
}

#[tokio::test]
async fn r_huge_streamed_answer_is_refused_at_the_cap() {
    let server = MockServer::start().await;
    let piece = "a".repeat(1000);
    let body: String = (0..CAP / 1000 * 4).map(|_| sse_event(&piece)).collect();
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(body),
        )
        .expect(1)
        .mount(&server)
        .await;
    let p = provider(KIND, &base(KIND, &server.uri()));
    let err = p
        .complete(&request().streaming(None).max_answer_bytes(CAP))
        .await
        .unwrap_err();
    assert_too_large(&err, CAP);
}

#[tokio::test]
async fn r_huge_error_body_is_read_only_as_far_as_the_message_needs() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string("e".repeat(20 * 1024 * 1024)))
        .expect(1)
        .mount(&server)
        .await;
    let p = provider(KIND, &base(KIND, &server.uri()));
    let err = p.complete(&request()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::LlmHttp, "{err}");
    assert!(err.to_string().len() < 4096, "{}", err.to_string().len());
}

/// A server that streams SSE events for as long as the client reads them (bounded: at most
/// 200 000 events or 30 s), and reports how many bytes it managed to write before the client
/// went away.
async fn endless_sse_server() -> (String, tokio::task::JoinHandle<(usize, bool)>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = Vec::new();
        let mut tmp = [0u8; 8192];
        loop {
            let n = socket.read(&mut tmp).await.unwrap();
            buf.extend_from_slice(&tmp[..n]);
            if n == 0 || buf.windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        let event = sse_event(&"b".repeat(4000));
        let chunk = format!("{:x}\r\n{event}\r\n", event.len());
        let started = Instant::now();
        let mut written = 0usize;
        for _ in 0..200_000 {
            if started.elapsed() > Duration::from_secs(30) {
                return (written, false);
            }
            match tokio::time::timeout(Duration::from_secs(5), socket.write_all(chunk.as_bytes()))
                .await
            {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return (written, true),
                Err(_) => return (written, false),
            }
            written += chunk.len();
        }
        (written, false)
    });
    (uri, handle)
}

#[tokio::test]
async fn r_endless_stream_is_cut_off_at_the_cap_and_the_connection_dropped() {
    let (uri, server) = endless_sse_server().await;
    let p = provider(KIND, &base(KIND, &uri));
    let started = Instant::now();
    let err = p
        .complete(&request().streaming(None).max_answer_bytes(CAP))
        .await
        .unwrap_err();
    assert_too_large(&err, CAP);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    drop(p);
    let (written, dropped) = server.await.unwrap();
    assert!(
        dropped,
        "the client kept the connection open ({written} bytes written)"
    );
    // The socket buffers hold some of what was written; the client read about CAP of it.
    assert!(written < 64 * 1024 * 1024, "{written}");
}
