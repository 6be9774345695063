//! The HTTP provider: its configuration, headers and body, and the strict-mode fallback loop of one request.

use std::time::Instant;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;

use papayu_protocol::answer_tokens;

use super::{BoxFuture, Provider, ProviderInfo};
use crate::capability::{CapabilityCache, CapabilityKey, ResponseFormat, mentions_format_refusal};
use crate::config::{ANTHROPIC_VERSION, ProviderConfig, ProviderKind};
use crate::dialect::{self, BodyParams};
use crate::error::LlmError;
use crate::request::{ChatRequest, Completion, FormatFallback, Message};

/// The provider for `openai`, `openai-compatible`, `ollama` and `anthropic`.
#[derive(Debug, Clone)]
pub struct HttpProvider {
    pub(super) config: ProviderConfig,
    pub(super) endpoint: String,
    pub(super) http: reqwest::Client,
    pub(super) cache: CapabilityCache,
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
        self.body(request, &messages, format, self.max_tokens(request))
    }

    /// The body of `request` in `format`, from its already prepared messages and answer limit.
    fn body(
        &self,
        request: &ChatRequest,
        messages: &[Message],
        format: ResponseFormat,
        max_tokens: u32,
    ) -> Value {
        dialect::build_body(
            &self.config,
            &BodyParams {
                messages,
                format,
                protocol: request.protocol,
                max_tokens,
                stream: request.stream,
                shape: request.answer_shape.as_deref(),
                sampling: request.sampling,
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
        // A narrowed request to a server on this machine (D37) is streamed on the wire even when
        // the caller wants no progress: llama-cpp-python's server notices a closed connection
        // only between streamed tokens, and finishes an abandoned non-streamed answer up to
        // `max_tokens` while the next request waits (measured: BENCHMARKS, llm-server). A stream
        // also lets the silence limit apply.
        let streamed;
        let request = if !request.stream
            && request.answer_shape.is_some()
            && crate::config::is_loopback_endpoint(&self.endpoint)
        {
            streamed = ChatRequest {
                stream: true,
                ..request.clone()
            };
            &streamed
        } else {
            request
        };
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
            let body = self.body(request, &messages, format, max_tokens);
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
