//! SSE and NDJSON streaming, with chunk boundaries cut inside multi-byte UTF-8 characters.

use std::sync::{Arc, Mutex};

use papayu_llm::{Progress, Provider, ProviderKind, Usage};
use papayu_protocol::ProtocolVersion;
use serde_json::{Value, json};

use crate::common::{base, byte_chunks, chunk_server, provider, request};

/// An answer full of multi-byte characters (2, 3 and 4 bytes).
fn answer() -> String {
    json!({ "actions": [], "summary": "Привет, мир — ✓ 日本語 🦀🦀 done" }).to_string()
}

fn pieces(text: &str) -> Vec<String> {
    // Cut the answer itself into small pieces as a model would stream tokens.
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(5).map(|c| c.iter().collect()).collect()
}

fn openai_sse(text: &str) -> String {
    let mut s = String::from(": keep-alive comment\n\n");
    for piece in pieces(text) {
        let event = json!({ "choices": [{ "index": 0, "delta": { "content": piece }, "finish_reason": null }] });
        s.push_str(&format!("data: {event}\n\n"));
    }
    s.push_str(&format!(
        "data: {}\n\n",
        json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] })
    ));
    s.push_str(&format!(
        "data: {}\r\n\r\n",
        json!({ "choices": [], "usage": { "prompt_tokens": 5, "completion_tokens": 9 } })
    ));
    s.push_str("data: [DONE]\n\n");
    s
}

fn anthropic_sse(text: &str) -> String {
    let mut s = String::new();
    let mut event =
        |name: &str, data: Value| s.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    event(
        "message_start",
        json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5, "output_tokens": 1 } } }),
    );
    event(
        "content_block_start",
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "tool_use", "name": "papayu_response", "input": {} } }),
    );
    event("ping", json!({ "type": "ping" }));
    for piece in pieces(text) {
        event(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": piece } }),
        );
    }
    event(
        "content_block_stop",
        json!({ "type": "content_block_stop", "index": 0 }),
    );
    event(
        "message_delta",
        json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" }, "usage": { "output_tokens": 9 } }),
    );
    event("message_stop", json!({ "type": "message_stop" }));
    s
}

fn ollama_ndjson(text: &str) -> String {
    let mut s = String::new();
    for piece in pieces(text) {
        s.push_str(
            &json!({ "message": { "role": "assistant", "content": piece }, "done": false })
                .to_string(),
        );
        s.push('\n');
    }
    s.push_str(
        &json!({ "message": { "role": "assistant", "content": "" }, "done": true, "done_reason": "stop",
                 "prompt_eval_count": 5, "eval_count": 9 })
        .to_string(),
    );
    s.push('\n');
    s
}

async fn stream_case(kind: ProviderKind, content_type: &'static str, wire: String, chunk: usize) {
    let text = answer();
    let chunks = byte_chunks(&wire, chunk);
    // The chunking really does split characters.
    assert!(
        chunks.iter().any(|c| std::str::from_utf8(c).is_err()),
        "no chunk splits a character"
    );
    let (uri, server) = chunk_server(content_type, chunks).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let progress: Progress = Arc::new(move |n| sink.lock().unwrap().push(n));
    let req = request()
        .protocol(ProtocolVersion::V2)
        .streaming(Some(progress));
    let c = provider(kind, &base(kind, &uri))
        .complete(&req)
        .await
        .unwrap();
    let sent: Value = serde_json::from_slice(&server.await.unwrap()).unwrap();
    assert_eq!(sent["stream"], true);

    assert_eq!(c.text, text);
    assert!(c.streamed);
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: Some(5),
            output_tokens: Some(9)
        })
    );
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() > 1, "progress reported only {seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "progress not increasing: {seen:?}"
    );
    assert_eq!(seen.last().copied(), Some(text.chars().count()));
}

#[tokio::test]
async fn openai_sse_split_inside_utf8() {
    stream_case(
        ProviderKind::OpenAiCompatible,
        "text/event-stream",
        openai_sse(&answer()),
        7,
    )
    .await;
}

#[tokio::test]
async fn openai_sse_one_byte_chunks() {
    stream_case(
        ProviderKind::OpenAi,
        "text/event-stream",
        openai_sse(&answer()),
        1,
    )
    .await;
}

#[tokio::test]
async fn anthropic_sse_input_json_deltas() {
    stream_case(
        ProviderKind::Anthropic,
        "text/event-stream",
        anthropic_sse(&answer()),
        11,
    )
    .await;
}

#[tokio::test]
async fn ollama_ndjson_split_inside_utf8() {
    stream_case(
        ProviderKind::Ollama,
        "application/x-ndjson",
        ollama_ndjson(&answer()),
        13,
    )
    .await;
}

#[tokio::test]
async fn error_event_mid_stream_is_a_bad_response() {
    let wire = "data: {\"choices\":[{\"delta\":{\"content\":\"{\"}}]}\n\ndata: {\"error\":{\"message\":\"model crashed\"}}\n\n";
    let (uri, _server) = chunk_server("text/event-stream", byte_chunks(wire, 16)).await;
    let kind = ProviderKind::OpenAiCompatible;
    let err = provider(kind, &base(kind, &uri))
        .complete(&request().streaming(None))
        .await
        .unwrap_err();
    assert_eq!(err.code(), papayu_protocol::ErrorCode::LlmBadResponse);
    assert!(err.to_string().contains("model crashed"), "{err}");
}
