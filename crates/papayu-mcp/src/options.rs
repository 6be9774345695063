//! What a server is given: the project, its limits and, optionally, a model for papayu's own loop.
//! Plain data; nothing here reads the environment or the disk.

use std::sync::Arc;
use std::time::Duration;

use camino::Utf8PathBuf;
use papayu_agent::AgentConfig;
use papayu_context::ContextConfig;
use papayu_llm::Provider;
use papayu_patch::{DEFAULT_CHECK_TIMEOUT, Sandbox};
use papayu_protocol::{ErrorCode, ProtocolVersion};

/// How a [`PapayuMcp`](crate::PapayuMcp) serves one project.
#[derive(Debug)]
#[non_exhaustive]
pub struct McpOptions {
    /// The project root: every read and every write stays beneath it.
    pub root: Utf8PathBuf,
    /// Expose only the tools that write nothing (`papayu mcp --read-only`).
    pub read_only: bool,
    /// The protocol version plans are read under when a call names none (2 or 3; default 3,
    /// which has every edit kind).
    pub protocol: ProtocolVersion,
    /// Write LF line endings and a final newline (`PAPAYU_NORMALIZE_EOL=lf`).
    pub normalize_eol_lf: bool,
    /// How check commands are confined (they may run code a model wrote).
    pub sandbox: Sandbox,
    /// Timeout of one check command when a call names none.
    pub check_timeout: Duration,
    /// The limits of `read_file`, `search` and `context` (its `policy` is replaced by the
    /// project's `.papa-yu/policy.json` when one exists).
    pub context: ContextConfig,
    /// papayu's own plan→apply loop as a sub-agent (`plan_goal`, `run_goal`); `None` when no
    /// provider is configured, and those tools are not offered.
    pub agent: Option<AgentSetup>,
}

impl McpOptions {
    /// Serve `root` with every tool that needs no model, protocol v3, the default limits.
    pub fn new(root: impl Into<Utf8PathBuf>) -> Self {
        Self {
            root: root.into(),
            read_only: false,
            protocol: ProtocolVersion::V3,
            normalize_eol_lf: false,
            sandbox: Sandbox::None,
            check_timeout: DEFAULT_CHECK_TIMEOUT,
            context: ContextConfig::default(),
            agent: None,
        }
    }

    /// Expose only the tools that write nothing.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// The protocol version of plans that name none (2 or 3).
    pub fn protocol(mut self, version: ProtocolVersion) -> Self {
        self.protocol = version;
        self
    }

    /// Write LF line endings and a final newline.
    pub fn normalize_eol_lf(mut self, on: bool) -> Self {
        self.normalize_eol_lf = on;
        self
    }

    /// Confine check commands with `sandbox`.
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The default timeout of one check command.
    pub fn check_timeout(mut self, timeout: Duration) -> Self {
        self.check_timeout = timeout;
        self
    }

    /// The context limits.
    pub fn context(mut self, context: ContextConfig) -> Self {
        self.context = context;
        self
    }

    /// Offer `plan_goal` and `run_goal`, answered by papayu's own loop with this model.
    pub fn agent(mut self, agent: AgentSetup) -> Self {
        self.agent = Some(agent);
        self
    }
}

/// Builds the provider the first time `plan_goal` or `run_goal` needs it, so an idle server
/// loads no model.
pub type ProviderFactory =
    Arc<dyn Fn() -> Result<Arc<dyn Provider>, ProviderUnavailable> + Send + Sync>;

/// What papayu's own loop needs: its configuration, the user's configuration directory (for
/// the preferences) and the model.
#[non_exhaustive]
pub struct AgentSetup {
    /// The agent configuration (the frontend parsed it from the `PAPAYU_*` variables).
    pub config: AgentConfig,
    /// `<config dir>` holding `papayu/preferences.json`.
    pub config_dir: Utf8PathBuf,
    /// Builds the provider on first use.
    pub provider: ProviderFactory,
}

impl AgentSetup {
    /// The loop with `config`, the preferences under `config_dir`, and the provider `provider`
    /// builds.
    pub fn new(
        config: AgentConfig,
        config_dir: impl Into<Utf8PathBuf>,
        provider: ProviderFactory,
    ) -> Self {
        Self {
            config,
            config_dir: config_dir.into(),
            provider,
        }
    }
}

impl std::fmt::Debug for AgentSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSetup")
            .field("config_dir", &self.config_dir)
            .finish_non_exhaustive()
    }
}

/// The provider could not be built (a model file missing, a bad configuration).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct ProviderUnavailable {
    /// The stable code (`ERR_LLM_CONFIG`, `ERR_MODEL_NOT_FOUND`, …).
    pub code: ErrorCode,
    /// Why, for the client.
    pub message: String,
}

impl ProviderUnavailable {
    /// A provider that cannot be built, with its code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}
