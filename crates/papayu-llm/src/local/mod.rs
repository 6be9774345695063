//! The `local` provider: a GGUF model run in-process by llama.cpp (cargo feature `local`).
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

mod grammar;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;
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
use sha2::{Digest, Sha256};

pub use grammar::{GrammarBounds, MAX_GRAMMAR_REPETITION, gbnf, grammar_schema};

use crate::capability::ResponseFormat;
use crate::config::{DEFAULT_TIMEOUT, ProviderKind};
use crate::error::LlmError;
use crate::model_file::check_gguf;
use crate::provider::{BoxFuture, Provider, ProviderInfo};
use crate::request::{ChatRequest, Completion, Message, Progress, Usage};

/// Default context window of the local provider (tokens, prompt and answer together). Smaller
/// than most models' training context on purpose: the KV cache is allocated up front and is
/// most of the memory a small model uses.
pub const DEFAULT_LOCAL_CONTEXT: u32 = 8_192;

pub use crate::config::DEFAULT_LOCAL_MAX_TOKENS;

/// Prompt tokens decoded per llama.cpp batch.
const PROMPT_BATCH: u32 = 512;

/// Most files kept in a [`LocalConfig::prompt_cache`] directory (the oldest go first).
pub const PROMPT_CACHE_FILES: usize = 8;

/// Part of every prompt-cache key: a change of papayu's or llama.cpp's state format makes new
/// names instead of loading old files.
const PROMPT_CACHE_FORMAT: &str = "papayu-kv-1 llama-cpp-2=0.1.160";

/// How the local provider runs.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalConfig {
    /// The GGUF model file.
    pub model_path: PathBuf,
    /// Sampling temperature; 0 is greedy (default).
    pub temperature: f32,
    /// Most tokens generated per answer, when the request does not say (default
    /// [`DEFAULT_LOCAL_MAX_TOKENS`]; the context window caps it further).
    pub max_tokens: u32,
    /// Whole-request timeout, checked between tokens (default 90 s).
    pub timeout: Duration,
    /// CPU threads for the prompt and the answer (default: the available cores; see
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
    /// A directory for the prompt cache: the KV state of each distinct leading system message
    /// (about 23 KB per token with the default model), so a new process does not decode it
    /// again. `None` (default) keeps the cache in memory only. At most
    /// [`PROMPT_CACHE_FILES`] files are kept; a file that fails to load is removed.
    pub prompt_cache: Option<PathBuf>,
}

impl LocalConfig {
    /// Defaults for `model_path`.
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        Self {
            model_path: model_path.into(),
            temperature: 0.0,
            max_tokens: DEFAULT_LOCAL_MAX_TOKENS,
            timeout: DEFAULT_TIMEOUT,
            threads: default_threads(),
            context_tokens: DEFAULT_LOCAL_CONTEXT,
            seed: 0x5eed,
            bounds: GrammarBounds::default(),
            redact_outgoing: true,
            prompt_cache: None,
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

/// The default number of llama.cpp threads: the available cores.
///
/// The fastest choice on a machine that is otherwise idle (on 2 cores: 245 prompt and 64
/// generated tokens/s, against 125 and 39 on one thread). llama.cpp's worker threads spin while
/// they wait for each other, so when another process keeps one of those cores busy the
/// generation slows down (measured on 2 cores beside one busy process: 20 tokens/s on 2 threads,
/// 39 on 1); set [`LocalConfig::threads`] lower on a machine that is busy with something else.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Timings and token counts of one local answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LocalStats {
    /// Tokens in the templated prompt.
    pub prompt_tokens: u32,
    /// Prompt tokens not decoded because their KV state was kept from the previous answer or
    /// loaded from the prompt cache.
    pub cached_prompt_tokens: u32,
    /// Tokens generated (the end-of-generation token not counted).
    pub generated_tokens: u32,
    /// Context window used for this answer.
    pub context_tokens: u32,
    /// Time to decode the prompt (its uncached part, and loading or saving a prompt-cache file).
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
    /// Prompt tokens decoded per second (the cached ones not counted).
    pub fn prompt_tokens_per_sec(&self) -> f64 {
        f64::from(self.prompt_tokens - self.cached_prompt_tokens)
            / self.prompt_time.as_secs_f64().max(1e-9)
    }
    /// Generated tokens per second.
    pub fn generated_tokens_per_sec(&self) -> f64 {
        f64::from(self.generated_tokens) / self.generation_time.as_secs_f64().max(1e-9)
    }
}

/// A loaded model, shared by every provider on the same file.
struct LoadedModel {
    /// Leaked on purpose: a loaded model stays in the process-wide cache until the process
    /// ends, and the context kept in `session` borrows it.
    model: &'static LlamaModel,
    template: LlamaChatTemplate,
    file_name: String,
    path: PathBuf,
    /// Size and modification time of the file: with the path, what names the model in
    /// prompt-cache keys.
    identity: String,
    load_time: Duration,
    /// The context kept between answers. The lock also makes it one generation at a time per
    /// model: llama.cpp's context creation mutates the model, and two generations on the same
    /// cores would only slow each other down.
    session: Mutex<Option<Session>>,
}

/// A llama.cpp context and the tokens whose KV state it holds (positions `0..cached.len()` of
/// sequence 0).
struct Session {
    ctx: LlamaContext<'static>,
    cached: Vec<LlamaToken>,
    threads: i32,
    /// Tokens decoded by the current request's prompt (for [`LocalStats::cached_prompt_tokens`]).
    decoded: u32,
}

impl Session {
    /// Forget everything in the KV cache (after an error its state is unknown).
    fn clear(&mut self) {
        self.ctx.clear_kv_cache();
        self.cached.clear();
    }

    /// Drop the KV state from position `keep` on.
    fn truncate(&mut self, keep: usize) {
        if keep >= self.cached.len() {
            return;
        }
        let removed = u32::try_from(keep)
            .ok()
            .and_then(|p| self.ctx.clear_kv_cache_seq(Some(0), Some(p), None).ok());
        if removed == Some(true) {
            self.cached.truncate(keep);
        } else {
            // A model whose memory cannot drop a tail (recurrent ones): start over.
            self.clear();
        }
    }
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
    let model: &'static LlamaModel = Box::leak(Box::new(model));
    let identity = fs_err::metadata(&key).map_or_else(
        |_| String::new(),
        |m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} bytes, mtime {mtime}", m.len())
        },
    );
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
        identity,
        load_time,
        session: Mutex::new(None),
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
            cached_input_tokens = stats.cached_prompt_tokens,
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

    /// The chat template applied to `messages`; `add_assistant` ends it with the start of the
    /// assistant's turn.
    fn prompt(&self, messages: &[Message], add_assistant: bool) -> Result<String, LlmError> {
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
        let model = self.model.model;
        match model.apply_chat_template(&self.model.template, &chat, add_assistant) {
            Ok(p) => Ok(p),
            // A template llama.cpp's built-in engine does not know: fall back to ChatML.
            Err(_) => {
                let chatml = LlamaChatTemplate::new("chatml")
                    .map_err(|e| self.inference_error(e.to_string()))?;
                model
                    .apply_chat_template(&chatml, &chat, add_assistant)
                    .map_err(|e| self.inference_error(format!("chat template: {e}")))
            }
        }
    }

    /// How many leading tokens of `tokens` are the leading system message(s): the part worth a
    /// prompt-cache file, the same for every request of a protocol version.
    fn system_prefix(&self, messages: &[Message], tokens: &[LlamaToken]) -> usize {
        let n = messages
            .iter()
            .take_while(|m| m.role == crate::request::Role::System)
            .count();
        if n == 0 || n == messages.len() {
            return 0;
        }
        let Ok(text) = self.prompt(&messages[..n], false) else {
            return 0;
        };
        let prefix = self
            .model
            .model
            .vocab()
            .tokenize(text.as_bytes(), true, true);
        common_prefix(&prefix, tokens)
    }

    /// The prompt-cache key of `prefix` (tokens of this model): 32 hex digits.
    fn cache_key(&self, prefix: &[LlamaToken]) -> String {
        let mut h = Sha256::new();
        h.update(PROMPT_CACHE_FORMAT.as_bytes());
        h.update([0]);
        h.update(self.model.path.as_os_str().as_encoded_bytes());
        h.update([0]);
        h.update(self.model.identity.as_bytes());
        for t in prefix {
            h.update(t.0.to_le_bytes());
        }
        let mut key = hex::encode(h.finalize());
        key.truncate(32);
        key
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

    /// Drop the context kept between answers: its memory (the KV cache, most of what a small
    /// model uses) and the prompt it holds. The next answer creates a new one. Prompt-cache
    /// files stay.
    pub fn release_context(&self) {
        if let Ok(mut session) = self.model.session.lock() {
            *session = None;
        }
    }

    fn generate(&self, job: &Job<'_>, cancel: &AtomicBool) -> Result<Generated, LlmError> {
        let loaded = &*self.model;
        let model = loaded.model;
        let mut slot = loaded
            .session
            .lock()
            .map_err(|_| self.inference_error("a previous generation panicked"))?;
        let prompt = self.prompt(job.messages, true)?;
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
        let needed = n_prompt
            .saturating_add(job.max_tokens)
            .div_ceil(256)
            .saturating_mul(256)
            .min(window);
        let grammar = gbnf(job.protocol, &self.config.bounds)?;
        let session = self.session(&mut slot, needed)?;
        let result = self.run(session, &tokens, &grammar, job, cancel);
        if result.is_err() {
            // Cancelled, timed out or failed mid-decode: what the KV cache holds is unknown.
            session.clear();
        }
        result
    }

    /// The kept context when it is large enough (`needed` tokens) and runs on the configured
    /// threads, else a new one.
    fn session<'s>(
        &self,
        slot: &'s mut Option<Session>,
        needed: u32,
    ) -> Result<&'s mut Session, LlmError> {
        let threads = i32::try_from(self.config.threads).unwrap_or(1);
        if !slot
            .as_ref()
            .is_some_and(|s| s.ctx.n_ctx() >= needed && s.threads == threads)
        {
            // The old one goes first: two KV caches at once would double the peak memory.
            *slot = None;
            let params = LlamaContextParams::default()
                .with_n_ctx(NonZeroU32::new(needed))
                .with_n_batch(PROMPT_BATCH.min(needed))
                .with_n_threads(threads)
                .with_n_threads_batch(threads);
            let ctx = self
                .model
                .model
                .new_context(backend()?, params)
                .map_err(|e| self.inference_error(format!("cannot create a context: {e}")))?;
            *slot = Some(Session {
                ctx,
                cached: Vec::new(),
                threads,
                decoded: 0,
            });
        }
        slot.as_mut()
            .ok_or_else(|| self.inference_error("no context"))
    }

    /// Prepare the prompt cache for requests that start with the `system` messages: decode
    /// them and save their KV state (nothing when [`LocalConfig::prompt_cache`] is `None` or
    /// the file exists already). `Ok(true)` when a file was written. Takes as long as decoding
    /// the messages (about 4 s for papayu's system prompt with the default model on 2 cores);
    /// `papayu model fetch` does it once so that the first `papayu run` is quick too.
    pub fn warm_prompt_cache(&self, system: &[Message]) -> Result<bool, LlmError> {
        let Some(dir) = &self.config.prompt_cache else {
            return Ok(false);
        };
        let mut slot = self
            .model
            .session
            .lock()
            .map_err(|_| self.inference_error("a previous generation panicked"))?;
        let text = self.prompt(system, false)?;
        let tokens = self
            .model
            .model
            .vocab()
            .tokenize(text.as_bytes(), true, true);
        let n = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        let window = self
            .config
            .context_tokens
            .min(self.model.model.n_ctx_train().max(256));
        if n == 0 || n >= window {
            return Err(self.inference_error(format!(
                "the system prompt has {n} tokens; the context window is {window}"
            )));
        }
        let key = self.cache_key(&tokens);
        if find_state(dir, &key).is_some_and(|f| state_digest_ok(&f)) {
            return Ok(false);
        }
        let session = self.session(
            &mut slot,
            (n + 1).div_ceil(256).saturating_mul(256).min(window),
        )?;
        let job = Job {
            messages: system,
            protocol: ProtocolVersion::default(),
            max_tokens: 1,
            progress: None,
            started: Instant::now(),
        };
        session.truncate(common_prefix(&session.cached, &tokens));
        let never = AtomicBool::new(false);
        if let Err(e) = self.decode_to(session, &tokens, tokens.len(), false, &job, &never) {
            session.clear();
            return Err(e);
        }
        save_state(&session.ctx, dir, &key, &tokens)
            .map_err(|e| self.inference_error(format!("cannot save the prompt cache: {e}")))?;
        Ok(true)
    }

    /// Decode `tokens[session.cached.len()..end]` at their positions, in batches; logits only
    /// for the last one when `logits` is set.
    fn decode_to(
        &self,
        session: &mut Session,
        tokens: &[LlamaToken],
        end: usize,
        logits: bool,
        job: &Job<'_>,
        cancel: &AtomicBool,
    ) -> Result<(), LlmError> {
        let batch_size = usize::try_from(PROMPT_BATCH.min(session.ctx.n_batch())).unwrap_or(512);
        let mut batch = LlamaBatch::new(batch_size, 1);
        while session.cached.len() < end {
            self.check_time(job, cancel)?;
            let start = session.cached.len();
            let chunk = &tokens[start..end.min(start + batch_size)];
            batch.clear();
            for (i, token) in chunk.iter().enumerate() {
                let pos = start + i;
                batch
                    .add(
                        *token,
                        i32::try_from(pos).unwrap_or(i32::MAX),
                        &[0],
                        logits && pos + 1 == end,
                    )
                    .map_err(|e| self.inference_error(e.to_string()))?;
            }
            session
                .ctx
                .decode(&mut batch)
                .map_err(|e| self.inference_error(format!("prompt decode failed: {e}")))?;
            session.cached.extend_from_slice(chunk);
            session.decoded += u32::try_from(chunk.len()).unwrap_or(0);
        }
        Ok(())
    }

    /// Bring the KV state to `tokens[..prefix]` from the prompt cache, or decode that much and
    /// save it there. Every failure only costs time: the prompt is then decoded as usual.
    fn prompt_cache(
        &self,
        dir: &Path,
        session: &mut Session,
        tokens: &[LlamaToken],
        prefix: usize,
        job: &Job<'_>,
        cancel: &AtomicBool,
    ) -> Result<(), LlmError> {
        let key = self.cache_key(&tokens[..prefix]);
        if let Some(file) = find_state(dir, &key) {
            // llama.cpp asserts (aborting the process) on some damaged state files, so it only
            // ever reads a file whose contents match the digest in its name.
            let loaded = if state_digest_ok(&file) {
                session
                    .ctx
                    .state_seq_load_file(&file, 0, prefix)
                    .map_err(|e| e.to_string())
            } else {
                Err("its contents do not match the digest in its name".to_owned())
            };
            match loaded {
                Ok((saved, _)) if saved.len() == prefix && saved == tokens[..prefix] => {
                    session.cached = saved;
                    tracing::debug!(event = "LOCAL_PROMPT_CACHE_HIT", file = %file.display(), tokens = prefix);
                    return Ok(());
                }
                other => {
                    tracing::warn!(
                        event = "LOCAL_PROMPT_CACHE_BAD",
                        file = %file.display(),
                        error = other.err().unwrap_or_else(|| "other tokens".to_owned()),
                        "removing a prompt-cache file that does not load"
                    );
                    session.clear();
                    let _ = fs_err::remove_file(&file);
                }
            }
        }
        self.decode_to(session, tokens, prefix, false, job, cancel)?;
        if let Err(e) = save_state(&session.ctx, dir, &key, &tokens[..prefix]) {
            tracing::warn!(event = "LOCAL_PROMPT_CACHE_SAVE_FAILED", dir = %dir.display(), error = %e);
        }
        Ok(())
    }

    fn run(
        &self,
        session: &mut Session,
        tokens: &[LlamaToken],
        grammar: &str,
        job: &Job<'_>,
        cancel: &AtomicBool,
    ) -> Result<Generated, LlmError> {
        let model = self.model.model;
        let vocab = model.vocab();
        let n_prompt = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        let n_ctx = session.ctx.n_ctx();
        let max_new = job.max_tokens.min(n_ctx - n_prompt);

        // The prompt: what the kept context shares with it stays (the last token is always
        // decoded again, for its logits), the rest is decoded.
        let prompt_started = Instant::now();
        session.decoded = 0;
        session.truncate(common_prefix(&session.cached, tokens).min(tokens.len() - 1));
        if let Some(dir) = &self.config.prompt_cache {
            let prefix = self
                .system_prefix(job.messages, tokens)
                .min(tokens.len() - 1);
            if session.cached.len() < prefix {
                session.clear();
                self.prompt_cache(dir, session, tokens, prefix, job, cancel)?;
            }
        }
        // The last prompt token is decoded on its own, whatever came before it: its logits (the
        // first answer token) then come from the same computation whether the rest of the prompt
        // was decoded now, kept or loaded, so a greedy answer does not depend on the cache.
        self.decode_to(session, tokens, tokens.len() - 1, false, job, cancel)?;
        self.decode_to(session, tokens, tokens.len(), true, job, cancel)?;
        let prompt_time = prompt_started.elapsed();
        let cached_prompt_tokens = n_prompt.saturating_sub(session.decoded);

        let mut constraint = LlamaSampler::grammar(model, grammar, "root")
            .map_err(|e| self.inference_error(format!("llama.cpp refused the grammar: {e}")))?;
        // Sampling at a temperature: the grammar first, then temperature and a seeded draw.
        let mut chain = if self.config.temperature > 0.0 {
            let constrained = LlamaSampler::grammar(model, grammar, "root")
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
        let mut batch = LlamaBatch::new(1, 1);
        let mut first_token = None;
        let mut bytes: Vec<u8> = Vec::new();
        let mut chars = 0usize;
        let mut generated = 0u32;
        let mut finish_reason = "length";
        while generated < max_new {
            self.check_time(job, cancel)?;
            let token = match chain.as_mut() {
                // `sample` also accepts the token into every sampler of the chain (the grammar
                // included); accepting it again aborts the process.
                Some(chain) => chain.sample(&session.ctx, -1),
                None => self.greedy_constrained(&session.ctx, &mut constraint)?,
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
            let pos = i32::try_from(session.cached.len()).unwrap_or(i32::MAX);
            batch.clear();
            batch
                .add(token, pos, &[0], true)
                .map_err(|e| self.inference_error(e.to_string()))?;
            session
                .ctx
                .decode(&mut batch)
                .map_err(|e| self.inference_error(format!("decode failed: {e}")))?;
            session.cached.push(token);
        }
        let stats = LocalStats {
            prompt_tokens: n_prompt,
            cached_prompt_tokens,
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

/// How many leading tokens `a` and `b` share.
fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The prompt-cache file of `key` in `dir`: `<key>.<digest>.kv`, where `<digest>` is the first
/// 32 hex digits of the file's sha256.
fn find_state(dir: &Path, key: &str) -> Option<PathBuf> {
    fs_err::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(key))
                .and_then(|n| n.strip_prefix('.'))
                .and_then(|n| n.strip_suffix(".kv"))
                .is_some_and(|d| d.len() == 32)
        })
}

/// Whether `file` (a [`find_state`] result) hashes to the digest in its name.
fn state_digest_ok(file: &Path) -> bool {
    let named = file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".kv"))
        .and_then(|n| n.rsplit('.').next())
        .map(str::to_owned);
    let actual = crate::model_file::sha256_file(file).ok();
    named.is_some_and(|n| actual.is_some_and(|a| a.starts_with(&n)))
}

/// Save the KV state of `tokens` (all the context holds) in `dir` under `key`: written under a
/// temporary name, hashed, and renamed to `<key>.<digest>.kv`, so a reader never sees half a
/// file; then the oldest files beyond [`PROMPT_CACHE_FILES`] are removed.
fn save_state(
    ctx: &LlamaContext<'_>,
    dir: &Path,
    key: &str,
    tokens: &[LlamaToken],
) -> Result<(), String> {
    fs_err::create_dir_all(dir).map_err(|e| e.to_string())?;
    let tmp = dir.join(format!(
        ".tmp-{}-{:?}.kv",
        std::process::id(),
        std::thread::current().id()
    ));
    let saved = ctx
        .state_seq_save_file(&tmp, 0, tokens)
        .map_err(|e| format!("llama.cpp could not save the state: {e}"))
        .and_then(|_| crate::model_file::sha256_file(&tmp).map_err(|e| e.to_string()))
        .and_then(|digest| {
            let file = dir.join(format!("{key}.{}.kv", &digest[..32]));
            fs_err::rename(&tmp, &file).map_err(|e| e.to_string())
        });
    if let Err(e) = saved {
        let _ = fs_err::remove_file(&tmp);
        return Err(e);
    }
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = fs_err::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "kv")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .filter_map(|p| Some((fs_err::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    if files.len() > PROMPT_CACHE_FILES {
        files.sort();
        for (_, p) in &files[..files.len() - PROMPT_CACHE_FILES] {
            let _ = fs_err::remove_file(p);
        }
    }
    Ok(())
}

impl LocalProvider {
    /// Greedy decoding under the grammar, checking the unconstrained best token first (as
    /// llama.cpp's own sampler does): the grammar is applied to the whole vocabulary only when
    /// that token breaks it, which is rare once the model follows the schema.
    fn greedy_constrained(
        &self,
        ctx: &LlamaContext<'_>,
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
