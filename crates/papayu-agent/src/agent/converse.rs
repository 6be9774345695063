//! One model conversation: the requests of a call, its context rounds, the repair round and
//! the protocol fallback, until an answer is accepted or the rejection stands.

use std::collections::BTreeMap;
use std::sync::Arc;

use papayu_llm::{ChatRequest, Completion, LlmError, Message, ProviderKind, repair_request};
use papayu_memory::PatchReport;
use papayu_patch::engine::EngineOptions;
use papayu_protocol::{
    ContextRequest, EditStyle, ErrorCode, ProtocolVersion, RequestShape, Response, Violation,
    fill_in, parse_response,
};
use papayu_validate::{Mode, RelPath};
use tracing::Instrument as _;

use super::Agent;
use super::check::Accepted;
use super::views::{ContextReport, FallbackInfo, Progress, ProgressFn, Round, Stage};
use crate::error::AgentError;
use crate::prompt;
use crate::trace::{AttemptRecord, TraceRecord};

/// At most this many extra rounds answer a model's `context_requests` (SPEC §9).
pub const MAX_CONTEXT_ROUNDS: u32 = 2;

/// A call that sent a file longer than this (bytes) asks for search/replace edits even when the
/// configured style is `whole_file` (D61): about 3 000 tokens to copy, minutes on a small CPU.
pub const WHOLE_FILE_MAX_BYTES: u64 = 12_000;

/// Codes that make an APPLY under v3 fall back to v2.
pub const FALLBACK_V3_CODES: &[ErrorCode] = &[
    ErrorCode::EditApplyFailed,
    ErrorCode::NonUtf8File,
    ErrorCode::EditBaseMismatch,
    ErrorCode::EditAnchorNotFound,
    ErrorCode::EditBeforeNotFound,
    ErrorCode::EditAmbiguous,
];

/// Codes that make an APPLY under v2 fall back to v1 (when `fallback_to_v1` is on).
pub const FALLBACK_V2_CODES: &[ErrorCode] = &[
    ErrorCode::PatchApplyFailed,
    ErrorCode::NonUtf8File,
    ErrorCode::V2UpdateExistingForbidden,
];

/// The version an APPLY falls back to for `code`, if any.
pub fn fallback_target(
    version: ProtocolVersion,
    code: ErrorCode,
    fallback_to_v1: bool,
) -> Option<ProtocolVersion> {
    match version {
        ProtocolVersion::V3 if FALLBACK_V3_CODES.contains(&code) => Some(ProtocolVersion::V2),
        ProtocolVersion::V2 if fallback_to_v1 && FALLBACK_V2_CODES.contains(&code) => {
            Some(ProtocolVersion::V1)
        }
        _ => None,
    }
}

/// One model conversation (a PLAN or APPLY call) in progress.
pub(super) struct Call {
    pub(super) mode: Mode,
    pub(super) version: ProtocolVersion,
    pub(super) base_user: String,
    pub(super) context_text: String,
    pub(super) messages: Vec<Message>,
    pub(super) sent: BTreeMap<String, String>,
    pub(super) repair_used: bool,
    pub(super) fallback: Option<FallbackInfo>,
    pub(super) rounds: u32,
    pub(super) trace: TraceRecord,
    /// Which request the next one to the model is.
    pub(super) next: Round,
    pub(super) context: ContextReport,
    /// An answer to judge instead of asking the model (a previewed answer kept for `apply`).
    pub(super) reuse: Option<String>,
    /// The accepted answer's text, as judged.
    pub(super) accepted_text: Option<String>,
    /// The edit style answers are narrowed to in this call, chosen once its base context is
    /// gathered ([`Agent::call_style`]); `None` when answers are not narrowed.
    pub(super) style: Option<EditStyle>,
}

impl Agent {
    pub(super) fn new_call(&self, mode: Mode, goal: &str, version: ProtocolVersion) -> Call {
        Call {
            mode,
            version,
            base_user: String::new(),
            context_text: String::new(),
            messages: Vec::new(),
            sent: BTreeMap::new(),
            repair_used: false,
            fallback: None,
            rounds: 0,
            trace: self.new_trace(mode, goal, version),
            next: Round::Initial,
            context: ContextReport::default(),
            reuse: None,
            accepted_text: None,
            style: None,
        }
    }

    fn system(&self, mode: Mode, style: Option<EditStyle>, version: ProtocolVersion) -> Message {
        if let Some(style) = style {
            return Message::system(prompt::compact_system_prompt(
                mode,
                style,
                &self.memory.block(),
            ));
        }
        let mut text =
            prompt::system_prompt(self.config.llm_mode, mode, version, &self.memory.block());
        // An installed integration (online research, a command log) says what it offers.
        if let Some(note) = self.engine.extras_prompt_note() {
            text.push_str(&note);
        }
        Message::system(text)
    }

    /// The protocol version of a new call: the in-process model's edit style decides unless
    /// `PAPAYU_PROTOCOL_VERSION` forces one ([`AgentConfig::protocol_for`]).
    pub(super) fn protocol(&self) -> ProtocolVersion {
        self.config.protocol_for(self.provider.info().kind)
    }

    /// The edit style answers are narrowed to under `version`, when they are: the in-process
    /// model decodes under a grammar made for each request (issue #16), and so does a model
    /// server on this machine in strict mode, which then gets the compact schema of the request
    /// (issue #22: its grammar from the full schema decodes too slowly); a hosted provider keeps
    /// its structured-output ladder.
    pub(super) fn narrowed_style(&self, version: ProtocolVersion) -> Option<EditStyle> {
        let info = self.provider.info();
        let narrowed = info.kind == ProviderKind::Local
            || (self.config.strict_json && papayu_llm::is_loopback_endpoint(&info.endpoint));
        if !narrowed {
            return None;
        }
        let style = self.config.local_edit_style;
        Some(match version {
            v if v == style.protocol() => style,
            ProtocolVersion::V1 => EditStyle::WholeFile,
            ProtocolVersion::V2 => EditStyle::UnifiedDiff,
            ProtocolVersion::V3 => EditStyle::SearchReplace,
        })
    }

    /// The edit style of `call` (its files sent): the configured one, except that files too long
    /// to rewrite whole are edited by search and replace — a small model copying a long file
    /// is slow and drops lines.
    fn call_style(&self, call: &Call) -> Option<EditStyle> {
        let style = self.narrowed_style(call.version)?;
        let long = |path: &String| {
            fs_err::metadata(self.root.join(path)).is_ok_and(|m| m.len() > WHOLE_FILE_MAX_BYTES)
        };
        Some(
            if style == EditStyle::WholeFile && call.sent.keys().any(long) {
                EditStyle::SearchReplace
            } else {
                style
            },
        )
    }

    /// The sent files an answer of `call` may change: all of them, except test files while the
    /// tests judge the change (D60) — unless the call sent nothing else.
    fn changeable(&self, call: &Call) -> Vec<String> {
        let all: Vec<String> = call.sent.keys().cloned().collect();
        if !self.tests_protected {
            return all;
        }
        let code: Vec<String> = all
            .iter()
            .filter(|p| !papayu_context::is_test_path(p))
            .cloned()
            .collect();
        if code.is_empty() { all } else { code }
    }

    /// What the next answer of `call` may contain, when answers are narrowed.
    fn request_shape(&self, call: &Call) -> Option<RequestShape> {
        let edit = call.style?;
        Some(RequestShape {
            apply: call.mode == Mode::Apply,
            edit,
            files: self.changeable(call),
            create: true,
            delete: true,
            context_requests: call.rounds < MAX_CONTEXT_ROUNDS,
            papayu_fills: true,
            // While the tests fail, "nothing needs to change" cannot verify: every answer of a
            // verified fix carries a change (D63).
            change_required: self.tests_protected,
            ..RequestShape::default()
        })
    }

    /// Start a call on a fresh context cycle with the goal's base context (SPEC §14: the project
    /// map, the files the goal points at, what auto-gathering finds, the `failure` of the last
    /// test run with its frames): it becomes the call's context and, with the goal and the
    /// `feedback` on a previous attempt, its user message.
    pub(super) fn gather_base(
        &mut self,
        call: &mut Call,
        goal: &str,
        failure: Option<&str>,
        feedback: Option<&str>,
        progress: ProgressFn<'_>,
    ) {
        self.engine.new_cycle();
        progress(&Progress::GatheringContext);
        // While the tests judge the change, test files are read, not rewritten (D60): they are
        // focused on the failing tests (D85).
        let mut assembled = self.engine.base_focused(goal, failure, &self.failing_tests);
        if !self.failing_tests.is_empty()
            && assembled
                .sent_files
                .iter()
                .all(|(p, _)| papayu_context::is_test_path(p))
        {
            // Only test files were found: then they are the answer's to change
            // (`changeable`), and a file shown in part must not be rewritten whole.
            self.engine.new_cycle();
            assembled = self.engine.base(goal, failure);
        }
        Self::record(call, &assembled);
        call.style = self.call_style(call);
        let text = Self::shown(call, &assembled);
        call.base_user = prompt::user_message_with_feedback(goal, &text, feedback);
        call.context_text = text;
    }

    /// [`gather_base`](Self::gather_base) for a goal on its own.
    pub(super) fn gather_for_goal(
        &mut self,
        call: &mut Call,
        goal: &str,
        progress: ProgressFn<'_>,
    ) {
        self.gather_base(call, goal, None, None, progress);
    }

    /// Assemble context for the model's `requests`, count it, remember the files sent, and
    /// return the rendered text.
    fn gather(&mut self, call: &mut Call, requests: &[ContextRequest]) -> String {
        let assembled = self.engine.assemble(requests, None);
        Self::record(call, &assembled);
        Self::shown(call, &assembled)
    }

    /// The assembled context as the model of `call` reads it: FILE blocks numbered `N|text`,
    /// except for whole-file answers, which copy the text — a small model shown numbered lines
    /// copies the numbers into the file, or counts on (`1|…`, `2|`, `3|`, … to its answer limit).
    fn shown(call: &Call, assembled: &papayu_context::AssembledContext) -> String {
        if call.style != Some(EditStyle::WholeFile) {
            return assembled.text.clone();
        }
        let blocks: Vec<papayu_context::Block> = assembled
            .blocks
            .iter()
            .map(|b| {
                let mut b = b.clone();
                if b.carries_file() {
                    b.body = b
                        .body
                        .split_inclusive('\n')
                        .map(|l| match l.split_once('|') {
                            Some((n, text))
                                if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) =>
                            {
                                text
                            }
                            _ => l,
                        })
                        .collect();
                }
                b
            })
            .collect();
        papayu_context::render_blocks(&blocks)
    }

    /// Count assembled context in the trace and the context report, and remember the files
    /// sent ([`shown`](Self::shown) renders it).
    fn record(call: &mut Call, assembled: &papayu_context::AssembledContext) {
        call.trace.context_stats.add(&assembled.stats);
        call.context.record(assembled);
        for url in assembled.online_sources() {
            if !call.trace.online_sources.contains(&url) {
                call.trace.online_sources.push(url);
            }
        }
        call.sent.extend(
            assembled
                .sent_files
                .iter()
                .map(|(p, h)| (p.to_owned(), h.to_owned())),
        );
    }

    /// Ask the model until an answer of `call` (its context gathered, its first user message
    /// written) is accepted or the rejection stands, keep the fixture of an APPLY call, and
    /// apply the accepted answer's `memory_patch`, asked for by `user_message`.
    pub(super) async fn run_call(
        &mut self,
        call: &mut Call,
        user_message: &str,
        progress: ProgressFn<'_>,
    ) -> Result<(Accepted, Option<PatchReport>), AgentError> {
        call.style = call.style.or_else(|| self.call_style(call));
        call.messages = vec![
            self.system(call.mode, call.style, call.version),
            Message::user(call.base_user.clone()),
        ];
        let span = tracing::info_span!("papayu_call", trace_id = %call.trace.trace_id);
        let result = self.converse(call, progress).instrument(span).await;
        if call.mode == Mode::Apply {
            self.capture_fixture(call, result.as_ref().ok());
        }
        let accepted = result?;
        let memory = self.apply_memory(&accepted.response, user_message)?;
        call.trace.memory_patch = memory.as_ref().and_then(|m| serde_json::to_value(m).ok());
        Ok((accepted, memory))
    }

    fn apply_memory(
        &mut self,
        response: &Response,
        user_message: &str,
    ) -> Result<Option<PatchReport>, AgentError> {
        match &response.memory_patch {
            Some(patch) if !patch.is_empty() => {
                let report =
                    self.memory
                        .apply_patch(patch, user_message, self.config.memory_autopatch)?;
                if report.is_empty() {
                    return Ok(None);
                }
                tracing::info!(
                    event = "MEMORY_PATCH",
                    applied = report.applied.len(),
                    rejected = report.rejected.len(),
                );
                Ok(Some(report))
            }
            _ => Ok(None),
        }
    }

    async fn complete(
        &self,
        request: ChatRequest,
        progress: ProgressFn<'_>,
    ) -> Result<Completion, LlmError> {
        if !self.config.stream {
            return self.provider.complete(&request).await;
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<usize>();
        let request = request.streaming(Some(Arc::new(move |n| {
            let _ = tx.send(n);
        })));
        let fut = self.provider.complete(&request);
        tokio::pin!(fut);
        loop {
            tokio::select! {
                r = &mut fut => return r,
                Some(n) = rx.recv() => progress(&Progress::Receiving { chars: n }),
            }
        }
    }

    /// Rounds, repair and fallback until an answer is accepted or the error stands.
    pub(super) async fn converse(
        &mut self,
        call: &mut Call,
        progress: ProgressFn<'_>,
    ) -> Result<Accepted, AgentError> {
        loop {
            let shape = self.request_shape(call);
            let mut request = ChatRequest::new(call.messages.clone())
                .protocol(call.version)
                .strict(self.config.strict_json);
            if let Some(shape) = &shape {
                request = request.shaped(shape.clone());
            }
            // A retry's draw is sampled; its repair is not: a repair copies the file's real
            // text, where a drawn answer wanders (sampled repairs ran to 2–3 k tokens, D54).
            if let Some(sampling) = self.sampling
                && call.next != Round::Repair
            {
                request = request.sampled(sampling);
            }
            let input_chars = request.input_chars();
            call.trace.input_chars = input_chars;
            let max_tokens = self.config.max_tokens_for(self.provider.info().kind);
            call.trace.token_budget = if input_chars > papayu_llm::LARGE_INPUT_CHARS {
                max_tokens.min(papayu_llm::LARGE_INPUT_MAX_TOKENS)
            } else {
                max_tokens
            };
            progress(&Progress::Requesting {
                attempt: call.next,
                protocol: call.version.number(),
            });
            let (answer, reused) = match call.reuse.take() {
                Some(text) => {
                    tracing::info!(event = "APPLY_ANSWER_REUSED", chars = text.len());
                    (text, true)
                }
                None => {
                    let completion = self.complete(request.clone(), progress).await?;
                    self.usage.add(completion.usage);
                    (completion.text, false)
                }
            };
            let mut attempt = AttemptRecord {
                kind: call.next,
                protocol: call.version.number(),
                input_chars,
                output_chars: answer.chars().count(),
                violations: Vec::new(),
                stage: None,
                raw: self.config.trace_raw.then(|| answer.clone()),
            };
            // A narrowed answer leaves out what papayu knows (the base hashes of the files it
            // sent, an edit's op and anchor): put it back before judging the answer. A reused
            // answer was filled in already.
            let text = match &shape {
                Some(s) if s.papayu_fills && !reused => fill_in(&answer, &call.sent),
                _ => answer,
            };
            // Several actions on one file (a repeated action, a delete and a re-create, two
            // pieces of one file) are the one change they mean, not a conflict to repair.
            let text = match super::merge::merge(&self.root, &text, &call.sent) {
                Some((merged_text, merged)) if call.mode == Mode::Apply && !reused => {
                    for m in &merged {
                        tracing::info!(
                            event = "ACTIONS_MERGED",
                            path = %m.path,
                            actions = m.actions,
                            how = m.how.as_str(),
                        );
                        progress(&Progress::Merged {
                            path: m.path.clone(),
                            actions: m.actions,
                            how: m.how.as_str(),
                        });
                        call.trace.merged_actions.push(format!(
                            "{}: {} actions, {}",
                            m.path,
                            m.actions,
                            m.how.as_str()
                        ));
                    }
                    merged_text
                }
                _ => text,
            };
            // A whole-file answer that holds only the part of the file it changes replaces
            // that part, not the whole file (small models answer with the function they fixed).
            let text = match super::fragment::widen(&self.root, &text, &call.sent) {
                Some((widened_text, widened)) if call.mode == Mode::Apply && !reused => {
                    for w in &widened {
                        tracing::info!(
                            event = "UPDATE_WIDENED",
                            path = %w.path,
                            first = w.first,
                            last = w.last,
                            kept = w.kept,
                            fenced = w.fenced,
                            numbered = w.numbered,
                            as_patch = w.as_patch,
                            added = w.added,
                        );
                        progress(&Progress::Widened {
                            path: w.path.clone(),
                            first: w.first,
                            last: w.last,
                            kept: w.kept,
                            fenced: w.fenced,
                            numbered: w.numbered,
                            as_patch: w.as_patch,
                            added: w.added,
                        });
                        call.trace.widened_updates.push(if w.added {
                            format!(
                                "{}: a new definition, added before line {}",
                                w.path, w.first
                            )
                        } else if w.as_patch {
                            format!("{}: applied as a patch", w.path)
                        } else if w.kept == 0 {
                            format!(
                                "{}: {}",
                                w.path,
                                if w.numbered {
                                    "line numbers removed"
                                } else if w.fenced {
                                    "unfenced"
                                } else {
                                    "escapes and depth restored"
                                }
                            )
                        } else {
                            format!("{}: lines {}-{}, {} kept", w.path, w.first, w.last, w.kept)
                        });
                    }
                    widened_text
                }
                _ => text,
            };

            // A round of context requests, while rounds remain.
            if let Ok(r) = parse_response(&text, call.version)
                && !r.context_requests.is_empty()
                && r.effective_actions().is_empty()
                && call.rounds < MAX_CONTEXT_ROUNDS
            {
                call.rounds += 1;
                progress(&Progress::ContextRound {
                    round: call.rounds,
                    requests: r.context_requests.len(),
                });
                let gathered = self.gather(call, &r.context_requests);
                let msg = prompt::context_round_message(
                    call.rounds,
                    &gathered,
                    call.rounds == MAX_CONTEXT_ROUNDS,
                );
                call.context_text.push_str("\n\n");
                call.context_text.push_str(&gathered);
                call.messages.push(Message::assistant(text));
                call.messages.push(Message::user(msg));
                call.trace.attempts.push(attempt);
                call.next = Round::Context;
                continue;
            }

            let (violations, stage) = match self.check(call, &text, progress) {
                Ok(accepted) => {
                    call.accepted_text = Some(text);
                    if call.next == Round::Repair {
                        call.trace.repair_success = Some(true);
                    }
                    call.trace.attempts.push(attempt);
                    return Ok(accepted);
                }
                Err(rejected) => rejected,
            };
            // An edit aimed at the wrong file is pointed at the one sent file its text fits,
            // instead of a repair round (small models name a neighbour of the right file).
            if call.mode == Mode::Apply
                && let Some((moved_text, moved)) = super::retarget::retarget(
                    &self.root,
                    &text,
                    &violations,
                    &call.sent,
                    &EngineOptions {
                        normalize_eol_lf: self.config.normalize_eol_lf,
                    },
                )
                && let Ok(accepted) = self.check(call, &moved_text, progress)
            {
                for m in &moved {
                    tracing::info!(
                        event = "EDIT_RETARGETED",
                        action = m.action,
                        from = %m.from,
                        to = %m.to,
                    );
                    progress(&Progress::Retargeted {
                        from: m.from.clone(),
                        to: m.to.clone(),
                    });
                    call.trace
                        .retargeted_edits
                        .push(format!("{} -> {}", m.from, m.to));
                }
                call.accepted_text = Some(moved_text);
                if call.next == Round::Repair {
                    call.trace.repair_success = Some(true);
                }
                call.trace.attempts.push(attempt);
                return Ok(accepted);
            }
            for v in &violations {
                tracing::info!(
                    event = "VALIDATION_FAILED",
                    code = v.code.as_str(),
                    reason = %papayu_llm::redact(&v.to_string()),
                    stage = stage.as_str(),
                    protocol = call.version.number(),
                );
            }
            attempt.violations = violations.clone();
            attempt.stage = Some(stage);
            call.trace.attempts.push(attempt);

            // A narrowed answer is already in the model's best form: no protocol fallback.
            let fallback = (call.mode == Mode::Apply && call.fallback.is_none() && shape.is_none())
                .then(|| {
                    violations.iter().find_map(|v| {
                        fallback_target(call.version, v.code, self.config.fallback_to_v1)
                            .map(|to| (v.code, to))
                    })
                })
                .flatten();
            if let Some((reason, to)) = fallback
                && (reason == ErrorCode::NonUtf8File || call.repair_used)
            {
                self.start_fallback(call, reason, to, stage, progress);
                continue;
            }
            if !call.repair_used {
                self.start_repair(call, &request, &text, &violations, progress);
                continue;
            }
            return Err(AgentError::Rejected { stage, violations });
        }
    }

    /// Switch the call to protocol `to`: a fresh conversation with that version's system
    /// prompt, the goal, the context gathered so far and a note on why.
    fn start_fallback(
        &self,
        call: &mut Call,
        reason: ErrorCode,
        to: ProtocolVersion,
        stage: Stage,
        progress: ProgressFn<'_>,
    ) {
        let from = call.version;
        tracing::info!(
            event = "PROTOCOL_FALLBACK",
            from = %format!("v{}", from.number()),
            to = %format!("v{}", to.number()),
            reason = reason.as_str(),
            stage = stage.as_str(),
            "PROTOCOL_FALLBACK from=v{} to=v{} reason={} stage={}",
            from.number(),
            to.number(),
            reason,
            stage
        );
        progress(&Progress::Fallback {
            from: from.number(),
            to: to.number(),
            reason,
        });
        if call.repair_used && call.trace.repair_success.is_none() {
            call.trace.repair_success = Some(false);
        }
        call.fallback = Some(FallbackInfo {
            from: from.number(),
            to: to.number(),
            reason,
            stage,
        });
        call.version = to;
        call.trace.protocol_attempts.push(to.number());
        let note = format!(
            "\nNOTE: your answer under protocol v{} failed with {}; answer with protocol v{} \
as described in the system prompt.\n",
            from.number(),
            reason,
            to.number()
        );
        let user = if call.context_text.trim().is_empty()
            || call.base_user.contains(call.context_text.trim())
        {
            format!("{}{note}", call.base_user)
        } else {
            format!(
                "{}\nCONTEXT:\n{}\n{note}",
                call.base_user,
                call.context_text.trim()
            )
        };
        call.style = self.narrowed_style(to);
        call.messages = vec![self.system(call.mode, call.style, to), Message::user(user)];
        call.next = Round::Fallback;
    }

    /// The one repair round: the rejected answer and its violations, with the `base_sha256`
    /// of every sent file a base mismatch names.
    fn start_repair(
        &self,
        call: &mut Call,
        request: &ChatRequest,
        text: &str,
        violations: &[Violation],
        progress: ProgressFn<'_>,
    ) {
        call.repair_used = true;
        let mut injected = Vec::new();
        for v in violations {
            if matches!(
                v.code,
                ErrorCode::BaseMismatch | ErrorCode::EditBaseMismatch
            ) && let Some(path) = &v.path
                && let Ok(rel) = RelPath::parse(path)
                && let Some(sha) = call.sent.get(rel.as_str())
                && !injected
                    .iter()
                    .any(|(p, _): &(String, String)| p == rel.as_str())
            {
                injected.push((rel.as_str().to_owned(), sha.clone()));
            }
        }
        tracing::info!(
            event = "LLM_RESPONSE_REPAIR",
            violations = violations.len(),
            injected_base_sha256 = injected.len(),
            protocol = call.version.number(),
        );
        progress(&Progress::Repair {
            codes: violations.iter().map(|v| v.code).collect(),
        });
        let mut repair = repair_request(request, text, violations);
        if !injected.is_empty()
            && let Some(last) = repair.messages.last_mut()
        {
            last.content.push('\n');
            last.content.push_str(&prompt::base_injection(&injected));
        }
        // An edit whose text the file lacks: show the file's closest lines to copy from.
        let hints = super::hint::edit_hints(&self.root, text, violations, &call.sent);
        if !hints.is_empty()
            && let Some(last) = repair.messages.last_mut()
        {
            last.content.push('\n');
            last.content.push_str(&hints);
        }
        call.trace
            .repair_injected_paths
            .extend(injected.into_iter().map(|(p, _)| p));
        call.messages = repair.messages;
        call.next = Round::Repair;
    }
}
