//! The saved plan (`.papa-yu/state.json`), written through papayu-fs like every file of papayu's own.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_protocol::{ProtocolVersion, Response};
use serde::{Deserialize, Serialize};

use crate::error::AgentError;

/// Where the saved plan lives, relative to the project root.
pub const STATE_FILE: &str = ".papa-yu/state.json";

/// A PLAN answer kept so that `apply` works in a later process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPlan {
    /// The trace of the PLAN call.
    pub trace_id: String,
    /// When it was saved (ms since the Unix epoch).
    pub created_unix_ms: u64,
    /// The user's goal (prefix stripped).
    pub goal: String,
    /// The protocol version of the plan call.
    pub protocol: u8,
    /// The prompt family.
    pub llm_mode: String,
    /// The accepted PLAN answer.
    pub response: Response,
    /// The context papayu sent during the plan (FILE blocks with their sha256 headers).
    pub context: String,
    /// Files whose content was sent, with the sha256 of the whole file.
    pub sent_files: BTreeMap<String, String>,
    /// What that context came to (the APPLY that re-sends it records the same).
    #[serde(default)]
    pub context_stats: crate::trace::ContextStatsRecord,
}

impl SavedPlan {
    /// The protocol version as the enum.
    pub fn protocol_version(&self) -> ProtocolVersion {
        ProtocolVersion::from_number(self.protocol).unwrap_or_default()
    }

    /// The files the plan was based on whose content changed since (or that are gone), in path
    /// order: a plan with any is stale, and its answer would be judged against files it never
    /// saw.
    pub fn changed_files(&self, root: &Utf8Path) -> Vec<String> {
        self.sent_files
            .iter()
            .filter(|(path, sha)| content_sha(root, path).as_deref() != Some(sha.as_str()))
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// The text of the plan the APPLY request quotes: summary then steps.
    pub fn plan_text(&self) -> String {
        let mut s = self.response.summary.clone().unwrap_or_default();
        for (i, step) in self.response.plan.iter().enumerate() {
            s.push_str(&format!("\n{}. {}: {}", i + 1, step.step, step.details));
        }
        s
    }
}

/// The APPLY answer last previewed for the saved plan, kept so that a declined preview costs no
/// second model call: `apply` judges it again instead, while the files it touches are as they
/// were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviewedAnswer {
    /// The trace of the saved plan it answers.
    pub plan_trace_id: String,
    /// The protocol version it was judged under.
    pub protocol: u8,
    /// The accepted answer, as judged.
    pub text: String,
    /// Every path its actions touch, with the sha256 of its content then (`None`: absent).
    pub bases: BTreeMap<String, Option<String>>,
}

impl PreviewedAnswer {
    /// Whether the files of `root` are still as they were when it was previewed.
    pub fn still_matches(&self, root: &Utf8Path) -> bool {
        self.bases
            .iter()
            .all(|(path, sha)| &content_sha(root, path) == sha)
    }
}

/// The sha256 of the file `path` beneath `root`, `None` when there is no such file.
pub fn content_sha(root: &Utf8Path, path: &str) -> Option<String> {
    fs_err::read(root.join(path))
        .ok()
        .map(|bytes| papayu_protocol::sha256_hex(&bytes))
}

/// The state file's format version: written into every file, so a later format can tell an
/// older one.
const STATE_VERSION: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
struct StateFile {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    saved_plan: Option<SavedPlan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previewed: Option<PreviewedAnswer>,
    #[serde(flatten)]
    other: BTreeMap<String, serde_json::Value>,
}

fn state_path(root: &Utf8Path) -> Utf8PathBuf {
    root.join(STATE_FILE)
}

fn read_state(root: &Utf8Path) -> Result<StateFile, AgentError> {
    let path = state_path(root);
    match fs_err::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| AgentError::State {
            path,
            message: format!("not a papayu state file: {e}"),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StateFile::default()),
        Err(e) => Err(AgentError::Io { path, source: e }),
    }
}

/// The saved plan of the project at `root`, if any.
pub fn load_saved_plan(root: &Utf8Path) -> Result<Option<SavedPlan>, AgentError> {
    Ok(read_state(root)?.saved_plan)
}

/// Save (or with `None` clear) the plan, atomically; other fields of the file are kept, but an
/// answer previewed for the previous plan is dropped.
pub fn store_saved_plan(root: &Utf8Path, plan: Option<&SavedPlan>) -> Result<(), AgentError> {
    let mut state = read_state(root)?;
    state.saved_plan = plan.cloned();
    state.previewed = None;
    write_state(root, state)
}

/// The answer last previewed for the saved plan, if any.
pub fn load_previewed(root: &Utf8Path) -> Result<Option<PreviewedAnswer>, AgentError> {
    Ok(read_state(root)?.previewed)
}

/// Keep the answer previewed for the saved plan (replacing any earlier one).
pub fn store_previewed(root: &Utf8Path, answer: PreviewedAnswer) -> Result<(), AgentError> {
    let mut state = read_state(root)?;
    state.previewed = Some(answer);
    write_state(root, state)
}

fn write_state(root: &Utf8Path, mut state: StateFile) -> Result<(), AgentError> {
    state.version = STATE_VERSION;
    let bytes = serde_json::to_vec_pretty(&state).map_err(|e| AgentError::State {
        path: state_path(root),
        message: e.to_string(),
    })?;
    write_atomic(&state_path(root), &bytes)
}

/// papayu-fs's atomic, durable write, its error as this crate's: how the saved plan, traces
/// and golden traces are written.
pub(crate) fn write_atomic(path: &Utf8Path, bytes: &[u8]) -> Result<(), AgentError> {
    papayu_fs::write_atomic(path, bytes).map_err(|e| AgentError::Io {
        path: path.to_owned(),
        source: e.into_io(),
    })
}
