//! `plan_goal` and `run_goal`: papayu's own loop (papayu-agent) as a sub-agent, with the model
//! the frontend configured. The agent, and with it the model, is built on first use.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use camino::Utf8PathBuf;
use papayu_agent::{Agent, AgentError, Progress, SolveOptions, SolveOutcome, SolveReport};
use papayu_protocol::ErrorCode;
use tokio::sync::{Mutex, MutexGuard};

use super::Reply;
use super::args::{GoalArgs, RunGoalArgs};
use crate::options::AgentSetup;

/// The loop's configuration and, once built, the agent.
pub(crate) struct AgentSlot {
    setup: AgentSetup,
    root: Utf8PathBuf,
    agent: Mutex<Option<Agent>>,
}

impl std::fmt::Debug for AgentSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSlot")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

type Progressed<'a> = &'a (dyn Fn(&Progress) + Send + Sync);

impl AgentSlot {
    /// The loop for the project at `root`.
    pub(crate) fn new(setup: AgentSetup, root: Utf8PathBuf) -> Self {
        Self {
            setup,
            root,
            agent: Mutex::new(None),
        }
    }

    /// The agent, built now if this is the first call (the provider may load a model).
    async fn agent(&self) -> Result<MutexGuard<'_, Option<Agent>>, Reply> {
        let mut slot = self.agent.lock().await;
        if slot.is_none() {
            let provider = (self.setup.provider)()
                .map_err(|e| Reply::rejected(e.code, e.message).with("stage", "provider"))?;
            let agent = Agent::new(
                self.setup.config.clone(),
                &self.root,
                &self.setup.config_dir,
                provider,
            )
            .map_err(|e| agent_rejection(&e))?;
            *slot = Some(agent);
        }
        Ok(slot)
    }

    /// `plan_goal`: the PLAN call.
    pub(crate) async fn plan_goal(&self, args: GoalArgs, progress: Progressed<'_>) -> Reply {
        let mut slot = match self.agent().await {
            Ok(slot) => slot,
            Err(reply) => return reply,
        };
        let Some(agent) = slot.as_mut() else {
            return Reply::rejected(ErrorCode::LlmConfig, "no agent");
        };
        match agent.plan(&args.goal, progress).await {
            Ok(outcome) => Reply::done(outcome),
            Err(e) => agent_rejection(&e),
        }
    }

    /// `run_goal`: [`Agent::solve`] — a verified change, or the project as it was.
    pub(crate) async fn run_goal(
        &self,
        args: RunGoalArgs,
        cancel: Arc<AtomicBool>,
        progress: Progressed<'_>,
    ) -> Reply {
        let mut slot = match self.agent().await {
            Ok(slot) => slot,
            Err(reply) => return reply,
        };
        let Some(agent) = slot.as_mut() else {
            return Reply::rejected(ErrorCode::LlmConfig, "no agent");
        };
        let mut options = SolveOptions::default()
            .confirmed_deletes(args.confirm_deletes)
            .cancel_flag(cancel);
        if let Some(n) = args.attempts {
            options = options.attempts(n.clamp(1, 10));
        }
        if let Some(n) = args.mutants {
            options = options.mutants(n.min(500));
        }
        if let Some(secs) = args.test_timeout_secs {
            options = options.test_timeout(Duration::from_secs(secs.clamp(1, 3600)));
        }
        if let Some(test) = args.test {
            options = options.test_command(test);
        }
        match agent.solve(&args.goal, &options, None, progress).await {
            Ok(report) => solve_reply(report),
            Err(e) => agent_rejection(&e),
        }
    }
}

/// A solved goal is a result; one that ended without a change is a rejection carrying the code
/// of its last attempt (`ERR_CHECK_FAILED` when the tests did not verify it) and the report.
fn solve_reply(report: SolveReport) -> Reply {
    match report.outcome {
        SolveOutcome::NotSolved | SolveOutcome::Declined => {
            let code = report
                .attempts
                .last()
                .and_then(|a| a.error.as_ref())
                .map_or(ErrorCode::CheckFailed, |e| e.code);
            let why = report
                .reason
                .clone()
                .unwrap_or_else(|| "nothing verified; the project is unchanged".to_owned());
            Reply::rejected(code, why).with("report", report)
        }
        _ => {
            let tx_id = report
                .applied
                .as_ref()
                .and_then(|a| a.report.as_ref())
                .map(|r| r.tx_id.clone());
            Reply::done(&report).with("tx_id", tx_id)
        }
    }
}

/// An agent error as a rejection (with the violations of a rejected answer).
fn agent_rejection(e: &AgentError) -> Reply {
    let reply = Reply::rejected(e.code(), e.to_string());
    match e {
        AgentError::Rejected { stage, violations } => {
            reply.with("stage", stage).with("violations", violations)
        }
        _ => reply,
    }
}
