//! Every configuration key: its dotted name in a config file, the `PAPAYU_*` variable that
//! overrides it, its type in TOML, and one line of help.

/// The TOML type a key's value has in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    Str,
    /// `true` / `false`.
    Bool,
    /// A whole number.
    Int,
    /// A number.
    Float,
    /// An array of tables (`[[llm.providers]]`); its variable holds the same as JSON.
    Tables,
}

/// One configuration key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// Its dotted name in a config file (`llm.model`).
    pub name: &'static str,
    /// The environment variable that overrides the files (`PAPAYU_LLM_MODEL`), if any.
    pub var: Option<&'static str>,
    /// Its type in a file.
    pub kind: Kind,
    /// Whether a config file may hold it: never for a secret (`llm.api_key`).
    pub in_files: bool,
    /// What it is for.
    pub help: &'static str,
}

const fn key(name: &'static str, var: &'static str, kind: Kind, help: &'static str) -> Key {
    Key {
        name,
        var: Some(var),
        kind,
        in_files: true,
        help,
    }
}

/// `llm.api_key_env`: the variable holding the API key (the key itself never is in a file).
pub const API_KEY_ENV: &str = "llm.api_key_env";
/// `llm.api_key`: the key, from `PAPAYU_LLM_API_KEY` only.
pub const API_KEY: &str = "llm.api_key";
/// `git.commit`: one commit per applied transaction.
pub const GIT_COMMIT: &str = "git.commit";
/// `local.model`: the GGUF file of the in-process model.
pub const LOCAL_MODEL: &str = "local.model";
/// `local.threads`: the in-process model's CPU threads.
pub const LOCAL_THREADS: &str = "local.threads";
/// `ui.theme`: the UI's colour theme.
pub const UI_THEME: &str = "ui.theme";

/// Every key, in the order `papayu config show` lists them.
pub const KEYS: &[Key] = &[
    key(
        "llm.provider",
        "PAPAYU_LLM_PROVIDER",
        Kind::Str,
        "openai | openai-compatible | ollama | anthropic | local (default: inferred from the URL)",
    ),
    key(
        "llm.api_url",
        "PAPAYU_LLM_API_URL",
        Kind::Str,
        "the provider's base URL, e.g. https://api.openai.com/v1",
    ),
    key(
        "llm.model",
        "PAPAYU_LLM_MODEL",
        Kind::Str,
        "the model to ask",
    ),
    Key {
        name: API_KEY_ENV,
        var: None,
        kind: Kind::Str,
        in_files: true,
        help: "the NAME of the environment variable holding the API key (e.g. OPENAI_API_KEY)",
    },
    Key {
        name: API_KEY,
        var: Some("PAPAYU_LLM_API_KEY"),
        kind: Kind::Str,
        in_files: false,
        help: "the API key: only from the environment, never from a file",
    },
    key(
        "llm.mode",
        "PAPAYU_LLM_MODE",
        Kind::Str,
        "system-prompt family: chat | fixit | fix-plan",
    ),
    key(
        "llm.strict_json",
        "PAPAYU_LLM_STRICT_JSON",
        Kind::Bool,
        "ask for strict structured output",
    ),
    key(
        "llm.temperature",
        "PAPAYU_LLM_TEMPERATURE",
        Kind::Float,
        "sampling temperature, 0..=2",
    ),
    key(
        "llm.max_tokens",
        "PAPAYU_LLM_MAX_TOKENS",
        Kind::Int,
        "answer token budget (default: the provider's)",
    ),
    key(
        "llm.timeout_sec",
        "PAPAYU_LLM_TIMEOUT_SEC",
        Kind::Int,
        "request timeout in seconds",
    ),
    key(
        "llm.providers",
        "PAPAYU_LLM_PROVIDERS",
        Kind::Tables,
        "several providers asked at once: [{kind?, url, model, api_key_env?}]",
    ),
    key(
        "llm.aggregator_url",
        "PAPAYU_LLM_AGGREGATOR_URL",
        Kind::Str,
        "the provider that merges the answers of llm.providers",
    ),
    key(
        "llm.aggregator_model",
        "PAPAYU_LLM_AGGREGATOR_MODEL",
        Kind::Str,
        "the aggregator's model",
    ),
    key(
        "protocol.version",
        "PAPAYU_PROTOCOL_VERSION",
        Kind::Int,
        "force protocol version 1, 2 or 3",
    ),
    key(
        "protocol.default",
        "PAPAYU_PROTOCOL_DEFAULT",
        Kind::Int,
        "the protocol version a plan starts with",
    ),
    key(
        "protocol.fallback_to_v1",
        "PAPAYU_PROTOCOL_FALLBACK_TO_V1",
        Kind::Bool,
        "fall back from v2 to v1 on the SPEC §9 codes",
    ),
    key(
        "trace.enabled",
        "PAPAYU_TRACE",
        Kind::Bool,
        "write traces to .papa-yu/traces/",
    ),
    key(
        "trace.raw",
        "PAPAYU_TRACE_RAW",
        Kind::Bool,
        "keep the raw (redacted) answers in traces",
    ),
    key(
        "apply.normalize_eol",
        "PAPAYU_NORMALIZE_EOL",
        Kind::Str,
        "lf: write LF line endings; keep (default): as the file has them",
    ),
    key(
        "memory.autopatch",
        "PAPAYU_MEMORY_AUTOPATCH",
        Kind::Bool,
        "apply the model's memory_patch without asking",
    ),
    key(
        "context.max_files",
        "PAPAYU_CONTEXT_MAX_FILES",
        Kind::Int,
        "files per context round",
    ),
    key(
        "context.max_file_chars",
        "PAPAYU_CONTEXT_MAX_FILE_CHARS",
        Kind::Int,
        "characters per file",
    ),
    key(
        "context.max_total_chars",
        "PAPAYU_CONTEXT_MAX_TOTAL_CHARS",
        Kind::Int,
        "characters of context in all",
    ),
    key(
        "context.max_log_chars",
        "PAPAYU_CONTEXT_MAX_LOG_CHARS",
        Kind::Int,
        "characters of logs",
    ),
    key(
        "context.small_project_bytes",
        "PAPAYU_CONTEXT_SMALL_PROJECT_BYTES",
        Kind::Int,
        "send a project this small whole (0: never)",
    ),
    key(
        "checks.sandbox",
        "PAPAYU_SANDBOX",
        Kind::Str,
        "auto: confine checks and tests where the machine can; off",
    ),
    key(
        LOCAL_MODEL,
        "PAPAYU_LOCAL_MODEL",
        Kind::Str,
        "a GGUF file (or a catalogue name) for the in-process model",
    ),
    key(
        LOCAL_THREADS,
        "PAPAYU_LOCAL_THREADS",
        Kind::Int,
        "the in-process model's CPU threads (default: every core)",
    ),
    key(
        "local.edit_style",
        "PAPAYU_LOCAL_EDIT_STYLE",
        Kind::Str,
        "whole_file (default) | search_replace | unified_diff",
    ),
    key(
        GIT_COMMIT,
        "PAPAYU_GIT_COMMIT",
        Kind::Bool,
        "commit each applied transaction (as --commit does)",
    ),
    Key {
        name: UI_THEME,
        var: None,
        kind: Kind::Str,
        in_files: true,
        help: "the UI's colour theme: light | dark | system",
    },
];

/// The key named `name`.
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

/// The key whose variable is `var`.
pub fn by_var(var: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.var == Some(var))
}
