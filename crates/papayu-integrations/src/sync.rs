//! agent-sync: `.papa-yu/agent-sync.json`, rewritten atomically after every analysis, plan,
//! apply and solve when `PAPAYU_AGENT_SYNC` is on — the project, what papayu did last, the
//! findings, the architecture summary, the open questions and the proposed commands, for an
//! IDE agent to read. It writes that one file and nothing else.

use std::time::{SystemTime, UNIX_EPOCH};

use camino::{Utf8Path, Utf8PathBuf};
use papayu_agent::{AgentEvent, AgentObserver, SolveOutcome};
use papayu_protocol::agent_sync::{
    AGENT_SYNC_FILE, AGENT_SYNC_VERSION, AgentSync, SyncKind, SyncLast, SyncPlan, SyncProject,
    SyncResult, SyncStatus,
};

use crate::config::IntegrationsConfig;
use crate::error::SyncError;
use crate::{architecture, findings};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The document as it is on disk (`None` when absent or not a document of this version).
pub fn read(root: &Utf8Path) -> Option<AgentSync> {
    let text = fs_err::read_to_string(root.join(AGENT_SYNC_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Write the document of the project at `root` with `last` as what papayu did last: the
/// findings and architecture summary are read now; the open questions and proposed commands
/// are `last`'s when given, else kept from the previous document. Atomic: a reader sees the
/// old document or the new one.
pub fn write(
    root: &Utf8Path,
    config: &IntegrationsConfig,
    last: SyncLast,
    open_questions: Option<Vec<String>>,
    proposed_commands: Option<Vec<String>>,
    test_command: Option<String>,
) -> Result<Utf8PathBuf, SyncError> {
    let path = root.join(AGENT_SYNC_FILE);
    let previous = read(root);
    let doc = AgentSync {
        schema_version: AGENT_SYNC_VERSION,
        updated_unix_ms: now_ms(),
        project: SyncProject {
            root: root.to_string(),
            name: root.file_name().unwrap_or_default().to_owned(),
            test_command: test_command.or_else(|| {
                previous
                    .as_ref()
                    .and_then(|p| p.project.test_command.clone())
            }),
        },
        last: Some(last),
        snyk_findings: findings::known(root, &config.snyk),
        architecture_summary: architecture::summary(root, &config.architecture)
            .ok()
            .flatten(),
        open_questions: open_questions
            .or_else(|| previous.as_ref().map(|p| p.open_questions.clone()))
            .unwrap_or_default(),
        proposed_commands: proposed_commands
            .or_else(|| previous.as_ref().map(|p| p.proposed_commands.clone()))
            .unwrap_or_default(),
    };
    let mut bytes = serde_json::to_vec_pretty(&doc).map_err(|e| SyncError::Serialize {
        path: path.clone(),
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    papayu_fs::write_atomic(&path, &bytes).map_err(|source| SyncError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// A [`SyncLast`] of `kind` ending now.
pub fn last(kind: SyncKind, goal: Option<String>, status: SyncStatus) -> SyncLast {
    SyncLast {
        kind,
        at_unix_ms: now_ms(),
        goal,
        plan: None,
        result: SyncResult {
            status,
            code: None,
            message: None,
            changed_files: Vec::new(),
        },
        trace_id: None,
    }
}

fn failed(kind: SyncKind, goal: Option<String>, error: &papayu_agent::AgentError) -> SyncLast {
    let mut l = last(kind, goal, SyncStatus::Failed);
    l.result.code = Some(error.code().as_str().to_owned());
    l.result.message = Some(error.to_string());
    l
}

fn changed(outcome: &papayu_agent::ApplyOutcome) -> Vec<String> {
    outcome
        .report
        .as_ref()
        .map(|r| r.files.iter().map(|f| f.path.clone()).collect())
        .unwrap_or_default()
}

/// What one event writes: the last operation, the open questions, the proposed commands.
pub type Entry = (SyncLast, Option<Vec<String>>, Option<Vec<String>>);

/// The [`AgentObserver`] that writes the document after each plan, apply and solve; a failed
/// write is logged (the operation has already happened).
#[derive(Debug, Clone)]
pub struct SyncObserver {
    config: IntegrationsConfig,
}

impl SyncObserver {
    /// An observer for `config` (install it only when `config.agent_sync` is on).
    pub fn new(config: IntegrationsConfig) -> SyncObserver {
        SyncObserver { config }
    }

    /// What `event` writes: the last operation, its open questions and proposed commands
    /// (`None` for an event agent-sync does not record).
    pub fn entry(event: &AgentEvent<'_>) -> Option<Entry> {
        Some(match event {
            AgentEvent::Planned { goal, result } => match result {
                Ok(plan) => {
                    let mut l = last(
                        SyncKind::Plan,
                        Some((*goal).to_owned()),
                        SyncStatus::Planned,
                    );
                    l.plan = Some(SyncPlan {
                        summary: plan.summary.clone(),
                        steps: plan
                            .plan
                            .iter()
                            .map(|s| format!("{}: {}", s.step, s.details))
                            .collect(),
                    });
                    l.trace_id = Some(plan.trace_id.clone());
                    (
                        l,
                        Some(plan.questions.clone()),
                        Some(plan.commands_to_run.clone()),
                    )
                }
                Err(e) => (
                    failed(SyncKind::Plan, Some((*goal).to_owned()), e),
                    None,
                    None,
                ),
            },
            AgentEvent::Applied { preview, result } => {
                let goal = Some(preview.goal.clone());
                let l = match result {
                    Ok(outcome) => {
                        let status = if outcome.no_changes {
                            SyncStatus::NoChanges
                        } else if outcome.applied {
                            SyncStatus::Applied
                        } else {
                            SyncStatus::Declined
                        };
                        let mut l = last(SyncKind::Apply, goal, status);
                        l.result.changed_files = changed(outcome);
                        l.trace_id = Some(outcome.trace_id.clone());
                        l
                    }
                    Err(e) => failed(SyncKind::Apply, goal, e),
                };
                (l, None, Some(preview.commands_to_run.clone()))
            }
            AgentEvent::Solved { goal, result } => {
                let goal = Some((*goal).to_owned());
                let l = match result {
                    Ok(report) => {
                        let status = match report.outcome {
                            SolveOutcome::Verified => SyncStatus::Verified,
                            SolveOutcome::AppliedUnverified => SyncStatus::Applied,
                            SolveOutcome::NoChanges => SyncStatus::NoChanges,
                            SolveOutcome::Declined => SyncStatus::Declined,
                            _ => SyncStatus::NotSolved,
                        };
                        let mut l = last(SyncKind::Solve, goal, status);
                        l.result.message = report.reason.clone();
                        l.result.changed_files =
                            report.applied.as_ref().map(changed).unwrap_or_default();
                        l
                    }
                    Err(e) => failed(SyncKind::Solve, goal, e),
                };
                (l, None, None)
            }
            _ => return None,
        })
    }
}

impl AgentObserver for SyncObserver {
    fn observe(&self, root: &Utf8Path, event: &AgentEvent<'_>) {
        let Some((last, questions, commands)) = Self::entry(event) else {
            return;
        };
        if let Err(e) = write(root, &self.config, last, questions, commands, None) {
            tracing::warn!(error = %e, "agent-sync: the document was not written");
        }
    }
}
