//! Helpers shared by the test modules.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use papayu_llm::{
    CapabilityCache, ChatRequest, HttpProvider, Message, ProviderConfig, ProviderKind, RetryPolicy,
};
use papayu_protocol::ProtocolVersion;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Retries that do not slow the suite down.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(50),
    }
}

/// A provider of `kind` talking to `base` with its own capability cache.
pub fn provider(kind: ProviderKind, base: &str) -> HttpProvider {
    let config = ProviderConfig::new(kind, base, "test-model")
        .with_api_key("test-key-123")
        .with_retry(fast_retry())
        .with_timeout(Duration::from_secs(10));
    HttpProvider::new(config)
        .unwrap()
        .with_cache(CapabilityCache::new())
}

/// The base URL of a dialect on a mock server.
pub fn base(kind: ProviderKind, uri: &str) -> String {
    match kind {
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => format!("{uri}/v1"),
        _ => uri.to_owned(),
    }
}

/// The endpoint path of a dialect.
pub fn endpoint_path(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Ollama => "/api/chat",
        ProviderKind::Anthropic => "/v1/messages",
        _ => "/v1/chat/completions",
    }
}

/// A small strict v2 request.
pub fn request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("You are papayu's planner. LLM_PLAN_SCHEMA_VERSION=2."),
        Message::user("Add a README."),
    ])
    .protocol(ProtocolVersion::V2)
    .strict(true)
    .max_tokens(1000)
}

/// A valid v2 plan.
pub fn plan() -> Value {
    json!({
        "actions": [{ "kind": "CREATE_FILE", "path": "README.md", "content": "# demo\n" }],
        "summary": "Add a README"
    })
}

/// A plan creating the given paths.
pub fn plan_with(paths: &[&str]) -> Value {
    let actions: Vec<Value> = paths
        .iter()
        .map(|p| json!({ "kind": "CREATE_FILE", "path": p, "content": format!("{p}\n") }))
        .collect();
    json!({ "actions": actions, "summary": "create files" })
}

/// A successful non-streamed answer in each dialect.
pub fn ok_body(kind: ProviderKind, text: &str) -> Value {
    match kind {
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18 }
        }),
        ProviderKind::Ollama => json!({
            "model": "test-model", "message": { "role": "assistant", "content": text },
            "done": true, "done_reason": "stop", "prompt_eval_count": 11, "eval_count": 7
        }),
        ProviderKind::Anthropic => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "test-model",
            "content": [
                { "type": "text", "text": "Here is the plan." },
                { "type": "tool_use", "id": "toolu_1", "name": "papayu_response",
                  "input": serde_json::from_str::<Value>(text).unwrap_or(json!({})) }
            ],
            "stop_reason": "tool_use",
            "usage": { "input_tokens": 11, "output_tokens": 7 }
        }),
        _ => unreachable!(),
    }
}

/// Records the `event` field (and `from`/`to`) of every tracing event while alive.
#[derive(Clone, Default)]
pub struct Events(pub Arc<Mutex<Vec<String>>>);

impl Events {
    pub fn names(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

struct Visitor(String);

impl tracing::field::Visit for Visitor {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if matches!(field.name(), "event" | "from" | "to") {
            if !self.0.is_empty() {
                self.0.push(' ');
            }
            self.0.push_str(&format!("{}={value}", field.name()));
        }
    }
    fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut v = Visitor(String::new());
        event.record(&mut v);
        self.0.lock().unwrap().push(v.0);
    }
}

/// Capture events on this thread (tests use the current-thread runtime).
pub fn capture_events() -> (Events, tracing::subscriber::DefaultGuard) {
    use tracing_subscriber::layer::SubscriberExt;
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(events.clone());
    let guard = tracing::subscriber::set_default(subscriber);
    (events, guard)
}

/// Read one HTTP/1.1 request off `socket` and return its body (of `content-length` bytes).
pub async fn read_request(socket: &mut tokio::net::TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    loop {
        let n = socket.read(&mut tmp).await.unwrap();
        assert!(n > 0, "client closed before sending its request");
        buf.extend_from_slice(&tmp[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = socket.read(&mut tmp).await.unwrap();
                buf.extend_from_slice(&tmp[..n]);
            }
            return buf[end + 4..end + 4 + len].to_vec();
        }
    }
}

/// The JSON bodies of every request `server` received, in order.
pub async fn sent_bodies(server: &wiremock::MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json().unwrap())
        .collect()
}

/// A one-connection HTTP server that answers with `chunks`, each written and flushed
/// separately (chunked transfer encoding), so the client sees the exact chunk boundaries.
/// Returns the base URI and a handle yielding the request body.
pub async fn chunk_server(
    content_type: &'static str,
    chunks: Vec<Vec<u8>>,
) -> (String, tokio::task::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let body = read_request(&mut socket).await;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        for chunk in chunks {
            socket
                .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .await
                .unwrap();
            socket.write_all(&chunk).await.unwrap();
            socket.write_all(b"\r\n").await.unwrap();
            socket.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        socket.write_all(b"0\r\n\r\n").await.unwrap();
        socket.flush().await.unwrap();
        body
    });
    (uri, handle)
}

/// Split `text` into byte chunks of `size`, cutting inside multi-byte characters on purpose.
pub fn byte_chunks(text: &str, size: usize) -> Vec<Vec<u8>> {
    text.as_bytes().chunks(size).map(<[u8]>::to_vec).collect()
}
