//! One attempt on the wire within its time budget: the whole body or the stream, capped in size, with the silence limit between tokens.

use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap};

use super::http::HttpProvider;
use super::retry::retry_after;
use crate::config::ProviderKind;
use crate::dialect::{self, Answer, LineSplitter, StreamState};
use crate::request::{ChatRequest, Progress};

/// Most bytes of an error body read (the rest is not needed for the message).
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Most bytes read off the wire for an answer of at most `cap` bytes of text: room for the
/// JSON envelope and escapes, or for SSE/NDJSON framing around every token, and for keep-alive
/// lines, but not for an endless stream.
fn wire_limit(cap: usize, stream: bool) -> usize {
    cap.saturating_mul(if stream { 8 } else { 2 })
        .saturating_add(1 << 20)
}

/// How one attempt failed.
pub(super) enum Failure {
    Http {
        status: u16,
        body: String,
        retry_after: Option<Duration>,
    },
    Network(String),
    Timeout,
    /// No new token for the silence limit after `received` characters.
    Stalled {
        received: usize,
    },
    Bad(String),
    /// The answer passed the size cap (in bytes); reading stopped there.
    TooLarge(usize),
}

impl HttpProvider {
    /// One attempt within the total budget. Giving up drops the response, which closes the
    /// connection: a server that notices (llama.cpp, llama-cpp-python, Ollama, vLLM) stops
    /// generating instead of decoding the abandoned answer up to `max_tokens`.
    pub(super) async fn attempt(
        &self,
        headers: &HeaderMap,
        body: Vec<u8>,
        request: &ChatRequest,
    ) -> Result<Answer, Failure> {
        let timeout = self.config.timeout;
        match tokio::time::timeout(timeout, self.attempt_inner(headers, body, request)).await {
            Ok(result) => result,
            Err(_) => Err(Failure::Timeout),
        }
    }

    async fn attempt_inner(
        &self,
        headers: &HeaderMap,
        body: Vec<u8>,
        request: &ChatRequest,
    ) -> Result<Answer, Failure> {
        let response = self
            .http
            .post(&self.endpoint)
            .headers(headers.clone())
            .body(body)
            .timeout(self.config.timeout)
            .send()
            .await
            .map_err(transport_failure)?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            // The start of an error body says what is wrong; the rest is not read.
            let (body, _) = read_body(response, MAX_ERROR_BODY_BYTES).await?;
            return Err(Failure::Http {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body).into_owned(),
                retry_after,
            });
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let kind = self.config.kind;
        let cap = request.max_answer_bytes;
        // A server that ignores `stream: true` answers with one JSON document: read it as such.
        if !request.stream || (is_json && kind != ProviderKind::Ollama) {
            let (bytes, complete) = read_body(response, wire_limit(cap, false)).await?;
            if !complete {
                return Err(Failure::TooLarge(cap));
            }
            let answer = dialect::parse_body(kind, &bytes).map_err(Failure::Bad)?;
            if answer.text.len() > cap {
                return Err(Failure::TooLarge(cap));
            }
            if let Some(progress) = &request.progress {
                progress(answer.text.chars().count());
            }
            return Ok(answer);
        }
        read_stream(
            kind,
            response,
            request.progress.as_ref(),
            cap,
            self.config.silence_timeout,
        )
        .await
    }
}

/// At most `limit` bytes of the body, read chunk by chunk, and whether that is all of it. A
/// longer body is abandoned there (the connection is dropped with the response): a provider
/// cannot make papayu buffer an endless answer.
async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), Failure> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_failure)? {
        if body.len() + chunk.len() > limit {
            body.extend_from_slice(&chunk[..limit - body.len()]);
            return Ok((body, false));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, true))
}

/// Read a streamed answer. Once its first token has arrived, every next token must follow within
/// `silence` (keep-alive comments and empty events do not count): a server still decoding is
/// never that quiet. Before the first token only the attempt's total budget applies, since a long
/// prompt takes a while to read.
async fn read_stream(
    kind: ProviderKind,
    response: reqwest::Response,
    progress: Option<&Progress>,
    cap: usize,
    silence: Duration,
) -> Result<Answer, Failure> {
    let mut state = StreamState::default();
    let wire_cap = wire_limit(cap, true);
    let mut wire = 0usize;
    // The wire cap is checked as bytes arrive, before any parsing.
    let chunks = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(Wire::Transport)?;
        wire = wire.saturating_add(chunk.len());
        if wire > wire_cap {
            return Err(Wire::TooLarge);
        }
        Ok(chunk)
    });
    let wire_failure = |e: Wire| match e {
        Wire::Transport(e) => transport_failure(e),
        Wire::TooLarge => Failure::TooLarge(cap),
    };
    // Once the first token has arrived, each next one must follow within `silence`.
    // (A mutex, not a cell: the future must stay `Send`.)
    let last_token: std::sync::Mutex<Option<tokio::time::Instant>> = std::sync::Mutex::new(None);
    let deadline = || last_token.lock().map_or(None, |t| *t).map(|t| t + silence);
    let feed = |grew: bool, state: &StreamState| -> Result<(), Failure> {
        if state.answer.text.len() > cap {
            return Err(Failure::TooLarge(cap));
        }
        if grew {
            if let Ok(mut t) = last_token.lock() {
                *t = Some(tokio::time::Instant::now());
            }
            if let Some(progress) = progress {
                progress(state.chars);
            }
        }
        Ok(())
    };
    if kind == ProviderKind::Ollama {
        let mut lines = LineSplitter::default();
        let mut chunks = std::pin::pin!(chunks);
        loop {
            let Some(next) = within(deadline(), chunks.next()).await else {
                return Err(Failure::Stalled {
                    received: state.chars,
                });
            };
            let Some(chunk) = next else { break };
            let chunk = chunk.map_err(wire_failure)?;
            let mut grew = false;
            lines
                .push(&chunk, |line| {
                    grew |= state.line(line)?;
                    Ok(())
                })
                .map_err(Failure::Bad)?;
            feed(grew, &state)?;
            if state.done {
                break;
            }
        }
        let mut grew = false;
        lines
            .finish(|line| {
                grew |= state.line(line)?;
                Ok(())
            })
            .map_err(Failure::Bad)?;
        feed(grew, &state)?;
    } else {
        // A final blank line dispatches an event the server left unterminated.
        let end = futures_util::stream::once(async { Ok(bytes::Bytes::from_static(b"\n\n")) });
        let mut events = std::pin::pin!(chunks.chain(end).eventsource());
        loop {
            let Some(next) = within(deadline(), events.next()).await else {
                return Err(Failure::Stalled {
                    received: state.chars,
                });
            };
            let Some(event) = next else { break };
            let event = event.map_err(|e| match e {
                EventStreamError::Transport(w) => wire_failure(w),
                EventStreamError::Utf8(e) => Failure::Bad(format!("stream is not UTF-8: {e}")),
                EventStreamError::Parser(e) => Failure::Bad(format!("stream is not SSE: {e}")),
            })?;
            let grew = state.event(kind, &event.data).map_err(Failure::Bad)?;
            feed(grew, &state)?;
            if state.done {
                break;
            }
        }
    }
    if !state.done && state.chars == 0 {
        return Err(Failure::Bad(
            "the stream ended before any answer arrived".into(),
        ));
    }
    Ok(state.finish())
}

/// `next` awaited until `deadline` (`None` when it passed first); without a deadline, to its end.
async fn within<T>(
    deadline: Option<tokio::time::Instant>,
    next: impl Future<Output = T>,
) -> Option<T> {
    match deadline {
        None => Some(next.await),
        Some(deadline) => tokio::time::timeout_at(deadline, next).await.ok(),
    }
}

/// Why the byte stream of a streamed answer stopped.
enum Wire {
    Transport(reqwest::Error),
    TooLarge,
}

pub(super) fn transport_failure(e: reqwest::Error) -> Failure {
    if e.is_timeout() {
        Failure::Timeout
    } else if e.is_decode() {
        Failure::Bad(error_chain(&e))
    } else {
        // The URL is in the error's own message already (`LlmError::Network`): once is enough.
        Failure::Network(error_chain(&e.without_url()))
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    message
}
