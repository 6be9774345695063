//! A call's trace record: opened with the call, completed when it ends (accepted or
//! rejected, with the fixture when raw tracing is on), and written when tracing is on.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{SystemTime, UNIX_EPOCH};

use camino::Utf8PathBuf;
use papayu_protocol::{ProtocolVersion, Response, schema_hash};
use papayu_validate::{Mode, RelPath};

use super::Agent;
use super::check::Accepted;
use super::converse::Call;
use crate::error::AgentError;
use crate::mode::mode_name;
use crate::trace::{
    ApplyRecord, CacheStatsRecord, ContextStatsRecord, FixtureFile, TraceRecord, write_trace,
};

/// A new trace id (UUID v7).
pub fn new_trace_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Agent {
    /// The trace of a call that is starting: an error until it is finished otherwise.
    pub(super) fn new_trace(
        &self,
        mode: Mode,
        goal: &str,
        version: ProtocolVersion,
    ) -> TraceRecord {
        let info = self.provider.info();
        TraceRecord {
            trace_id: new_trace_id(),
            created_unix_ms: now_ms(),
            event: "LLM_PLAN_ERR".into(),
            mode: mode_name(mode).into(),
            llm_mode: self.config.llm_mode.as_str().into(),
            goal: goal.to_owned(),
            schema_version: version.number(),
            schema_hash: schema_hash(version),
            provider: info.kind.as_str().into(),
            model: info.model,
            input_chars: 0,
            token_budget: 0,
            strict_json: self.config.strict_json,
            validated_json: None,
            context_stats: ContextStatsRecord::default(),
            cache_stats: CacheStatsRecord::default(),
            context_rounds: 0,
            protocol_default: version.number(),
            protocol_attempts: vec![version.number()],
            protocol_fallback_attempted: false,
            protocol_fallback_reason: None,
            protocol_fallback_stage: None,
            protocol_repair_attempt: 0,
            repair_success: None,
            repair_injected_paths: Vec::new(),
            retargeted_edits: Vec::new(),
            merged_actions: Vec::new(),
            widened_updates: Vec::new(),
            part_of: None,
            attempts: Vec::new(),
            sent_files: BTreeMap::new(),
            online_sources: Vec::new(),
            fixture: Vec::new(),
            error_code: None,
            error: None,
            memory_patch: None,
            apply: None,
            config_snapshot: self.config.config_snapshot(),
        }
    }

    pub(super) fn write_trace_if_on(
        &self,
        trace: &TraceRecord,
    ) -> Result<Option<Utf8PathBuf>, AgentError> {
        if self.config.trace {
            write_trace(&self.root, trace).map(Some)
        } else {
            Ok(None)
        }
    }

    fn finish_common(&self, call: &mut Call) {
        call.trace.schema_version = call.version.number();
        call.trace.schema_hash = schema_hash(call.version);
        call.trace.context_rounds = call.rounds;
        call.trace.cache_stats = self.engine.cache_stats().into();
        call.trace.sent_files = call.sent.clone();
        call.trace.protocol_repair_attempt = u8::from(call.repair_used);
        if call.repair_used && call.trace.repair_success.is_none() {
            call.trace.repair_success = Some(false);
        }
        if let Some(f) = &call.fallback {
            call.trace.protocol_fallback_attempted = true;
            call.trace.protocol_fallback_reason = Some(f.reason);
            call.trace.protocol_fallback_stage = Some(f.stage);
        }
    }

    /// The call's answer was accepted: record it and write the trace.
    pub(super) fn finish_ok(
        &self,
        call: &mut Call,
        response: &Response,
    ) -> Result<Option<Utf8PathBuf>, AgentError> {
        self.finish_common(call);
        call.trace.event = "LLM_PLAN_OK".into();
        call.trace.validated_json = serde_json::to_value(response).ok();
        self.write_trace_if_on(&call.trace)
    }

    /// The call failed with `error`: record it, write the trace (a failure to write it is
    /// logged, not returned, so the caller sees the original error) and hand the error back.
    pub(super) fn finish_err(&self, mut call: Call, error: AgentError) -> AgentError {
        self.finish_common(&mut call);
        call.trace.event = "LLM_PLAN_ERR".into();
        call.trace.error_code = Some(error.code());
        call.trace.error = Some(error.to_string());
        if call.mode == Mode::Apply {
            call.trace.apply = Some(ApplyRecord {
                outcome: "rejected".into(),
                tx_id: None,
                error_code: Some(error.code()),
                selected: Vec::new(),
                files_after: BTreeMap::new(),
            });
        }
        match self.write_trace_if_on(&call.trace) {
            Ok(_) => error,
            Err(trace_error) => {
                tracing::warn!(event = "TRACE_WRITE_FAILED", error = %trace_error);
                error
            }
        }
    }

    /// With `PAPAYU_TRACE_RAW`, keep the pre-apply bytes of every file the call involved, so
    /// the trace can become a replayable golden trace.
    pub(super) fn capture_fixture(&self, call: &mut Call, accepted: Option<&Accepted>) {
        if !(self.config.trace && self.config.trace_raw) {
            return;
        }
        let mut paths: BTreeSet<String> = call.sent.keys().cloned().collect();
        for a in &call.trace.attempts {
            for v in &a.violations {
                if let Some(p) = &v.path {
                    paths.insert(p.clone());
                }
            }
            if let Some(raw) = &a.raw
                && let Ok(doc) = papayu_protocol::parse_document(raw, ProtocolVersion::V3)
            {
                paths.extend(
                    doc.response
                        .effective_actions()
                        .iter()
                        .map(|x| x.path.clone()),
                );
            }
        }
        if let Some(a) = accepted {
            paths.extend(
                a.response
                    .effective_actions()
                    .iter()
                    .map(|x| x.path.clone()),
            );
        }
        for p in paths {
            let Ok(rel) = RelPath::parse(&p) else {
                continue;
            };
            let abs = self.root.join(rel.as_str());
            let is_file =
                fs_err::symlink_metadata(&abs).is_ok_and(|m| m.is_file() && m.len() <= 1 << 20);
            if is_file && let Ok(bytes) = fs_err::read(&abs) {
                call.trace
                    .fixture
                    .push(FixtureFile::from_bytes(rel.as_str(), bytes));
            }
        }
    }
}
