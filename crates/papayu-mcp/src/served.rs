//! [`Served`]: the project one server serves, opened once — the transaction engine (recovery
//! ran on open), the confined reader, the project policy and the write options.

use std::time::Duration;

use camino::Utf8PathBuf;
use papayu_context::ContextConfig;
use papayu_patch::Sandbox;
use papayu_protocol::ProtocolVersion;
use papayu_validate::Policy;

use crate::error::OpenError;
use crate::options::McpOptions;

/// Where the project's policy lives (the same file the CLI and the agent read).
const POLICY_FILE: &str = ".papa-yu/policy.json";

/// The project and everything a tool call needs to reach it. Cheap to share: calls run on
/// blocking threads with an `Arc` of it.
#[derive(Debug)]
pub(crate) struct Served {
    /// The canonical project root.
    pub root: Utf8PathBuf,
    /// The transaction engine.
    pub patch: papayu_patch::Project,
    /// The confined reader (`read_file`, `search`).
    pub context: papayu_context::Project,
    /// The context limits, with the project's policy.
    pub context_config: ContextConfig,
    /// The project's policy (protected paths, extensions, limits).
    pub policy: Policy,
    /// Plans that name no version are read under this one.
    pub protocol: ProtocolVersion,
    /// `PAPAYU_NORMALIZE_EOL=lf`.
    pub normalize_eol_lf: bool,
    /// How check commands are confined.
    pub sandbox: Sandbox,
    /// The default check timeout.
    pub check_timeout: Duration,
}

impl Served {
    /// Open the project of `options`: canonical root, policy, recovery of any unfinished
    /// transaction (so a crash of an earlier session leaves nothing half-written).
    pub(crate) fn open(options: &McpOptions) -> Result<Served, OpenError> {
        if !matches!(options.protocol, ProtocolVersion::V2 | ProtocolVersion::V3) {
            return Err(OpenError::Protocol {
                version: options.protocol.number(),
            });
        }
        // Canonicalise first: every later path is joined to the same root.
        let probe = papayu_context::Project::open(&options.root, ContextConfig::default())?;
        let root = probe.root().to_owned();
        let policy = load_policy(&root)?;
        let mut context_config = options.context.clone();
        context_config.policy = policy.clone();
        let context = papayu_context::Project::open(&root, context_config.clone())?;
        let patch = papayu_patch::Project::open(root.as_std_path())?;
        Ok(Served {
            root,
            patch,
            context,
            context_config,
            policy,
            protocol: options.protocol,
            normalize_eol_lf: options.normalize_eol_lf,
            sandbox: options.sandbox.clone(),
            check_timeout: options.check_timeout,
        })
    }
}

/// The project's `.papa-yu/policy.json`, or the defaults when there is none.
fn load_policy(root: &camino::Utf8Path) -> Result<Policy, OpenError> {
    let path = root.join(POLICY_FILE);
    match fs_err::read_to_string(&path) {
        Ok(text) => Policy::from_json(&text).map_err(|e| OpenError::Policy {
            path,
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Policy::default()),
        Err(e) => Err(OpenError::Policy {
            path,
            message: e.to_string(),
        }),
    }
}
