//! Limits and knobs, all passed in by the caller (libraries never read the environment).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use papayu_validate::Policy;

use crate::Language;

/// One tool whose version the `env` block reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolProbe {
    /// Name shown in the block (`rustc`).
    pub name: String,
    /// Program to run.
    pub program: String,
    /// Its arguments (`--version`).
    pub args: Vec<String>,
    /// The language whose projects need this tool: the probe is skipped in a project that
    /// shows other languages and not this one ([`Project::languages`](crate::Project::languages)).
    /// `None`: probed in every project.
    pub language: Option<Language>,
}

impl ToolProbe {
    /// A probe running `program args...`, shown as `name`.
    pub fn new(name: &str, program: &str, args: &[&str]) -> Self {
        Self {
            name: name.to_owned(),
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            language: None,
        }
    }

    /// The same probe, run only in projects that show `language` (or no language at all).
    #[must_use]
    pub fn for_language(mut self, language: Language) -> Self {
        self.language = Some(language);
        self
    }

    /// The SPEC §6.1 probes: rustc, cargo, python3, node, npm, go — each tied to its language,
    /// so a Python project is not kept waiting for `npm --version` (DECISIONS D51).
    pub fn defaults() -> Vec<ToolProbe> {
        vec![
            ToolProbe::new("rustc", "rustc", &["--version"]).for_language(Language::Rust),
            ToolProbe::new("cargo", "cargo", &["--version"]).for_language(Language::Rust),
            ToolProbe::new("python3", "python3", &["--version"]).for_language(Language::Python),
            ToolProbe::new("node", "node", &["--version"]).for_language(Language::Node),
            ToolProbe::new("npm", "npm", &["--version"]).for_language(Language::Node),
            ToolProbe::new("go", "go", &["version"]).for_language(Language::Go),
        ]
    }
}

/// Every limit of the context layer. [`Default`] gives the SPEC §6 values; a frontend maps
/// `PAPAYU_CONTEXT_MAX_FILES|FILE_CHARS|TOTAL_CHARS|LOG_CHARS` onto the first four fields.
#[derive(Debug, Clone)]
pub struct ContextConfig {
    /// At most this many FILE blocks carrying content survive the diet (8).
    pub max_files: usize,
    /// A FILE (or search/env) block body longer than this is cut 60/40 around the marker (20 000).
    pub max_file_chars: usize,
    /// Budget for the whole rendered context, in characters (120 000).
    pub max_total_chars: usize,
    /// A LOGS block body longer than this is cut 60/40 around the marker (12 000).
    pub max_log_chars: usize,
    /// A FILE block the model asked for keeps at least this many body characters (4 000); this
    /// is the one case where the context may exceed `max_total_chars`.
    pub requested_file_floor_chars: usize,
    /// Search returns at most this many hits (50).
    pub max_search_hits: usize,
    /// A displayed search line is cut to this many characters (300).
    pub search_line_max_chars: usize,
    /// Threads for the search walk; 0 lets the walker choose (as ripgrep does).
    pub search_threads: usize,
    /// `read_file` without `end_line` shows this many lines (200).
    pub read_default_lines: u64,
    /// `logs` without `last_n` shows this many lines (200).
    pub logs_default_last_n: u64,
    /// Files larger than this are not read (8 MiB); log files are read from their last
    /// `max_file_bytes` only.
    pub max_file_bytes: u64,
    /// Per-probe timeout of the `env` block (3 s); probes run concurrently.
    pub env_probe_timeout: Duration,
    /// Tools the `env` block reports.
    pub env_probes: Vec<ToolProbe>,
    /// A file where the `env` block remembers each tool's version between runs, keyed by the
    /// executable (path, size, modification time), its arguments, the version-pin files of the
    /// project and the directories above it, and [`tool_selectors`](Self::tool_selectors);
    /// for a day at most, ten minutes for dispatchers (rustup proxies, version-manager shims).
    /// `None`: every probe runs every time.
    pub env_probe_memory: Option<PathBuf>,
    /// The environment variables that choose a toolchain (`RUSTUP_TOOLCHAIN`, `PYENV_VERSION`,
    /// `GOTOOLCHAIN`, …) as the frontend read them: part of each remembered version's key.
    pub tool_selectors: BTreeMap<String, String>,
    /// The `PATH` the probes run with, to find each executable for the memory's key (a library
    /// never reads the environment). `None`: nothing is remembered.
    pub tool_search_path: Option<OsString>,
    /// Named log sources (`.papa-yu/project.json` `log_files`): name → project-relative path.
    pub log_files: BTreeMap<String, String>,
    /// Auto-gathering reads this many lines either side of a stack frame (80).
    pub auto_radius_lines: u64,
    /// Auto-gathering reads at most this many frame snippets (10).
    pub auto_max_frames: usize,
    /// Each manifest attached for an import error is capped to this many characters (4 000).
    pub manifest_max_chars: usize,
    /// The base context's project map has at most this many lines; deeper directories are
    /// summarised first (60).
    pub map_max_entries: usize,
    /// The map marks this many most recently modified files (5).
    pub map_recent_files: usize,
    /// The base context reads at most this many files the goal points at (4).
    pub goal_max_files: usize,
    /// A project whose text files come to at most this many bytes in all is sent whole in the
    /// base context (16 000; 0: never).
    pub small_project_bytes: u64,
    /// The active virtual environment (`VIRTUAL_ENV` of the frontend's environment), shown in
    /// the `env` block.
    pub virtual_env: Option<String>,
    /// The project policy (`.papa-yu/policy.json`): its protected paths — SPEC §4 built-ins plus
    /// the project's globs — are never read, searched or sent.
    pub policy: Policy,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            max_files: 8,
            max_file_chars: 20_000,
            max_total_chars: 120_000,
            max_log_chars: 12_000,
            requested_file_floor_chars: 4_000,
            max_search_hits: 50,
            search_line_max_chars: 300,
            search_threads: 0,
            read_default_lines: 200,
            logs_default_last_n: 200,
            max_file_bytes: 8 * 1024 * 1024,
            env_probe_timeout: Duration::from_secs(3),
            env_probes: ToolProbe::defaults(),
            env_probe_memory: None,
            tool_selectors: BTreeMap::new(),
            tool_search_path: None,
            log_files: BTreeMap::new(),
            auto_radius_lines: 80,
            auto_max_frames: 10,
            manifest_max_chars: 4_000,
            map_max_entries: 60,
            map_recent_files: 5,
            goal_max_files: 4,
            small_project_bytes: 16_000,
            virtual_env: None,
            policy: Policy::default(),
        }
    }
}
