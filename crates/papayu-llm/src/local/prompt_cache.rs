//! The prompt cache: the KV state of a leading system message saved in a directory, so a new
//! process starts from it instead of decoding it again. Every failure here only costs time.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::token::LlamaToken;
use papayu_protocol::ProtocolVersion;
use sha2::{Digest, Sha256};

use super::LocalProvider;
use super::session::{Job, Session, common_prefix};
use crate::error::LlmError;
use crate::request::{Message, Role};

/// Most files kept in a [`LocalConfig::prompt_cache`](super::LocalConfig::prompt_cache) directory (the oldest go first).
pub const PROMPT_CACHE_FILES: usize = 8;

/// Part of every prompt-cache key: a change of papayu's or llama.cpp's state format makes new
/// names instead of loading old files.
const PROMPT_CACHE_FORMAT: &str = "papayu-kv-1 llama-cpp-2=0.1.160";

impl LocalProvider {
    /// Prepare the prompt cache for requests that start with the `system` messages: decode
    /// them and save their KV state (nothing when [`LocalConfig::prompt_cache`](super::LocalConfig::prompt_cache) is `None` or
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
        let size = (n + 1).div_ceil(256).saturating_mul(256).min(window);
        let session = self.session(&mut slot, size, size)?;
        let job = Job {
            messages: system,
            protocol: ProtocolVersion::default(),
            answer_schema: None,
            max_tokens: 1,
            progress: None,
            sampling: None,
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

    /// How many leading tokens of `tokens` are the leading system message(s): the part worth a
    /// prompt-cache file, the same for every request of a protocol version.
    pub(super) fn system_prefix(&self, messages: &[Message], tokens: &[LlamaToken]) -> usize {
        let n = messages
            .iter()
            .take_while(|m| m.role == Role::System)
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
    pub(super) fn cache_key(&self, prefix: &[LlamaToken]) -> String {
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

    /// Bring the KV state to `tokens[..prefix]` from the prompt cache, or decode that much and
    /// save it there. Every failure only costs time: the prompt is then decoded as usual.
    pub(super) fn prompt_cache(
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
    let actual = crate::model::sha256_file(file).ok();
    named.is_some_and(|n| actual.is_some_and(|a| a.starts_with(&n)))
}

/// Save the KV state of `tokens` (all the context holds) in `dir` under `key`, through
/// papayu-fs: llama.cpp writes the temporary file, whose digest then names the file
/// (`<key>.<digest>.kv`), so a reader never sees half a file; then the oldest files beyond
/// [`PROMPT_CACHE_FILES`] are removed.
fn save_state(
    ctx: &LlamaContext<'_>,
    dir: &Path,
    key: &str,
    tokens: &[LlamaToken],
) -> Result<(), String> {
    let mut file =
        papayu_fs::AtomicFile::create(dir.join(format!("{key}.kv"))).map_err(|e| e.to_string())?;
    ctx.state_seq_save_file(file.temp_path(), 0, tokens)
        .map_err(|e| format!("llama.cpp could not save the state: {e}"))?;
    let digest = crate::model::sha256_file(file.temp_path()).map_err(|e| e.to_string())?;
    file.set_file_name(format!("{key}.{}.kv", &digest[..32]));
    file.commit().map_err(|e| e.to_string())?;
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
