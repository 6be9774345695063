//! How the local provider runs ([`LocalConfig`]) and what one answer cost ([`LocalStats`]).

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::grammar::GrammarBounds;
use crate::config::{DEFAULT_LOCAL_MAX_TOKENS, DEFAULT_TIMEOUT};

/// Default context window of the local provider (tokens, prompt and answer together). Smaller
/// than most models' training context on purpose: the KV cache is allocated up front and is
/// most of the memory a small model uses.
pub const DEFAULT_LOCAL_CONTEXT: u32 = 8_192;

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
    /// [`PROMPT_CACHE_FILES`](super::PROMPT_CACHE_FILES) files are kept; a file that fails to load is removed.
    pub prompt_cache: Option<PathBuf>,
    /// Most tokens proposed per step by prompt-lookup drafting: text the answer copies from
    /// its prompt (a whole file with one line changed) is decoded several tokens per batch, each
    /// kept only when the sampler picks it from its own position's logits. 0 turns it off
    /// (default [`DEFAULT_DRAFT_TOKENS`]: off, since it gains nothing on a quiet machine; 16 is
    /// up to 2.3× faster beside a busy neighbour, see docs/BENCHMARKS.md).
    pub draft_tokens: u32,
}

/// Default [`LocalConfig::draft_tokens`].
pub const DEFAULT_DRAFT_TOKENS: u32 = 0;

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
            draft_tokens: DEFAULT_DRAFT_TOKENS,
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
    /// Tokens proposed by prompt-lookup drafting ([`LocalConfig::draft_tokens`]).
    pub drafted_tokens: u32,
    /// Proposed tokens the sampler took: generated without a decode step of their own.
    pub accepted_drafts: u32,
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
