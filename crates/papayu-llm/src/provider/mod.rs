//! The [`Provider`] trait and the HTTP provider behind all four dialects: building the request, one attempt on the wire, retries with backoff and strict-mode fallback.
//! May touch: the network (the configured endpoint only) and the capability cache; it reads no environment and writes no files.

mod attempt;
mod http;
mod retry;

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

use crate::config::ProviderKind;
use crate::error::LlmError;
use crate::request::{ChatRequest, Completion};

pub use http::HttpProvider;
pub use retry::parse_retry_after;

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
