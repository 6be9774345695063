//! Structured-output capability detection (SPEC §7).
//!
//! Strict mode starts at the strongest form a provider dialect has and walks down when the
//! provider refuses it with a 4xx/5xx whose body names `response_format`, `json_schema` or
//! "unsupported". The form that worked is remembered per provider kind + endpoint + model in a
//! [`CapabilityCache`], so later calls in the same process start there.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;

use crate::config::ProviderKind;

/// A structured-output form, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    /// OpenAI: `response_format:{type:"json_schema", json_schema:{name, strict:true, schema}}`;
    /// Ollama: `format: <schema>`; Anthropic: a forced tool whose `input_schema` is the schema.
    JsonSchema,
    /// `response_format:{type:"json_object", schema}` (llama.cpp and friends turn the schema
    /// into a grammar).
    #[serde(rename = "json_object_schema")]
    JsonObjectWithSchema,
    /// `response_format:{type:"json_object"}`; Ollama: `format:"json"`.
    JsonObject,
    /// No structured output: best-effort extraction only.
    None,
}

impl ResponseFormat {
    /// The stable name used in events and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::JsonSchema => "json_schema",
            Self::JsonObjectWithSchema => "json_object_schema",
            Self::JsonObject => "json_object",
            Self::None => "none",
        }
    }

    /// The ladder a dialect walks in strict mode, strongest first.
    pub fn ladder(kind: ProviderKind) -> &'static [ResponseFormat] {
        match kind {
            ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => &[
                Self::JsonSchema,
                Self::JsonObjectWithSchema,
                Self::JsonObject,
                Self::None,
            ],
            ProviderKind::Ollama => &[Self::JsonSchema, Self::JsonObject, Self::None],
            ProviderKind::Anthropic => &[Self::JsonSchema, Self::None],
            // The local provider always decodes under a grammar made from the schema.
            ProviderKind::Local => &[Self::JsonSchema],
        }
    }

    /// The next weaker form for this dialect, or `None` at the bottom of the ladder.
    pub fn weaker(self, kind: ProviderKind) -> Option<ResponseFormat> {
        let ladder = Self::ladder(kind);
        let i = ladder.iter().position(|f| *f == self)?;
        ladder.get(i + 1).copied()
    }
}

impl fmt::Display for ResponseFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether an error body is a refusal of the structured-output form: it names
/// `response_format`, `json_schema` or says "unsupported" (SPEC §7), or, for Anthropic's forced
/// tool, names `tool_choice` or `input_schema`.
pub fn mentions_format_refusal(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    [
        "response_format",
        "json_schema",
        "unsupported",
        "not supported",
        "tool_choice",
        "input_schema",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// Key of a capability: provider kind, endpoint, model.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CapabilityKey {
    /// The provider kind.
    pub kind: ProviderKind,
    /// The endpoint URL.
    pub endpoint: String,
    /// The model.
    pub model: String,
}

/// The structured-output form that worked, per provider + model. Cheap to clone; clones share
/// the same table.
#[derive(Debug, Clone, Default)]
pub struct CapabilityCache {
    inner: Arc<Mutex<HashMap<CapabilityKey, ResponseFormat>>>,
}

impl CapabilityCache {
    /// An empty cache of its own (tests, or a caller that wants isolation).
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide cache that providers use unless given another.
    pub fn process() -> Self {
        static PROCESS: OnceLock<CapabilityCache> = OnceLock::new();
        PROCESS.get_or_init(CapabilityCache::new).clone()
    }

    /// The remembered form, if any.
    pub fn get(&self, key: &CapabilityKey) -> Option<ResponseFormat> {
        self.inner.lock().ok().and_then(|m| m.get(key).copied())
    }

    /// Remember a form.
    pub fn set(&self, key: CapabilityKey, format: ResponseFormat) {
        if let Ok(mut m) = self.inner.lock() {
            m.insert(key, format);
        }
    }

    /// Everything remembered (for `papayu doctor`).
    pub fn entries(&self) -> Vec<(CapabilityKey, ResponseFormat)> {
        self.inner
            .lock()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default()
    }
}
