//! The hooks an integration installs: an [`AgentObserver`] told how each plan, apply and solve
//! ended (agent-sync writes `.papa-yu/agent-sync.json` from it), and the context extras
//! (findings, architecture, online research) handed to the context engine.
//! It touches nothing itself: an observer does what it does with the event.

use std::sync::Arc;

use camino::Utf8Path;
use papayu_context::ContextExtras;

use super::Agent;
use super::solve::SolveReport;
use super::views::{ApplyOutcome, ApplyPreview, PlanOutcome};
use crate::error::AgentError;

/// How an operation of the agent ended, as an [`AgentObserver`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum AgentEvent<'a> {
    /// [`Agent::plan`] returned.
    Planned {
        /// The goal (mode prefix stripped).
        goal: &'a str,
        /// The plan, or why there is none.
        result: Result<&'a PlanOutcome, &'a AgentError>,
    },
    /// [`Agent::apply`] (or [`Agent::apply_with_cancel`]) returned.
    Applied {
        /// The preview that was applied.
        preview: &'a ApplyPreview,
        /// What was written, or why nothing was.
        result: Result<&'a ApplyOutcome, &'a AgentError>,
    },
    /// [`Agent::solve`] returned.
    Solved {
        /// The goal (mode prefix stripped).
        goal: &'a str,
        /// The run's report, or the error that ended it.
        result: Result<&'a SolveReport, &'a AgentError>,
    },
}

/// Told how each plan, apply and solve of an [`Agent`] ended, after it ended. An observer
/// cannot change the outcome; it reports its own failures itself (a log line), since the
/// operation has already happened.
pub trait AgentObserver: Send + Sync {
    /// `event` happened in the project at `root`.
    fn observe(&self, root: &Utf8Path, event: &AgentEvent<'_>);
}

impl Agent {
    /// Install (or with `None` remove) the observer of plans, applies and solves.
    pub fn set_observer(&mut self, observer: Option<Arc<dyn AgentObserver>>) {
        self.observer = observer;
    }

    /// Install (or with `None` remove) an integration's context additions
    /// ([`ContextExtras`]): base-context blocks, `web_search` answers, extra log sources, and
    /// the line that offers them in the system prompt.
    pub fn set_context_extras(&mut self, extras: Option<Arc<dyn ContextExtras>>) {
        self.engine.set_extras(extras);
    }

    pub(super) fn notify(&self, event: AgentEvent<'_>) {
        if let Some(observer) = &self.observer {
            observer.observe(&self.root, &event);
        }
    }
}
