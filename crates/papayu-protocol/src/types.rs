//! Wire types of protocol v1/v2/v3 (SPEC §3).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A protocol version (SPEC §3.1). v2 is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ProtocolVersion {
    /// Full-content actions only; root may be an array.
    V1,
    /// v1 + PATCH_FILE and REPLACE_RANGE (seed 001 §B); object root only; unknown root
    /// fields rejected.
    #[default]
    V2,
    /// v2 + EDIT_FILE.
    V3,
}

impl ProtocolVersion {
    /// All versions, oldest first.
    pub const ALL: [ProtocolVersion; 3] = [Self::V1, Self::V2, Self::V3];

    /// The version number (1, 2 or 3).
    pub const fn number(self) -> u8 {
        match self {
            Self::V1 => 1,
            Self::V2 => 2,
            Self::V3 => 3,
        }
    }

    /// The version for a number, or `None` if it is not 1, 2 or 3.
    pub const fn from_number(n: u8) -> Option<Self> {
        match n {
            1 => Some(Self::V1),
            2 => Some(Self::V2),
            3 => Some(Self::V3),
            _ => None,
        }
    }

    /// The action kinds this version allows, in canonical order.
    pub fn kinds(self) -> &'static [ActionKind] {
        use ActionKind::*;
        const V1: &[ActionKind] = &[CreateFile, CreateDir, UpdateFile, DeleteFile, DeleteDir];
        const V2: &[ActionKind] = &[
            CreateFile,
            CreateDir,
            UpdateFile,
            DeleteFile,
            DeleteDir,
            PatchFile,
            ReplaceRange,
        ];
        const V3: &[ActionKind] = &[
            CreateFile,
            CreateDir,
            UpdateFile,
            DeleteFile,
            DeleteDir,
            PatchFile,
            EditFile,
            ReplaceRange,
        ];
        match self {
            Self::V1 => V1,
            Self::V2 => V2,
            Self::V3 => V3,
        }
    }

    /// Whether `kind` is part of this version.
    pub fn allows(self, kind: &ActionKind) -> bool {
        self.kinds().contains(kind)
    }

    /// Whether the root may be a bare array of actions (v1, v3).
    pub const fn allows_array_root(self) -> bool {
        !matches!(self, Self::V2)
    }

    /// Whether `proposed_changes.actions` is an accepted location for actions (v1, v3).
    pub const fn allows_proposed_actions(self) -> bool {
        !matches!(self, Self::V2)
    }

    /// Whether unknown root fields are rejected (v2 only).
    pub const fn denies_unknown_root_fields(self) -> bool {
        matches!(self, Self::V2)
    }

    /// Whether an action field that does not belong to its kind is an error (v2, v3).
    pub const fn denies_foreign_action_fields(self) -> bool {
        !matches!(self, Self::V1)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.number())
    }
}

/// The kind of a file action. Unknown strings are kept (never silently turned into a
/// CREATE_FILE, as the original did) so validation can report them with `ERR_UNKNOWN_KIND`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActionKind {
    /// Create a new file with `content`.
    CreateFile,
    /// Create a directory (no-op when it exists).
    CreateDir,
    /// Replace a file's whole content.
    UpdateFile,
    /// Delete a file (no-op when missing).
    DeleteFile,
    /// Delete a directory, recursively.
    DeleteDir,
    /// Apply a unified diff to a file whose hash is `base_sha256` (v2+).
    PatchFile,
    /// Apply anchored search/replace edits (v3).
    EditFile,
    /// Replace a 1-based inclusive line range (v2+).
    ReplaceRange,
    /// A kind string papayu does not know; empty when `kind` was missing.
    Unknown(String),
}

impl ActionKind {
    /// Every known kind.
    pub const KNOWN: [ActionKind; 8] = [
        Self::CreateFile,
        Self::CreateDir,
        Self::UpdateFile,
        Self::DeleteFile,
        Self::DeleteDir,
        Self::PatchFile,
        Self::EditFile,
        Self::ReplaceRange,
    ];

    /// The wire name, e.g. `"PATCH_FILE"` (the raw string for an unknown kind).
    pub fn as_str(&self) -> &str {
        match self {
            Self::CreateFile => "CREATE_FILE",
            Self::CreateDir => "CREATE_DIR",
            Self::UpdateFile => "UPDATE_FILE",
            Self::DeleteFile => "DELETE_FILE",
            Self::DeleteDir => "DELETE_DIR",
            Self::PatchFile => "PATCH_FILE",
            Self::EditFile => "EDIT_FILE",
            Self::ReplaceRange => "REPLACE_RANGE",
            Self::Unknown(s) => s,
        }
    }

    /// Parse a wire name; anything else becomes [`ActionKind::Unknown`].
    pub fn parse(s: &str) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|k| k.as_str() == s)
            .unwrap_or_else(|| Self::Unknown(s.to_owned()))
    }

    /// Whether the action writes file content (CREATE/UPDATE/PATCH/EDIT/REPLACE_RANGE).
    pub fn is_file_writer(&self) -> bool {
        matches!(
            self,
            Self::CreateFile
                | Self::UpdateFile
                | Self::PatchFile
                | Self::EditFile
                | Self::ReplaceRange
        )
    }

    /// Whether the action modifies an existing file against a base hash (PATCH/EDIT/REPLACE_RANGE).
    pub fn needs_base(&self) -> bool {
        matches!(self, Self::PatchFile | Self::EditFile | Self::ReplaceRange)
    }

    /// Whether the action deletes something.
    pub fn is_delete(&self) -> bool {
        matches!(self, Self::DeleteFile | Self::DeleteDir)
    }

    /// The action fields (besides `kind` and `path`) that belong to this kind.
    pub fn fields(&self) -> &'static [&'static str] {
        match self {
            Self::CreateFile | Self::UpdateFile => &["content"],
            Self::CreateDir | Self::DeleteFile | Self::DeleteDir => &[],
            Self::PatchFile => &["patch", "base_sha256"],
            Self::EditFile => &["edits", "base_sha256"],
            Self::ReplaceRange => &["start_line", "end_line", "content", "base_sha256"],
            Self::Unknown(_) => &[],
        }
    }
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ActionKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ActionKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::parse(&String::deserialize(d)?))
    }
}

impl Default for ActionKind {
    /// A missing `kind`: an unknown, empty kind (never CREATE_FILE).
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

/// One file action proposed by the model (SPEC §3.2).
///
/// Every field but `kind` and `path` is optional on the wire; which ones a kind needs is
/// checked by papayu-validate, which reports a precise code instead of a schema error.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Action {
    /// What to do. Missing on the wire → [`ActionKind::Unknown`] with an empty name.
    #[serde(default)]
    pub kind: ActionKind,
    /// Project-relative path as the model wrote it (validated by papayu-validate).
    #[serde(default)]
    pub path: String,
    /// Full new content (CREATE_FILE, UPDATE_FILE) or replacement lines (REPLACE_RANGE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Unified diff (PATCH_FILE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// sha256 (64 lowercase hex) of the file bytes the edit was made against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_sha256: Option<String>,
    /// Anchored edits (EDIT_FILE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Vec<Edit>>,
    /// First line to replace, 1-based (REPLACE_RANGE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
    /// Last line to replace, 1-based inclusive (REPLACE_RANGE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// Fields not in the protocol, kept so validation can name them.
    #[serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Value>,
}

impl Action {
    /// A new action of `kind` on `path` with no other fields.
    pub fn new(kind: ActionKind, path: impl Into<String>) -> Self {
        Self {
            kind,
            path: path.into(),
            ..Self::default()
        }
    }

    /// Names of the optional fields that are present, in wire order.
    pub fn present_fields(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let fixed = [
            ("content", self.content.is_some()),
            ("patch", self.patch.is_some()),
            ("base_sha256", self.base_sha256.is_some()),
            ("edits", self.edits.is_some()),
            ("start_line", self.start_line.is_some()),
            ("end_line", self.end_line.is_some()),
        ];
        out.extend(fixed.iter().filter(|(_, p)| *p).map(|(n, _)| *n));
        out.extend(self.extra.keys().map(String::as_str));
        out
    }

    /// Bytes of payload this action carries (content + patch + edit texts), for limits.
    pub fn payload_bytes(&self) -> usize {
        let edits: usize = self
            .edits
            .iter()
            .flatten()
            .map(|e| e.anchor.len() + e.before.len() + e.after.len())
            .sum();
        self.content.as_ref().map_or(0, String::len)
            + self.patch.as_ref().map_or(0, String::len)
            + edits
    }
}

/// The only EDIT_FILE operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EditOp {
    /// Replace `before` (found after `anchor`) with `after`.
    #[default]
    Replace,
}

/// One EDIT_FILE edit (SPEC §3.2, §5.3).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Always `replace`.
    #[serde(default)]
    pub op: EditOp,
    /// Text that locates the edit; must occur (exactly once unless `occurrence` is given).
    pub anchor: String,
    /// Text to replace, searched within 4000 characters after the anchor's start.
    pub before: String,
    /// Replacement text.
    pub after: String,
    /// 1-based occurrence of the anchor (and of `before` after it) to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurrence: Option<u32>,
    /// Lines of context the model looked at (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_lines: Option<u32>,
}

/// A request for more context (SPEC §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContextRequest {
    /// Lines of a project file.
    ReadFile {
        /// Project-relative path.
        path: String,
        /// First line, 1-based (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start_line: Option<u64>,
        /// Last line, inclusive (default start + 199).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end_line: Option<u64>,
    },
    /// A literal search over the project.
    Search {
        /// Text to search for.
        query: String,
        /// Glob restricting the files searched.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        glob: Option<String>,
    },
    /// The tail of a log source (`check` or a configured log file).
    Logs {
        /// Source name.
        source: String,
        /// Number of lines (default 200).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_n: Option<u64>,
    },
    /// OS, architecture, tool versions, package manager.
    Env,
    /// Online research (when the user enabled it): search the web, fetch and extract the top
    /// pages, and answer with a capped summary that cites its sources.
    WebSearch {
        /// What to search for (secrets are redacted before it leaves the machine).
        query: String,
        /// Restrict the search to these domains (`include_domains`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        domains: Vec<String>,
    },
}

/// The `mode` field of the fix-plan extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResponseMode {
    /// A plan for review; nothing is applied.
    #[serde(rename = "fix-plan")]
    FixPlan,
    /// Final changes to apply.
    #[serde(rename = "apply")]
    Apply,
}

/// One step of a fix plan.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlanStep {
    /// Short step title.
    #[serde(default)]
    pub step: String,
    /// What the step does.
    #[serde(default)]
    pub details: String,
}

/// `proposed_changes` of the fix-plan extension.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProposedChanges {
    /// A unified diff (informational; papayu applies actions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Actions; when present they win over the root `actions` (v1, v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<Action>>,
    /// Commands the model suggests running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands_to_run: Vec<String>,
}

/// A model response (SPEC §3.2), whatever its root shape on the wire.
///
/// A bare action array parses into `actions` with everything else empty.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Response {
    /// Root actions.
    #[serde(default)]
    pub actions: Vec<Action>,
    /// Human summary; in APPLY with no actions it must start with `NO_CHANGES:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Requests for more context.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_requests: Vec<ContextRequest>,
    /// Dotted memory keys to set (validated by papayu-memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_patch: Option<BTreeMap<String, Value>>,
    /// `fix-plan` or `apply`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ResponseMode>,
    /// Questions for the user (at most two are shown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
    /// Plan steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<PlanStep>,
    /// Proposed changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_changes: Option<ProposedChanges>,
    /// A unified diff (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Commands the model suggests running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands_to_run: Vec<String>,
    /// How to verify the change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verification: Vec<String>,
    /// Risks of the change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risks: Vec<String>,
    /// How to roll back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rollback: Vec<String>,
    /// Unknown root fields (kept in v1/v3; v2 rejects them before this point).
    #[serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Value>,
}

impl Response {
    /// A response holding only `actions`.
    pub fn from_actions(actions: Vec<Action>) -> Self {
        Self {
            actions,
            ..Self::default()
        }
    }

    /// The actions papayu acts on: `proposed_changes.actions` when present, else root `actions`.
    pub fn effective_actions(&self) -> &[Action] {
        match self
            .proposed_changes
            .as_ref()
            .and_then(|p| p.actions.as_deref())
        {
            Some(actions) => actions,
            None => &self.actions,
        }
    }

    /// JSON pointer of the effective action list (`/proposed_changes/actions` or `/actions`).
    pub fn effective_actions_pointer(&self) -> &'static str {
        if self
            .proposed_changes
            .as_ref()
            .is_some_and(|p| p.actions.is_some())
        {
            "/proposed_changes/actions"
        } else {
            "/actions"
        }
    }

    /// Every command the model suggests running: root `commands_to_run`, then
    /// `proposed_changes.commands_to_run` (seed 002's fix-plan puts them there), each once.
    pub fn commands(&self) -> Vec<String> {
        let proposed = self
            .proposed_changes
            .iter()
            .flat_map(|p| p.commands_to_run.iter());
        let mut out: Vec<String> = Vec::new();
        for c in self.commands_to_run.iter().chain(proposed) {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        out
    }

    /// Whether the summary declares that nothing needs to change (`NO_CHANGES:` prefix).
    pub fn is_no_changes(&self) -> bool {
        self.summary
            .as_deref()
            .is_some_and(|s| s.trim_start().starts_with("NO_CHANGES:"))
    }
}

/// Root fields of the response object, in wire order (used by schemas and drift tests).
pub const ROOT_FIELDS: &[&str] = &[
    "actions",
    "summary",
    "context_requests",
    "memory_patch",
    "mode",
    "questions",
    "plan",
    "proposed_changes",
    "patch",
    "commands_to_run",
    "verification",
    "risks",
    "rollback",
];

/// Optional action fields (besides `kind` and `path`), in wire order.
pub const ACTION_FIELDS: &[&str] = &[
    "content",
    "patch",
    "base_sha256",
    "edits",
    "start_line",
    "end_line",
];

/// The 13 whitelisted `memory_patch` keys (SPEC §8) with their JSON types.
pub const MEMORY_PATCH_KEYS: &[(&str, MemoryValueKind)] = &[
    (
        "user.preferred_style",
        MemoryValueKind::Enum(&["brief", "normal", "verbose"]),
    ),
    (
        "user.ask_budget",
        MemoryValueKind::Integer { min: 0, max: 2 },
    ),
    (
        "user.risk_tolerance",
        MemoryValueKind::Enum(&["low", "medium", "high"]),
    ),
    ("user.default_language", MemoryValueKind::String),
    (
        "user.output_format",
        MemoryValueKind::Enum(&["patch_first", "plan_first", "plan", "apply"]),
    ),
    ("project.default_test_command", MemoryValueKind::String),
    ("project.default_lint_command", MemoryValueKind::String),
    ("project.default_format_command", MemoryValueKind::String),
    ("project.package_manager", MemoryValueKind::String),
    ("project.build_command", MemoryValueKind::String),
    ("project.src_roots", MemoryValueKind::StringList),
    ("project.test_roots", MemoryValueKind::StringList),
    ("project.ci_notes", MemoryValueKind::String),
];

/// The type a whitelisted memory key accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryValueKind {
    /// Any string.
    String,
    /// One of the listed strings.
    Enum(&'static [&'static str]),
    /// An integer in `min..=max`.
    Integer {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// An array of strings.
    StringList,
}
