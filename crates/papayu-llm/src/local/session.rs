//! One generation: the llama.cpp context kept between answers, decoding the part of the prompt
//! it does not hold yet, and sampling under the grammar until the end or the token limit.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use papayu_protocol::ProtocolVersion;

use super::LocalProvider;
use super::config::LocalStats;
use super::draft::Drafter;
use super::grammar::{gbnf, gbnf_for_schema};
use super::model::backend;
use crate::error::LlmError;
use crate::request::{Message, Progress, Sampling};

/// A draw at a temperature considers at most this many tokens (llama.cpp's default)…
const SAMPLE_TOP_K: i32 = 40;
/// …and none below this share of the likeliest token's probability (llama.cpp's default): a
/// small model's tail is where a drawn answer goes off the rails.
const SAMPLE_MIN_P: f32 = 0.05;

/// Tokens a new context holds beyond the request that makes it: the next request of a goal is
/// usually this one plus a repair turn or a retry's feedback, and a context too small for it is
/// replaced — losing the decoded prompt it shares with this one (a full re-decode, 40–60 s for
/// Qwen2.5-Coder-1.5B on 2 cores instead of the few seconds of the new text).
const CONTEXT_HEADROOM: u32 = 2_048;

/// Prompt tokens decoded per llama.cpp batch.
const PROMPT_BATCH: u32 = 512;

/// Tokens proposed by the first draft of an answer; the window then doubles after a proposal
/// taken whole and halves after one cut short, within 1..=[`LocalConfig::draft_tokens`].
///
/// [`LocalConfig::draft_tokens`]: super::LocalConfig::draft_tokens
const DRAFT_START: usize = 4;

/// Proposed and taken draft tokens of one answer.
#[derive(Default)]
struct DraftStats {
    proposed: u32,
    accepted: u32,
}

/// A llama.cpp context and the tokens whose KV state it holds (positions `0..cached.len()` of
/// sequence 0).
pub(super) struct Session {
    pub(super) ctx: LlamaContext<'static>,
    pub(super) cached: Vec<LlamaToken>,
    pub(super) threads: i32,
    /// Tokens decoded by the current request's prompt (for [`LocalStats::cached_prompt_tokens`]).
    pub(super) decoded: u32,
}

impl Session {
    /// Forget everything in the KV cache (after an error its state is unknown).
    pub(super) fn clear(&mut self) {
        self.ctx.clear_kv_cache();
        self.cached.clear();
    }

    /// Whether the KV cache can drop positions past what it holds (a transformer's can; a
    /// recurrent model's memory cannot), which drafting needs.
    pub(super) fn can_drop_tail(&mut self) -> bool {
        u32::try_from(self.cached.len())
            .ok()
            .and_then(|p| self.ctx.clear_kv_cache_seq(Some(0), Some(p), None).ok())
            == Some(true)
    }

    /// Drop the KV state from position `keep` on.
    pub(super) fn truncate(&mut self, keep: usize) {
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

/// One request as a generation sees it.
pub(super) struct Job<'a> {
    pub(super) messages: &'a [Message],
    pub(super) protocol: ProtocolVersion,
    /// The schema of this request's answer, when the caller narrowed it.
    pub(super) answer_schema: Option<&'a serde_json::Value>,
    pub(super) max_tokens: u32,
    pub(super) progress: Option<&'a Progress>,
    /// The request's own temperature and seed, else the configured ones.
    pub(super) sampling: Option<Sampling>,
    pub(super) started: Instant,
}

/// What one generation produced.
pub(super) struct Generated {
    pub(super) text: String,
    pub(super) finish_reason: &'static str,
    pub(super) stats: LocalStats,
}

impl LocalProvider {
    pub(super) fn check_time(&self, job: &Job<'_>, cancel: &AtomicBool) -> Result<(), LlmError> {
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

    pub(super) fn generate(
        &self,
        job: &Job<'_>,
        cancel: &AtomicBool,
    ) -> Result<Generated, LlmError> {
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
        let room = needed.saturating_add(CONTEXT_HEADROOM).min(window);
        let grammar = match job.answer_schema {
            Some(schema) => gbnf_for_schema(schema)?,
            None => gbnf(job.protocol, &self.config.bounds)?,
        };
        let session = self.session(&mut slot, needed, room)?;
        let result = self.run(session, &tokens, &grammar, job, cancel);
        if result.is_err() {
            // Cancelled, timed out or failed mid-decode: what the KV cache holds is unknown.
            session.clear();
        }
        result
    }

    /// The kept context when it is large enough (`needed` tokens) and runs on the configured
    /// threads, else a new one of `room` tokens (at least `needed`).
    pub(super) fn session<'s>(
        &self,
        slot: &'s mut Option<Session>,
        needed: u32,
        room: u32,
    ) -> Result<&'s mut Session, LlmError> {
        let threads = i32::try_from(self.config.threads).unwrap_or(1);
        if !slot
            .as_ref()
            .is_some_and(|s| s.ctx.n_ctx() >= needed && s.threads == threads)
        {
            // The old one goes first: two KV caches at once would double the peak memory.
            *slot = None;
            let size = room.max(needed);
            let params = LlamaContextParams::default()
                .with_n_ctx(NonZeroU32::new(size))
                .with_n_batch(PROMPT_BATCH.min(size))
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

    /// Decode `tokens[session.cached.len()..end]` at their positions, in batches; logits only
    /// for the last one when `logits` is set.
    pub(super) fn decode_to(
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

    pub(super) fn run(
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
        // Sampling at a temperature: the grammar first, then llama.cpp's default cut of the
        // unlikely tail (top-k, min-p), then temperature and a seeded draw.
        let sampling = job.sampling.unwrap_or(Sampling {
            temperature: self.config.temperature,
            seed: self.config.seed,
        });
        let mut chain = if sampling.temperature > 0.0 {
            let constrained = LlamaSampler::grammar(model, grammar, "root")
                .map_err(|e| self.inference_error(format!("llama.cpp refused the grammar: {e}")))?;
            Some(LlamaSampler::chain_simple([
                constrained,
                LlamaSampler::top_k(SAMPLE_TOP_K),
                LlamaSampler::min_p(SAMPLE_MIN_P, 1),
                LlamaSampler::temp(sampling.temperature),
                LlamaSampler::dist(sampling.seed),
            ]))
        } else {
            None
        };

        // Prompt-lookup drafting (draft.rs): only where the KV cache can drop the positions of
        // proposals the sampler does not take (every transformer; not recurrent models).
        let draft_max = usize::try_from(self.config.draft_tokens).unwrap_or(0);
        let mut drafter = (draft_max > 0 && session.can_drop_tail()).then(|| {
            let escaped = serde_json::to_string(&String::from_utf8_lossy(&{
                let mut text = Vec::new();
                for t in tokens {
                    vocab.token_to_piece_into(*t, &mut text, true, None);
                }
                text
            }))
            .unwrap_or_default();
            let escaped = vocab.tokenize(escaped.as_bytes(), false, false);
            Drafter::new(&[tokens, &escaped])
        });
        let mut window = draft_max.min(DRAFT_START);

        let generation_started = Instant::now();
        let mut batch = LlamaBatch::new(1 + draft_max, 1);
        let mut first_token = None;
        let mut bytes: Vec<u8> = Vec::new();
        let mut chars = 0usize;
        let mut generated = 0u32;
        let mut answer: Vec<LlamaToken> = Vec::new();
        // The tokens decoded after the last sampled one (a proposal), how many of them the
        // sampler has taken since, and the batch index whose logits give the next token.
        let mut proposed: Vec<LlamaToken> = Vec::new();
        let mut taken = 0usize;
        let mut logits_at = -1i32;
        let mut drafts = DraftStats::default();
        let mut finish_reason = "length";
        while generated < max_new {
            self.check_time(job, cancel)?;
            let token = match chain.as_mut() {
                // `sample` also accepts the token into every sampler of the chain (the grammar
                // included); accepting it again aborts the process.
                Some(chain) => chain.sample(&session.ctx, logits_at),
                None => self.greedy_constrained(&session.ctx, logits_at, &mut constraint)?,
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
            answer.push(token);
            if let Some(progress) = job.progress {
                progress(chars);
            }
            if generated == max_new {
                break;
            }
            if proposed.get(taken) == Some(&token) {
                // The sampler took the next proposed token: it is decoded already, and the
                // logits after it are in the last batch.
                taken += 1;
                session.cached.push(token);
                logits_at = i32::try_from(taken).unwrap_or(i32::MAX);
                drafts.accepted += 1;
                continue;
            }
            if taken < proposed.len() {
                // The rest of the proposal is not the answer: drop it from the KV cache.
                let keep = u32::try_from(session.cached.len()).unwrap_or(u32::MAX);
                session
                    .ctx
                    .clear_kv_cache_seq(Some(0), Some(keep), None)
                    .map_err(|e| self.inference_error(format!("cannot drop a draft: {e}")))?;
                window = (window / 2).max(1);
            } else if !proposed.is_empty() {
                window = (window * 2).min(draft_max);
            }
            // Room left for proposals: the answer's token limit and the context.
            let room = usize::try_from(max_new - generated - 1).unwrap_or(0);
            proposed = match drafter.as_mut() {
                Some(d) => d.propose(&answer, window.min(room)).to_vec(),
                None => Vec::new(),
            };
            drafts.proposed += u32::try_from(proposed.len()).unwrap_or(0);
            taken = 0;
            let pos = session.cached.len();
            batch.clear();
            for (i, t) in std::iter::once(token)
                .chain(proposed.iter().copied())
                .enumerate()
            {
                batch
                    .add(t, i32::try_from(pos + i).unwrap_or(i32::MAX), &[0], true)
                    .map_err(|e| self.inference_error(e.to_string()))?;
            }
            session
                .ctx
                .decode(&mut batch)
                .map_err(|e| self.inference_error(format!("decode failed: {e}")))?;
            session.cached.push(token);
            logits_at = 0;
        }
        if taken < proposed.len() {
            // Stopped inside a proposal: the KV cache keeps only what the answer holds.
            let keep = u32::try_from(session.cached.len()).unwrap_or(u32::MAX);
            if session.ctx.clear_kv_cache_seq(Some(0), Some(keep), None) != Ok(true) {
                session.clear();
            }
        }
        let stats = LocalStats {
            prompt_tokens: n_prompt,
            cached_prompt_tokens,
            generated_tokens: generated,
            context_tokens: n_ctx,
            prompt_time,
            first_token: first_token.unwrap_or_else(|| job.started.elapsed()),
            generation_time: generation_started.elapsed(),
            drafted_tokens: drafts.proposed,
            accepted_drafts: drafts.accepted,
        };
        Ok(Generated {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            finish_reason,
            stats,
        })
    }
}

/// How many leading tokens `a` and `b` share.
pub(super) fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl LocalProvider {
    /// Greedy decoding under the grammar, checking the unconstrained best token first (as
    /// llama.cpp's own sampler does): the grammar is applied to the whole vocabulary only when
    /// that token breaks it, which is rare once the model follows the schema.
    fn greedy_constrained(
        &self,
        ctx: &LlamaContext<'_>,
        at: i32,
        grammar: &mut LlamaSampler,
    ) -> Result<LlamaToken, LlmError> {
        let logits = ctx.get_logits_ith(at);
        let best = argmax(logits.iter().copied())
            .ok_or_else(|| self.inference_error("the model produced no logits"))?;
        let token = LlamaToken::new(i32::try_from(best).unwrap_or(0));
        let mut single =
            LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, logits[best], 0.0)], false);
        single.apply_sampler(grammar);
        let token = if single.data.first().is_some_and(|d| d.logit().is_finite()) {
            token
        } else {
            let mut all = ctx.token_data_array_ith(at);
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
