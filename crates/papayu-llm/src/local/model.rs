//! Loading a GGUF model into llama.cpp (checked first, once per process and path) and applying
//! its chat template.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};

use super::LocalProvider;
use super::session::Session;
use crate::error::LlmError;
use crate::model::check_gguf;
use crate::request::Message;

/// A loaded model, shared by every provider on the same file.
pub(super) struct LoadedModel {
    /// Leaked on purpose: a loaded model stays in the process-wide cache until the process
    /// ends, and the context kept in `session` borrows it.
    pub(super) model: &'static LlamaModel,
    pub(super) template: LlamaChatTemplate,
    pub(super) file_name: String,
    pub(super) path: PathBuf,
    /// Size and modification time of the file: with the path, what names the model in
    /// prompt-cache keys.
    pub(super) identity: String,
    pub(super) load_time: Duration,
    /// The context kept between answers. The lock also makes it one generation at a time per
    /// model: llama.cpp's context creation mutates the model, and two generations on the same
    /// cores would only slow each other down.
    pub(super) session: Mutex<Option<Session>>,
}

/// llama.cpp's backend may be initialised once per process; it lives until the process ends.
pub(super) fn backend() -> Result<&'static LlamaBackend, LlmError> {
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
pub(super) fn load(path: &Path) -> Result<Arc<LoadedModel>, LlmError> {
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

impl LocalProvider {
    pub(super) fn inference_error(&self, message: impl Into<String>) -> LlmError {
        LlmError::Inference {
            model: self.model.file_name.clone(),
            message: message.into(),
        }
    }

    /// The chat template applied to `messages`; `add_assistant` ends it with the start of the
    /// assistant's turn.
    pub(super) fn prompt(
        &self,
        messages: &[Message],
        add_assistant: bool,
    ) -> Result<String, LlmError> {
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
}
