//! The arguments of every tool: one struct each, whose JSON schema (schemars, from these types
//! and their doc comments) is the tool's `inputSchema`. The plan, edit and context-request
//! shapes are papayu-protocol's own schema, so the two never drift.

use papayu_protocol::ProtocolVersion;
use papayu_protocol::schema::{SchemaVariant, schema_value};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{Value, json};

/// `validate_plan` and `preview_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanArgs {
    /// The plan: a JSON object `{"actions": [...], "summary": "..."}` (papayu's plan protocol),
    /// or the same as JSON text.
    #[schemars(schema_with = "plan_schema")]
    pub plan: Value,
    /// Protocol version the plan is read under: 3 (the default: CREATE_FILE, PATCH_FILE,
    /// EDIT_FILE, REPLACE_RANGE, DELETE_FILE, CREATE_DIR, DELETE_DIR) or 2 (no EDIT_FILE or
    /// REPLACE_RANGE).
    #[serde(default)]
    #[schemars(range(min = 2, max = 3))]
    pub protocol: Option<u8>,
}

/// `apply_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApplyPlanArgs {
    /// The plan: a JSON object `{"actions": [...], "summary": "..."}` (papayu's plan protocol),
    /// or the same as JSON text. Every PATCH_FILE, EDIT_FILE and REPLACE_RANGE carries the
    /// `base_sha256` that `read_file` returned for the file.
    #[schemars(schema_with = "plan_schema")]
    pub plan: Value,
    /// Protocol version the plan is read under: 3 (default) or 2.
    #[serde(default)]
    #[schemars(range(min = 2, max = 3))]
    pub protocol: Option<u8>,
    /// Must be true when the plan has DELETE_FILE or DELETE_DIR actions; otherwise the apply
    /// is refused with ERR_CANCELLED and nothing is written.
    #[serde(default)]
    pub confirm_deletes: bool,
    /// Checks to run after the writes and before the commit (default: none).
    #[serde(default)]
    pub checks: Option<CheckArgs>,
}

/// Check commands run after the writes and before the commit; a failing one rolls everything
/// back (`ERR_CHECK_FAILED`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckArgs {
    /// Shell commands run in the project root (e.g. `cargo check`); any that fails rolls the
    /// whole change back.
    #[serde(default)]
    pub commands: Vec<String>,
    /// Run the checks papayu detects for the project instead (Cargo.toml → `cargo check`,
    /// package.json scripts, Python compileall).
    #[serde(default)]
    pub detect: bool,
    /// Timeout of each check command in seconds (default 120).
    #[serde(default)]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_secs: Option<u64>,
}

/// `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApplyPatchArgs {
    /// Project-relative path of the existing file to change.
    pub path: String,
    /// sha256 of the file's current bytes, as `read_file` returned it (64 lowercase hex). A
    /// file that changed since is refused with ERR_BASE_MISMATCH.
    pub base_sha256: String,
    /// A unified diff of this one file (`@@ -a,b +c,d @@` hunks; `---`/`+++` and git headers
    /// optional, wrong line numbers and counts tolerated, ambiguous places refused).
    #[serde(default)]
    pub patch: Option<String>,
    /// Anchored replacements instead of a diff: each `{"op":"replace","anchor","before",
    /// "after"}` replaces `before` found shortly after the unique `anchor`.
    #[serde(default)]
    #[schemars(schema_with = "edits_schema")]
    pub edits: Option<Vec<Value>>,
    /// Replace whole lines instead: lines `start_line..=end_line` (1-based) become `content`.
    #[serde(default)]
    pub replace_range: Option<RangeArgs>,
    /// Checks to run after the write and before the commit (default: none).
    #[serde(default)]
    pub checks: Option<CheckArgs>,
}

/// Lines to replace.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RangeArgs {
    /// First line replaced (1-based).
    #[schemars(range(min = 1))]
    pub start_line: u64,
    /// Last line replaced (inclusive).
    #[schemars(range(min = 1))]
    pub end_line: u64,
    /// The new text of those lines.
    pub content: String,
}

/// `undo` and `redo`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RevertArgs {
    /// Revert even when files changed since the transaction (otherwise ERR_UNDO_CONFLICT
    /// lists them and nothing is written).
    #[serde(default)]
    pub force: bool,
}

/// `history`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadFileArgs {
    /// Project-relative path (forward slashes).
    pub path: String,
    /// First line to return (1-based); default: the whole file.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// Last line to return (inclusive); default: the end of the file.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
}

/// `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// The text to find (literal unless `regex`).
    pub query: String,
    /// Only files matching this glob (e.g. `src/**/*.rs`).
    #[serde(default)]
    pub glob: Option<String>,
    /// Treat `query` as a regular expression (Rust regex syntax).
    #[serde(default)]
    pub regex: bool,
}

/// `context`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContextArgs {
    /// papayu context requests: `{"type":"read_file","path",...}`, `{"type":"search","query"}`,
    /// `{"type":"logs","source"}`, `{"type":"env"}`.
    #[serde(default)]
    #[schemars(schema_with = "context_requests_schema")]
    pub requests: Vec<Value>,
    /// An error message, stack trace or goal text to gather context from (the files and lines
    /// its frames name, manifests for import errors, the test file of a failing test).
    #[serde(default)]
    pub text: Option<String>,
    /// A goal: returns papayu's base context for it instead (the project map, the files the
    /// goal points at, the whole project when it is small); `text` is then the failing output.
    #[serde(default)]
    pub goal: Option<String>,
}

/// `plan_goal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GoalArgs {
    /// What should be done, in plain words.
    pub goal: String,
}

/// `run_goal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunGoalArgs {
    /// What should be done, in plain words (e.g. "fix the failing test test_add").
    pub goal: String,
    /// The command that runs the project's tests (default: the project's memory, else
    /// detected: cargo, go, npm/node, pytest/unittest, make).
    #[serde(default)]
    pub test: Option<String>,
    /// At most this many changes are tried (default 3).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10))]
    pub attempts: Option<u32>,
    /// Timeout of each test run in seconds (default 300).
    #[serde(default)]
    #[schemars(range(min = 1, max = 3600))]
    pub test_timeout_secs: Option<u64>,
    /// Allow changes that delete files.
    #[serde(default)]
    pub confirm_deletes: bool,
    /// When the model's first change did not verify and the goal's tests fail, at most this many of
    /// papayu's own small edits of the code those tests exercise are tried, each tested
    /// (default 60; 0: none, also before the model's first answer, where up to 20 are tried).
    #[serde(default)]
    #[schemars(range(min = 0, max = 500))]
    pub mutants: Option<u32>,
}

/// The protocol version a call names (`protocol`), or `default`.
pub(crate) fn protocol_of(
    given: Option<u8>,
    default: ProtocolVersion,
) -> Result<ProtocolVersion, String> {
    match given {
        None => Ok(default),
        Some(n @ (2 | 3)) => ProtocolVersion::from_number(n).ok_or_else(|| bad_protocol(n)),
        Some(n) => Err(bad_protocol(n)),
    }
}

fn bad_protocol(n: u8) -> String {
    format!("`protocol` must be 2 or 3, not {n}")
}

/// The text of a plan argument: an object or array as JSON, a string as it is.
pub(crate) fn plan_text(plan: &Value) -> Result<String, String> {
    match plan {
        Value::Object(_) | Value::Array(_) => Ok(plan.to_string()),
        Value::String(s) => Ok(s.clone()),
        other => Err(format!(
            "`plan` must be a JSON object (the plan document) or a string holding one, not {other}"
        )),
    }
}

/// papayu-protocol's v3 definition `name`, its `#/definitions/x` references pointing at this
/// generator's definitions, registered there under `papayu_<x>`; the reference to it.
fn protocol_definition(generator: &mut SchemaGenerator, name: &str) -> Value {
    let schema = schema_value(ProtocolVersion::V3, SchemaVariant::Normal);
    let path = generator.settings().definitions_path.to_string();
    let path = path.trim_end_matches('/');
    for def in ["action", "edit", "context_request"] {
        let mut value = schema["definitions"][def].clone();
        rewrite_refs(&mut value, path);
        if def == "action" {
            value["properties"]["base_sha256"]["description"] = json!(
                "sha256 of the file's current bytes, as read_file returned it (64 lowercase hex)"
            );
            value["properties"]["path"]["description"] =
                json!("Project-relative path, forward slashes");
        }
        generator
            .definitions_mut()
            .insert(format!("papayu_{def}"), value);
    }
    json!({ "$ref": format!("{path}/papayu_{name}") })
}

fn rewrite_refs(value: &mut Value, path: &str) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if k == "$ref"
                    && let Value::String(r) = v
                    && let Some(name) = r.strip_prefix("#/definitions/")
                {
                    *r = format!("{path}/papayu_{name}");
                } else {
                    rewrite_refs(v, path);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, path)),
        _ => {}
    }
}

fn schema(value: Value) -> Schema {
    Schema::try_from(value).unwrap_or_default()
}

fn plan_schema(generator: &mut SchemaGenerator) -> Schema {
    let action = protocol_definition(generator, "action");
    schema(json!({
        "anyOf": [
            {
                "type": "object",
                "description": "The plan document: the actions (applied in papayu's order, all or nothing) and a summary.",
                "properties": {
                    "actions": {"type": "array", "items": action},
                    "summary": {"type": "string", "description": "One line: what the change does."}
                },
                "required": ["actions"]
            },
            {
                "type": "string",
                "description": "The plan document as JSON text (a ```json fence or prose around it is accepted)."
            }
        ]
    }))
}

fn edits_schema(generator: &mut SchemaGenerator) -> Schema {
    let edit = protocol_definition(generator, "edit");
    schema(json!({"type": "array", "items": edit, "minItems": 1, "maxItems": 50}))
}

fn context_requests_schema(generator: &mut SchemaGenerator) -> Schema {
    let request = protocol_definition(generator, "context_request");
    schema(json!({"type": "array", "items": request}))
}
