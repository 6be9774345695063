//! The PLAN call: a plan without actions, saved so a later APPLY (even in another process) can
//! carry it out.

use papayu_validate::Mode;

use super::Agent;
use super::observe::AgentEvent;
use super::views::{ContextReport, PlanOutcome, ProgressFn};
use crate::error::AgentError;
use crate::state::{SavedPlan, store_saved_plan};

impl Agent {
    /// Ask for a plan (PLAN mode: no actions). Auto-gathers context from the goal, answers up
    /// to [`MAX_CONTEXT_ROUNDS`](crate::MAX_CONTEXT_ROUNDS) rounds of context requests, runs
    /// at most one repair, applies the `memory_patch` (when the user asked to remember), saves
    /// the plan in `.papa-yu/state.json`, and writes the trace when tracing is on. The
    /// observer ([`Agent::set_observer`]) is told how it ended.
    pub async fn plan(
        &mut self,
        goal: &str,
        progress: ProgressFn<'_>,
    ) -> Result<PlanOutcome, AgentError> {
        let goal = super::solve::strip_mode_prefix(goal);
        let result = self.plan_goal(goal, progress).await;
        self.notify(AgentEvent::Planned {
            goal,
            result: result.as_ref(),
        });
        result
    }

    async fn plan_goal(
        &mut self,
        goal: &str,
        progress: ProgressFn<'_>,
    ) -> Result<PlanOutcome, AgentError> {
        let version = self.protocol();
        let mut call = self.new_call(Mode::Plan, goal, version);
        self.gather_for_goal(&mut call, goal, progress);
        let (mut accepted, memory) = match self.run_call(&mut call, goal, progress).await {
            Ok(done) => done,
            Err(e) => return Err(self.finish_err(call, e)),
        };
        accepted.response.summary = super::views::summary_of(&accepted.response);
        let saved = SavedPlan {
            trace_id: call.trace.trace_id.clone(),
            created_unix_ms: call.trace.created_unix_ms,
            goal: goal.to_owned(),
            protocol: call.version.number(),
            llm_mode: self.config.llm_mode.as_str().into(),
            response: accepted.response.clone(),
            context: call.context_text.clone(),
            sent_files: call.sent.clone(),
            context_stats: call.trace.context_stats,
        };
        if let Err(e) = store_saved_plan(&self.root, Some(&saved)) {
            return Err(self.finish_err(call, e));
        }
        let repaired = call.trace.repair_success == Some(true);
        let trace_file = self.finish_ok(&mut call, &accepted.response)?;
        let r = accepted.response;
        Ok(PlanOutcome {
            trace_id: call.trace.trace_id,
            protocol: call.version.number(),
            summary: r.summary.clone(),
            plan: r.plan.clone(),
            questions: r.questions.iter().take(2).cloned().collect(),
            risks: r.risks.clone(),
            verification: r.verification.clone(),
            commands_to_run: r.commands(),
            rollback: r.rollback.clone(),
            unanswered_context_requests: accepted.unanswered,
            context_rounds: call.rounds,
            repaired,
            memory,
            trace_file,
            response: r,
            context: ContextReport {
                sent_files: call.sent.keys().cloned().collect(),
                dropped: call.context.dropped,
                stats: call.trace.context_stats,
            },
        })
    }
}
