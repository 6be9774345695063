//! The event vocabulary of `--json-stream`: one JSON object per line on stdout, each tagged by
//! its `"event"` field. `plan`, `apply` and `run` write it; any command that streams uses these
//! names.
//!
//! | `event`   | fields                                                                          |
//! |-----------|---------------------------------------------------------------------------------|
//! | `stage`   | papayu-agent's `Progress` as it serialises: `"stage"` names it (`gathering_context`, `requesting`, `context_round`, `repair`, `fallback`, `previewing`, `testing`, `tested`, `attempt`, `applying`) with that stage's fields |
//! | `tokens`  | `chars`: characters of the streamed answer received so far (only when the provider streams) |
//! | `preview` | the change about to be applied: `ApplyPreview` as `--json` shows it (`trace_id`, `summary`, `actions`, `preview`, `deletes`, …) |
//! | `check`   | a check command finished: `command`, `success`, `status`, `duration_ms`, `done`, `total` |
//! | `result`  | the last line: the very document `--json` prints (`ok`, `code`, …)               |

use std::io::Write as _;

use papayu_agent::Progress;
use serde::Serialize;
use serde_json::Value;

/// One line of a `--json-stream` transcript.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    /// A stage of the work began (papayu-agent's `Progress`, tagged by its own `"stage"`).
    Stage(&'a Progress),
    /// Characters of a streamed answer received so far.
    Tokens {
        /// Characters received.
        chars: usize,
    },
    /// The change about to be applied (an object).
    Preview(&'a Value),
    /// A check command finished.
    Check {
        /// The command line.
        command: &'a str,
        /// Whether it passed.
        success: bool,
        /// How it ended (`exited with 0`, `timed out after 120 s and was killed`, …).
        status: &'a str,
        /// Wall time in milliseconds.
        duration_ms: u64,
        /// Checks finished so far.
        done: usize,
        /// Checks in total.
        total: usize,
    },
    /// The outcome: the document `--json` would print (an object with `ok` and `code`).
    Result(&'a Value),
}

impl<'a> Event<'a> {
    /// The event a progress report becomes: `tokens` for received characters, `check` for a
    /// finished check, `stage` for everything else.
    pub fn from_progress(p: &'a Progress) -> Event<'a> {
        match p {
            Progress::Receiving { chars } => Event::Tokens { chars: *chars },
            Progress::Checked {
                done,
                total,
                command,
                success,
                status,
                duration_ms,
                ..
            } => Event::Check {
                command,
                success: *success,
                status,
                duration_ms: *duration_ms,
                done: *done,
                total: *total,
            },
            other => Event::Stage(other),
        }
    }
}

/// Write one event as one line on stdout, flushed at once (a reader sees it as it happens).
pub fn emit(event: &Event<'_>) {
    let Ok(line) = serde_json::to_string(event) else {
        return;
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_tagged_and_progress_keeps_its_stage() {
        let requesting = Progress::Previewing;
        let line = |e: &Event<'_>| serde_json::to_value(e).unwrap_or_default();
        assert_eq!(
            line(&Event::from_progress(&requesting)),
            serde_json::json!({"event": "stage", "stage": "previewing"})
        );
        let receiving = Progress::Receiving { chars: 12 };
        assert_eq!(
            line(&Event::from_progress(&receiving)),
            serde_json::json!({"event": "tokens", "chars": 12})
        );
        let checked = Progress::Checked {
            done: 1,
            total: 2,
            command: "cargo test".into(),
            success: true,
            status: "exited with 0".into(),
            duration_ms: 1200,
            output: "lots of output".into(),
        };
        assert_eq!(
            line(&Event::from_progress(&checked)),
            serde_json::json!({"event": "check", "command": "cargo test", "success": true,
                "status": "exited with 0", "duration_ms": 1200, "done": 1, "total": 2})
        );
        let doc = serde_json::json!({"ok": true, "code": null});
        assert_eq!(
            line(&Event::Result(&doc)),
            serde_json::json!({"event": "result", "ok": true, "code": null})
        );
    }
}
