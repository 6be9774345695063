//! Progress while papayu works: on a terminal an indicatif spinner on stderr with the elapsed
//! time, the stage and the characters of a streamed answer received; plain lines with `-v`
//! elsewhere; events under `--json-stream`; nothing with `--json`. A finished check is a line
//! that stays (name, result, time), on a terminal or not.

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use papayu_agent::Progress;

use crate::events::{self, Event};
use crate::global::Global;
use crate::term::style::{self, BAD, DIM, GOOD};

/// How this invocation shows progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `--json`: stdout is one document, stderr stays quiet.
    Quiet,
    /// `--json-stream`: every report is an event on stdout.
    Stream,
    /// A terminal: the spinner.
    Spinner,
    /// Not a terminal: stage lines only with `-v`, check lines always.
    Lines {
        /// `-v` was given.
        verbose: bool,
    },
}

/// What the spinner shows.
#[derive(Default)]
struct Live {
    bar: Option<ProgressBar>,
    stage: String,
    chars: usize,
}

/// Progress on stderr (or stdout events): one per command, shown across its stages.
pub struct ProgressLine {
    mode: Mode,
    colour: bool,
    live: Mutex<Live>,
}

impl ProgressLine {
    /// A progress printer for this invocation.
    pub fn new(global: &Global) -> Self {
        let mode = if crate::json::streaming() {
            Mode::Stream
        } else if global.json {
            Mode::Quiet
        } else if crate::term::stderr_is_terminal() {
            Mode::Spinner
        } else {
            Mode::Lines {
                verbose: global.verbose > 0,
            }
        };
        Self {
            mode,
            colour: crate::term::stderr_colored(),
            live: Mutex::new(Live::default()),
        }
    }

    /// Show one progress report.
    pub fn show(&self, p: &Progress) {
        match self.mode {
            Mode::Quiet => {}
            Mode::Stream => events::emit(&Event::from_progress(p)),
            Mode::Spinner | Mode::Lines { .. } => self.human(p),
        }
    }

    fn human(&self, p: &Progress) {
        if let Progress::Checked {
            command,
            success,
            status,
            duration_ms,
            ..
        } = p
        {
            self.line(&check_line(
                self.colour,
                command,
                *success,
                status,
                *duration_ms,
            ));
            return;
        }
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        match p {
            Progress::Receiving { chars } => live.chars = *chars,
            other => {
                let Some(text) = stage(other) else {
                    return;
                };
                if matches!(other, Progress::Requesting { .. }) {
                    live.chars = 0;
                }
                if let Mode::Lines { verbose: true } = self.mode {
                    drop(live);
                    anstream::eprintln!("papayu: {text}");
                    return;
                }
                live.stage = text;
            }
        }
        if self.mode != Mode::Spinner {
            return;
        }
        let message = if live.chars > 0 {
            format!(
                "{} {}",
                live.stage,
                style::paint_if(
                    self.colour,
                    DIM,
                    &crate::tr!("chars-received", count = live.chars)
                )
            )
        } else {
            live.stage.clone()
        };
        live.bar.get_or_insert_with(spinner).set_message(message);
    }

    /// A line that stays: above the spinner on a terminal, on stderr elsewhere.
    fn line(&self, text: &str) {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        match &live.bar {
            Some(bar) => bar.println(text),
            None => {
                drop(live);
                anstream::eprintln!("{text}");
            }
        }
    }

    /// Clear the spinner before printing results; the next report starts a new one.
    pub fn done(&self) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bar) = live.bar.take() {
            bar.finish_and_clear();
        }
        *live = Live::default();
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.done();
    }
}

/// A spinner on stderr ticking on its own (a model may say nothing for a while): its frame,
/// the time since it started, and the message.
fn spinner() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let look = ProgressStyle::with_template("{spinner} {elapsed:>3} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(look);
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// `✓ check `cargo test` passed (1.2 s)`, or `✗ … exited with 1 (…)`.
pub fn check_line(colour: bool, command: &str, success: bool, status: &str, ms: u64) -> String {
    let time = style::paint_if(colour, DIM, &format!("({})", style::duration_ms(ms)));
    if success {
        format!(
            "{} {} {time}",
            style::paint_if(colour, GOOD, "✓"),
            crate::tr!("check-passed", command = command)
        )
    } else {
        format!(
            "{} {} {time}",
            style::paint_if(colour, BAD, "✗"),
            crate::tr!("check-failed", command = command, status = status)
        )
    }
}

/// What a stage is called for people; `None` for reports with no stage of their own.
fn stage(p: &Progress) -> Option<String> {
    use crate::tr;
    Some(match p {
        Progress::GatheringContext => tr!("stage-context"),
        Progress::Requesting { attempt, protocol } => tr!(
            "stage-requesting",
            attempt = attempt.to_string(),
            protocol = *protocol
        ),
        Progress::ContextRound { round, requests } => {
            tr!("stage-context-round", round = *round, count = *requests)
        }
        Progress::Repair { codes } => tr!(
            "stage-repair",
            codes = codes
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Progress::Retargeted { from, to } => tr!("stage-retargeted", from = from, to = to),
        Progress::Merged {
            path,
            actions,
            how: "repeated",
        } => tr!("stage-merged-repeated", path = path, count = *actions),
        Progress::Merged {
            path,
            how: "rewritten",
            ..
        } => {
            tr!("stage-merged-rewritten", path = path)
        }
        Progress::Merged { path, actions, .. } => {
            tr!("stage-merged-in-turn", path = path, count = *actions)
        }
        Progress::Widened {
            path,
            added: true,
            first,
            ..
        } => tr!("stage-added", path = path, line = *first),
        Progress::Widened {
            path,
            as_patch: true,
            ..
        } => tr!("stage-answer-as-patch", path = path),
        Progress::Widened {
            path,
            kept: 0,
            numbered: true,
            ..
        } => tr!("stage-unnumbered", path = path),
        Progress::Widened {
            path,
            kept: 0,
            fenced: true,
            ..
        } => tr!("stage-unfenced", path = path),
        Progress::Widened { path, kept: 0, .. } => tr!("stage-restored", path = path),
        Progress::Widened {
            path,
            first,
            last,
            kept,
            ..
        } => tr!(
            "stage-widened",
            path = path,
            first = *first,
            last = *last,
            kept = *kept
        ),
        Progress::Fallback { from, to, reason } => tr!(
            "stage-fallback",
            from = *from,
            to = *to,
            reason = reason.to_string()
        ),
        Progress::Previewing => tr!("stage-previewing"),
        Progress::Testing {
            command,
            baseline: true,
        } => tr!("stage-testing-baseline", command = command.to_string()),
        Progress::Testing { command, .. } => tr!("stage-testing", command = command.to_string()),
        Progress::Tested {
            failing,
            duration_ms,
            ..
        } => tr!(
            "stage-tested",
            time = style::duration_ms(*duration_ms),
            failing = *failing
        ),
        Progress::Attempt { number, of } => tr!("stage-attempt", number = *number, of = *of),
        Progress::Part { hunks, of } => tr!("stage-part", hunks = hunk_list(hunks), of = *of),
        Progress::Renamed {
            names,
            files,
            alone,
        } => {
            let (names, files) = (name_list(names), files.len());
            if *alone {
                tr!("stage-renamed-alone", names = names, files = files)
            } else {
                tr!("stage-renamed", names = names, files = files)
            }
        }
        Progress::Mutants { names, count } => {
            tr!("stage-mutants", names = names.join(", "), count = *count)
        }
        Progress::Mutated {
            path,
            line,
            from,
            to,
        } => tr!(
            "stage-mutated",
            path = path.clone(),
            line = *line,
            from = from.clone(),
            to = to.clone()
        ),
        Progress::Added { names, files } => tr!(
            "stage-added-alone",
            names = names.join(", "),
            files = files.join(", ")
        ),
        Progress::Moved { names, from, to } => tr!(
            "stage-moved",
            names = names.join(", "),
            from = from.clone(),
            to = to.clone()
        ),
        Progress::Applying { done, total, item } => tr!(
            "stage-applying",
            done = *done,
            total = *total,
            item = item.to_string()
        ),
        _ => return None,
    })
}

/// `1, 3` for hunks 1 and 3 of a part.
pub(crate) fn hunk_list(hunks: &[usize]) -> String {
    hunks
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `` `a` → `b`, `c` → `d` `` for the renames a completed rename carried out.
pub(crate) fn name_list(names: &[(String, String)]) -> String {
    names
        .iter()
        .map(|(a, b)| format!("`{a}` → `{b}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passing_check_shows_its_name_and_time() {
        assert_eq!(
            check_line(false, "cargo test", true, "exited with 0", 1234),
            "✓ check `cargo test` passed (1.2 s)"
        );
        assert_eq!(
            check_line(false, "make", false, "exited with 2", 80),
            "✗ check `make` exited with 2 (80 ms)"
        );
        assert!(check_line(true, "make", true, "", 1).contains('\x1b'));
    }
}
