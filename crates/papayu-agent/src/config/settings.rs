//! The configuration types: the system-prompt family and every setting with its SPEC default.

use std::str::FromStr;
use std::time::Duration;

use camino::Utf8PathBuf;
use papayu_context::ContextConfig;
use papayu_llm::{ProviderConfig, ProviderKind};
use papayu_protocol::ProtocolVersion;
use serde::Serialize;

/// The system-prompt family (`PAPAYU_LLM_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum LlmMode {
    /// An engineering colleague answering with actions (default).
    #[default]
    #[serde(rename = "chat")]
    Chat,
    /// Must return a fix and how to check it.
    #[serde(rename = "fixit")]
    Fixit,
    /// One JSON document with a plan, proposed changes and verification.
    #[serde(rename = "fix-plan")]
    FixPlan,
}

impl LlmMode {
    /// The name used in `PAPAYU_LLM_MODE`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Fixit => "fixit",
            Self::FixPlan => "fix-plan",
        }
    }

    /// Every family.
    pub const ALL: [LlmMode; 3] = [Self::Chat, Self::Fixit, Self::FixPlan];
}

impl FromStr for LlmMode {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s.trim().to_ascii_lowercase().as_str() {
            "chat" => Ok(Self::Chat),
            "fixit" => Ok(Self::Fixit),
            "fix-plan" | "fix_plan" | "fixplan" => Ok(Self::FixPlan),
            _ => Err(()),
        }
    }
}

/// Everything the agent needs to know, with SPEC defaults.
///
/// Libraries never read the environment: a frontend collects it into a map once and calls
/// [`AgentConfig::from_env_map`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentConfig {
    /// `PAPAYU_LLM_PROVIDER` (inferred from the URL when unset).
    pub provider: Option<ProviderKind>,
    /// `PAPAYU_LLM_API_URL`.
    pub api_url: Option<String>,
    /// `PAPAYU_LLM_API_KEY` (never in snapshots or traces).
    pub api_key: Option<String>,
    /// `PAPAYU_LLM_MODEL`.
    pub model: Option<String>,
    /// `PAPAYU_LLM_MODE`.
    pub llm_mode: LlmMode,
    /// `PAPAYU_LLM_STRICT_JSON`.
    pub strict_json: bool,
    /// `PAPAYU_LLM_TEMPERATURE` (0).
    pub temperature: f32,
    /// `PAPAYU_LLM_MAX_TOKENS`. Unset (`None`): each provider's own default
    /// ([`papayu_llm::ProviderKind::default_max_tokens`]: 16 384 over the network, 2 048 for the
    /// in-process model).
    pub max_tokens: Option<u32>,
    /// `PAPAYU_LLM_TIMEOUT_SEC` (90).
    pub timeout: Duration,
    /// `PAPAYU_LLM_PROVIDERS`, with `api_key_env` resolved from the same map.
    pub providers: Vec<ProviderConfig>,
    /// `PAPAYU_LLM_AGGREGATOR_URL|KEY|MODEL`.
    pub aggregator: Option<ProviderConfig>,
    /// `PAPAYU_PROTOCOL_VERSION`: forces the version.
    pub protocol_version: Option<ProtocolVersion>,
    /// `PAPAYU_PROTOCOL_DEFAULT` (2).
    pub protocol_default: ProtocolVersion,
    /// `PAPAYU_PROTOCOL_FALLBACK_TO_V1` (on).
    pub fallback_to_v1: bool,
    /// `PAPAYU_TRACE`.
    pub trace: bool,
    /// `PAPAYU_TRACE_RAW`.
    pub trace_raw: bool,
    /// `PAPAYU_NORMALIZE_EOL=lf`.
    pub normalize_eol_lf: bool,
    /// `PAPAYU_MEMORY_AUTOPATCH`.
    pub memory_autopatch: bool,
    /// `PAPAYU_CONTEXT_MAX_FILES` (8).
    pub context_max_files: usize,
    /// `PAPAYU_CONTEXT_MAX_FILE_CHARS` (20 000).
    pub context_max_file_chars: usize,
    /// `PAPAYU_CONTEXT_MAX_TOTAL_CHARS` (120 000).
    pub context_max_total_chars: usize,
    /// `PAPAYU_CONTEXT_MAX_LOG_CHARS` (12 000).
    pub context_max_log_chars: usize,
    /// `PAPAYU_CONTEXT_SMALL_PROJECT_BYTES` (16 000): a project whose text files come to at
    /// most this much is sent whole in the base context; 0 turns that off.
    pub context_small_project_bytes: usize,
    /// Stream answers so progress reports characters received (not an environment variable:
    /// the frontend decides).
    pub stream: bool,
    /// `PAPAYU_LOCAL_EDIT_STYLE` (`whole_file`, the default, `search_replace` or
    /// `unified_diff`): how the in-process model changes existing files; its answers are
    /// narrowed to that form (a grammar made for each request) and validated under the style's
    /// protocol version unless `PAPAYU_PROTOCOL_VERSION` forces one. `whole_file` falls back to
    /// `search_replace` in a call that sent a file over `WHOLE_FILE_MAX_BYTES` (D61).
    pub local_edit_style: papayu_protocol::EditStyle,
    /// `PAPAYU_SANDBOX` (`auto`, the default, or `off`): whether check and test commands run
    /// confined when the machine can confine them.
    pub sandbox_enabled: bool,
    /// How check and test commands are confined (not an environment variable: the frontend
    /// knows how to launch its sandbox, and sets it when `sandbox_enabled`).
    pub sandbox: papayu_patch::Sandbox,
    /// The active virtual environment (`VIRTUAL_ENV`, read by the frontend), shown to the model
    /// in the `env` block.
    pub virtual_env: Option<String>,
    /// Where the `env` block remembers tool versions between runs (not an environment
    /// variable: the frontend knows the user's cache directory); `None`: probed every time.
    pub env_probe_memory: Option<std::path::PathBuf>,
    /// The `PATH` the frontend runs tools with (read by the frontend): the `env` block finds
    /// each probed executable on it to key what it remembers.
    pub tool_search_path: Option<std::ffi::OsString>,
    /// The toolchain-choosing variables of the frontend's environment
    /// ([`is_tool_selector`](crate::is_tool_selector)), part of each remembered tool version's key.
    pub tool_selectors: std::collections::BTreeMap<String, String>,
    /// The original papa-yu app's `preferences.json` (not an environment variable: the frontend
    /// knows the platform's data directory); its values fill the user preferences papayu's own
    /// file leaves unset (`Memory::fill_from_original_user_prefs`).
    pub original_user_prefs: Option<Utf8PathBuf>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        let ctx = ContextConfig::default();
        Self {
            provider: None,
            api_url: None,
            api_key: None,
            model: None,
            llm_mode: LlmMode::Chat,
            strict_json: false,
            temperature: 0.0,
            max_tokens: None,
            timeout: papayu_llm::DEFAULT_TIMEOUT,
            providers: Vec::new(),
            aggregator: None,
            protocol_version: None,
            protocol_default: ProtocolVersion::V2,
            fallback_to_v1: true,
            trace: false,
            trace_raw: false,
            normalize_eol_lf: false,
            memory_autopatch: false,
            context_max_files: ctx.max_files,
            context_max_file_chars: ctx.max_file_chars,
            context_max_total_chars: ctx.max_total_chars,
            context_max_log_chars: ctx.max_log_chars,
            context_small_project_bytes: ctx.small_project_bytes as usize,
            stream: false,
            // Measured on the task corpus (docs/BENCHMARKS.md, session 12; D61).
            local_edit_style: papayu_protocol::EditStyle::WholeFile,
            sandbox_enabled: true,
            sandbox: papayu_patch::Sandbox::default(),
            virtual_env: None,
            env_probe_memory: None,
            tool_search_path: None,
            tool_selectors: std::collections::BTreeMap::new(),
            original_user_prefs: None,
        }
    }
}
