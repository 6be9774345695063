//! Trace files (SPEC §10): `.papa-yu/traces/<trace_id>.json`, written atomically and redacted.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_context::{CacheStats, ContextStats};
use papayu_protocol::{ErrorCode, Violation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::{Round, Stage};
use crate::error::AgentError;
use crate::state::write_atomic;

/// Where traces live, relative to the project root.
pub const TRACES_DIR: &str = ".papa-yu/traces";

/// `context_stats` of a trace (SPEC §6.3), summed over the context rounds of the call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextStatsRecord {
    /// FILE blocks with content that were sent.
    pub context_files_count: usize,
    /// FILE blocks that were dropped.
    pub context_files_dropped_count: usize,
    /// Characters of the rendered context.
    pub context_total_chars: usize,
    /// Characters of LOGS blocks.
    pub context_logs_chars: usize,
    /// FILE blocks sent truncated.
    pub context_truncated_files_count: usize,
}

impl ContextStatsRecord {
    pub(crate) fn add(&mut self, s: &ContextStats) {
        self.context_files_count += s.context_files_count;
        self.context_files_dropped_count += s.context_files_dropped_count;
        self.context_total_chars += s.context_total_chars;
        self.context_logs_chars += s.context_logs_chars;
        self.context_truncated_files_count += s.context_truncated_files_count;
    }
}

/// `cache_stats` of a trace: hits and misses per request type and the hit rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheStatsRecord {
    /// Hits over all types.
    pub hits: u64,
    /// Misses over all types.
    pub misses: u64,
    /// hits / (hits + misses), 0 when nothing was requested.
    pub hit_rate: f64,
    /// Per type (`env`, `logs`, `read_file`, `search`): `[hits, misses]`.
    pub by_type: BTreeMap<String, [u64; 2]>,
}

impl From<CacheStats> for CacheStatsRecord {
    fn from(c: CacheStats) -> Self {
        let t = c.total();
        let total = t.hits + t.misses;
        Self {
            hits: t.hits,
            misses: t.misses,
            hit_rate: if total == 0 {
                0.0
            } else {
                t.hits as f64 / total as f64
            },
            by_type: [
                ("env", c.env),
                ("logs", c.logs),
                ("read_file", c.read_file),
                ("search", c.search),
            ]
            .into_iter()
            .map(|(k, h)| (k.to_owned(), [h.hits, h.misses]))
            .collect(),
        }
    }
}

/// One model call of a plan call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// Which request of the call it answered.
    pub kind: Round,
    /// Protocol version of the call.
    pub protocol: u8,
    /// Characters sent.
    pub input_chars: usize,
    /// Characters received.
    pub output_chars: usize,
    /// What was wrong with the answer (empty when accepted or when it asked for context).
    pub violations: Vec<Violation>,
    /// Where it was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
    /// The answer text, redacted; only with `PAPAYU_TRACE_RAW=1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

/// A file of the project as it was before apply, kept (with `PAPAYU_TRACE_RAW=1`) so a trace
/// can become a replayable golden trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixtureFile {
    /// Project-relative path.
    pub path: String,
    /// The content when it is UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The content as lowercase hex when it is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
}

impl FixtureFile {
    /// The file's bytes.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        match (&self.text, &self.hex) {
            (Some(t), _) => Some(t.clone().into_bytes()),
            (None, Some(h)) => hex::decode(h).ok(),
            (None, None) => None,
        }
    }

    pub(crate) fn from_bytes(path: &str, bytes: Vec<u8>) -> Self {
        match String::from_utf8(bytes) {
            Ok(text) => Self {
                path: path.to_owned(),
                text: Some(text),
                hex: None,
            },
            Err(e) => Self {
                path: path.to_owned(),
                text: None,
                hex: Some(hex::encode(e.as_bytes())),
            },
        }
    }
}

/// What happened to the plan on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApplyRecord {
    /// `pending` (previewed, not confirmed yet), `applied`, `no_changes`, `rolled_back`,
    /// `declined` or `rejected`.
    pub outcome: String,
    /// The transaction id when applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_id: Option<String>,
    /// The error code when rolled back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// Indices of the actions applied.
    #[serde(default)]
    pub selected: Vec<usize>,
    /// sha256 of each touched path after apply (`null`: the path does not exist).
    #[serde(default)]
    pub files_after: BTreeMap<String, Option<String>>,
}

/// One trace file: everything SPEC §10 lists about a plan call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// UUID v7.
    pub trace_id: String,
    /// ms since the Unix epoch.
    pub created_unix_ms: u64,
    /// `LLM_PLAN_OK` or `LLM_PLAN_ERR`.
    pub event: String,
    /// `PLAN` or `APPLY`.
    pub mode: String,
    /// Prompt family (`chat`, `fixit`, `fix-plan`).
    pub llm_mode: String,
    /// The goal (redacted).
    pub goal: String,
    /// Protocol version of the final attempt.
    pub schema_version: u8,
    /// sha256 of that version's schema.
    pub schema_hash: String,
    /// Provider kind.
    pub provider: String,
    /// Model.
    pub model: String,
    /// Characters of the last request.
    pub input_chars: usize,
    /// `max_tokens` of the last request.
    pub token_budget: u32,
    /// Whether strict structured output was asked for.
    pub strict_json: bool,
    /// The accepted answer, as JSON.
    #[serde(default)]
    pub validated_json: Option<Value>,
    /// Context sent, summed over rounds.
    pub context_stats: ContextStatsRecord,
    /// Context cache counters.
    pub cache_stats: CacheStatsRecord,
    /// Extra context rounds used.
    pub context_rounds: u32,
    /// Protocol the call started with.
    pub protocol_default: u8,
    /// Protocol of each attempt group (e.g. `[2, 1]` after a fallback).
    pub protocol_attempts: Vec<u8>,
    /// Whether a protocol fallback happened.
    pub protocol_fallback_attempted: bool,
    /// The code that caused it.
    #[serde(default)]
    pub protocol_fallback_reason: Option<ErrorCode>,
    /// Where the answer that caused it was rejected.
    #[serde(default)]
    pub protocol_fallback_stage: Option<Stage>,
    /// 1 when the repair round was used.
    pub protocol_repair_attempt: u8,
    /// Whether the repaired answer was accepted (`None`: no repair).
    #[serde(default)]
    pub repair_success: Option<bool>,
    /// Paths whose `base_sha256` was injected into the repair prompt.
    #[serde(default)]
    pub repair_injected_paths: Vec<String>,
    /// Edits moved to the one sent file their text fits (`from -> to`), instead of a repair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retargeted_edits: Vec<String>,
    /// Actions of one answer on one file read as one (D80): `path: 3 actions, repeated` (or
    /// `rewritten`, `in_turn`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_actions: Vec<String>,
    /// Whole-file answers read as the stretch of their file they hold (`path: lines a-b, n
    /// kept`) or unwrapped from a code fence (`path: unfenced`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widened_updates: Vec<String>,
    /// This change is part of a rejected change, tried alone (D65): the rejected change's
    /// trace and the hunks kept (`hunks 3 of 4 of <trace id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_of: Option<String>,
    /// Every model call.
    pub attempts: Vec<AttemptRecord>,
    /// Files whose content was sent, with sha256.
    pub sent_files: BTreeMap<String, String>,
    /// The web pages cited by the online research that was sent (`web_search`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub online_sources: Vec<String>,
    /// Pre-apply contents of the files involved (only with `PAPAYU_TRACE_RAW=1`).
    #[serde(default)]
    pub fixture: Vec<FixtureFile>,
    /// The code the call ended with, if it failed.
    #[serde(default)]
    pub error_code: Option<ErrorCode>,
    /// The error text (redacted).
    #[serde(default)]
    pub error: Option<String>,
    /// The memory_patch report, if the answer carried one.
    #[serde(default)]
    pub memory_patch: Option<Value>,
    /// The apply outcome (APPLY calls).
    #[serde(default)]
    pub apply: Option<ApplyRecord>,
    /// Effective configuration, secrets omitted.
    pub config_snapshot: BTreeMap<String, Value>,
}

/// A trace's file.
pub fn trace_path(root: &Utf8Path, trace_id: &str) -> Utf8PathBuf {
    root.join(TRACES_DIR).join(format!("{trace_id}.json"))
}

/// Pass every string of `value` through papayu-llm's redaction.
pub fn redact_value(value: &mut Value) {
    match value {
        Value::String(s) => {
            let r = papayu_llm::redact(s).into_owned();
            *s = r;
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        Value::Object(map) => map.values_mut().for_each(redact_value),
        _ => {}
    }
}

/// Write `trace` to `.papa-yu/traces/<trace_id>.json` atomically, redacted, as one compact
/// JSON line (seed 001's weekly pipelines grep for `"protocol_fallback_attempted":true` and
/// count matching lines, which a pretty-printed file defeats; `papayu trace show` pretty-prints).
///
/// Fixture files whose path is protected (papayu-validate's built-in list: `.env`, `.npmrc`,
/// keys, …) are left out whole: an answer may name such a file, but its content is never
/// copied into a trace.
pub fn write_trace(root: &Utf8Path, trace: &TraceRecord) -> Result<Utf8PathBuf, AgentError> {
    let path = trace_path(root, &trace.trace_id);
    let mut value = serde_json::to_value(trace).map_err(|e| AgentError::State {
        path: path.clone(),
        message: e.to_string(),
    })?;
    if let Some(files) = value.get_mut("fixture").and_then(Value::as_array_mut) {
        let policy = papayu_validate::Policy::default();
        files.retain(|f| {
            f.get("path")
                .and_then(Value::as_str)
                .and_then(|p| papayu_validate::RelPath::parse(p).ok())
                .is_some_and(|p| !policy.is_protected(&p))
        });
    }
    redact_value(&mut value);
    let mut bytes = serde_json::to_vec(&value).map_err(|e| AgentError::State {
        path: path.clone(),
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    write_atomic(&path, &bytes)?;
    Ok(path)
}

/// Read one trace file.
pub fn load_trace(path: &Utf8Path) -> Result<TraceRecord, AgentError> {
    let text = fs_err::read_to_string(path).map_err(AgentError::io(path))?;
    serde_json::from_str(&text).map_err(|e| AgentError::State {
        path: path.to_owned(),
        message: format!("not a papayu trace: {e}"),
    })
}

/// A line of `papayu trace list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceSummary {
    /// UUID v7.
    pub trace_id: String,
    /// ms since the Unix epoch.
    pub created_unix_ms: u64,
    /// `PLAN` or `APPLY`.
    pub mode: String,
    /// `LLM_PLAN_OK` or `LLM_PLAN_ERR`.
    pub event: String,
    /// Final protocol.
    pub schema_version: u8,
    /// Error code, if any.
    pub error_code: Option<ErrorCode>,
    /// Apply outcome, if any.
    pub apply_outcome: Option<String>,
    /// The file.
    pub path: Utf8PathBuf,
}

/// Trace files with their parsed content.
pub type TraceList = Vec<(Utf8PathBuf, TraceRecord)>;

/// Every readable trace of the project, oldest first (UUID v7 order), with the unreadable
/// files' errors. A missing traces directory is an empty list.
pub fn load_traces(root: &Utf8Path) -> Result<(TraceList, Vec<AgentError>), AgentError> {
    let dir = root.join(TRACES_DIR);
    let entries = match fs_err::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => {
            return Err(AgentError::Io {
                path: dir,
                source: e,
            });
        }
    };
    let mut paths: Vec<Utf8PathBuf> = entries
        .filter_map(Result::ok)
        .filter_map(|e| Utf8PathBuf::from_path_buf(e.path()).ok())
        .filter(|p| {
            p.extension() == Some("json") && !p.file_name().is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    paths.sort();
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for p in paths {
        match load_trace(&p) {
            Ok(t) => ok.push((p, t)),
            Err(e) => bad.push(e),
        }
    }
    ok.sort_by(|a, b| {
        (a.1.created_unix_ms, &a.1.trace_id).cmp(&(b.1.created_unix_ms, &b.1.trace_id))
    });
    Ok((ok, bad))
}

/// `papayu trace list`: one summary per readable trace, oldest first.
pub fn list_traces(root: &Utf8Path) -> Result<Vec<TraceSummary>, AgentError> {
    let (traces, _) = load_traces(root)?;
    Ok(traces
        .into_iter()
        .map(|(path, t)| TraceSummary {
            trace_id: t.trace_id,
            created_unix_ms: t.created_unix_ms,
            mode: t.mode,
            event: t.event,
            schema_version: t.schema_version,
            error_code: t.error_code,
            apply_outcome: t.apply.map(|a| a.outcome),
            path,
        })
        .collect())
}

/// Whether `id` is a trace id papayu writes (a lowercase UUID, hex digits with dashes at 8,
/// 13, 18 and 23) or a non-empty prefix of one.
pub fn is_trace_id_prefix(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 36
        && id.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        })
}

/// `papayu trace show <id>`: the trace whose id is `id` or starts with it (a unique prefix).
///
/// `id` must be a trace id or a prefix of one ([`is_trace_id_prefix`]): it names a file under
/// `.papa-yu/traces/`, so a path such as `../../x` is refused before anything is opened.
pub fn show_trace(root: &Utf8Path, id: &str) -> Result<TraceRecord, AgentError> {
    if !is_trace_id_prefix(id) {
        let shown: String = id.chars().take(40).collect();
        return Err(AgentError::State {
            path: root.join(TRACES_DIR),
            message: format!(
                "{shown:?} is not a trace id: give the UUID papayu printed (lowercase hex digits \
                 and dashes, e.g. 0190c3a2-7b1e-7c4d-9f00-1a2b3c4d5e6f) or a prefix of it"
            ),
        });
    }
    let exact = trace_path(root, id);
    if exact.is_file() {
        return load_trace(&exact);
    }
    let (traces, _) = load_traces(root)?;
    let mut matching: Vec<_> = traces
        .into_iter()
        .filter(|(_, t)| t.trace_id.starts_with(id))
        .collect();
    match matching.len() {
        1 => Ok(matching.remove(0).1),
        0 => Err(AgentError::State {
            path: exact,
            message: "no such trace".into(),
        }),
        n => Err(AgentError::State {
            path: exact,
            message: format!("{n} traces start with `{id}`; give more of the id"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_trace_show_refuses_a_path_as_trace_id() {
        let dir = tempfile::tempdir().unwrap();
        let base = Utf8Path::from_path(dir.path()).unwrap();
        let root = base.join("a/b");
        fs_err::create_dir_all(root.join(TRACES_DIR)).unwrap();
        fs_err::write(base.join("x.json"), r#"{"api_key": "leaked-value-1234"}"#).unwrap();
        fs_err::write(
            root.join(".papa-yu/x.json"),
            r#"{"k": "leaked-value-1234"}"#,
        )
        .unwrap();
        for id in [
            "../../x",
            "../../../a/b/.papa-yu/x",
            "../x",
            "/etc/passwd",
            "x",
            "0190c3a2/../../x",
            "0190C3A2",
            "0190c3a2-7b1e-7c4d-9f00-1a2b3c4d5e6f0",
            "",
            "0190c3a2_7b1e",
        ] {
            let err = show_trace(&root, id).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("is not a trace id"), "{id}: {text}");
            assert!(!text.contains("leaked-value"), "{id}: {text}");
        }
    }

    #[test]
    fn trace_ids_and_their_prefixes_are_accepted() {
        let id = uuid::Uuid::now_v7().to_string();
        for n in 1..=id.len() {
            assert!(is_trace_id_prefix(&id[..n]), "{}", &id[..n]);
        }
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let err = show_trace(root, &id[..8]).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Io, "{err}");
        assert!(err.to_string().contains("no such trace"), "{err}");
    }
}
