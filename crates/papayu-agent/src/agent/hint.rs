//! What a repair request shows a model whose edit named text the file does not have: the
//! file's closest lines, to copy exactly. Reads the files papayu sent (and only while they still
//! hold the bytes it sent); writes nothing.

use std::collections::BTreeMap;

use camino::Utf8Path;
use papayu_protocol::{ErrorCode, Violation};
use serde_json::Value;

/// Lines around the closest window shown on each side.
const AROUND: usize = 1;
/// Files longer than this are not searched.
const MAX_LINES: usize = 4_000;
/// A window whose lines are on average less similar than this is no hint.
const MIN_SIMILARITY: f32 = 0.5;

/// How alike two lines are, ignoring leading and trailing white space (0 to 1).
fn similarity(a: &str, b: &str) -> f32 {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    similar::TextDiff::from_chars(a, b).ratio()
}

/// The lines of `text` closest to `wanted` (a window as long as `wanted`, with a line around
/// it), when they are alike enough to be what the model meant.
pub(super) fn closest_lines(text: &str, wanted: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(MAX_LINES).collect();
    let want: Vec<&str> = wanted.lines().filter(|l| !l.trim().is_empty()).collect();
    if want.is_empty() || lines.is_empty() {
        return None;
    }
    let n = want.len().min(lines.len());
    let mut best: Option<(f32, usize)> = None;
    for start in 0..=lines.len() - n {
        // Cheap first: the window must share its first or last line's gist.
        let first = similarity(lines[start], want[0]);
        let last = similarity(lines[start + n - 1], want[n - 1]);
        if first < MIN_SIMILARITY && last < MIN_SIMILARITY {
            continue;
        }
        let score: f32 = (0..n)
            .map(|k| similarity(lines[start + k], want[k]))
            .sum::<f32>()
            / n as f32;
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, start));
        }
    }
    let (score, start) = best?;
    if score < MIN_SIMILARITY {
        return None;
    }
    let from = start.saturating_sub(AROUND);
    let to = (start + n + AROUND).min(lines.len());
    Some(lines[from..to].join("\n"))
}

/// The `before`/`anchor` texts of the answer's action `index` that `text` does not contain.
fn missing_texts(answer: &Value, index: usize, file: &str) -> Vec<String> {
    let Some(edits) = answer
        .pointer(&format!("/actions/{index}/edits"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in edits {
        for key in ["before", "anchor"] {
            if let Some(t) = e.get(key).and_then(Value::as_str)
                && !t.is_empty()
                && !file.contains(t)
                && !out.iter().any(|o: &String| o == t)
            {
                out.push(t.to_owned());
            }
        }
    }
    out
}

/// Repair lines for the edits of `answer` whose text a file lacks (`ERR_EDIT_ANCHOR_NOT_FOUND`,
/// `ERR_EDIT_BEFORE_NOT_FOUND`): the file's closest lines, for each file papayu sent (`sent`:
/// path → sha256) that still holds the sent bytes under `root`.
pub(super) fn edit_hints(
    root: &Utf8Path,
    answer: &str,
    violations: &[Violation],
    sent: &BTreeMap<String, String>,
) -> String {
    let Ok(answer) = papayu_protocol::extract_json(answer) else {
        return String::new();
    };
    let mut out = String::new();
    for v in violations {
        if !matches!(
            v.code,
            ErrorCode::EditAnchorNotFound | ErrorCode::EditBeforeNotFound
        ) {
            continue;
        }
        let (Some(index), Some(path)) = (v.action_index, v.path.as_deref()) else {
            continue;
        };
        let Some(bytes) = sent
            .get(path)
            .and_then(|sha| super::sent_bytes(root, path, sha))
        else {
            continue;
        };
        let file = String::from_utf8_lossy(&bytes);
        for wanted in missing_texts(&answer, index, &file) {
            if let Some(lines) = closest_lines(&file, &wanted) {
                out.push_str(&format!(
                    "- `{path}` has no text\n{wanted}\n  Its closest lines are these; copy the ones to change EXACTLY (same spaces, no line numbers):\n{lines}\n"
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use papayu_protocol::sha256_hex;

    const CALC: &str = "\"\"\"A tiny calculator.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a - b\n\n\ndef mean(values):\n    return sum(values) / len(values)\n";

    #[test]
    fn the_closest_window_is_found_despite_a_dropped_line() {
        // The model left the docstring out.
        let hint = closest_lines(CALC, "def add(a, b):\n    return a - b").unwrap();
        assert!(hint.contains("def add(a, b):"), "{hint}");
        assert!(hint.contains("\"\"\"Return the sum"), "{hint}");
    }

    #[test]
    fn a_mistyped_line_points_at_the_real_one() {
        let js = "const VERSION = /^v?(\\d+)\\.(\\d+)\\.(\\d+)$/;\n\nexport function parseVersion(text) {\n";
        let hint = closest_lines(js, "const VERSION = /^v?\\d+\\.\\d+\\.\\d+$/;").unwrap();
        assert!(hint.starts_with("const VERSION = /^v?(\\d+)"), "{hint}");
    }

    #[test]
    fn nothing_alike_is_no_hint() {
        assert_eq!(closest_lines(CALC, "fn main() { println!(\"x\"); }"), None);
        assert_eq!(closest_lines("", "x"), None);
    }

    #[test]
    fn hints_name_only_missing_texts_of_sent_unchanged_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fs_err::write(root.join("calc.py"), CALC).unwrap();
        let sent = BTreeMap::from([("calc.py".to_owned(), sha256_hex(CALC.as_bytes()))]);
        let answer = r#"{"actions":[{"kind":"EDIT_FILE","path":"calc.py","edits":[{"op":"replace","anchor":"def add(a, b):\n    return a - b","before":"def add(a, b):\n    return a - b","after":"x"}]}]}"#;
        let v = Violation::new(ErrorCode::EditAnchorNotFound, "anchor not found")
            .at_action(0, "calc.py".to_owned());
        let hints = edit_hints(root, answer, std::slice::from_ref(&v), &sent);
        assert!(hints.contains("Its closest lines"), "{hints}");
        assert_eq!(hints.matches("has no text").count(), 1, "{hints}");
        // A file changed since it was sent gives no hint from its new bytes.
        fs_err::write(root.join("calc.py"), "changed\n").unwrap();
        assert_eq!(edit_hints(root, answer, &[v], &sent), "");
    }
}
