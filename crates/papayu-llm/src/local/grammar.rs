//! The sampling grammar: the provider-strict schema of the effective protocol version, with
//! bounds on every array and string, converted to GBNF by llama.cpp's own converter.
//!
//! Unbounded, a 135M model sometimes repeats itself inside a string or an array until the token
//! limit (seen here: 8 of 10 answers valid; bounded: 10 of 10). llama.cpp's grammar parser also
//! refuses a repetition of more than 2 000, which caps `maxLength`.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use papayu_protocol::{ProtocolVersion, SchemaVariant, schema::schema_value, schema::strip_meta};
use serde_json::{Value, json};

use crate::dialect::grammar_friendly;
use crate::error::LlmError;

/// llama.cpp's `MAX_REPETITION_THRESHOLD`: no `{m,n}` repetition may exceed it.
pub const MAX_GRAMMAR_REPETITION: u32 = 2_000;

/// Bounds put on the schema before it becomes a grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GrammarBounds {
    /// `maxItems` of `actions` (and `proposed_changes.actions`).
    pub actions: u32,
    /// `maxItems` of `edits`.
    pub edits: u32,
    /// `maxItems` of `context_requests`.
    pub context_requests: u32,
    /// `maxItems` of every other array (`questions` is always ≤ 2).
    pub other_items: u32,
    /// `maxLength` of file contents, patches and edit texts.
    pub content_chars: u32,
    /// `maxLength` of `summary`.
    pub summary_chars: u32,
    /// `maxLength` of paths.
    pub path_chars: u32,
    /// `maxLength` of every other string.
    pub other_chars: u32,
}

impl Default for GrammarBounds {
    fn default() -> Self {
        Self {
            actions: 8,
            edits: 8,
            context_requests: 4,
            other_items: 4,
            content_chars: 1_200,
            summary_chars: 400,
            path_chars: 160,
            other_chars: 160,
        }
    }
}

impl GrammarBounds {
    /// Problems that would make llama.cpp refuse the grammar (or abort), in words.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, v) in [
            ("actions", self.actions),
            ("edits", self.edits),
            ("context_requests", self.context_requests),
            ("other_items", self.other_items),
            ("content_chars", self.content_chars),
            ("summary_chars", self.summary_chars),
            ("path_chars", self.path_chars),
            ("other_chars", self.other_chars),
        ] {
            if v == 0 || v > MAX_GRAMMAR_REPETITION {
                out.push(format!(
                    "grammar bound {name}={v} must be in 1..={MAX_GRAMMAR_REPETITION}"
                ));
            }
        }
        out
    }

    fn items(&self, key: &str) -> u32 {
        match key {
            "actions" => self.actions,
            "edits" => self.edits,
            "context_requests" => self.context_requests,
            "questions" => self.other_items.min(2),
            _ => self.other_items,
        }
    }

    fn chars(&self, key: &str) -> u32 {
        match key {
            "content" | "patch" | "before" | "after" => self.content_chars,
            "summary" => self.summary_chars,
            "path" | "glob" => self.path_chars,
            _ => self.other_chars,
        }
    }
}

/// Put `maxItems` / `maxLength` on every array and free string of `schema`, by the name of the
/// property holding it; `base_sha256` gets its exact shape (64 lowercase hex digits).
fn bound(schema: &mut Value, key: &str, bounds: &GrammarBounds) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (k, v) in props.iter_mut() {
            bound(v, k, bounds);
        }
    }
    if let Some(Value::Array(alternatives)) = map.get_mut("anyOf") {
        for v in alternatives {
            bound(v, key, bounds);
        }
    }
    if let Some(items) = map.get_mut("items") {
        // Items of a list are named after the list (`questions` → each question).
        bound(items, key, bounds);
    }
    match map.get("type").and_then(Value::as_str) {
        // Line numbers and counts are 1-based in the normal schema (the strict one has no
        // `minimum`); the upper bound only stops a small model typing digits forever.
        Some("integer") if matches!(key, "start_line" | "end_line" | "last_n") => {
            map.insert("minimum".into(), json!(1));
            map.insert("maximum".into(), json!(9_999_999));
        }
        Some("array") => {
            map.insert("maxItems".into(), json!(bounds.items(key)));
        }
        Some("string") if !map.contains_key("enum") => {
            if key == "base_sha256" {
                map.insert("pattern".into(), json!("^[0-9a-f]{64}$"));
            } else {
                map.insert("maxLength".into(), json!(bounds.chars(key)));
            }
        }
        _ => {}
    }
}

/// Whether a (grammar-friendly) property schema admits `null`.
fn nullable(schema: &Value) -> bool {
    schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|alts| alts.iter().any(|a| a.get("type") == Some(&json!("null"))))
}

/// Drop nullable properties from every `required` list: OpenAI's strict mode needs every
/// property required (hence nullable), but under a grammar that would only force the model to
/// spell out a dozen `null`s per answer (tokens, and chances to wander). Absent and `null` mean
/// the same to papayu (DECISIONS D2).
fn optional_nullables(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let (Some(Value::Object(props)), Some(Value::Array(required))) =
                (map.get("properties"), map.get("required"))
            {
                let keep: Vec<Value> = required
                    .iter()
                    .filter(|k| {
                        k.as_str()
                            .and_then(|k| props.get(k))
                            .is_none_or(|p| !nullable(p))
                    })
                    .cloned()
                    .collect();
                map.insert("required".into(), Value::Array(keep));
            }
            for v in map.values_mut() {
                optional_nullables(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(optional_nullables),
        _ => {}
    }
}

/// The non-null alternative of a grammar-friendly nullable property.
fn non_null(schema: &Value) -> Value {
    schema
        .get("anyOf")
        .and_then(Value::as_array)
        .and_then(|alts| alts.iter().find(|a| a.get("type") != Some(&json!("null"))))
        .cloned()
        .unwrap_or_else(|| schema.clone())
}

/// The normal schema requires `path` for `read_file`, `query` for `search` and `source` for
/// `logs` (if/then); the strict schema cannot say so, only that they are nullable. The grammar
/// says it with one alternative per request type, each with its own fields.
fn typed_context_requests(schema: &mut Value) {
    let Some(alternatives) = schema
        .pointer_mut("/properties/context_requests/anyOf")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for alt in alternatives {
        let Some(props) = alt.pointer("/items/properties").cloned() else {
            continue;
        };
        let variant = |ty: &str, required: Option<&str>, optional: &[&str]| {
            let mut p = serde_json::Map::new();
            p.insert("type".into(), json!({"type": "string", "enum": [ty]}));
            let mut req = vec![json!("type")];
            if let Some(r) = required {
                p.insert(r.into(), non_null(&props[r]));
                req.push(json!(r));
            }
            for o in optional {
                p.insert((*o).into(), props[*o].clone());
            }
            json!({"type": "object", "properties": p, "required": req, "additionalProperties": false})
        };
        alt["items"] = json!({"anyOf": [
            variant("read_file", Some("path"), &["start_line", "end_line"]),
            variant("search", Some("query"), &["glob"]),
            variant("logs", Some("source"), &["last_n"]),
            variant("env", None, &[]),
        ]});
    }
}

/// The schema the grammar is made from: the provider-strict schema of `version` without
/// annotations, nullable type lists rewritten as `anyOf` (llama.cpp's converter drops
/// `items`/`properties`/`enum` under a type list), nullable properties optional, one alternative
/// per context-request type with the field the normal schema requires for it, 1-based line
/// numbers, and bounded.
pub fn grammar_schema(version: ProtocolVersion, bounds: &GrammarBounds) -> Value {
    let mut schema = grammar_friendly(strip_meta(schema_value(version, SchemaVariant::Strict)));
    optional_nullables(&mut schema);
    typed_context_requests(&mut schema);
    bound(&mut schema, "", bounds);
    schema
}

/// The GBNF grammar for one request's own answer schema (`papayu_protocol::request_schema`):
/// made by llama.cpp's converter, and cached by the schema's text (a project's requests repeat
/// the same shape; at most 32 are kept).
pub fn gbnf_for_schema(schema: &Value) -> Result<String, LlmError> {
    static CACHE: OnceLock<Mutex<Vec<(String, String)>>> = OnceLock::new();
    const KEPT: usize = 32;
    let text = schema.to_string();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(g) = cache
        .lock()
        .ok()
        .and_then(|c| c.iter().find(|(t, _)| *t == text).map(|(_, g)| g.clone()))
    {
        return Ok(g);
    }
    let grammar = llama_cpp_2::json_schema_to_grammar(&text).map_err(|e| {
        LlmError::config(format!(
            "llama.cpp cannot turn the request's answer schema into a grammar: {e}"
        ))
    })?;
    if let Ok(mut c) = cache.lock() {
        if c.len() >= KEPT {
            c.remove(0);
        }
        c.push((text, grammar.clone()));
    }
    Ok(grammar)
}

/// The GBNF grammar for `version` under `bounds`, made once per process and cached.
pub fn gbnf(version: ProtocolVersion, bounds: &GrammarBounds) -> Result<String, LlmError> {
    static CACHE: OnceLock<Mutex<HashMap<(u8, GrammarBounds), String>>> = OnceLock::new();
    let problems = bounds.problems();
    if !problems.is_empty() {
        return Err(LlmError::config(problems.join("; ")));
    }
    let cache = CACHE.get_or_init(Default::default);
    let key = (version.number(), *bounds);
    if let Some(g) = cache.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(g);
    }
    let schema = grammar_schema(version, bounds).to_string();
    let grammar = llama_cpp_2::json_schema_to_grammar(&schema).map_err(|e| {
        LlmError::config(format!(
            "llama.cpp cannot turn the protocol v{} schema into a grammar: {e}",
            version.number()
        ))
    })?;
    if let Ok(mut m) = cache.lock() {
        m.insert(key, grammar.clone());
    }
    Ok(grammar)
}
