//! Timeouts that follow progress: a streamed answer is abandoned when it falls silent or runs
//! past the total budget, its connection is closed so the server stops generating, and a slow
//! but steady answer within the budget arrives. A narrowed request sends its compact schema and
//! an answer limit sized to it.

use std::time::Duration;

use papayu_llm::{
    CapabilityCache, ChatRequest, HttpProvider, LlmError, Message, Provider, ProviderConfig,
    ProviderKind,
};
use papayu_protocol::{
    EditStyle, ErrorCode, ProtocolVersion, RequestShape, answer_tokens, compact_schema,
};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::time::Instant;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::common::{fast_retry, ok_body, plan, read_request, sent_bodies};

const KIND: ProviderKind = ProviderKind::OpenAiCompatible;

/// One SSE event carrying `piece` as a token.
fn token(piece: &str) -> Vec<u8> {
    let event = json!({ "choices": [{ "index": 0, "delta": { "content": piece }, "finish_reason": null }] });
    format!("data: {event}\n\n").into_bytes()
}

fn done() -> Vec<u8> {
    let stop = json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] });
    format!("data: {stop}\n\ndata: [DONE]\n\n").into_bytes()
}

/// What a trickling server saw.
struct Served {
    /// Tokens written before the client went away (or all of them).
    written: usize,
    /// When a write first failed because the client had closed the connection.
    closed_at: Option<Instant>,
}

/// A one-connection SSE server writing `events[i]` after `gaps[i]`, then, when `forever`, the
/// same token every 50 ms until the client closes the connection (a server still generating an
/// answer nobody reads).
async fn trickle_server(
    events: Vec<(Duration, Vec<u8>)>,
    forever: bool,
) -> (String, tokio::task::JoinHandle<Served>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        read_request(&mut socket).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        let mut written = 0;
        let mut forever_events = std::iter::repeat_with(|| (Duration::from_millis(50), token("x")))
            .take(if forever { 2_000 } else { 0 });
        let mut events = events.into_iter();
        while let Some((gap, event)) = events.next().or_else(|| forever_events.next()) {
            tokio::time::sleep(gap).await;
            let mut frame = format!("{:x}\r\n", event.len()).into_bytes();
            frame.extend_from_slice(&event);
            frame.extend_from_slice(b"\r\n");
            let sent = socket.write_all(&frame).await.and(socket.flush().await);
            if sent.is_err() {
                return Served {
                    written,
                    closed_at: Some(Instant::now()),
                };
            }
            written += 1;
        }
        let _ = socket.write_all(b"0\r\n\r\n").await;
        Served {
            written,
            closed_at: None,
        }
    });
    (uri, handle)
}

fn streaming_provider(uri: &str, budget: Duration, silence: Duration) -> HttpProvider {
    let config = ProviderConfig::new(KIND, uri, "m")
        .with_retry(fast_retry())
        .with_timeout(budget)
        .with_silence_timeout(silence);
    HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new())
}

fn streamed_request() -> ChatRequest {
    ChatRequest::new(vec![Message::user("Add a README.")])
        .protocol(ProtocolVersion::V2)
        .streaming(None)
}

/// The pieces of a valid plan, as a model would stream them.
fn plan_tokens() -> Vec<String> {
    let text = plan().to_string();
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(8).map(|c| c.iter().collect()).collect()
}

#[tokio::test]
async fn a_stream_silent_past_the_limit_is_abandoned_and_closed() {
    let ms = Duration::from_millis;
    let mut events = vec![(ms(0), token("{\"summary\": \"")), (ms(50), token("a"))];
    // Then a token every 3 s: each gap is ten times the 300 ms silence limit.
    events.extend((0..5).map(|_| (ms(3_000), token("b"))));
    let (uri, served) = trickle_server(events, false).await;
    let p = streaming_provider(&uri, Duration::from_secs(20), ms(300));
    let started = Instant::now();
    let err = p.complete(&streamed_request()).await.unwrap_err();
    let gave_up = Instant::now();
    match &err {
        LlmError::Stalled {
            silent_for,
            received,
            ..
        } => {
            assert_eq!(*silent_for, ms(300));
            assert_eq!(*received, "{\"summary\": \"a".len());
        }
        other => panic!("expected a stall, got {other:?}"),
    }
    assert_eq!(err.code(), ErrorCode::LlmTimeout);
    // Noticed after the silence limit and before the next token (`received` has no `b`), long
    // before the total budget.
    let waited = gave_up - started;
    assert!(waited >= ms(300) && waited < ms(10_000), "{waited:?}");
    // The server's next write finds the connection closed: it stops there.
    let served = served.await.unwrap();
    let closed_at = served
        .closed_at
        .expect("the server never saw the connection close");
    assert!(closed_at - gave_up < ms(6_200), "{:?}", closed_at - gave_up);
    assert!(served.written <= 3, "{} tokens written", served.written);
}

#[tokio::test]
async fn a_stream_running_past_the_budget_is_abandoned_and_the_server_stops() {
    // Tokens every 50 ms without end: never silent, but never done.
    let (uri, served) = trickle_server(vec![(Duration::ZERO, token("{"))], true).await;
    let p = streaming_provider(&uri, Duration::from_millis(800), Duration::from_secs(5));
    let started = Instant::now();
    let err = p.complete(&streamed_request()).await.unwrap_err();
    let gave_up = Instant::now();
    assert!(
        matches!(err, LlmError::Timeout { after, .. } if after == Duration::from_millis(800)),
        "{err:?}"
    );
    let waited = gave_up - started;
    assert!(
        waited >= Duration::from_millis(800) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    // No orphaned generation: the server's writes fail within a few tokens of papayu giving up.
    let served = served.await.unwrap();
    let closed_at = served
        .closed_at
        .expect("the server kept streaming to a closed request");
    assert!(
        closed_at - gave_up < Duration::from_secs(1),
        "{:?}",
        closed_at - gave_up
    );
    assert!(served.written < 200, "{} tokens written", served.written);
}

#[tokio::test]
async fn a_slow_but_steady_answer_within_the_budget_arrives() {
    // A token every 120 ms: the whole answer takes several times the 400 ms silence limit, and
    // more than a fixed timeout of that length would allow.
    let pieces = plan_tokens();
    let mut events: Vec<(Duration, Vec<u8>)> = pieces
        .iter()
        .map(|p| (Duration::from_millis(120), token(p)))
        .collect();
    events.push((Duration::from_millis(120), done()));
    let (uri, served) = trickle_server(events, false).await;
    let p = streaming_provider(&uri, Duration::from_secs(30), Duration::from_millis(400));
    let started = Instant::now();
    let c = p.complete(&streamed_request()).await.unwrap();
    let took = started.elapsed();
    assert_eq!(
        serde_json::from_str::<Value>(&c.text).unwrap(),
        plan(),
        "{}",
        c.text
    );
    assert!(took > Duration::from_millis(400) * 3, "{took:?}");
    let served = served.await.unwrap();
    assert_eq!(served.written, pieces.len() + 1);
    assert!(served.closed_at.is_none());
}

/// A request narrowed to an edit of `calc.py` (or a new file).
fn shape() -> RequestShape {
    RequestShape {
        apply: true,
        edit: EditStyle::SearchReplace,
        files: vec!["calc.py".into()],
        papayu_fills: true,
        ..RequestShape::default()
    }
}

fn narrowed_request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("Answer with one JSON object."),
        Message::user("FILE calc.py\n1|def add(a, b):\n2|    return a - b\n\nFix add."),
    ])
    .protocol(ProtocolVersion::V3)
    .strict(true)
    .shaped(shape())
}

#[tokio::test]
async fn a_narrowed_request_sends_its_compact_schema_down_the_ladder() {
    let server = MockServer::start().await;
    let format = |r: &Request| -> Value {
        r.body_json::<Value>().unwrap_or(Value::Null)["response_format"].clone()
    };
    // llama-cpp-python refuses json_schema; json_object with a schema is its grammar rung.
    Mock::given(move |r: &Request| format(r)["type"] == "json_schema")
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_string("response_format json_schema is not supported"),
        )
        .mount(&server)
        .await;
    Mock::given(move |r: &Request| format(r)["type"] == "json_object")
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(ok_body(KIND, r#"{"summary":"s","actions":[]}"#)),
        )
        .mount(&server)
        .await;
    let config =
        ProviderConfig::new(KIND, format!("{}/v1", server.uri()), "m").with_retry(fast_retry());
    let p = HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new());
    let request = narrowed_request();
    let c = p.complete(&request).await.unwrap();
    assert_eq!(c.fallbacks.len(), 1);
    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    let compact = compact_schema(&shape());
    assert_eq!(
        bodies[0]["response_format"]["json_schema"]["schema"],
        compact
    );
    assert_eq!(bodies[1]["response_format"]["schema"], compact);
    // Sized to the request, far below the configured 16 384.
    let limit = answer_tokens(&shape(), request.input_chars());
    assert!(limit < 2_000, "{limit}");
    for body in &bodies {
        assert_eq!(body["max_tokens"], limit);
        // Streamed on the wire although the caller asked for no progress: a server on this
        // machine then stops generating when papayu gives up (a JSON answer is still read).
        assert_eq!(body["stream"], true);
    }
    assert!(c.streamed);
}

#[tokio::test]
async fn a_request_without_a_shape_keeps_the_whole_schema_and_the_configured_limit() {
    let server = MockServer::start().await;
    Mock::given(|_: &Request| true)
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(KIND, &plan().to_string())))
        .mount(&server)
        .await;
    let p = HttpProvider::new(
        ProviderConfig::new(KIND, format!("{}/v1", server.uri()), "m").with_max_tokens(9_000),
    )
    .unwrap()
    .with_cache(CapabilityCache::new());
    let request = ChatRequest::new(vec![Message::user("Add a README.")])
        .protocol(ProtocolVersion::V2)
        .strict(true);
    p.complete(&request).await.unwrap();
    let body: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(body["max_tokens"], 9_000);
    // Not narrowed: streamed only when the caller asks.
    assert_eq!(body["stream"], false);
    assert_eq!(
        body["response_format"]["json_schema"]["name"],
        "papayu_response_v2"
    );
    assert_ne!(
        body["response_format"]["json_schema"]["schema"],
        compact_schema(&shape())
    );
}
