//! Golden traces (SPEC §10): recorded model answers with the project fixture they need, so
//! parsing, validation and apply can be replayed and checked against the recorded outcome.
//!
//! Format (`golden_traces/v1|v2|v3/NNN_name.json`), after the seeds' protocol / request /
//! context / result:
//!
//! * `protocol`: the version the call started with, its schema hash, the fallback setting;
//! * `request`: PLAN or APPLY, the prompt family and the goal;
//! * `context`: the files whose content was sent (path → sha256) and the fixture project
//!   (pre-apply file contents);
//! * `attempts`: every model answer with its protocol and the codes it was rejected with;
//! * `result`: the outcome (`applied`, `no_changes`, `accepted`, `planned`, `rejected`), the
//!   final error code, the fallback, and the sha256 of each touched path after apply.
//!
//! [`trace_to_golden`] converts a trace recorded with `PAPAYU_TRACE=1 PAPAYU_TRACE_RAW=1`
//! (what `cargo xtask golden <trace>` calls); [`replay`] re-runs an answer sequence in a temp
//! dir; [`replay_dir`] replays a whole `golden_traces/` tree and fails on an empty or missing
//! version directory.

use std::collections::{BTreeMap, BTreeSet};

use camino::{Utf8Path, Utf8PathBuf};
use papayu_patch::{ApplyOptions, Checks};
use papayu_protocol::{ErrorCode, ProtocolVersion, parse_response, schema_hash, sha256_hex};
use papayu_validate::{Mode, Policy, RelPath};
use serde::{Deserialize, Serialize};

use crate::agent::{Checker, FallbackInfo, Round, Stage, check_full, no_progress};
use crate::error::AgentError;
use crate::state::write_atomic;
use crate::trace::{FixtureFile, TraceRecord, load_trace};

/// `protocol` of a golden trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoldenProtocol {
    /// The version the call started with (the directory it lives in).
    pub version: u8,
    /// sha256 of that version's schema when recorded.
    pub schema_hash: String,
    /// `PAPAYU_PROTOCOL_FALLBACK_TO_V1` when recorded.
    pub fallback_to_v1: bool,
}

/// `request` of a golden trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoldenRequest {
    /// `PLAN` or `APPLY`.
    pub mode: String,
    /// Prompt family.
    pub llm_mode: String,
    /// The goal (redacted).
    pub goal: String,
}

/// `context` of a golden trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoldenContext {
    /// Files whose content was sent to the model, with their sha256.
    pub sent_files: BTreeMap<String, String>,
    /// The project before apply.
    pub fixture: Vec<FixtureFile>,
}

/// One recorded model answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoldenAttempt {
    /// Which request of the call it answered.
    pub kind: Round,
    /// Protocol version of the answer.
    pub protocol: u8,
    /// The answer text.
    pub response: String,
    /// Codes it was rejected with (empty: accepted, or a context round).
    pub expect_codes: Vec<ErrorCode>,
    /// Where it was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
}

/// `result` of a golden trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoldenResult {
    /// `applied`, `no_changes`, `accepted`, `planned` or `rejected`.
    pub outcome: String,
    /// The code the call ended with.
    #[serde(default)]
    pub error_code: Option<ErrorCode>,
    /// The protocol fallback, if any.
    #[serde(default)]
    pub protocol_fallback: Option<FallbackInfo>,
    /// Whether the repair round was used.
    pub repair_attempted: bool,
    /// sha256 of each touched path after apply (`null`: absent).
    #[serde(default)]
    pub files_after: BTreeMap<String, Option<String>>,
}

/// A golden trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoldenTrace {
    /// `NNN_name` without `.json`.
    pub name: String,
    /// The trace it came from.
    pub source_trace_id: String,
    /// Protocol.
    pub protocol: GoldenProtocol,
    /// Request.
    pub request: GoldenRequest,
    /// Context and fixture.
    pub context: GoldenContext,
    /// The model's answers.
    pub attempts: Vec<GoldenAttempt>,
    /// The recorded outcome.
    pub result: GoldenResult,
}

fn mismatch(name: &str, message: impl Into<String>) -> AgentError {
    AgentError::GoldenMismatch {
        name: name.to_owned(),
        message: message.into(),
    }
}

/// Turn a trace (recorded with `PAPAYU_TRACE_RAW=1`, so answers and fixture are present) into
/// a golden trace named `name`.
pub fn trace_to_golden(trace: &TraceRecord, name: &str) -> Result<GoldenTrace, AgentError> {
    let mut attempts = Vec::with_capacity(trace.attempts.len());
    for (i, a) in trace.attempts.iter().enumerate() {
        let response = a.raw.clone().ok_or_else(|| {
            mismatch(
                name,
                format!(
                    "attempt {i} has no raw answer: record with PAPAYU_TRACE=1 PAPAYU_TRACE_RAW=1"
                ),
            )
        })?;
        attempts.push(GoldenAttempt {
            kind: a.kind,
            protocol: a.protocol,
            response,
            expect_codes: a.violations.iter().map(|v| v.code).collect(),
            stage: a.stage,
        });
    }
    if attempts.is_empty() {
        return Err(mismatch(name, "the trace has no model answer"));
    }
    let outcome = match (&trace.apply, trace.event.as_str(), trace.mode.as_str()) {
        (Some(a), _, _) if a.outcome == "pending" || a.outcome == "declined" => {
            "accepted".to_owned()
        }
        (Some(a), _, _) if a.outcome == "rolled_back" => "rolled_back".to_owned(),
        (Some(a), _, _) => a.outcome.clone(),
        (None, "LLM_PLAN_OK", "PLAN") => "planned".to_owned(),
        (None, "LLM_PLAN_OK", _) => "accepted".to_owned(),
        (None, _, _) => "rejected".to_owned(),
    };
    // The agent records a fallback's reason and stage together.
    let fallback = trace
        .protocol_fallback_reason
        .zip(trace.protocol_fallback_stage)
        .map(|(reason, stage)| FallbackInfo {
            from: trace.protocol_default,
            to: trace.schema_version,
            reason,
            stage,
        });
    let fallback_to_v1 = trace
        .config_snapshot
        .get("protocol_fallback_to_v1")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true);
    Ok(GoldenTrace {
        name: name.to_owned(),
        source_trace_id: trace.trace_id.clone(),
        protocol: GoldenProtocol {
            version: trace.protocol_default,
            schema_hash: ProtocolVersion::from_number(trace.protocol_default)
                .map(schema_hash)
                .unwrap_or_default(),
            fallback_to_v1,
        },
        request: GoldenRequest {
            mode: trace.mode.clone(),
            llm_mode: trace.llm_mode.clone(),
            goal: trace.goal.clone(),
        },
        context: GoldenContext {
            sent_files: trace.sent_files.clone(),
            fixture: trace.fixture.clone(),
        },
        attempts,
        result: GoldenResult {
            outcome,
            error_code: trace
                .error_code
                .or_else(|| trace.apply.as_ref().and_then(|a| a.error_code)),
            protocol_fallback: fallback,
            repair_attempted: trace.protocol_repair_attempt > 0,
            files_after: trace
                .apply
                .as_ref()
                .map(|a| a.files_after.clone())
                .unwrap_or_default(),
        },
    })
}

/// `cargo xtask golden <trace> [--name NAME]`: convert the trace file at `trace_file` and
/// write it to `<golden_root>/v<N>/<NNN>_<name>.json` (N: the version the call started with,
/// NNN: the next free number). Returns the path written.
pub fn golden_from_trace_file(
    trace_file: &Utf8Path,
    golden_root: &Utf8Path,
    name: &str,
) -> Result<Utf8PathBuf, AgentError> {
    let trace = load_trace(trace_file)?;
    let dir = golden_root.join(format!("v{}", trace.protocol_default));
    let next = match fs_err::read_dir(&dir) {
        Ok(entries) => {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|n| n.get(..3).and_then(|d| d.parse::<u32>().ok()))
                })
                .max()
                .unwrap_or(0)
                + 1
        }
        Err(_) => 1,
    };
    let full = format!("{next:03}_{name}");
    let golden = trace_to_golden(&trace, &full)?;
    // The replay must reproduce the recording before it becomes golden.
    replay(&golden)?;
    let path = dir.join(format!("{full}.json"));
    let mut text = serde_json::to_string_pretty(&golden).map_err(|e| AgentError::State {
        path: path.clone(),
        message: e.to_string(),
    })?;
    text.push('\n');
    write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// What [`replay`] checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayReport {
    /// The golden trace.
    pub name: String,
    /// Answers re-checked.
    pub attempts: usize,
    /// The outcome reproduced.
    pub outcome: String,
    /// The final error code reproduced.
    pub error_code: Option<ErrorCode>,
}

/// Re-run parsing, validation, preview and (for `applied`) apply of every recorded answer
/// against the fixture in a temp dir, and check the recorded codes, outcome and file hashes.
pub fn replay(golden: &GoldenTrace) -> Result<ReplayReport, AgentError> {
    let name = golden.name.as_str();
    let tmp = tempfile::tempdir().map_err(AgentError::io("<temp dir>"))?;
    let root = Utf8Path::from_path(tmp.path())
        .ok_or_else(|| mismatch(name, "temp dir is not UTF-8"))?
        .to_owned();
    for f in &golden.context.fixture {
        let rel = RelPath::parse(&f.path)
            .map_err(|e| mismatch(name, format!("fixture path {}: {}", f.path, e.message)))?;
        let bytes = f
            .bytes()
            .ok_or_else(|| mismatch(name, format!("fixture {} has no content", f.path)))?;
        let path = root.join(rel.as_str());
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).map_err(AgentError::io(parent))?;
        }
        fs_err::write(&path, bytes).map_err(AgentError::io(&path))?;
    }
    let mode = match golden.request.mode.as_str() {
        "PLAN" => Mode::Plan,
        "APPLY" => Mode::Apply,
        other => return Err(mismatch(name, format!("unknown mode {other}"))),
    };
    let sent: BTreeSet<RelPath> = golden
        .context
        .sent_files
        .keys()
        .filter_map(|p| RelPath::parse(p).ok())
        .collect();
    let patch = papayu_patch::Project::open(root.as_std_path())?;
    let policy = Policy::default();
    let mut last_codes: Vec<ErrorCode> = Vec::new();
    let mut accepted = None;
    for (i, a) in golden.attempts.iter().enumerate() {
        let version = ProtocolVersion::from_number(a.protocol)
            .ok_or_else(|| mismatch(name, format!("attempt {i}: protocol {}", a.protocol)))?;
        // An answer before the last one that was not rejected asked for context.
        if i + 1 < golden.attempts.len() && a.expect_codes.is_empty() {
            let r = parse_response(&a.response, version)
                .map_err(|e| mismatch(name, format!("attempt {i}: {e}")))?;
            if r.context_requests.is_empty() {
                return Err(mismatch(
                    name,
                    format!("attempt {i} neither failed nor asked for context"),
                ));
            }
            continue;
        }
        let checker = Checker {
            patch: &patch,
            root: &root,
            policy: &policy,
            version,
            mode,
            sent: &sent,
            normalize_eol_lf: false,
        };
        match check_full(&checker, &a.response, &no_progress) {
            Ok(acc) => {
                if !a.expect_codes.is_empty() {
                    return Err(mismatch(
                        name,
                        format!(
                            "attempt {i} was rejected with {:?} when recorded, now it passes",
                            a.expect_codes
                        ),
                    ));
                }
                last_codes.clear();
                accepted = Some(acc);
            }
            Err((violations, stage)) => {
                let codes: Vec<ErrorCode> = violations.iter().map(|v| v.code).collect();
                if codes != a.expect_codes {
                    return Err(mismatch(
                        name,
                        format!(
                            "attempt {i}: recorded {:?}, replayed {codes:?} ({stage})",
                            a.expect_codes
                        ),
                    ));
                }
                if let Some(recorded) = a.stage
                    && recorded != stage
                {
                    return Err(mismatch(
                        name,
                        format!("attempt {i}: recorded stage {recorded}, replayed {stage}"),
                    ));
                }
                last_codes = codes;
                accepted = None;
            }
        }
    }
    let r = &golden.result;
    let outcome = match (&accepted, mode) {
        (None, _) => "rejected",
        (Some(_), Mode::Plan) => "planned",
        (Some(acc), Mode::Apply) => match &acc.plan {
            Some((plan, _)) if plan.actions().is_empty() => "no_changes",
            Some((plan, _)) if r.outcome == "applied" => {
                let report = patch
                    .transaction(plan)
                    .options(ApplyOptions::default().checks(Checks::None))
                    .apply()?;
                let _ = report;
                for (path, want) in &r.files_after {
                    let got = fs_err::read(root.join(path)).ok().map(|b| sha256_hex(&b));
                    if &got != want {
                        return Err(mismatch(
                            name,
                            format!("{path}: recorded {want:?} after apply, replayed {got:?}"),
                        ));
                    }
                }
                "applied"
            }
            _ => "accepted",
        },
    };
    if outcome != r.outcome {
        return Err(mismatch(
            name,
            format!("recorded outcome {}, replayed {outcome}", r.outcome),
        ));
    }
    let error_code = last_codes.first().copied();
    if outcome == "rejected" && error_code != r.error_code {
        return Err(mismatch(
            name,
            format!("recorded error {:?}, replayed {error_code:?}", r.error_code),
        ));
    }
    Ok(ReplayReport {
        name: golden.name.clone(),
        attempts: golden.attempts.len(),
        outcome: outcome.to_owned(),
        error_code,
    })
}

/// Load one golden trace file.
pub fn load_golden(path: &Utf8Path) -> Result<GoldenTrace, AgentError> {
    let text = fs_err::read_to_string(path).map_err(AgentError::io(path))?;
    serde_json::from_str(&text).map_err(|e| AgentError::State {
        path: path.to_owned(),
        message: format!("not a golden trace: {e}"),
    })
}

/// Replay every `NNN_name.json` under `<golden_root>/v1`, `v2` and `v3`. A missing or empty
/// version directory is an error: a golden test that finds nothing must fail.
pub fn replay_dir(golden_root: &Utf8Path) -> Result<Vec<ReplayReport>, AgentError> {
    let mut out = Vec::new();
    for v in ProtocolVersion::ALL {
        let dir = golden_root.join(format!("v{}", v.number()));
        let mut files: Vec<Utf8PathBuf> = fs_err::read_dir(&dir)
            .map_err(AgentError::io(&dir))?
            .filter_map(Result::ok)
            .filter_map(|e| Utf8PathBuf::from_path_buf(e.path()).ok())
            .filter(|p| p.extension() == Some("json"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(AgentError::State {
                path: dir,
                message: "no golden traces: every protocol version needs at least one".into(),
            });
        }
        for f in files {
            let g = load_golden(&f)?;
            if g.protocol.version != v.number() {
                return Err(mismatch(
                    &g.name,
                    format!(
                        "lives in v{} but starts with protocol v{}",
                        v.number(),
                        g.protocol.version
                    ),
                ));
            }
            out.push(replay(&g)?);
        }
    }
    Ok(out)
}
