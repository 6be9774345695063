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
        bounds.array(items, 0, self.max_actions)
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
mod tests {
    use super::*;

    fn shape(edit: EditStyle) -> RequestShape {
        RequestShape {
            edit,
            files: vec!["calc.py".into(), "test_calc.py".into()],
            ..RequestShape::default()
        }
    }

    #[test]
    fn edits_name_only_sent_files_and_carry_only_their_fields() {
        let s = request_schema(&shape(EditStyle::SearchReplace));
        let edit = &s["properties"]["actions"]["items"]["anyOf"][0];
        assert_eq!(
            edit["properties"]["path"]["enum"],
            json!(["calc.py", "test_calc.py"])
        );
        assert_eq!(edit["properties"]["kind"]["enum"], json!(["EDIT_FILE"]));
        assert_eq!(edit["required"], json!(["kind", "path", "edits"]));
        assert_eq!(edit["additionalProperties"], false);
        let e = &edit["properties"]["edits"]["items"];
        assert_eq!(e["required"], json!(["before", "after"]));
        // Creates name any relative path.
        let create = &s["properties"]["actions"]["items"]["anyOf"][1];
        assert_eq!(create["required"], json!(["kind", "path", "content"]));
        assert_eq!(s["required"], json!(["summary", "actions"]));
    }

    #[test]
    fn each_style_has_its_kind() {
        for (style, kind, field) in [
            (EditStyle::WholeFile, "UPDATE_FILE", "content"),
            (EditStyle::UnifiedDiff, "PATCH_FILE", "patch"),
        ] {
            let s = request_schema(&shape(style));
            let a = &s["properties"]["actions"]["items"]["anyOf"][0];
            assert_eq!(a["properties"]["kind"]["enum"], json!([kind]));
            assert!(a["properties"].get(field).is_some());
            assert!(a["properties"].get("base_sha256").is_none());
        }
        let plan = request_schema(&RequestShape {
            apply: false,
            ..shape(EditStyle::SearchReplace)
        });
        assert_eq!(plan["properties"]["actions"]["maxItems"], 0);
    }

    #[test]
    fn without_files_only_creates_are_possible() {
        let s = request_schema(&RequestShape::default());
        let items = &s["properties"]["actions"]["items"];
        assert_eq!(items["properties"]["kind"]["enum"], json!(["CREATE_FILE"]));
    }

    #[test]
    fn fill_in_puts_back_what_papayu_knows() {
        let sent = BTreeMap::from([("calc.py".to_owned(), "ab".repeat(32))]);
        let answer = r#"{"summary":"s","actions":[{"kind":"EDIT_FILE","path":"calc.py","edits":[{"before":"a - b","after":"a + b"}]},{"kind":"CREATE_FILE","path":"n.py","content":"x"}]}"#;
        let filled: Value = serde_json::from_str(&fill_in(answer, &sent)).unwrap();
        let a = &filled["actions"][0];
        assert_eq!(a["base_sha256"], "ab".repeat(32));
        assert_eq!(a["edits"][0]["op"], "replace");
        assert_eq!(a["edits"][0]["anchor"], "a - b");
        assert!(filled["actions"][1].get("base_sha256").is_none());
        // What the model wrote stays.
        let own =
            r#"{"actions":[{"kind":"PATCH_FILE","path":"calc.py","base_sha256":"x","patch":"p"}]}"#;
        let kept: Value = serde_json::from_str(&fill_in(own, &sent)).unwrap();
        assert_eq!(kept["actions"][0]["base_sha256"], "x");
        assert_eq!(fill_in("not json", &sent), "not json");
    }

    #[test]
    fn line_numbers_copied_from_the_context_are_taken_off() {
        let sent = BTreeMap::new();
        let answer = r#"{"actions":[{"kind":"EDIT_FILE","path":"c.py","edits":[{"before":"2|    return a - b\n","after":"2|    return a + b\n"}]}]}"#;
        let v: Value = serde_json::from_str(&fill_in(answer, &sent)).unwrap();
        assert_eq!(v["actions"][0]["edits"][0]["before"], "    return a - b\n");
        assert_eq!(v["actions"][0]["edits"][0]["after"], "    return a + b\n");
        assert_eq!(v["actions"][0]["edits"][0]["anchor"], "    return a - b\n");
        // Text that merely has a number and a bar somewhere is left alone.
        assert_eq!(strip_line_numbers("a | b\n12|x\n"), None);
        assert_eq!(strip_line_numbers("1|a\n\n3|c"), Some("a\n\nc".to_owned()));
    }

    #[test]
    fn the_compact_schema_states_no_bounds() {
        let s = compact_schema(&RequestShape {
            delete: true,
            ..shape(EditStyle::SearchReplace)
        });
        let text = s.to_string();
        for bound in ["maxLength", "maxItems", "{0,158}"] {
            assert!(!text.contains(bound), "{bound} in {text}");
        }
        // The kinds and their fields are those of the bounded form.
        let bounded = request_schema(&RequestShape {
            delete: true,
            ..shape(EditStyle::SearchReplace)
        });
        let kinds = |v: &Value| -> Vec<Value> {
            v["properties"]["actions"]["items"]["anyOf"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["required"].clone())
                .collect()
        };
        assert_eq!(kinds(&s), kinds(&bounded));
        assert_eq!(kinds(&s).len(), 3);
    }

    #[test]
    fn answer_tokens_follow_the_request() {
        let plan = RequestShape {
            apply: false,
            ..shape(EditStyle::SearchReplace)
        };
        assert_eq!(answer_tokens(&plan, 1_000_000), PLAN_TOKENS);
        let edit = shape(EditStyle::SearchReplace);
        let small = answer_tokens(&edit, 3_000);
        let large = answer_tokens(&edit, 30_000);
        assert!(small < large, "{small} {large}");
        // Twice the text sent, plus the envelope, a new file and context requests.
        assert_eq!(
            small as usize,
            ENVELOPE_TOKENS + 2_000 + NEW_FILE_TOKENS + CONTEXT_REQUEST_TOKENS
        );
        assert!(answer_tokens(&edit, usize::MAX) > 0);
    }

    mod property {
        use super::*;
        use crate::ProtocolVersion;
        use proptest::prelude::*;

        const FILES: [&str; 2] = ["calc.py", "src/test_calc.py"];

        fn text() -> impl Strategy<Value = String> {
            // Long texts, quotes, backslashes, newlines and non-ASCII: what JSON escapes.
            prop_oneof![".{0,40}", "[a-z \n\"\\\\{}é🦀]{0,3000}",]
        }

        fn new_path() -> impl Strategy<Value = String> {
            "[a-z][a-z0-9_]{0,12}(/[a-z][a-z0-9_]{0,12}){0,3}\\.(py|rs|md)"
        }

        fn action(style: EditStyle) -> impl Strategy<Value = Value> {
            let file = prop::sample::select(FILES.to_vec());
            let edit = (file.clone(), prop::collection::vec(("\\PC{1,60}", text()), 1..5))
                .prop_map(move |(path, edits)| match style {
                    EditStyle::SearchReplace => json!({
                        "kind": "EDIT_FILE", "path": path,
                        "edits": edits.iter().map(|(b, a)| json!({"before": b, "after": a})).collect::<Vec<_>>(),
                    }),
                    EditStyle::WholeFile => {
                        json!({"kind": "UPDATE_FILE", "path": path, "content": edits[0].1})
                    }
                    EditStyle::UnifiedDiff => {
                        json!({"kind": "PATCH_FILE", "path": path, "patch": edits[0].1})
                    }
                });
            let create = (new_path(), text()).prop_map(
                |(path, content)| json!({"kind": "CREATE_FILE", "path": path, "content": content}),
            );
            let delete = file.prop_map(|path| json!({"kind": "DELETE_FILE", "path": path}));
            prop_oneof![edit, create, delete]
        }

        fn answer(style: EditStyle, apply: bool) -> impl Strategy<Value = Value> {
            let actions = prop::collection::vec(action(style), 0..12);
            let reads = prop::option::of(prop::collection::vec(
                "[a-z][a-z/._]{0,200}".prop_map(|p| json!({"type": "read_file", "path": p})),
                0..3,
            ));
            (text(), actions, reads).prop_map(move |(summary, actions, reads)| {
                let mut v = json!({
                    "summary": summary,
                    "actions": if apply { actions } else { Vec::new() },
                });
                if let Some(reads) = reads {
                    v["context_requests"] = json!(reads);
                }
                v
            })
        }

        fn style() -> impl Strategy<Value = EditStyle> {
            prop_oneof![
                Just(EditStyle::SearchReplace),
                Just(EditStyle::WholeFile),
                Just(EditStyle::UnifiedDiff),
            ]
        }

        fn any_shape() -> impl Strategy<Value = RequestShape> {
            (
                (
                    any::<bool>(),
                    style(),
                    prop::sample::subsequence(FILES.to_vec(), 0..=2),
                ),
                (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
            )
                .prop_map(
                    |((apply, edit, files), (create, delete, context_requests, papayu_fills))| {
                        RequestShape {
                            apply,
                            edit,
                            files: files.into_iter().map(str::to_owned).collect(),
                            create,
                            delete,
                            context_requests,
                            papayu_fills,
                            ..RequestShape::default()
                        }
                    },
                )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            /// Whatever the shape, the root of the compact schema is one object with `summary`
            /// and `actions` required and nothing else allowed, never a union: a converter
            /// (llama-cpp-python's, llama.cpp's) then starts its grammar with `{`, so no
            /// answer decoded under it is a bare array or any other value at the root.
            #[test]
            fn the_compact_schema_has_an_object_at_the_root(shape in any_shape()) {
                let schema = compact_schema(&shape);
                prop_assert_eq!(&schema["type"], "object");
                prop_assert_eq!(&schema["additionalProperties"], false);
                let required = schema["required"].as_array().unwrap();
                prop_assert!(required.contains(&json!("summary")) && required.contains(&json!("actions")));
                for union in ["anyOf", "oneOf", "allOf", "$ref"] {
                    prop_assert!(schema.get(union).is_none(), "{union} at the root");
                }
                // Every alternative of an action is itself an object with its kind required.
                if let Some(alternatives) = schema["properties"]["actions"]["items"]["anyOf"].as_array() {
                    for a in alternatives {
                        prop_assert_eq!(&a["type"], "object");
                        prop_assert!(a["required"].as_array().unwrap().contains(&json!("kind")));
                    }
                }
                let validator = jsonschema::draft7::new(&schema).unwrap();
                for not_an_answer in [json!([]), json!([{"kind": "CREATE_FILE"}]), json!("s"), json!({"actions": []})] {
                    prop_assert!(!validator.is_valid(&not_an_answer), "{not_an_answer}");
                }
            }

            /// Every answer of the request's shape, whatever the length of its texts and the
            /// number of its actions, passes the compact schema; filled in, the protocol's own
            /// validation accepts it too (so the generated answers are valid plans).
            #[test]
            fn every_valid_answer_passes_the_compact_schema(
                (style, apply, v) in (style(), any::<bool>())
                    .prop_flat_map(|(s, a)| (Just(s), Just(a), answer(s, a)))
            ) {
                let shape = RequestShape {
                    apply,
                    edit: style,
                    files: FILES.iter().map(|f| (*f).to_owned()).collect(),
                    delete: true,
                    ..RequestShape::default()
                };
                let schema = compact_schema(&shape);
                let validator = jsonschema::draft7::new(&schema).unwrap();
                let errors: Vec<String> =
                    validator.iter_errors(&v).map(|e| e.to_string()).collect();
                prop_assert!(errors.is_empty(), "{errors:?}\n{v}");
                if style == EditStyle::SearchReplace {
                    let sent: BTreeMap<String, String> =
                        FILES.iter().map(|f| ((*f).to_owned(), "ab".repeat(32))).collect();
                    let filled = fill_in(&v.to_string(), &sent);
                    let parsed = crate::parse_response(&filled, ProtocolVersion::V3);
                    prop_assert!(
                        parsed.is_ok() || v["actions"].as_array().is_some_and(|a| a.len() > crate::MAX_ACTIONS),
                        "{parsed:?}\n{filled}"
                    );
                }
            }
        }
    }
}
