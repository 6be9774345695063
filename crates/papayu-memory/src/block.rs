//! The ENGINEERING_MEMORY block appended to the system prompt.

use serde_json::{Map, Value};

use crate::prefs::{ProjectPrefs, Section, UserPrefs, section_fields};

/// Upper bound of the memory block in bytes (SPEC §8: "~1–2 KB").
pub const MAX_BLOCK_BYTES: usize = 2048;

const HEADING: &str = "ENGINEERING_MEMORY (trusted by user; update only when user requests):";
const FOOTER: &str = "Use ENGINEERING_MEMORY as defaults. If the user explicitly asks to remember \
or change a preference, return it in memory_patch using only the whitelisted dotted keys.";

/// One displayable entry: dotted key and value.
fn entries(user: &UserPrefs, project: &ProjectPrefs) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (key, field, _) in section_fields::<UserPrefs>() {
        if let Some(v) = user.get(field) {
            out.push((key.to_owned(), v));
        }
    }
    for (key, field, _) in section_fields::<ProjectPrefs>() {
        if let Some(v) = project.get(field) {
            out.push((key.to_owned(), v));
        }
    }
    if !project.log_files().is_empty() {
        let logs: Map<String, Value> = project
            .log_files()
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect();
        out.push(("project.log_files".to_owned(), Value::Object(logs)));
    }
    out
}

fn render(entries: &[(String, Value)], omitted: &[String]) -> String {
    let mut user = Map::new();
    let mut project = Map::new();
    for (key, value) in entries {
        if let Some(field) = key.strip_prefix("user.") {
            user.insert(field.to_owned(), value.clone());
        } else if let Some(field) = key.strip_prefix("project.") {
            project.insert(field.to_owned(), value.clone());
        }
    }
    let mut root = Map::new();
    if !user.is_empty() {
        root.insert("user".to_owned(), Value::Object(user));
    }
    if !project.is_empty() {
        root.insert("project".to_owned(), Value::Object(project));
    }
    let mut out = String::with_capacity(512);
    out.push_str(HEADING);
    out.push('\n');
    out.push_str(&Value::Object(root).to_string());
    out.push_str("\n\n");
    if !omitted.is_empty() {
        out.push_str("Omitted to keep this block under 2 KB: ");
        out.push_str(&omitted.join(", "));
        out.push_str(".\n");
    }
    out.push_str(FOOTER);
    out.push('\n');
    out
}

/// The memory block: only the fields that are set, user first then project, in whitelist
/// order; empty when nothing is set. Over [`MAX_BLOCK_BYTES`], whole fields are dropped from the
/// end (log files, CI notes, roots, ... — the least essential) and named in the block.
pub(crate) fn build(user: &UserPrefs, project: &ProjectPrefs) -> String {
    let mut entries = entries(user, project);
    if entries.is_empty() {
        return String::new();
    }
    let mut omitted = Vec::new();
    loop {
        let block = render(&entries, &omitted);
        if block.len() <= MAX_BLOCK_BYTES || entries.is_empty() {
            return block;
        }
        if let Some((key, _)) = entries.pop() {
            omitted.insert(0, key);
        }
    }
}
