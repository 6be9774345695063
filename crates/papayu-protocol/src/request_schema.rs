//! The schema of one request's answer: only what this request may contain — the kinds its mode
//! and protocol version allow, each with exactly its own fields, existing paths limited to the
//! files papayu sent — in a flat form (one `anyOf` level), so that a decoding grammar made from
//! it is small and fast, and a small model cannot wander into a shape papayu would reject.
//!
//! Fields papayu knows better than a model can be left out ([`RequestShape::papayu_fills`]):
//! `base_sha256` (the hash of the file as sent), an edit's `op` and its `anchor` (the `before`
//! text itself). [`fill_in`] puts them back before the answer is validated like any other.
//!
//! Two forms of the same shape: [`request_schema`] states length and count bounds (papayu's own
//! grammar for the in-process model bounds every repetition), [`compact_schema`] states none (a
//! server that builds its own grammar — llama.cpp's server, llama-cpp-python, LM Studio, Ollama,
//! vLLM — may expand a bound into one nested rule per character, and llama-cpp-python's parser
//! then refuses the grammar and the server answers nothing). [`answer_tokens`] sizes the answer
//! limit to the shape and the context sent.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::types::ProtocolVersion;

/// How an answer changes an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum EditStyle {
    /// EDIT_FILE with `before`/`after` pairs (search and replace; protocol v3).
    #[default]
    SearchReplace,
    /// UPDATE_FILE with the file's whole new content (protocol v1 or v3).
    WholeFile,
    /// PATCH_FILE with a unified diff (protocol v2 or v3).
    UnifiedDiff,
}

impl EditStyle {
    /// `search_replace`, `whole_file` or `unified_diff`.
    pub fn as_str(self) -> &'static str {
        match self {
            EditStyle::SearchReplace => "search_replace",
            EditStyle::WholeFile => "whole_file",
            EditStyle::UnifiedDiff => "unified_diff",
        }
    }

    /// The style named by [`as_str`](Self::as_str).
    pub fn parse(s: &str) -> Option<EditStyle> {
        match s {
            "search_replace" => Some(EditStyle::SearchReplace),
            "whole_file" => Some(EditStyle::WholeFile),
            "unified_diff" => Some(EditStyle::UnifiedDiff),
            _ => None,
        }
    }

    /// The protocol version answers in this style are validated under.
    pub fn protocol(self) -> ProtocolVersion {
        match self {
            EditStyle::SearchReplace | EditStyle::WholeFile => ProtocolVersion::V3,
            EditStyle::UnifiedDiff => ProtocolVersion::V2,
        }
    }
}

/// What one request's answer may contain.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestShape {
    /// APPLY (actions) or PLAN (no actions).
    pub apply: bool,
    /// How existing files are changed.
    pub edit: EditStyle,
    /// The files whose content papayu sent: the only existing paths an edit may name.
    pub files: Vec<String>,
    /// Whether new files may be created.
    pub create: bool,
    /// Whether files may be deleted.
    pub delete: bool,
    /// Whether the model may ask for more context (`read_file` of any path).
    pub context_requests: bool,
    /// Leave out `base_sha256`, an edit's `op` and `anchor`: papayu fills them in.
    pub papayu_fills: bool,
    /// An APPLY answer must change something: at least one action (a verified fix while the
    /// tests fail, where "nothing needs to change" cannot be the answer). It may still ask for
    /// context alongside.
    pub change_required: bool,
    /// At most this many actions.
    pub max_actions: u32,
    /// At most this many edits per EDIT_FILE.
    pub max_edits: u32,
    /// Longest file content, patch or edit text, in characters.
    pub content_chars: u32,
    /// Longest summary, in characters.
    pub summary_chars: u32,
}

impl Default for RequestShape {
    fn default() -> Self {
        Self {
            apply: true,
            edit: EditStyle::default(),
            files: Vec::new(),
            create: true,
            delete: false,
            context_requests: true,
            papayu_fills: true,
            change_required: false,
            max_actions: 6,
            max_edits: 6,
            content_chars: 1_900,
            summary_chars: 300,
        }
    }
}

/// Whether a schema states length and count bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bounds {
    /// `maxLength`, `maxItems` and bounded patterns, for papayu's own bounded grammar.
    Stated,
    /// None: what a server's own schema converter turns into a grammar without blowing up.
    Omitted,
}

impl Bounds {
    fn string(self, max: u32) -> Value {
        match self {
            Bounds::Stated => json!({"type": "string", "maxLength": max}),
            Bounds::Omitted => json!({"type": "string"}),
        }
    }

    /// An array of `items`, at least `min` and (when bounds are stated) at most `max` of them.
    fn array(self, items: Value, min: u32, max: u32) -> Value {
        let mut a = json!({"type": "array", "items": items});
        if min > 0 {
            a["minItems"] = json!(min);
        }
        if self == Bounds::Stated {
            a["maxItems"] = json!(max);
        }
        a
    }
}

/// A whole file's content: unbounded (a grammar repetition may not exceed 2 000 characters, and a
/// file may), so only the answer's token limit bounds it.
fn whole_file() -> Value {
    json!({"type": "string"})
}

fn object(props: Vec<(&str, Value)>) -> Value {
    let required: Vec<Value> = props.iter().map(|(k, _)| json!(k)).collect();
    let mut p = Map::new();
    for (k, v) in props {
        p.insert(k.to_owned(), v);
    }
    json!({"type": "object", "properties": p, "required": required, "additionalProperties": false})
}

/// A relative path for a new file: no leading `/`, `.` or `-`, no `..` (papayu-validate checks
/// the rest).
const NEW_PATH_PATTERN: &str = "^[A-Za-z0-9_][A-Za-z0-9_./-]{0,158}$";

impl RequestShape {
    fn existing_path(&self) -> Value {
        json!({"type": "string", "enum": self.files})
    }

    fn edit_action(&self, bounds: Bounds) -> Value {
        let path = self.existing_path();
        let base = || json!({"type": "string", "pattern": "^[0-9a-f]{64}$"});
        let c = self.content_chars;
        let mut fields: Vec<(&str, Value)> = Vec::new();
        match self.edit {
            EditStyle::SearchReplace => {
                let mut edit: Vec<(&str, Value)> = Vec::new();
                if !self.papayu_fills {
                    edit.push(("op", json!({"type": "string", "enum": ["replace"]})));
                    edit.push(("anchor", bounds.string(c)));
                }
                // An empty `before` is never valid (papayu-validate refuses it).
                let mut before = bounds.string(c);
                before["minLength"] = json!(1);
                edit.push(("before", before));
                edit.push(("after", bounds.string(c)));
                fields.push(("kind", json!({"type": "string", "enum": ["EDIT_FILE"]})));
                fields.push(("path", path));
                if !self.papayu_fills {
                    fields.push(("base_sha256", base()));
                }
                fields.push(("edits", bounds.array(object(edit), 1, self.max_edits)));
            }
            EditStyle::WholeFile => {
                fields.push(("kind", json!({"type": "string", "enum": ["UPDATE_FILE"]})));
                fields.push(("path", path));
                fields.push(("content", whole_file()));
            }
            EditStyle::UnifiedDiff => {
                fields.push(("kind", json!({"type": "string", "enum": ["PATCH_FILE"]})));
                fields.push(("path", path));
                if !self.papayu_fills {
                    fields.push(("base_sha256", base()));
                }
                fields.push(("patch", bounds.string(c)));
            }
        }
        object(fields)
    }

    fn actions(&self, bounds: Bounds) -> Value {
        let mut alternatives = Vec::new();
        if !self.files.is_empty() {
            alternatives.push(self.edit_action(bounds));
        }
        if self.create {
            // Without bounds, no pattern either: a server converter expands `{0,158}` like a
            // `maxLength`, and papayu-validate checks every path anyway.
            let path = match bounds {
                Bounds::Stated => json!({"type": "string", "pattern": NEW_PATH_PATTERN}),
                Bounds::Omitted => json!({"type": "string"}),
            };
            alternatives.push(object(vec![
                ("kind", json!({"type": "string", "enum": ["CREATE_FILE"]})),
                ("path", path),
                ("content", whole_file()),
            ]));
        }
        if self.delete && !self.files.is_empty() {
            alternatives.push(object(vec![
                ("kind", json!({"type": "string", "enum": ["DELETE_FILE"]})),
                ("path", self.existing_path()),
            ]));
        }
        let items = match alternatives.len() {
            // Nothing this request may do: an empty `anyOf` is not a schema, and a server whose
            // converter refuses it decodes under plain JSON instead (llama-cpp-python does), so
            // a bare array could be the answer. Say "no actions" as a PLAN does.
            0 => return no_actions(bounds),
            1 => alternatives.remove(0),
            _ => json!({"anyOf": alternatives}),
        };
        bounds.array(items, u32::from(self.change_required), self.max_actions)
    }
}

/// The JSON schema of an answer of `shape`: an object with `summary` first (the diagnosis
/// before the change), then `actions` (APPLY; PLAN has none), then `context_requests` when
/// allowed (`read_file` only). Every string and list is bounded (`maxLength`, `maxItems`), for a
/// grammar whose every repetition papayu bounds itself.
pub fn request_schema(shape: &RequestShape) -> Value {
    schema_with(shape, Bounds::Stated)
}

/// The same shape as [`request_schema`] without length or count bounds and without path
/// patterns: what papayu sends, as strict JSON, to a server that turns a schema into its own
/// decoding grammar. Such converters expand a bound into a rule per character (2 000 nested
/// rules for one file's text), which llama-cpp-python's grammar parser refuses; the answer's
/// token limit ([`answer_tokens`]) bounds the text instead, and papayu-validate checks the rest.
///
/// It rejects no answer that is valid for the request: every kind the request allows, with its
/// fields, any text in them, any number of actions.
pub fn compact_schema(shape: &RequestShape) -> Value {
    schema_with(shape, Bounds::Omitted)
}

/// An empty list of actions.
fn no_actions(bounds: Bounds) -> Value {
    match bounds {
        Bounds::Stated => json!({"type": "array", "maxItems": 0}),
        // `items` too: without it a converter reads a bare `array` as "any JSON array".
        Bounds::Omitted => json!({"type": "array", "items": {"type": "object"}, "maxItems": 0}),
    }
}

fn schema_with(shape: &RequestShape, bounds: Bounds) -> Value {
    let mut props: Vec<(&str, Value)> = vec![("summary", bounds.string(shape.summary_chars))];
    if shape.apply {
        props.push(("actions", shape.actions(bounds)));
    } else {
        props.push(("actions", no_actions(bounds)));
    }
    if shape.context_requests {
        let read = object(vec![
            ("type", json!({"type": "string", "enum": ["read_file"]})),
            ("path", bounds.string(160)),
        ]);
        props.push(("context_requests", bounds.array(read, 0, 3)));
    }
    let mut schema = object(props);
    // `context_requests` may be left out.
    if shape.context_requests
        && let Some(Value::Array(required)) = schema.get_mut("required")
    {
        required.retain(|r| r != "context_requests");
    }
    schema
}

/// Characters per token assumed when sizing an answer: code and JSON run at 3–4 characters a
/// token in the BPE vocabularies of current models; 3 leaves room.
const CHARS_PER_TOKEN: usize = 3;
/// Tokens for the JSON envelope and a one-sentence summary.
const ENVELOPE_TOKENS: usize = 256;
/// Tokens for a PLAN: its summary holds the cause, the steps and how to check them.
const PLAN_TOKENS: u32 = 512;
/// Tokens allowed for one new file when the shape allows creating files.
const NEW_FILE_TOKENS: usize = 512;
/// Tokens for up to three context requests.
const CONTEXT_REQUEST_TOKENS: usize = 64;

/// The answer limit, in tokens, for a request of `shape` whose context (the files and blocks
/// sent) is `context_chars` characters: a PLAN's summary; an APPLY's summary and envelope, the
/// changed text (an edit quotes the lines it replaces and their replacement: at most twice the
/// text sent; a whole-file rewrite once, with a tenth for escapes), one new file when creating
/// is allowed, and the context requests. The caller caps it with the configured limit: an
/// answer of this shape that is still going past it is a model looping, not a long plan.
pub fn answer_tokens(shape: &RequestShape, context_chars: usize) -> u32 {
    if !shape.apply {
        return PLAN_TOKENS;
    }
    let sent_tokens = context_chars.div_ceil(CHARS_PER_TOKEN);
    let changed = match shape.edit {
        EditStyle::WholeFile => sent_tokens + sent_tokens / 10,
        EditStyle::SearchReplace | EditStyle::UnifiedDiff => sent_tokens.saturating_mul(2),
    };
    let tokens = ENVELOPE_TOKENS
        .saturating_add(if shape.files.is_empty() { 0 } else { changed })
        .saturating_add(if shape.create { NEW_FILE_TOKENS } else { 0 })
        .saturating_add(if shape.context_requests {
            CONTEXT_REQUEST_TOKENS
        } else {
            0
        });
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// `text` without the `N|` line-number prefixes papayu's FILE blocks show, when every non-empty
/// line has one (a model copying lines from the context copies them too); else `None`.
fn strip_line_numbers(text: &str) -> Option<String> {
    let prefix_len = |line: &str| {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0 && line.as_bytes().get(digits) == Some(&b'|')).then_some(digits + 1)
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if lines.is_empty()
        || !lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .all(|l| prefix_len(l).is_some())
    {
        return None;
    }
    Some(
        lines
            .iter()
            .map(|l| prefix_len(l).map_or(*l, |n| &l[n..]))
            .collect(),
    )
}

/// Put back what [`RequestShape::papayu_fills`] left out of an answer: the `base_sha256` of each
/// edited file as sent (`sent`: path → sha256), and each edit's `op` (`replace`) and `anchor`
/// (its own `before`). A field the answer has is kept; an answer that is not a JSON object is
/// returned as it was (validation then says what is wrong with it).
pub fn fill_in(answer: &str, sent: &BTreeMap<String, String>) -> String {
    let Ok(mut value) = crate::extract_json(answer) else {
        return answer.to_owned();
    };
    let Some(actions) = value.get_mut("actions").and_then(Value::as_array_mut) else {
        return answer.to_owned();
    };
    for action in actions.iter_mut() {
        let Some(a) = action.as_object_mut() else {
            continue;
        };
        let kind = a
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let edits_file = matches!(kind.as_str(), "PATCH_FILE" | "EDIT_FILE" | "REPLACE_RANGE");
        if edits_file
            && !a.contains_key("base_sha256")
            && let Some(sha) = a
                .get("path")
                .and_then(Value::as_str)
                .and_then(|p| sent.get(p.trim_start_matches("./")))
        {
            a.insert("base_sha256".into(), json!(sha));
        }
        if kind == "UPDATE_FILE"
            && let Some(Value::String(content)) = a.get_mut("content")
            && let Some(clean) = strip_line_numbers(content)
        {
            *content = clean;
        }
        if let Some(edits) = a.get_mut("edits").and_then(Value::as_array_mut) {
            for e in edits.iter_mut().filter_map(Value::as_object_mut) {
                // Numbered lines copied from the context: `before` with its numbers never
                // matches; the numbers of `after` would be written into the file.
                let numbered = e
                    .get("before")
                    .and_then(Value::as_str)
                    .and_then(strip_line_numbers);
                if let Some(clean) = numbered {
                    e.insert("before".into(), json!(clean));
                    if let Some(after) = e
                        .get("after")
                        .and_then(Value::as_str)
                        .and_then(strip_line_numbers)
                    {
                        e.insert("after".into(), json!(after));
                    }
                }
                e.entry("op").or_insert_with(|| json!("replace"));
                if !e.contains_key("anchor")
                    && let Some(before) = e.get("before").cloned()
                {
                    e.insert("anchor".into(), before);
                }
            }
        }
    }
    value.to_string()
}

#[cfg(test)]
mod tests;
