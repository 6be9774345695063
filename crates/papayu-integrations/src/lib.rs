//! papayu's integrations with the world outside the project: online research (Tavily,
//! SearXNG), design trends, Snyk Code and SARIF findings, the architecture summary, the
//! agent-sync document and allow-listed personal automation — each off until configured.
//! It touches the network only for an enabled integration, and the disk only under the
//! project's `.papa-yu/` and the research page cache.

pub mod analyze;
pub mod architecture;
pub mod automation;
pub mod batch;
pub mod config;
pub mod error;
pub mod extras;
pub mod findings;
pub mod research;
pub mod sync;
pub mod trends;

use std::sync::Arc;

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use papayu_agent::Agent;

pub use crate::config::{IntegrationsConfig, SearchBackend};
pub use crate::error::{
    AnalyzeError, ArchitectureError, AutomationError, BatchError, FindingsError, ResearchError,
    SyncError,
};

/// Install the integrations on `agent`, the agent of the project at `root`: the context
/// extras (architecture summary, findings, `web_search` and auto research when research is
/// on, the `commands` log source) always, the agent-sync observer when
/// [`IntegrationsConfig::agent_sync`] is on. Every frontend (the CLI, the UI's app) calls this,
/// so a plan made anywhere sees the same context and leaves the same agent-sync document.
pub fn install(agent: &mut Agent, root: &Utf8Path, config: IntegrationsConfig) {
    if config.agent_sync {
        agent.set_observer(Some(Arc::new(sync::SyncObserver::new(config.clone()))));
    }
    agent.set_context_extras(Some(Arc::new(extras::Extras::new(root.to_owned(), config))));
}

/// `relative` as a path inside the project at `root`: refused when it is absolute or climbs
/// out with `..`, so a setting cannot make papayu read or write outside the project.
pub fn project_file(root: &Utf8Path, relative: &str) -> Result<Utf8PathBuf, String> {
    let path = Utf8Path::new(relative.trim());
    if path.as_str().is_empty() {
        return Err("the path is empty".to_owned());
    }
    if path.is_absolute() {
        return Err("must be relative to the project root".to_owned());
    }
    if path
        .components()
        .any(|c| !matches!(c, Utf8Component::Normal(_) | Utf8Component::CurDir))
    {
        return Err("must stay inside the project (no `..`)".to_owned());
    }
    Ok(root.join(path))
}
