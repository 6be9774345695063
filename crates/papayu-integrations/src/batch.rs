//! Batch runs: the goals of a file (one per line, or JSONL `{"goal": …}`), and the summary
//! table of how each ended. The frontend solves each goal as its own verified transaction;
//! this module touches nothing.

use serde::Serialize;

use crate::error::BatchError;

/// The goals of a goals file: JSON Lines when every goal line is a JSON object (`{"goal": …}`),
/// else one goal per line. Blank lines and lines starting with `#` are skipped.
pub fn parse_goals(text: &str) -> Result<Vec<String>, BatchError> {
    let mut goals = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('{') {
            let value: serde_json::Value =
                serde_json::from_str(line).map_err(|e| BatchError::Line {
                    line: i + 1,
                    message: e.to_string(),
                })?;
            let goal = value
                .get("goal")
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .ok_or_else(|| BatchError::Line {
                    line: i + 1,
                    message: "expected {\"goal\": \"…\"}".to_owned(),
                })?;
            goals.push(goal.to_owned());
        } else {
            goals.push(line.to_owned());
        }
    }
    if goals.is_empty() {
        return Err(BatchError::Empty);
    }
    Ok(goals)
}

/// How one goal of a batch ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchRow {
    /// The goal.
    pub goal: String,
    /// `verified`, `applied`, `no_changes`, `not_solved`, `declined`, `failed` or `skipped`.
    pub outcome: String,
    /// The stable error code when it did not end in a change.
    pub code: Option<String>,
    /// Attempts used.
    pub attempts: usize,
}

impl BatchRow {
    /// Whether the goal ended in a change or needed none.
    pub fn succeeded(&self) -> bool {
        matches!(self.outcome.as_str(), "verified" | "applied" | "no_changes")
    }
}

/// The summary table: one row per goal (number, outcome, attempts, code, goal cut to 60
/// characters), then the totals.
pub fn render_table(rows: &[BatchRow]) -> String {
    let mut out = vec![format!(
        "{:>3}  {:<11} {:>8}  {:<22} goal",
        "#", "outcome", "attempts", "code"
    )];
    for (i, r) in rows.iter().enumerate() {
        let goal: String = r.goal.chars().take(60).collect();
        out.push(format!(
            "{:>3}  {:<11} {:>8}  {:<22} {goal}",
            i + 1,
            r.outcome,
            r.attempts,
            r.code.as_deref().unwrap_or("-")
        ));
    }
    let ok = rows.iter().filter(|r| r.succeeded()).count();
    out.push(format!("{ok} of {} goals succeeded", rows.len()));
    out.join("\n")
}
