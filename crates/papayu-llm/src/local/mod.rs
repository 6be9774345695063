//! The `local` provider: a GGUF model run in-process by llama.cpp (cargo feature `local`).
//!
//! No server, no key, no network. The model is loaded once per process (cached by path), the
//! prompt is the model's own chat template applied to the messages, and decoding is constrained
//! by a grammar made from the provider-strict schema of the request's protocol version (see
//! [`gbnf`]), so every answer that ends before the token limit is schema-valid JSON by
//! construction. Inference runs on a blocking thread, on all cores but one ([`default_threads`]);
//! the timeout is checked between tokens, and dropping the future stops the generation.
//!
//! llama.cpp aborts the process on a failed assertion, which Rust cannot catch, so everything
//! it would assert on is checked first: the model file ([`crate::check_gguf`]), the prompt
//! length against the context, the grammar bounds.

mod grammar;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use papayu_protocol::ProtocolVersion;
use serde::Serialize;

pub use grammar::{GrammarBounds, MAX_GRAMMAR_REPETITION, gbnf, grammar_schema};

use crate::capability::ResponseFormat;
use crate::config::{DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT, ProviderKind};
use crate::error::LlmError;
use crate::model_file::check_gguf;
use crate::provider::{BoxFuture, Provider, ProviderInfo};
use crate::redact::redact;
use crate::request::{ChatRequest, Completion, Message, Progress, Usage};

/// Default context window of the local provider (tokens, prompt and answer together). Smaller
/// than most models' training context on purpose: the KV cache is allocated up front and is
/// most of the memory a small model uses.
pub const DEFAULT_LOCAL_CONTEXT: u32 = 8_192;

/// Prompt tokens decoded per llama.cpp batch.
const PROMPT_BATCH: u32 = 512;

/// How the local provider runs.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalConfig {
    /// The GGUF model file.
    pub model_path: PathBuf,
    /// Sampling temperature; 0 is greedy (default).
    pub temperature: f32,
    /// Most tokens generated per answer (default 16 384; the context window caps it further).
    pub max_tokens: u32,
    /// Whole-request timeout, checked between tokens (default 90 s).
    pub timeout: Duration,
    /// CPU threads (default: the available cores less one, at least one; see
    /// [`default_threads`]).
    pub threads: usize,
    /// Context window in tokens, prompt included; capped by the model's training context.
    pub context_tokens: u32,
    /// Seed of the sampler when `temperature > 0`.
    pub seed: u32,
    /// Bounds on arrays and strings of the grammar.
    pub bounds: GrammarBounds,
    /// Pass every message through [`crate::redact`] first (default on, like the HTTP providers).
    pub redact_outgoing: bool,
}

impl LocalConfig {
    /// Defaults for `model_path`.
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        Self {
            model_path: model_path.into(),
            temperature: 0.0,
            max_tokens: DEFAULT_MAX_TOKENS,
            timeout: DEFAULT_TIMEOUT,
            threads: default_threads(),
            context_tokens: DEFAULT_LOCAL_CONTEXT,
            seed: 0x5eed,
            bounds: GrammarBounds::default(),
            redact_outgoing: true,
        }
    }

    /// Problems that make this configuration unusable, in words.
    pub fn problems(&self) -> Vec<String> {
        let mut out = self.bounds.problems();
        if self.max_tokens == 0 {
            out.push("max_tokens must be greater than zero".into());
        }
        if self.timeout.is_zero() {
            out.push("timeout must be greater than zero".into());
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            out.push(format!("temperature {} is outside 0..=2", self.temperature));
        }
        if self.threads == 0 || self.threads > 512 {
            out.push(format!("threads {} is outside 1..=512", self.threads));
        }
        if self.context_tokens < 256 {
            out.push(format!(
                "context_tokens {} is below 256",
                self.context_tokens
            ));
        }
        out
    }
}

/// The default number of llama.cpp threads: the available cores less one, at least one.
///
/// llama.cpp's worker threads spin while they wait for each other; when another process takes
/// one of the cores, a generation on *every* core stalls (measured on a shared 2-core machine:
/// 3.6 generated tokens/s and 11–209 s per answer on 2 threads, against a steady 42 tokens/s on
/// 1 thread). Leaving one core free costs some speed on an idle machine and avoids that cliff.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

/// Timings and token counts of one local answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LocalStats {
    /// Tokens in the templated prompt.
    pub prompt_tokens: u32,
    /// Tokens generated (the end-of-generation token not counted).
    pub generated_tokens: u32,
    /// Context window used for this answer.
    pub context_tokens: u32,
    /// Time to decode the prompt.
    #[serde(serialize_with = "ser_secs")]
    pub prompt_time: Duration,
    /// From the start of the call to the first generated token (template, tokenizer, prompt,
    /// grammar set-up and one sampling step).
    #[serde(serialize_with = "ser_secs")]
    pub first_token: Duration,
    /// Time spent generating after the prompt.
    #[serde(serialize_with = "ser_secs")]
    pub generation_time: Duration,
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl LocalStats {
    /// Prompt tokens per second.
    pub fn prompt_tokens_per_sec(&self) -> f64 {
        f64::from(self.prompt_tokens) / self.prompt_time.as_secs_f64().max(1e-9)
    }
    /// Generated tokens per second.
    pub fn generated_tokens_per_sec(&self) -> f64 {
        f64::from(self.generated_tokens) / self.generation_time.as_secs_f64().max(1e-9)
    }
}

/// A loaded model, shared by every provider on the same file.
struct LoadedModel {
    model: LlamaModel,
    template: LlamaChatTemplate,
    file_name: String,
    path: PathBuf,
    load_time: Duration,
    /// One generation at a time per model: llama.cpp's context creation mutates the model, and
    /// two generations on the same cores would only slow each other down.
    busy: Mutex<()>,
}

/// llama.cpp's backend may be initialised once per process; it lives until the process ends.
fn backend() -> Result<&'static LlamaBackend, LlmError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // About 2 300 lines per model load otherwise, on stderr.
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LlmError::config(format!("cannot initialise llama.cpp: {e}")))
}

fn model_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Load `path` (checked first), or return the copy this process already loaded.
fn load(path: &Path) -> Result<Arc<LoadedModel>, LlmError> {
    static MODELS: OnceLock<Mutex<HashMap<PathBuf, Arc<LoadedModel>>>> = OnceLock::new();
    let models = MODELS.get_or_init(Default::default);
    // Validation first: llama.cpp must never see a missing, truncated or foreign file.
    check_gguf(path)?;
    let key = fs_err::canonicalize(path).map_err(|e| LlmError::ModelInvalid {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let mut guard = models
        .lock()
        .map_err(|_| LlmError::config("the local model cache is poisoned"))?;
    if let Some(m) = guard.get(&key) {
        return Ok(m.clone());
    }
    let backend = backend()?;
    let started = Instant::now();
    let model =
        LlamaModel::load_from_file(backend, &key, &LlamaModelParams::default()).map_err(|e| {
            LlmError::ModelInvalid {
                path: key.display().to_string(),
                message: format!("llama.cpp could not load it: {e}"),
            }
        })?;
    let load_time = started.elapsed();
    let template = match model.chat_template(None) {
        Ok(t) => t,
        // No template in the file: ChatML, the most common one.
        Err(_) => LlamaChatTemplate::new("chatml").map_err(|e| LlmError::ModelInvalid {
            path: key.display().to_string(),
            message: e.to_string(),
        })?,
    };
    let loaded = Arc::new(LoadedModel {
        model,
        template,
        file_name: model_name(&key),
        path: key.clone(),
        load_time,
        busy: Mutex::new(()),
    });
    tracing::info!(
        event = "LOCAL_MODEL_LOADED",
        model = %loaded.file_name,
        path = %key.display(),
        load_ms = load_time.as_secs_f64() * 1000.0,
    );
    guard.insert(key, loaded.clone());
    Ok(loaded)
}

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
        let messages: Vec<Message> = request
            .messages
            .iter()
            .map(|m| Message {
                role: m.role,
                content: if self.config.redact_outgoing {
                    redact(&m.content).into_owned()
                } else {
                    m.content.clone()
                },
            })
            .collect();
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
            max_tokens,
            progress: request.progress.as_ref(),
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
            output_tokens = stats.generated_tokens,
            finish_reason = generated.finish_reason,
            first_token_ms = stats.first_token.as_secs_f64() * 1000.0,
            prompt_tokens_per_s = stats.prompt_tokens_per_sec(),
            generated_tokens_per_s = stats.generated_tokens_per_sec(),
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

    fn inference_error(&self, message: impl Into<String>) -> LlmError {
        LlmError::Inference {
            model: self.model.file_name.clone(),
            message: message.into(),
        }
    }

    fn prompt(&self, messages: &[Message]) -> Result<String, LlmError> {
        let chat = messages
            .iter()
            .map(|m| {
                // A NUL would end the C string early; llama.cpp never sees one.
                LlamaChatMessage::new(
                    m.role.as_str().to_owned(),
                    m.content.replace('\0', "\u{FFFD}"),
                )
                .map_err(|e| self.inference_error(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if chat.is_empty() {
            return Err(self.inference_error("the request has no messages"));
        }
        let model = &self.model.model;
        match model.apply_chat_template(&self.model.template, &chat, true) {
            Ok(p) => Ok(p),
            // A template llama.cpp's built-in engine does not know: fall back to ChatML.
            Err(_) => {
                let chatml = LlamaChatTemplate::new("chatml")
                    .map_err(|e| self.inference_error(e.to_string()))?;
                model
                    .apply_chat_template(&chatml, &chat, true)
                    .map_err(|e| self.inference_error(format!("chat template: {e}")))
            }
        }
    }

    fn check_time(&self, job: &Job<'_>, cancel: &AtomicBool) -> Result<(), LlmError> {
        if cancel.load(Ordering::Relaxed) {
            return Err(self.inference_error("cancelled"));
        }
        if job.started.elapsed() > self.config.timeout {
            return Err(LlmError::Timeout {
                url: format!("local:{}", self.model.file_name),
                after: self.config.timeout,
            });
        }
        Ok(())
    }

    fn generate(&self, job: &Job<'_>, cancel: &AtomicBool) -> Result<Generated, LlmError> {
        let loaded = &*self.model;
        let model = &loaded.model;
        let _busy = loaded
            .busy
            .lock()
            .map_err(|_| self.inference_error("a previous generation panicked"))?;
        let prompt = self.prompt(job.messages)?;
        let vocab = model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), true, true);
        let n_prompt = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        let window = self.config.context_tokens.min(model.n_ctx_train().max(256));
        // Checked here because llama.cpp asserts (aborting the process) on a prompt that does
        // not fit its context.
        if n_prompt == 0 {
            return Err(self.inference_error("the prompt is empty after tokenisation"));
        }
        if n_prompt >= window {
            return Err(self.inference_error(format!(
                "the prompt has {n_prompt} tokens but the context window is {window} (shorten the context, e.g. PAPAYU_CONTEXT_MAX_TOTAL_CHARS)"
            )));
        }
        let n_ctx = n_prompt
            .saturating_add(job.max_tokens)
            .div_ceil(256)
            .saturating_mul(256)
            .min(window);
        let max_new = job.max_tokens.min(n_ctx - n_prompt);
        let grammar = gbnf(job.protocol, &self.config.bounds)?;
        let threads = i32::try_from(self.config.threads).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(PROMPT_BATCH.min(n_ctx))
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let backend = backend()?;
        let mut ctx = model
            .new_context(backend, params)
            .map_err(|e| self.inference_error(format!("cannot create a context: {e}")))?;

        // The prompt, in batches; logits only for its last token.
        let prompt_started = Instant::now();
        let batch_size = usize::try_from(PROMPT_BATCH.min(n_ctx)).unwrap_or(512);
        let mut batch = LlamaBatch::new(batch_size, 1);
        let last = tokens.len() - 1;
        for (chunk_index, chunk) in tokens.chunks(batch_size).enumerate() {
            self.check_time(job, cancel)?;
            batch.clear();
            for (i, token) in chunk.iter().enumerate() {
                let pos = chunk_index * batch_size + i;
                batch
                    .add(
                        *token,
                        i32::try_from(pos).unwrap_or(i32::MAX),
                        &[0],
                        pos == last,
                    )
                    .map_err(|e| self.inference_error(e.to_string()))?;
            }
            ctx.decode(&mut batch)
                .map_err(|e| self.inference_error(format!("prompt decode failed: {e}")))?;
        }
        let prompt_time = prompt_started.elapsed();

        let mut constraint = LlamaSampler::grammar(model, &grammar, "root")
            .map_err(|e| self.inference_error(format!("llama.cpp refused the grammar: {e}")))?;
        // Sampling at a temperature: the grammar first, then temperature and a seeded draw.
        let mut chain = if self.config.temperature > 0.0 {
            let constrained = LlamaSampler::grammar(model, &grammar, "root")
                .map_err(|e| self.inference_error(format!("llama.cpp refused the grammar: {e}")))?;
            Some(LlamaSampler::chain_simple([
                constrained,
                LlamaSampler::temp(self.config.temperature),
                LlamaSampler::dist(self.config.seed),
            ]))
        } else {
            None
        };

        let generation_started = Instant::now();
        let mut first_token = None;
        let mut bytes: Vec<u8> = Vec::new();
        let mut chars = 0usize;
        let mut generated = 0u32;
        let mut finish_reason = "length";
        let mut pos = i32::try_from(n_prompt).unwrap_or(i32::MAX);
        while generated < max_new {
            self.check_time(job, cancel)?;
            let token = match chain.as_mut() {
                // `sample` also accepts the token into every sampler of the chain (the grammar
                // included); accepting it again aborts the process.
                Some(chain) => chain.sample(&ctx, -1),
                None => self.greedy_constrained(&ctx, &mut constraint)?,
            };
            if first_token.is_none() {
                first_token = Some(job.started.elapsed());
            }
            if vocab.is_eog(token) {
                finish_reason = "stop";
                break;
            }
            let before = bytes.len();
            vocab.token_to_piece_into(token, &mut bytes, false, None);
            chars += bytes[before..]
                .iter()
                .filter(|b| (**b & 0xC0) != 0x80)
                .count();
            generated += 1;
            if let Some(progress) = job.progress {
                progress(chars);
            }
            if generated == max_new {
                break;
            }
            batch.clear();
            batch
                .add(token, pos, &[0], true)
                .map_err(|e| self.inference_error(e.to_string()))?;
            pos += 1;
            ctx.decode(&mut batch)
                .map_err(|e| self.inference_error(format!("decode failed: {e}")))?;
        }
        let stats = LocalStats {
            prompt_tokens: n_prompt,
            generated_tokens: generated,
            context_tokens: n_ctx,
            prompt_time,
            first_token: first_token.unwrap_or_else(|| job.started.elapsed()),
            generation_time: generation_started.elapsed(),
        };
        Ok(Generated {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            finish_reason,
            stats,
        })
    }
}

impl LocalProvider {
    /// Greedy decoding under the grammar, checking the unconstrained best token first (as
    /// llama.cpp's own sampler does): the grammar is applied to the whole vocabulary only when
    /// that token breaks it, which is rare once the model follows the schema.
    fn greedy_constrained(
        &self,
        ctx: &llama_cpp_2::context::LlamaContext<'_>,
        grammar: &mut LlamaSampler,
    ) -> Result<LlamaToken, LlmError> {
        let logits = ctx.get_logits_ith(-1);
        let best = argmax(logits.iter().copied())
            .ok_or_else(|| self.inference_error("the model produced no logits"))?;
        let token = LlamaToken::new(i32::try_from(best).unwrap_or(0));
        let mut single =
            LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, logits[best], 0.0)], false);
        single.apply_sampler(grammar);
        let token = if single.data.first().is_some_and(|d| d.logit().is_finite()) {
            token
        } else {
            let mut all = ctx.token_data_array_ith(-1);
            all.apply_sampler(grammar);
            let i = argmax(all.data.iter().map(LlamaTokenData::logit))
                .filter(|i| all.data[*i].logit().is_finite())
                .ok_or_else(|| self.inference_error("the grammar allows no next token"))?;
            all.data[i].id()
        };
        grammar
            .try_accept(token)
            .map_err(|e| self.inference_error(format!("the grammar refused a token: {e}")))?;
        Ok(token)
    }
}

/// Index of the largest value (the first one on ties); `None` for an empty input.
fn argmax(values: impl Iterator<Item = f32>) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, v) in values.enumerate() {
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

struct Job<'a> {
    messages: &'a [Message],
    protocol: ProtocolVersion,
    max_tokens: u32,
    progress: Option<&'a Progress>,
    started: Instant,
}

struct Generated {
    text: String,
    finish_reason: &'static str,
    stats: LocalStats,
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
