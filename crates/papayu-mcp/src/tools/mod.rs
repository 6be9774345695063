//! The tools: their catalogue (name, description for a model, input schema, hints) and one file
//! per family of jobs. It touches the project only through papayu-patch, -context and -agent.

mod agent;
pub(crate) mod args;
mod files;
mod plan;
pub(crate) mod reply;
mod revert;

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub(crate) use agent::AgentSlot;
pub(crate) use reply::{ArgError, Reply};

/// Every tool the server knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum McpTool {
    /// Check a plan against every rule; every violation with its code.
    ValidatePlan,
    /// Per-file diffs, hunk tiers and blocked actions, writing nothing.
    PreviewPlan,
    /// Apply a plan all-or-nothing; the transaction id.
    ApplyPlan,
    /// One file changed by a diff, anchored edits or a line range, as a transaction.
    ApplyPatch,
    /// Revert the last transaction.
    Undo,
    /// Re-apply the last undone transaction.
    Redo,
    /// The undo and redo stacks.
    History,
    /// A file's text and the sha256 of its bytes.
    ReadFile,
    /// Matching lines in the project.
    Search,
    /// papayu's context requests, auto-gathering and diet.
    Context,
    /// A plan for a goal from papayu's own model (needs a provider).
    PlanGoal,
    /// papayu's verified fix loop for a goal (needs a provider).
    RunGoal,
}

impl McpTool {
    /// Every tool, in the order they are listed.
    pub const ALL: [McpTool; 12] = [
        McpTool::ValidatePlan,
        McpTool::PreviewPlan,
        McpTool::ApplyPlan,
        McpTool::ApplyPatch,
        McpTool::Undo,
        McpTool::Redo,
        McpTool::History,
        McpTool::ReadFile,
        McpTool::Search,
        McpTool::Context,
        McpTool::PlanGoal,
        McpTool::RunGoal,
    ];

    /// The tool's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            McpTool::ValidatePlan => "validate_plan",
            McpTool::PreviewPlan => "preview_plan",
            McpTool::ApplyPlan => "apply_plan",
            McpTool::ApplyPatch => "apply_patch",
            McpTool::Undo => "undo",
            McpTool::Redo => "redo",
            McpTool::History => "history",
            McpTool::ReadFile => "read_file",
            McpTool::Search => "search",
            McpTool::Context => "context",
            McpTool::PlanGoal => "plan_goal",
            McpTool::RunGoal => "run_goal",
        }
    }

    /// The tool named `name`.
    pub fn from_name(name: &str) -> Option<McpTool> {
        McpTool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the tool may change the project (not offered with `--read-only`). `plan_goal`
    /// writes papayu's saved plan and traces, so it counts.
    pub fn writes(self) -> bool {
        matches!(
            self,
            McpTool::ApplyPlan
                | McpTool::ApplyPatch
                | McpTool::Undo
                | McpTool::Redo
                | McpTool::PlanGoal
                | McpTool::RunGoal
        )
    }

    /// Whether the tool needs a configured provider.
    pub fn needs_model(self) -> bool {
        matches!(self, McpTool::PlanGoal | McpTool::RunGoal)
    }

    /// What the tool does, written for the model that calls it.
    pub fn description(self) -> &'static str {
        match self {
            McpTool::ValidatePlan => {
                "Check a plan against every papayu rule without touching the disk; returns every \
                 violation with its stable code (ERR_INVALID_PATH, ERR_PROTECTED_PATH, \
                 ERR_BASE_SHA256_INVALID, ERR_ACTION_CONFLICT, ...). A plan is \
                 {\"actions\": [...], \"summary\": \"...\"}; action kinds: CREATE_FILE {path, content}, \
                 PATCH_FILE {path, patch, base_sha256}, EDIT_FILE {path, edits, base_sha256}, \
                 REPLACE_RANGE {path, start_line, end_line, content, base_sha256}, DELETE_FILE {path}, \
                 CREATE_DIR {path}, DELETE_DIR {path}. Paths are project-relative; .env, keys, .git/ \
                 and .papa-yu/ are refused. Changing an existing file always needs the base_sha256 \
                 that read_file returned (UPDATE_FILE of an existing file is refused)."
            }
            McpTool::PreviewPlan => {
                "Show what apply_plan would do, writing nothing: per action its unified diff and \
                 byte counts, for PATCH_FILE the line each hunk landed on and how (tier: exact, \
                 offset, trailing_whitespace, indentation), and every action that would be blocked \
                 with its code (ERR_BASE_MISMATCH / ERR_EDIT_BASE_MISMATCH when the file changed since you read it, \
                 ERR_PATCH_APPLY_FAILED, ERR_EDIT_ANCHOR_NOT_FOUND, ERR_FILE_EXISTS, ...). A plan \
                 that breaks a rule is rejected with every violation, as validate_plan does."
            }
            McpTool::ApplyPlan => {
                "Apply a plan all-or-nothing: validate it, compute every new file in memory, \
                 journal the originals, write each file atomically, run the optional checks, \
                 commit; on any error roll back so the project is byte-for-byte as before, and \
                 answer the error's code. Edits of existing files need the base_sha256 read_file \
                 returned: a file that changed since is ERR_BASE_MISMATCH (ERR_EDIT_BASE_MISMATCH for \
                 EDIT_FILE), never merged. DELETE_FILE \
                 and DELETE_DIR need confirm_deletes: true. Returns the transaction id (undo \
                 reverts it)."
            }
            McpTool::ApplyPatch => {
                "Change one existing file as a transaction (journaled, all-or-nothing, undoable \
                 like apply_plan) with exactly one of: a unified diff (patch), anchored replacements \
                 (edits), or a line range (replace_range). base_sha256 must be the sha256 read_file \
                 returned. A hunk that fits several places equally well is refused \
                 (ERR_PATCH_APPLY_FAILED), never guessed. Returns the transaction id and where each \
                 hunk landed."
            }
            McpTool::Undo => {
                "Revert the most recent transaction (apply_plan, apply_patch, undo and redo are \
                 each one). Refused with ERR_UNDO_CONFLICT, listing the files, when they changed \
                 since — unless force; ERR_NOTHING_TO_UNDO when there is none."
            }
            McpTool::Redo => {
                "Re-apply the most recently undone transaction (same conflict rule as undo); \
                 ERR_NOTHING_TO_UNDO when there is none."
            }
            McpTool::History => {
                "The undo and redo stacks: each transaction's id, kind (apply, undo, redo), time, \
                 actions and touched paths, the most recent first."
            }
            McpTool::ReadFile => {
                "Read a project file: its text (or the lines start_line..end_line) and the sha256 \
                 of the whole file's bytes — the base_sha256 to send with PATCH_FILE, EDIT_FILE, \
                 REPLACE_RANGE or apply_patch. Protected files (.env, keys, .git/, .papa-yu/) and \
                 paths leaving the project are refused with a code."
            }
            McpTool::Search => {
                "Search the project's text files (literal unless regex; .gitignore honoured, \
                 protected and binary files skipped): at most 50 matching lines {path, line, text}, \
                 sorted by path then line; more: true when there were others."
            }
            McpTool::Context => {
                "papayu's context engine: fulfil context requests (read_file, search, logs, env) \
                 and gather what an error text points at (stack frames, failing tests, manifests), \
                 trimmed to papayu's character budget; or, given a goal, papayu's base context for \
                 it (the project map and the files the goal names). Returns the rendered text, the \
                 blocks and the files it holds with their sha256."
            }
            McpTool::PlanGoal => {
                "Ask papayu's own configured model for a plan for a goal — diagnosis, steps, risks, \
                 questions — after it reads what it needs of the project. Nothing in the project is \
                 written."
            }
            McpTool::RunGoal => {
                "Hand a goal to papayu's verified fix loop (its own configured model): it runs the \
                 project's tests, asks for a change, applies it as a transaction whose check is \
                 those tests and keeps it only when they confirm it — else rolls it back and tries \
                 again, up to attempts. Before the first call it carries out a rename or move the \
                 goal names in words and tries its own first small edits of the code the failing \
                 tests exercise; after the first change, more of those edits (each tested: \
                 mutants). Ends with a verified change (undo reverts it) or the project exactly as \
                 it was."
            }
        }
    }

    fn title(self) -> &'static str {
        match self {
            McpTool::ValidatePlan => "Validate a plan",
            McpTool::PreviewPlan => "Preview a plan",
            McpTool::ApplyPlan => "Apply a plan (all-or-nothing)",
            McpTool::ApplyPatch => "Patch one file (transaction)",
            McpTool::Undo => "Undo the last transaction",
            McpTool::Redo => "Redo the last undone transaction",
            McpTool::History => "Transaction history",
            McpTool::ReadFile => "Read a file with its sha256",
            McpTool::Search => "Search the project",
            McpTool::Context => "Gather context",
            McpTool::PlanGoal => "Plan a goal (papayu's model)",
            McpTool::RunGoal => "Solve a goal, verified by the tests (papayu's model)",
        }
    }

    /// The tool's `inputSchema`.
    pub fn input_schema(self) -> Arc<JsonObject> {
        match self {
            McpTool::ValidatePlan | McpTool::PreviewPlan => input_schema::<args::PlanArgs>(),
            McpTool::ApplyPlan => input_schema::<args::ApplyPlanArgs>(),
            McpTool::ApplyPatch => input_schema::<args::ApplyPatchArgs>(),
            McpTool::Undo | McpTool::Redo => input_schema::<args::RevertArgs>(),
            McpTool::History => input_schema::<args::NoArgs>(),
            McpTool::ReadFile => input_schema::<args::ReadFileArgs>(),
            McpTool::Search => input_schema::<args::SearchArgs>(),
            McpTool::Context => input_schema::<args::ContextArgs>(),
            McpTool::PlanGoal => input_schema::<args::GoalArgs>(),
            McpTool::RunGoal => input_schema::<args::RunGoalArgs>(),
        }
    }

    /// The tool as `tools/list` shows it.
    pub fn definition(self) -> Tool {
        let writes = self.writes();
        let annotations = ToolAnnotations::with_title(self.title())
            .read_only(!writes)
            .destructive(matches!(
                self,
                McpTool::ApplyPlan | McpTool::Undo | McpTool::Redo | McpTool::RunGoal
            ))
            .idempotent(!writes)
            .open_world(self.needs_model());
        Tool::new(self.name(), self.description(), self.input_schema())
            .with_title(self.title())
            .with_annotations(annotations)
    }
}

/// The JSON schema (draft 2020-12, as MCP asks) of the arguments `T`.
fn input_schema<T: JsonSchema>() -> Arc<JsonObject> {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut object = match serde_json::to_value(schema) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    };
    // The struct's own name and doc are noise to the model; the tool has its description.
    object.remove("title");
    object.remove("description");
    object
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    Arc::new(object)
}

/// Read `T` from a call's arguments (absent arguments are `{}`); a mismatch is an [`ArgError`]
/// naming the field.
pub(crate) fn parse_args<T: DeserializeOwned>(
    tool: McpTool,
    arguments: Option<JsonObject>,
) -> Result<T, ArgError> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| {
        ArgError::new(
            tool.name(),
            format!("invalid arguments for {}: {e}", tool.name()),
        )
    })
}
