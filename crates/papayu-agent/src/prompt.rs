//! System prompts and user messages (SPEC §9): English, per mode family and protocol version,
//! stating `LLM_PLAN_SCHEMA_VERSION=<n>` and the exact action schema of that version.

use std::fmt::Write as _;

use papayu_protocol::{EditStyle, MEMORY_PATCH_KEYS, MemoryValueKind, ProtocolVersion};
use papayu_validate::Mode;

use crate::config::LlmMode;

fn family_intro(family: LlmMode) -> &'static str {
    match family {
        LlmMode::Chat => {
            "You are papayu's engineering colleague inside a tool that creates, analyses and fixes code \
for a single operator. You never touch the disk yourself: you answer with exactly one JSON document \
and papayu validates it, shows the operator a preview, and applies it transactionally."
        }
        LlmMode::Fixit => {
            "You are papayu's fix-it engineer inside a tool that repairs code for a single operator. You \
must deliver a concrete fix and say how to verify it. You never touch the disk yourself: you answer \
with exactly one JSON document and papayu validates, previews and applies it transactionally."
        }
        LlmMode::FixPlan => {
            "You are papayu's engineering assistant inside a tool that creates, analyses and fixes code \
for a single operator. You work in two steps: \"fix-plan\" (a diagnosis and a plan, nothing applied) \
and \"apply\" (the final changes, applied after the operator confirms). You never touch the disk \
yourself: you answer with exactly one JSON document."
        }
    }
}

fn root_shape(version: ProtocolVersion) -> &'static str {
    match version {
        ProtocolVersion::V1 => {
            "The root is either an array of actions or an object; in an object the actions go in \
\"actions\" (or \"proposed_changes.actions\", which wins when both are present)."
        }
        ProtocolVersion::V2 => {
            "The root must be a JSON object (never a bare array); the actions go in \"actions\". \
Unknown root fields are rejected."
        }
        ProtocolVersion::V3 => {
            "The root is either an array of actions or an object; in an object the actions go in \
\"actions\" (or \"proposed_changes.actions\", which wins when both are present)."
        }
    }
}

/// The exact action schema of `version`, as the model reads it.
pub fn action_schema(version: ProtocolVersion) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ACTION SCHEMA (protocol v{n}; only these kinds exist: {kinds}):",
        n = version.number(),
        kinds = version
            .kinds()
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    s.push_str(
        "- {\"kind\":\"CREATE_FILE\",\"path\":\"<relative path>\",\"content\":\"<full file content>\"} creates a new file",
    );
    s.push_str(match version {
        ProtocolVersion::V1 => " (on an existing file it replaces the content).\n",
        _ => "; it is an error if the file exists.\n",
    });
    s.push_str("- {\"kind\":\"CREATE_DIR\",\"path\":\"<relative path>\"} creates a directory.\n");
    match version {
        ProtocolVersion::V1 => s.push_str(
            "- {\"kind\":\"UPDATE_FILE\",\"path\":\"<relative path>\",\"content\":\"<full new content>\"} replaces an \
existing file with the COMPLETE new content. Never elide parts with placeholders such as \
\"// ... rest unchanged ...\": the content is written exactly as given.\n",
        ),
        ProtocolVersion::V2 => s.push_str(
            "- {\"kind\":\"PATCH_FILE\",\"path\":\"<relative path>\",\"base_sha256\":\"<64 hex>\",\"patch\":\"<unified diff>\"} \
changes an EXISTING file. It and REPLACE_RANGE are the only ways to change an existing file in v2 \
(UPDATE_FILE on an existing file is rejected with ERR_V2_UPDATE_EXISTING_FORBIDDEN). \
\"patch\" is a unified diff with @@ -a,b +c,d @@ hunks whose lines start with ' ', '+' or '-', \
with 1-3 lines of unchanged context around each change. Keep patches minimal: no reformatting, no \
line-ending changes.\n\
- {\"kind\":\"REPLACE_RANGE\",\"path\":\"<relative path>\",\"base_sha256\":\"<64 hex>\",\"start_line\":<n>,\
\"end_line\":<m>,\"content\":\"<replacement lines>\"} replaces lines n..=m (1-based, inclusive) of an \
EXISTING file; use it when a unified diff would be awkward. The line numbers are those of the file as sent.\n\
For PATCH_FILE and REPLACE_RANGE, \"base_sha256\" is copied exactly from the FILE[path] \
(sha256=...) header of the context.\n\
- {\"kind\":\"UPDATE_FILE\",\"path\":\"<relative path>\",\"content\":\"<full content>\"} only for a file that does \
not exist yet.\n",
        ),
        ProtocolVersion::V3 => s.push_str(
            "- {\"kind\":\"EDIT_FILE\",\"path\":\"<relative path>\",\"base_sha256\":\"<64 hex>\",\"edits\":[{\"op\":\"replace\",\
\"anchor\":\"<text that occurs exactly once>\",\"before\":\"<exact text to replace, within 4000 characters \
after the anchor>\",\"after\":\"<replacement>\",\"occurrence\":<optional 1-based n>}]} is the preferred way to \
change an existing file. At most 50 edits; they apply in order to the evolving text.\n\
- {\"kind\":\"REPLACE_RANGE\",\"path\":\"<relative path>\",\"base_sha256\":\"<64 hex>\",\"start_line\":<n>,\
\"end_line\":<m>,\"content\":\"<replacement lines>\"} replaces lines n..=m (1-based, inclusive).\n\
- {\"kind\":\"PATCH_FILE\",\"path\":\"<relative path>\",\"base_sha256\":\"<64 hex>\",\"patch\":\"<unified diff>\"} \
applies a unified diff with @@ hunks and 1-3 lines of context.\n\
- {\"kind\":\"UPDATE_FILE\",\"path\":\"<relative path>\",\"content\":\"<full content>\"} replaces a whole file.\n\
For EDIT_FILE, REPLACE_RANGE and PATCH_FILE, \"base_sha256\" is copied exactly from the \
FILE[path] (sha256=...) header of the context.\n",
        ),
    }
    s.push_str(
        "- {\"kind\":\"DELETE_FILE\",\"path\":\"<relative path>\"} and {\"kind\":\"DELETE_DIR\",\"path\":\"<relative path>\"} \
delete (the operator must confirm every delete).\n\
A field that does not belong to a kind is an error",
    );
    s.push_str(match version {
        ProtocolVersion::V1 => " in later versions; avoid it.\n",
        _ => ".\n",
    });
    s
}

fn response_fields(family: LlmMode, version: ProtocolVersion) -> &'static str {
    match family {
        // Protocol v2 takes the actions from `actions` only (SPEC §3.1): a v2 prompt must not
        // offer `proposed_changes.actions`, which its schema rejects.
        LlmMode::FixPlan if !version.allows_proposed_actions() => {
            "RESPONSE OBJECT: {\"mode\":\"fix-plan\"|\"apply\", \"summary\":string, \"questions\":[string] (at most 2), \
\"context_requests\":[...], \"plan\":[{\"step\":string,\"details\":string}], \"actions\":[...], \
\"proposed_changes\":{\"commands_to_run\":[string]}, \"commands_to_run\":[string], \
\"verification\":[string], \"risks\":[string], \"rollback\":[string], \"memory_patch\":{...}}. \
The actions go in \"actions\" only. Omit what you do not need.\n"
        }
        LlmMode::FixPlan => {
            "RESPONSE OBJECT: {\"mode\":\"fix-plan\"|\"apply\", \"summary\":string, \"questions\":[string] (at most 2), \
\"context_requests\":[...], \"plan\":[{\"step\":string,\"details\":string}], \"actions\":[...], \
\"proposed_changes\":{\"actions\":[...],\"commands_to_run\":[string]}, \"commands_to_run\":[string], \
\"verification\":[string], \"risks\":[string], \"rollback\":[string], \"memory_patch\":{...}}. \
Omit what you do not need.\n"
        }
        LlmMode::Chat | LlmMode::Fixit => {
            "RESPONSE OBJECT: {\"actions\":[...], \"summary\":string, \"context_requests\":[...], \
\"memory_patch\":{...}} plus, when useful, \"plan\":[{\"step\":string,\"details\":string}], \
\"verification\":[string], \"risks\":[string], \"commands_to_run\":[string]. Omit what you do not need.\n"
        }
    }
}

fn mode_rules(mode: Mode, family: LlmMode) -> String {
    match mode {
        Mode::Plan => {
            let mut s = String::from(
                "CURRENT MODE: PLAN. Do not change anything: \"actions\" MUST be an empty array []. \
\"summary\" holds the diagnosis, the numbered steps you will take, and the command that checks the result. ",
            );
            if family == LlmMode::FixPlan {
                s.push_str("Set \"mode\":\"fix-plan\" and fill \"plan\". ");
            }
            s.push_str(
                "If you need to read files, search, see logs or the environment, ask with \
\"context_requests\" (at most 2 rounds).\n",
            );
            s
        }
        Mode::Apply => {
            let mut s = String::from(
                "CURRENT MODE: APPLY. Return the final \"actions\". You may only change an existing file \
whose content papayu sent you in a FILE[...] block (otherwise ERR_UPDATE_WITHOUT_BASE); ask for it \
with a read_file context request first. If nothing needs to change, return \"actions\":[] and a \
\"summary\" starting exactly with \"NO_CHANGES:\". ",
            );
            if family == LlmMode::FixPlan {
                s.push_str("Set \"mode\":\"apply\". ");
            }
            if family == LlmMode::Fixit {
                s.push_str("Always say in \"verification\" how to check the fix. ");
            }
            s.push('\n');
            s
        }
    }
}

fn memory_keys() -> String {
    MEMORY_PATCH_KEYS
        .iter()
        .map(|(k, kind)| match kind {
            MemoryValueKind::String => format!("{k} (string)"),
            MemoryValueKind::Enum(values) => format!("{k} ({})", values.join("|")),
            MemoryValueKind::Integer { min, max } => format!("{k} (integer {min}..{max})"),
            MemoryValueKind::StringList => format!("{k} (array of strings)"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The system prompt for `family`, `mode` and `version`, with the memory block (may be empty).
pub fn system_prompt(
    family: LlmMode,
    mode: Mode,
    version: ProtocolVersion,
    memory_block: &str,
) -> String {
    let mut s = String::new();
    s.push_str(family_intro(family));
    let _ = write!(
        s,
        "\n\nLLM_PLAN_SCHEMA_VERSION={}\n\
Answer with exactly ONE JSON document and nothing else: no prose, no Markdown fences, no comments.\n",
        version.number()
    );
    s.push_str(root_shape(version));
    s.push_str("\n\n");
    s.push_str(response_fields(family, version));
    s.push('\n');
    s.push_str(&action_schema(version));
    s.push_str(
        "\nPATHS: relative to the project root, '/' separated; never absolute, never '..', never '~'. \
Never touch .env files, keys or certificates, secrets/, .git/ or .papa-yu/.\n\
CONTEXT REQUESTS: {\"type\":\"read_file\",\"path\":..,\"start_line\"?:..,\"end_line\"?:..}, \
{\"type\":\"search\",\"query\":..,\"glob\"?:..}, {\"type\":\"logs\",\"source\":\"check\",\"last_n\"?:..}, {\"type\":\"env\"}.\n\
RULES: do not invent file contents or logs - ask for them. Never claim that tests or commands ran. \
Make minimal changes; no broad refactoring unless asked.\n\
MEMORY: set \"memory_patch\" only when the operator asks you to remember something; allowed keys: ",
    );
    s.push_str(&memory_keys());
    s.push_str(".\n\n");
    s.push_str(&mode_rules(mode, family));
    if !memory_block.trim().is_empty() {
        s.push_str("\nENGINEERING_MEMORY:\n");
        s.push_str(memory_block.trim_end());
        s.push('\n');
    }
    s
}

/// The system prompt for an answer narrowed to `style` ([`papayu_protocol::RequestShape`]):
/// short, with the one form each change takes and nothing a small model has to leave out (the
/// decoding grammar enforces the shape; papayu fills in the base hashes).
pub fn compact_system_prompt(mode: Mode, style: EditStyle, memory_block: &str) -> String {
    let mut s = String::from(if style == EditStyle::WholeFile {
        "You are a careful software engineer working inside papayu. You get a GOAL, the project's \
files (FILE[path] blocks: the file's text under its header) and, when there are tests, their \
failing output. Answer with ONE JSON object and nothing else.\n\n"
    } else {
        "You are a careful software engineer working inside papayu. You get a GOAL, the project's \
files (FILE[path] blocks: each line is shown as `N|text`, N being the line number, not part of the \
file) and, when there are tests, their failing output. Answer with ONE JSON object and nothing else.\n\n"
    });
    match mode {
        Mode::Plan => s.push_str(
            "CURRENT MODE: PLAN. Change nothing: {\"summary\": \"<the cause of the problem, the \
steps you will take, and how to check the result>\", \"actions\": []}\n",
        ),
        Mode::Apply => {
            s.push_str(
                "CURRENT MODE: APPLY. {\"summary\": \"<one sentence: what is wrong and how you fix it>\", \
\"actions\": [ ... ]} where each action is one of:\n",
            );
            s.push_str(match style {
                EditStyle::SearchReplace => {
                    "- change a file shown in a FILE block: {\"kind\": \"EDIT_FILE\", \"path\": \"<path>\", \
\"edits\": [{\"before\": \"<lines copied exactly from the file, without the N| prefixes>\", \
\"after\": \"<what replaces them>\"}]}. \"before\" must occur exactly once in the file: copy the \
lines that change plus a line around them, with the same indentation.\n"
                }
                EditStyle::WholeFile => {
                    "- change a file shown in a FILE block: {\"kind\": \"UPDATE_FILE\", \"path\": \"<path>\", \
\"content\": \"<the whole new file, every line>\"}\n"
                }
                EditStyle::UnifiedDiff => {
                    "- change a file shown in a FILE block: {\"kind\": \"PATCH_FILE\", \"path\": \"<path>\", \
\"patch\": \"<a unified diff: @@ -a,b +c,d @@ hunks, lines starting with ' ', '-' or '+'>\"}\n"
                }
                _ => "",
            });
            s.push_str(
                "- create a file: {\"kind\": \"CREATE_FILE\", \"path\": \"<new relative path>\", \
\"content\": \"<the whole file>\"}\n\
- delete a file: {\"kind\": \"DELETE_FILE\", \"path\": \"<path>\"}\n\
Fix the code the goal is about. Make the smallest change that makes the failing tests pass without \
breaking the others; do not edit the tests unless the goal asks for it. If you must see another file \
first, answer {\"summary\": \"...\", \"actions\": [], \"context_requests\": [{\"type\": \"read_file\", \
\"path\": \"<path>\"}]}.\n",
            );
        }
    }
    if !memory_block.trim().is_empty() {
        s.push_str("\nENGINEERING_MEMORY:\n");
        s.push_str(memory_block.trim_end());
        s.push('\n');
    }
    s
}

/// The first user message: the goal, then the gathered context (auto-gathered and fulfilled
/// FILE/SEARCH/LOGS/ENV blocks), if any.
pub fn user_message(goal: &str, context: &str) -> String {
    let mut s = format!("GOAL:\n{}\n", goal.trim());
    if !context.trim().is_empty() {
        s.push_str("\nCONTEXT:\n");
        s.push_str(context.trim_end());
        s.push('\n');
    }
    s
}

/// [`user_message`] followed by what went wrong with a previous attempt at the same goal (it
/// was rolled back; the context shows the files as they are again).
pub fn user_message_with_feedback(goal: &str, context: &str, feedback: Option<&str>) -> String {
    let mut s = user_message(goal, context);
    if let Some(f) = feedback.map(str::trim).filter(|f| !f.is_empty()) {
        s.push_str("\nPREVIOUS ATTEMPT:\n");
        s.push_str(f);
        s.push('\n');
    }
    s
}

/// The user message of an APPLY of a saved plan: the original goal, the plan, and the plan
/// context (the same FILE blocks, with the same sha256 headers).
pub fn apply_saved_message(goal: &str, plan_summary: &str, context: &str) -> String {
    let mut s = format!(
        "GOAL:\n{}\n\nTHE APPROVED PLAN:\n{}\n\nApply this plan now: return the final actions.\n",
        goal.trim(),
        plan_summary.trim()
    );
    if !context.trim().is_empty() {
        s.push_str("\nCONTEXT:\n");
        s.push_str(context.trim_end());
        s.push('\n');
    }
    s
}

/// The user message that answers a round of context requests.
pub fn context_round_message(round: u32, context: &str, last_round: bool) -> String {
    let mut s = format!(
        "CONTEXT (round {round}, as you requested):\n{}\n",
        context.trim_end()
    );
    if last_round {
        s.push_str(
            "\nThis was the last context round: answer now without further context_requests.\n",
        );
    }
    s
}

/// Extra repair lines naming the `base_sha256` papayu sent for files whose base did not match.
pub fn base_injection(paths: &[(String, String)]) -> String {
    let mut s = String::new();
    for (path, sha) in paths {
        let _ = writeln!(
            s,
            "- The correct base_sha256 of `{path}` (from its FILE header) is {sha}; copy it exactly."
        );
    }
    s
}
