//! The `local` provider: a GGUF model run in-process by llama.cpp (cargo feature `local`).
//! It touches the model file (read only), the prompt-cache directory (through papayu-fs) and
//! llama.cpp, never the network.
//!
//! `config.rs` is what the caller sets, `model.rs` loads a model and applies its chat template,
//! `session.rs` is one generation on the context kept between answers, `prompt_cache.rs` keeps
//! system prompts' KV state on disk, `grammar.rs` turns the protocol's schema into the grammar.
//!
//! No server, no key, no network. The model is loaded once per process (cached by path), the
//! prompt is the model's own chat template applied to the messages, and decoding is constrained
//! by a grammar made from the provider-strict schema of the request's protocol version (see
//! [`gbnf`]), so every answer that ends before the token limit is schema-valid JSON by
//! construction. Inference runs on a blocking thread, on every available core
//! ([`default_threads`]); the timeout is checked between tokens, and dropping the future stops
//! the generation.
//!
//! The prompt is not decoded twice when it need not be. The context is kept between answers
//! with the tokens its KV cache holds, and a new prompt decodes only what follows the part it
//! shares with the last one (papayu's system prompt is the same for every call of a plan→apply
//! cycle). With [`LocalConfig::prompt_cache`] set, the KV state of the leading system message is
//! also saved to a file, so the first answer of the *next* process starts from it too.
//!
//! llama.cpp aborts the process on a failed assertion, which Rust cannot catch, so everything
//! it would assert on is checked first: the model file ([`crate::check_gguf`]), the prompt
//! length against the context, the grammar bounds.

mod config;
mod draft;
mod grammar;
mod model;
mod prompt_cache;
mod session;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use config::{
    DEFAULT_DRAFT_TOKENS, DEFAULT_LOCAL_CONTEXT, LocalConfig, LocalStats, default_threads,
};
pub use grammar::{GrammarBounds, MAX_GRAMMAR_REPETITION, gbnf, gbnf_for_schema, grammar_schema};
pub use prompt_cache::PROMPT_CACHE_FILES;

use crate::capability::ResponseFormat;
use crate::config::ProviderKind;
use crate::error::LlmError;
use crate::provider::{BoxFuture, Provider, ProviderInfo};
use crate::request::{ChatRequest, Completion, Usage};
use model::{LoadedModel, load};
use session::Job;

/// A GGUF model answering in-process, through llama.cpp.
///
/// ```no_run
/// use papayu_llm::{ChatRequest, LocalConfig, LocalProvider, Message, Provider};
/// # async fn run() -> Result<(), papayu_llm::LlmError> {
/// let provider = LocalProvider::new(LocalConfig::new("SmolLM2-135M-Instruct.Q4_1.gguf"))?;
/// let request = ChatRequest::new(vec![Message::user("Create an empty README.md")]);
/// let answer = provider.complete(&request).await?;
/// assert!(serde_json::from_str::<serde_json::Value>(&answer.text).is_ok());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct LocalProvider {
    config: LocalConfig,
    model: Arc<LoadedModel>,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("config", &self.config)
            .field("model", &self.model.path)
            .finish()
    }
}

impl LocalProvider {
    /// Check the configuration and the model file, then load the model (once per process and
    /// path). Errors: [`LlmError::ModelNotFound`], [`LlmError::ModelInvalid`],
    /// [`LlmError::Config`].
    pub fn new(config: LocalConfig) -> Result<Self, LlmError> {
        let problems = config.problems();
        if !problems.is_empty() {
            return Err(LlmError::config(problems.join("; ")));
        }
        let model = load(&config.model_path)?;
        Ok(Self { config, model })
    }

    /// The configuration.
    pub fn config(&self) -> &LocalConfig {
        &self.config
    }

    /// The canonical path of the loaded model.
    pub fn model_path(&self) -> &Path {
        &self.model.path
    }

    /// How long llama.cpp took to load the model (the first time this process loaded it).
    pub fn load_time(&self) -> Duration {
        self.model.load_time
    }

    /// The model's training context, in tokens.
    pub fn training_context(&self) -> u32 {
        self.model.model.n_ctx_train()
    }

    /// Answer `request` on the current thread (what [`Provider::complete`] runs on a blocking
    /// thread), with timings. `cancel` stops the generation between tokens.
    pub fn complete_blocking(
        &self,
        request: &ChatRequest,
        cancel: &AtomicBool,
    ) -> Result<(Completion, LocalStats), LlmError> {
        let started = Instant::now();
        let messages = crate::redact::outgoing(&request.messages, self.config.redact_outgoing);
        let max_tokens = request.max_tokens.unwrap_or(self.config.max_tokens).max(1);
        tracing::info!(
            event = "LLM_REQUEST_SENT",
            provider = ProviderKind::Local.as_str(),
            model = %self.model.file_name,
            schema_version = request.protocol.number(),
            strict_json = request.strict_json,
            response_format = ResponseFormat::JsonSchema.as_str(),
            token_budget = max_tokens,
            input_chars = request.input_chars(),
            stream = request.stream,
        );
        let job = Job {
            messages: &messages,
            protocol: request.protocol,
            answer_schema: request.answer_schema.as_deref(),
            max_tokens,
            progress: request.progress.as_ref(),
            sampling: request.sampling,
            started,
        };
        let generated = match self.generate(&job, cancel) {
            Ok(g) => g,
            Err(e) => {
                if matches!(e, LlmError::Timeout { .. }) {
                    tracing::warn!(
                        event = "LLM_REQUEST_TIMEOUT",
                        provider = ProviderKind::Local.as_str(),
                        model = %self.model.file_name,
                        timeout_s = self.config.timeout.as_secs_f64(),
                    );
                }
                return Err(e);
            }
        };
        let elapsed = started.elapsed();
        let stats = generated.stats;
        tracing::info!(
            event = "LLM_RESPONSE_OK",
            provider = ProviderKind::Local.as_str(),
            model = %self.model.file_name,
            response_format = ResponseFormat::JsonSchema.as_str(),
            output_chars = generated.text.chars().count(),
            input_tokens = stats.prompt_tokens,
            cached_input_tokens = stats.cached_prompt_tokens,
            output_tokens = stats.generated_tokens,
            finish_reason = generated.finish_reason,
            first_token_ms = stats.first_token.as_secs_f64() * 1000.0,
            prompt_tokens_per_s = stats.prompt_tokens_per_sec(),
            generated_tokens_per_s = stats.generated_tokens_per_sec(),
            drafted_tokens = stats.drafted_tokens,
            accepted_drafts = stats.accepted_drafts,
            elapsed_ms = elapsed.as_secs_f64() * 1000.0,
        );
        let completion = Completion {
            provider: ProviderKind::Local,
            model: self.model.file_name.clone(),
            text: generated.text,
            usage: Some(Usage {
                input_tokens: Some(u64::from(stats.prompt_tokens)),
                output_tokens: Some(u64::from(stats.generated_tokens)),
            }),
            finish_reason: Some(generated.finish_reason.to_owned()),
            format: ResponseFormat::JsonSchema,
            fallbacks: Vec::new(),
            retries: 0,
            streamed: request.stream,
            elapsed,
        };
        Ok((completion, stats))
    }

    /// Drop the context kept between answers: its memory (the KV cache, most of what a small
    /// model uses) and the prompt it holds. The next answer creates a new one. Prompt-cache
    /// files stay.
    pub fn release_context(&self) {
        if let Ok(mut session) = self.model.session.lock() {
            *session = None;
        }
    }
}

/// Sets the cancel flag when the future awaiting a generation is dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Provider for LocalProvider {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            kind: ProviderKind::Local,
            endpoint: format!("local:{}", self.model.path.display()),
            model: self.model.file_name.clone(),
        }
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        let provider = self.clone();
        let request = request.clone();
        let cancel = Arc::new(AtomicBool::new(false));
        let guard = CancelOnDrop(cancel.clone());
        Box::pin(async move {
            let result = tokio::task::spawn_blocking(move || {
                provider
                    .complete_blocking(&request, &cancel)
                    .map(|(completion, _)| completion)
            })
            .await;
            drop(guard);
            match result {
                Ok(r) => r,
                Err(e) => Err(LlmError::Inference {
                    model: self.model.file_name.clone(),
                    message: format!("the inference thread failed: {e}"),
                }),
            }
        })
    }
}
