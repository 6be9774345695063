//! The [`Provider`] trait and the HTTP provider behind all four dialects.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant, SystemTime};

use backon::{ExponentialBuilder, Retryable};
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use serde::Serialize;
use serde_json::Value;

use papayu_protocol::answer_tokens;

use crate::capability::{CapabilityCache, CapabilityKey, ResponseFormat, mentions_format_refusal};
use crate::config::{ANTHROPIC_VERSION, ProviderConfig, ProviderKind};
use crate::dialect::{self, Answer, BodyParams, LineSplitter, StreamState};
use crate::error::LlmError;
use crate::redact::redact;
use crate::request::{ChatRequest, Completion, FormatFallback, Message, Progress};

/// A boxed, sendable future (keeps [`Provider`] usable as `dyn Provider`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a provider is, for reports.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ProviderInfo {
    /// The dialect.
    pub kind: ProviderKind,
    /// The endpoint URL.
    pub endpoint: String,
    /// The model.
    pub model: String,
}

/// Something that answers chat requests.
///
/// [`HttpProvider`] implements it for the four dialects; tests and embedders can implement it
/// for anything else (a recorded trace, a fake).
pub trait Provider: Send + Sync {
    /// Kind, endpoint and model.
    fn info(&self) -> ProviderInfo;

    /// Send one request and return the answer text (strict-mode fallback, retries and
    /// streaming included).
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>>;
}

/// Longest provider error body kept in an [`LlmError::Http`].
const MAX_ERROR_BODY_CHARS: usize = 2_000;
/// Most bytes of an error body read (the rest is not needed for the message).
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Most bytes read off the wire for an answer of at most `cap` bytes of text: room for the
/// JSON envelope and escapes, or for SSE/NDJSON framing around every token, and for keep-alive
/// lines, but not for an endless stream.
fn wire_limit(cap: usize, stream: bool) -> usize {
    cap.saturating_mul(if stream { 8 } else { 2 })
        .saturating_add(1 << 20)
}

/// The provider for `openai`, `openai-compatible`, `ollama` and `anthropic`.
#[derive(Debug, Clone)]
pub struct HttpProvider {
    config: ProviderConfig,
    endpoint: String,
    http: reqwest::Client,
    cache: CapabilityCache,
}

/// How one attempt failed.
enum Failure {
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
    /// A provider using the process-wide [`CapabilityCache`].
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        let problems: Vec<String> = config
            .problems()
            .into_iter()
            .filter(|p| !p.contains("needs an API key"))
            .collect();
        if !problems.is_empty() {
            return Err(LlmError::config(problems.join("; ")));
        }
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| LlmError::config(format!("cannot build the HTTP client: {e}")))?;
        let endpoint = config.endpoint();
        Ok(Self {
            config,
            endpoint,
            http,
            cache: CapabilityCache::process(),
        })
    }

    /// Use this capability cache instead of the process-wide one.
    pub fn with_cache(mut self, cache: CapabilityCache) -> Self {
        self.cache = cache;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The capability cache in use.
    pub fn cache(&self) -> &CapabilityCache {
        &self.cache
    }

    fn key(&self) -> CapabilityKey {
        CapabilityKey {
            kind: self.config.kind,
            endpoint: self.endpoint.clone(),
            model: self.config.model.clone(),
        }
    }

    /// The exact JSON body sent for `request` with structured-output form `format`
    /// (what the conformance snapshots record).
    pub fn request_body(&self, request: &ChatRequest, format: ResponseFormat) -> Value {
        let messages = self.outgoing_messages(request);
        let max_tokens = self.max_tokens(request);
        dialect::build_body(
            &self.config,
            &BodyParams {
                messages: &messages,
                format,
                protocol: request.protocol,
                max_tokens,
                stream: request.stream,
                shape: request.answer_shape.as_deref(),
            },
        )
    }

    /// The answer limit: the caller's or the configured one, lowered to what an answer of the
    /// request's shape can need when the caller narrowed it (a server keeps decoding up to this
    /// limit when a small model loops).
    fn max_tokens(&self, request: &ChatRequest) -> u32 {
        let mut wanted = request.max_tokens.unwrap_or(self.config.max_tokens);
        if let Some(shape) = &request.answer_shape {
            wanted = wanted.min(answer_tokens(shape, request.input_chars()));
        }
        let capped = ProviderConfig {
            max_tokens: wanted,
            ..self.config.clone()
        };
        capped.max_tokens_for(request.input_chars())
    }

    fn outgoing_messages(&self, request: &ChatRequest) -> Vec<Message> {
        crate::redact::outgoing(&request.messages, self.config.redact_outgoing)
    }

    fn headers(&self, stream: bool) -> Result<HeaderMap, LlmError> {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(
            ACCEPT,
            HeaderValue::from_static(if stream && self.config.kind != ProviderKind::Ollama {
                "text/event-stream"
            } else {
                "application/json"
            }),
        );
        let bad_key =
            |_| LlmError::config("the API key contains characters not allowed in an HTTP header");
        if let Some(key) = &self.config.api_key {
            match self.config.kind {
                ProviderKind::Anthropic => {
                    let mut v = HeaderValue::from_str(key.expose()).map_err(bad_key)?;
                    v.set_sensitive(true);
                    h.insert("x-api-key", v);
                }
                _ => {
                    let mut v = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                        .map_err(bad_key)?;
                    v.set_sensitive(true);
                    h.insert(AUTHORIZATION, v);
                }
            }
        }
        if self.config.kind == ProviderKind::Anthropic {
            h.insert(
                "anthropic-version",
                HeaderValue::from_static(ANTHROPIC_VERSION),
            );
        }
        Ok(h)
    }

    async fn run(&self, request: &ChatRequest) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let kind = self.config.kind;
        let key = self.key();
        let ladder = ResponseFormat::ladder(kind);
        let mut format = match request.strict_json {
            true => self.cache.get(&key).unwrap_or(ladder[0]),
            false => ResponseFormat::None,
        };
        let messages = self.outgoing_messages(request);
        let input_chars = request.input_chars();
        let max_tokens = self.max_tokens(request);
        let headers = self.headers(request.stream)?;
        let mut fallbacks = Vec::new();
        let mut retries = 0;
        loop {
            let body = dialect::build_body(
                &self.config,
                &BodyParams {
                    messages: &messages,
                    format,
                    protocol: request.protocol,
                    max_tokens,
                    stream: request.stream,
                    shape: request.answer_shape.as_deref(),
                },
            );
            let bytes = serde_json::to_vec(&body)
                .map_err(|e| LlmError::config(format!("cannot serialise the request body: {e}")))?;
            tracing::info!(
                event = "LLM_REQUEST_SENT",
                provider = kind.as_str(),
                model = %self.config.model,
                schema_version = request.protocol.number(),
                strict_json = request.strict_json,
                response_format = format.as_str(),
                token_budget = max_tokens,
                input_chars,
                stream = request.stream,
            );
            let refusal_possible = format != ResponseFormat::None;
            match self
                .send_with_retries(&headers, bytes, request, refusal_possible, &mut retries)
                .await
            {
                Ok(answer) => {
                    if request.strict_json {
                        self.cache.set(key, format);
                    }
                    let elapsed = started.elapsed();
                    tracing::info!(
                        event = "LLM_RESPONSE_OK",
                        provider = kind.as_str(),
                        model = %self.config.model,
                        response_format = format.as_str(),
                        output_chars = answer.text.chars().count(),
                        input_tokens = answer.usage.and_then(|u| u.input_tokens),
                        output_tokens = answer.usage.and_then(|u| u.output_tokens),
                        retries,
                        elapsed_ms = elapsed.as_secs_f64() * 1000.0,
                    );
                    return Ok(Completion {
                        provider: kind,
                        model: self.config.model.clone(),
                        text: answer.text,
                        usage: answer.usage,
                        finish_reason: answer.finish_reason,
                        format,
                        fallbacks,
                        retries,
                        streamed: request.stream,
                        elapsed,
                    });
                }
                Err(LlmError::Http { status, body, url })
                    if refusal_possible && mentions_format_refusal(&body) =>
                {
                    let Some(next) = format.weaker(kind) else {
                        return Err(LlmError::Http { status, body, url });
                    };
                    tracing::info!(
                        event = "LLM_RESPONSE_FORMAT_FALLBACK",
                        provider = kind.as_str(),
                        model = %self.config.model,
                        from = format.as_str(),
                        to = next.as_str(),
                        status,
                        reason = %body,
                    );
                    fallbacks.push(FormatFallback {
                        from: format,
                        to: next,
                        status,
                        reason: body,
                    });
                    self.cache.set(self.key(), next);
                    format = next;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn send_with_retries(
        &self,
        headers: &HeaderMap,
        body: Vec<u8>,
        request: &ChatRequest,
        refusal_possible: bool,
        retries: &mut u32,
    ) -> Result<Answer, LlmError> {
        let policy = self.config.retry;
        let backoff = ExponentialBuilder::default()
            .with_min_delay(policy.base_delay)
            .with_max_delay(policy.max_delay)
            .with_max_times(policy.max_retries as usize)
            .with_jitter();
        let attempt = || async {
            self.attempt(headers, body.clone(), request)
                .await
                .map_err(|f| self.judge(f, refusal_possible))
        };
        attempt
            .retry(backoff)
            .when(|j: &Judged| j.retryable)
            // The server's Retry-After wins over the backoff; no wait is longer than max_delay.
            .adjust(|j, wait| wait.map(|w| j.retry_after.unwrap_or(w).min(policy.max_delay)))
            .notify(|j, wait| {
                *retries += 1;
                tracing::info!(
                    event = "LLM_RETRY",
                    provider = self.config.kind.as_str(),
                    model = %self.config.model,
                    attempt = *retries,
                    wait_ms = wait.as_secs_f64() * 1000.0,
                    error = %j.error,
                );
            })
            .await
            .map_err(|j| j.error)
    }

    /// A failed attempt as the error it reports, and whether (and when) to try again.
    fn judge(&self, failure: Failure, refusal_possible: bool) -> Judged {
        let (error, retry_after, retryable) = match failure {
            Failure::Http {
                status,
                body,
                retry_after,
            } => {
                let error = LlmError::Http {
                    url: self.endpoint.clone(),
                    status,
                    body: shorten(&redact(&body), MAX_ERROR_BODY_CHARS),
                };
                let refusal = refusal_possible && mentions_format_refusal(&body);
                (
                    error,
                    retry_after,
                    !refusal && (status == 429 || status >= 500),
                )
            }
            Failure::Network(message) => (
                LlmError::Network {
                    url: self.endpoint.clone(),
                    message: redact(&message).into_owned(),
                },
                None,
                true,
            ),
            Failure::Timeout => {
                tracing::warn!(
                    event = "LLM_REQUEST_TIMEOUT",
                    provider = self.config.kind.as_str(),
                    model = %self.config.model,
                    timeout_s = self.config.timeout.as_secs_f64(),
                );
                (
                    LlmError::Timeout {
                        url: self.endpoint.clone(),
                        after: self.config.timeout,
                    },
                    None,
                    false,
                )
            }
            Failure::Stalled { received } => {
                tracing::warn!(
                    event = "LLM_REQUEST_STALLED",
                    provider = self.config.kind.as_str(),
                    model = %self.config.model,
                    silence_s = self.config.silence_timeout.as_secs_f64(),
                    received,
                );
                (
                    LlmError::Stalled {
                        url: self.endpoint.clone(),
                        silent_for: self.config.silence_timeout,
                        received,
                    },
                    None,
                    false,
                )
            }
            Failure::Bad(message) => (
                LlmError::BadResponse {
                    url: self.endpoint.clone(),
                    message: shorten(&redact(&message), MAX_ERROR_BODY_CHARS),
                },
                None,
                false,
            ),
            Failure::TooLarge(limit) => {
                tracing::warn!(
                    event = "LLM_RESPONSE_TOO_LARGE",
                    provider = self.config.kind.as_str(),
                    model = %self.config.model,
                    limit,
                );
                (
                    LlmError::AnswerTooLarge {
                        url: self.endpoint.clone(),
                        limit,
                    },
                    None,
                    false,
                )
            }
        };
        Judged {
            error,
            retry_after,
            retryable,
        }
    }

    /// One attempt within the total budget. Giving up drops the response, which closes the
    /// connection: a server that notices (llama.cpp, llama-cpp-python, Ollama, vLLM) stops
    /// generating instead of decoding the abandoned answer up to `max_tokens`.
    async fn attempt(
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
    next: impl std::future::Future<Output = T>,
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

fn transport_failure(e: reqwest::Error) -> Failure {
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

/// A failed attempt, judged.
struct Judged {
    error: LlmError,
    retry_after: Option<Duration>,
    retryable: bool,
}

/// `retry-after-ms` (OpenAI) or `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    parse_retry_after(value, SystemTime::now())
}

/// Parse a `Retry-After` value: delta-seconds or an HTTP date (relative to `now`).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}… ({} more bytes)", &text[..cut], text.len() - cut),
        None => text.to_owned(),
    }
}

impl Provider for HttpProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            kind: self.config.kind,
            endpoint: self.endpoint.clone(),
            model: self.config.model.clone(),
        }
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(self.run(request))
    }
}
