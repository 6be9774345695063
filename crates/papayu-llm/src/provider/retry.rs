//! Retrying failed attempts with jittered backoff and `Retry-After`, and judging each failure as the error it reports.

use std::time::{Duration, SystemTime};

use backon::{ExponentialBuilder, Retryable};
use reqwest::header::{HeaderMap, RETRY_AFTER};

use super::attempt::Failure;
use super::http::HttpProvider;
use crate::capability::mentions_format_refusal;
use crate::dialect::Answer;
use crate::error::LlmError;
use crate::redact::redact;
use crate::request::ChatRequest;

/// Longest provider error body kept in an [`LlmError::Http`].
const MAX_ERROR_BODY_CHARS: usize = 2_000;

impl HttpProvider {
    pub(super) async fn send_with_retries(
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
}

/// A failed attempt, judged.
pub(super) struct Judged {
    error: LlmError,
    retry_after: Option<Duration>,
    retryable: bool,
}

/// `retry-after-ms` (OpenAI) or `Retry-After` in seconds or as an HTTP date.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
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
