//! Long work (model calls, applies) as jobs: progress events collected for polling, a result
//! or an error at the end, cancellation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use papayu_agent::Progress;
use serde_json::Value;

use crate::api::{JobState, JobStatus};
use crate::error::{ApiError, codes};

/// Finished jobs are forgotten this long after they end.
pub const JOB_RETENTION: Duration = Duration::from_secs(600);

/// Lock a mutex whose data stays consistent even if a holder panicked (every critical section
/// here is a plain field update).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug)]
struct JobInner {
    state: JobState,
    events: Vec<Value>,
    result: Option<Value>,
    error: Option<ApiError>,
    finished: Option<Instant>,
    abort: Option<tokio::task::AbortHandle>,
}

/// How a running job is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelBy {
    /// Drop the task (a model call: the request is dropped, nothing was written).
    Abort,
    /// Set the flag the apply engine watches; it rolls back and ends with `ERR_CANCELLED`.
    Flag,
}

/// One job.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) id: String,
    pub(crate) cancel_flag: Arc<AtomicBool>,
    cancel_by: CancelBy,
    inner: Mutex<JobInner>,
}

impl Job {
    pub(crate) fn new(cancel_by: CancelBy) -> Self {
        Self {
            id: uuid::Uuid::now_v7().to_string(),
            cancel_flag: Arc::new(AtomicBool::new(false)),
            cancel_by,
            inner: Mutex::new(JobInner {
                state: JobState::Running,
                events: Vec::new(),
                result: None,
                error: None,
                finished: None,
                abort: None,
            }),
        }
    }

    pub(crate) fn set_abort(&self, handle: tokio::task::AbortHandle) {
        lock(&self.inner).abort = Some(handle);
    }

    /// Record an event. Consecutive `receiving` events replace each other: the UI wants the
    /// latest count, not thousands of entries.
    pub(crate) fn push(&self, event: Value) {
        let mut inner = lock(&self.inner);
        let is_receiving = |v: &Value| v.get("stage").and_then(Value::as_str) == Some("receiving");
        if is_receiving(&event) && inner.events.last().is_some_and(is_receiving) {
            inner.events.pop();
        }
        inner.events.push(event);
    }

    /// Record a papayu-agent progress event. A finished check is the UI-API's
    /// `check_output` event (`command`, `output`, plus `success`, `status`, `done`, `total`).
    pub(crate) fn progress(&self, p: &Progress) {
        let Ok(mut v) = serde_json::to_value(p) else {
            return;
        };
        if matches!(p, Progress::Checked { .. }) {
            v["stage"] = Value::from("check_output");
        }
        self.push(v);
    }

    /// The work ended; ignored when the job was cancelled meanwhile.
    pub(crate) fn finish(&self, result: Result<Value, ApiError>) {
        let mut inner = lock(&self.inner);
        if inner.state != JobState::Running {
            return;
        }
        match result {
            Ok(v) => {
                inner.state = JobState::Done;
                inner.result = Some(v);
            }
            Err(e) => {
                inner.state =
                    if e.code == codes::CANCELLED && self.cancel_flag.load(Ordering::SeqCst) {
                        JobState::Cancelled
                    } else {
                        JobState::Failed
                    };
                inner.error = Some(e);
            }
        }
        inner.finished = Some(Instant::now());
        inner.abort = None;
    }

    /// Cancel a running job; `false` if it had already ended.
    pub(crate) fn cancel(&self) -> bool {
        let mut inner = lock(&self.inner);
        if inner.state != JobState::Running {
            return false;
        }
        self.cancel_flag.store(true, Ordering::SeqCst);
        if self.cancel_by == CancelBy::Abort {
            if let Some(h) = inner.abort.take() {
                h.abort();
            }
            inner.state = JobState::Cancelled;
            inner.error = Some(ApiError::cancelled());
            inner.finished = Some(Instant::now());
        }
        true
    }

    pub(crate) fn status(&self, since: usize) -> JobStatus {
        let inner = lock(&self.inner);
        let from = since.min(inner.events.len());
        JobStatus {
            state: inner.state,
            events: inner.events[from..].to_vec(),
            next: inner.events.len(),
            result: inner.result.clone(),
            error: inner.error.clone(),
        }
    }

    fn expired(&self, now: Instant) -> bool {
        lock(&self.inner)
            .finished
            .is_some_and(|f| now.duration_since(f) > JOB_RETENTION)
    }
}

/// Every job of the app, by id.
#[derive(Debug, Default)]
pub(crate) struct Jobs(Mutex<HashMap<String, Arc<Job>>>);

impl Jobs {
    pub(crate) fn insert(&self, job: Arc<Job>) {
        let mut map = lock(&self.0);
        let now = Instant::now();
        map.retain(|_, j| !j.expired(now));
        map.insert(job.id.clone(), job);
    }

    pub(crate) fn get(&self, id: &str) -> Result<Arc<Job>, ApiError> {
        lock(&self.0).get(id).cloned().ok_or_else(|| {
            ApiError::new(
                codes::UNKNOWN_JOB,
                format!("no job {id:?} (finished jobs are kept for 10 minutes)"),
            )
        })
    }
}
