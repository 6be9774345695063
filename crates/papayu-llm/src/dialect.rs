//! The three wire dialects: request bodies, response envelopes, stream events.

use papayu_protocol::schema::{
    SchemaVariant, openai_json_schema_wrapper, schema_value, strip_meta,
};
use std::sync::OnceLock;

use papayu_protocol::{RequestShape, compact_schema};

use serde_json::{Map, Value, json};

use crate::capability::ResponseFormat;
use crate::config::{ProviderConfig, ProviderKind};
use crate::request::{Message, Role, Sampling, Usage};

/// Name of Anthropic's forced tool.
pub(crate) const ANTHROPIC_TOOL: &str = "papayu_response";

/// What a provider answered, dialect-independent.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub text: String,
    pub usage: Option<Usage>,
    pub finish_reason: Option<String>,
}

/// Everything the request body depends on besides the configuration.
pub(crate) struct BodyParams<'a> {
    pub messages: &'a [Message],
    pub format: ResponseFormat,
    pub protocol: papayu_protocol::ProtocolVersion,
    pub max_tokens: u32,
    pub stream: bool,
    /// What the answer may contain, when the caller narrowed it.
    pub shape: Option<&'a RequestShape>,
    /// This request's own temperature and seed, when the caller set them.
    pub sampling: Option<Sampling>,
}

/// The temperature a body carries: the request's own, else the configured one.
fn temperature(config: &ProviderConfig, p: &BodyParams<'_>) -> Value {
    float(p.sampling.map_or(config.temperature, |s| s.temperature))
}

/// A float as JSON without f32 noise (0.2f32 would print 0.20000000298023224).
fn float(x: f32) -> Value {
    json!((f64::from(x) * 1000.0).round() / 1000.0)
}

/// The provider-strict schema of a version without annotations, built once per process
/// (parsing the embedded text on every request would cost more than the rest of the body).
fn strict_schema(p: &BodyParams<'_>) -> Value {
    static CACHE: [OnceLock<Value>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    CACHE[usize::from(p.protocol.number().saturating_sub(1)).min(2)]
        .get_or_init(|| strip_meta(schema_value(p.protocol, SchemaVariant::Strict)))
        .clone()
}

/// The schema a server that builds its own decoding grammar gets: the request's compact schema
/// when the caller narrowed the answer (only the kinds and fields this request may hold, no
/// bounds a converter would expand rule by rule), else the version's whole strict schema.
fn server_schema(p: &BodyParams<'_>) -> Value {
    match p.shape {
        Some(shape) => compact_schema(shape),
        None => grammar_friendly(strict_schema(p)),
    }
}

/// `response_format.json_schema` for OpenAI strict mode, built once per process. A narrowed
/// request to an OpenAI-compatible server (llama.cpp, vLLM, LM Studio: they turn it into a
/// grammar and do not require OpenAI's every-field-required form) names the compact schema.
fn openai_wrapper(config: &ProviderConfig, p: &BodyParams<'_>) -> Value {
    if let (Some(shape), ProviderKind::OpenAiCompatible) = (p.shape, config.kind) {
        return json!({
            "name": format!("papayu_response_v{}", p.protocol.number()),
            "strict": true,
            "schema": compact_schema(shape),
        });
    }
    static CACHE: [OnceLock<Value>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    CACHE[usize::from(p.protocol.number().saturating_sub(1)).min(2)]
        .get_or_init(|| openai_json_schema_wrapper(p.protocol))
        .clone()
}

/// Rewrite `{"type": [T, "null"], ...}` as `{"anyOf": [{"type": T, ...}, {"type": "null"}]}`.
///
/// The `json_object` + schema form is served by llama.cpp-family servers that turn the schema
/// into a sampling grammar; their converters read a type list as a bare union of primitive
/// types and silently drop `items`, `properties` and `enum`, so the model would be free inside
/// every nullable field. `anyOf` keeps those constraints, and means the same JSON Schema.
pub(crate) fn grammar_friendly(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) => {
            for v in map.values_mut() {
                *v = grammar_friendly(std::mem::take(v));
            }
            let nullable_pair = match map.get("type") {
                Some(Value::Array(types)) if types.len() == 2 && types.contains(&json!("null")) => {
                    types.iter().find(|t| **t != json!("null")).cloned()
                }
                _ => None,
            };
            let Some(inner_type) = nullable_pair else {
                return Value::Object(map);
            };
            map.insert("type".into(), inner_type);
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            json!({ "anyOf": [Value::Object(map), { "type": "null" }] })
        }
        Value::Array(items) => Value::Array(items.into_iter().map(grammar_friendly).collect()),
        other => other,
    }
}

fn chat_messages(messages: &[Message]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| json!({ "role": m.role.as_str(), "content": m.content }))
            .collect(),
    )
}

/// The JSON body of one request.
pub(crate) fn build_body(config: &ProviderConfig, p: &BodyParams<'_>) -> Value {
    match config.kind {
        // `Local` never reaches the HTTP dialects (HttpProvider::new refuses it).
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Local => {
            openai_body(config, p)
        }
        ProviderKind::Ollama => ollama_body(config, p),
        ProviderKind::Anthropic => anthropic_body(config, p),
    }
}

fn openai_body(config: &ProviderConfig, p: &BodyParams<'_>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(config.model));
    body.insert("messages".into(), chat_messages(p.messages));
    body.insert("temperature".into(), temperature(config, p));
    if let Some(s) = p.sampling {
        body.insert("seed".into(), json!(s.seed));
    }
    body.insert("top_p".into(), json!(1.0));
    body.insert("presence_penalty".into(), json!(0.0));
    body.insert("frequency_penalty".into(), json!(0.0));
    body.insert("max_tokens".into(), json!(p.max_tokens));
    body.insert("stream".into(), json!(p.stream));
    if p.stream && config.kind == ProviderKind::OpenAi {
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    match p.format {
        ResponseFormat::JsonSchema => {
            body.insert(
                "response_format".into(),
                json!({ "type": "json_schema", "json_schema": openai_wrapper(config, p) }),
            );
        }
        ResponseFormat::JsonObjectWithSchema => {
            body.insert(
                "response_format".into(),
                json!({ "type": "json_object", "schema": server_schema(p) }),
            );
        }
        ResponseFormat::JsonObject => {
            body.insert("response_format".into(), json!({ "type": "json_object" }));
        }
        ResponseFormat::None => {}
    }
    Value::Object(body)
}

fn ollama_body(config: &ProviderConfig, p: &BodyParams<'_>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(config.model));
    body.insert("messages".into(), chat_messages(p.messages));
    body.insert("stream".into(), json!(p.stream));
    match p.format {
        ResponseFormat::JsonSchema | ResponseFormat::JsonObjectWithSchema => {
            let schema = match p.shape {
                Some(shape) => compact_schema(shape),
                None => strict_schema(p),
            };
            body.insert("format".into(), schema);
        }
        ResponseFormat::JsonObject => {
            body.insert("format".into(), json!("json"));
        }
        ResponseFormat::None => {}
    }
    let mut options = json!({
        "temperature": temperature(config, p),
        "top_p": 1.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "num_predict": p.max_tokens,
    });
    if let (Some(s), Some(map)) = (p.sampling, options.as_object_mut()) {
        map.insert("seed".into(), json!(s.seed));
    }
    body.insert("options".into(), options);
    Value::Object(body)
}

fn anthropic_body(config: &ProviderConfig, p: &BodyParams<'_>) -> Value {
    let system: Vec<&str> = p
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    let turns: Vec<Value> = p
        .messages
        .iter()
        .filter(|m| m.role != Role::System)
        .map(|m| json!({ "role": m.role.as_str(), "content": m.content }))
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(config.model));
    body.insert("max_tokens".into(), json!(p.max_tokens));
    // Recent Claude models refuse `temperature` and `top_p` together; top_p defaults to 1 and
    // penalties do not exist in the Messages API, so temperature alone carries SPEC §7's intent.
    body.insert("temperature".into(), temperature(config, p));
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(turns));
    body.insert("stream".into(), json!(p.stream));
    if p.format != ResponseFormat::None {
        body.insert(
            "tools".into(),
            json!([{
                "name": ANTHROPIC_TOOL,
                "description": format!(
                    "Submit the answer as one papayu protocol v{} response object.",
                    p.protocol.number()
                ),
                "input_schema": strict_schema(p),
            }]),
        );
        body.insert(
            "tool_choice".into(),
            json!({ "type": "tool", "name": ANTHROPIC_TOOL }),
        );
    }
    Value::Object(body)
}

fn u64_at(v: &Value, pointer: &str) -> Option<u64> {
    v.pointer(pointer).and_then(Value::as_u64)
}

fn str_at(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn usage(input: Option<u64>, output: Option<u64>) -> Option<Usage> {
    (input.is_some() || output.is_some()).then_some(Usage {
        input_tokens: input,
        output_tokens: output,
    })
}

/// Parse a complete (non-streamed) response body.
pub(crate) fn parse_body(kind: ProviderKind, body: &[u8]) -> Result<Answer, String> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| format!("response body is not JSON: {e}"))?;
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        return Err(format!("provider reported an error: {err}"));
    }
    match kind {
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Local => {
            let choice = v
                .pointer("/choices/0")
                .ok_or("no `choices[0]` in the response")?;
            let text = match choice.pointer("/message/content") {
                Some(Value::String(s)) => s.clone(),
                _ => match str_at(choice, "/message/refusal") {
                    Some(refusal) => return Err(format!("the model refused: {refusal}")),
                    None => {
                        return Err("no `choices[0].message.content` string in the response".into());
                    }
                },
            };
            Ok(Answer {
                text,
                usage: usage(
                    u64_at(&v, "/usage/prompt_tokens"),
                    u64_at(&v, "/usage/completion_tokens"),
                ),
                finish_reason: str_at(choice, "/finish_reason"),
            })
        }
        ProviderKind::Ollama => {
            let text = str_at(&v, "/message/content")
                .ok_or("no `message.content` string in the response")?;
            Ok(Answer {
                text,
                usage: usage(u64_at(&v, "/prompt_eval_count"), u64_at(&v, "/eval_count")),
                finish_reason: str_at(&v, "/done_reason"),
            })
        }
        ProviderKind::Anthropic => {
            let blocks = v
                .get("content")
                .and_then(Value::as_array)
                .ok_or("no `content` array in the response")?;
            let tool_input = blocks.iter().find_map(|b| {
                (b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .then(|| b.get("input"))
                    .flatten()
            });
            let text = match tool_input {
                Some(input) => serde_json::to_string(input).map_err(|e| e.to_string())?,
                None => blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<String>(),
            };
            Ok(Answer {
                text,
                usage: usage(
                    u64_at(&v, "/usage/input_tokens"),
                    u64_at(&v, "/usage/output_tokens"),
                ),
                finish_reason: str_at(&v, "/stop_reason"),
            })
        }
    }
}

/// State of a streamed answer.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    pub answer: Answer,
    pub chars: usize,
    pub done: bool,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// The data of the SSE event being dispatched.
    data: String,
}

impl StreamState {
    fn push_text(&mut self, s: &str) {
        self.chars += s.chars().count();
        self.answer.text.push_str(s);
    }

    pub(crate) fn finish(mut self) -> Answer {
        self.answer.usage = usage(self.input_tokens, self.output_tokens);
        self.answer
    }

    /// Feed one NDJSON line (Ollama; without its line ending). Returns `true` when text was
    /// added.
    pub(crate) fn line(&mut self, line: &str) -> Result<bool, String> {
        self.ndjson_line(line)
    }

    /// Feed the data of one SSE event (parsed by eventsource-stream). Returns `true` when text
    /// was added.
    pub(crate) fn event(&mut self, kind: ProviderKind, data: &str) -> Result<bool, String> {
        data.clone_into(&mut self.data);
        self.dispatch(kind)
    }

    fn dispatch(&mut self, kind: ProviderKind) -> Result<bool, String> {
        if self.data.is_empty() {
            return Ok(false);
        }
        let data = std::mem::take(&mut self.data);
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(false);
        }
        let v: Value =
            serde_json::from_str(&data).map_err(|e| format!("stream event is not JSON: {e}"))?;
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            return Err(format!("provider reported an error mid-stream: {err}"));
        }
        let before = self.chars;
        if kind == ProviderKind::Anthropic {
            self.anthropic_event(&v)?;
        } else {
            if let Some(Value::String(s)) = v.pointer("/choices/0/delta/content") {
                self.push_text(s);
            }
            if let Some(reason) = str_at(&v, "/choices/0/finish_reason") {
                self.answer.finish_reason = Some(reason);
            }
            if let Some(i) = u64_at(&v, "/usage/prompt_tokens") {
                self.input_tokens = Some(i);
            }
            if let Some(o) = u64_at(&v, "/usage/completion_tokens") {
                self.output_tokens = Some(o);
            }
        }
        Ok(self.chars != before)
    }

    fn anthropic_event(&mut self, v: &Value) -> Result<(), String> {
        match v.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                self.input_tokens = u64_at(v, "/message/usage/input_tokens").or(self.input_tokens);
                self.output_tokens =
                    u64_at(v, "/message/usage/output_tokens").or(self.output_tokens);
            }
            Some("content_block_start") => {
                if let Some(Value::String(s)) = v.pointer("/content_block/text") {
                    self.push_text(s);
                }
            }
            Some("content_block_delta") => match v.pointer("/delta/type").and_then(Value::as_str) {
                Some("text_delta") => {
                    if let Some(Value::String(s)) = v.pointer("/delta/text") {
                        self.push_text(s);
                    }
                }
                Some("input_json_delta") => {
                    if let Some(Value::String(s)) = v.pointer("/delta/partial_json") {
                        self.push_text(s);
                    }
                }
                _ => {}
            },
            Some("message_delta") => {
                if let Some(reason) = str_at(v, "/delta/stop_reason") {
                    self.answer.finish_reason = Some(reason);
                }
                self.output_tokens = u64_at(v, "/usage/output_tokens").or(self.output_tokens);
            }
            Some("message_stop") => self.done = true,
            Some("error") => return Err(format!("provider reported an error mid-stream: {v}")),
            _ => {}
        }
        Ok(())
    }

    fn ndjson_line(&mut self, line: &str) -> Result<bool, String> {
        if line.trim().is_empty() {
            return Ok(false);
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("stream line is not JSON: {e}"))?;
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            return Err(format!("provider reported an error mid-stream: {err}"));
        }
        let before = self.chars;
        if let Some(Value::String(s)) = v.pointer("/message/content") {
            self.push_text(s);
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            self.answer.finish_reason = str_at(&v, "/done_reason");
            self.input_tokens = u64_at(&v, "/prompt_eval_count");
            self.output_tokens = u64_at(&v, "/eval_count");
        }
        Ok(self.chars != before)
    }
}

/// Splits a byte stream into lines. Lines are cut at `\n` bytes, which never occur inside a
/// multi-byte UTF-8 sequence, so a chunk boundary splitting a character is harmless: the bytes
/// wait in the buffer until their line is complete.
#[derive(Debug, Default)]
pub(crate) struct LineSplitter {
    buf: Vec<u8>,
}

impl LineSplitter {
    /// Append a chunk and hand every complete line to `each`.
    pub(crate) fn push(
        &mut self,
        chunk: &[u8],
        mut each: impl FnMut(&str) -> Result<(), String>,
    ) -> Result<(), String> {
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(offset) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + offset;
            let line = &self.buf[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let text =
                std::str::from_utf8(line).map_err(|e| format!("stream line is not UTF-8: {e}"))?;
            each(text)?;
            start = end + 1;
        }
        self.buf.drain(..start);
        Ok(())
    }

    /// The unterminated rest, if any.
    pub(crate) fn finish(
        &mut self,
        mut each: impl FnMut(&str) -> Result<(), String>,
    ) -> Result<(), String> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let rest = std::mem::take(&mut self.buf);
        let line = rest.strip_suffix(b"\r").unwrap_or(&rest);
        let text =
            std::str::from_utf8(line).map_err(|e| format!("stream line is not UTF-8: {e}"))?;
        each(text)
    }
}
