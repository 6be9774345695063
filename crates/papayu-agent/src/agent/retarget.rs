//! An edit aimed at the wrong file: when the text an EDIT_FILE or PATCH_FILE action changes is
//! missing from the file it names but fits exactly one other file papayu sent, the action is
//! pointed at that file instead of spending a repair round on it. Reads the files papayu sent
//! (and only while they still hold the bytes it sent); writes nothing.

use std::collections::BTreeMap;

use camino::Utf8Path;
use papayu_patch::engine::{EngineOptions, compute};
use papayu_protocol::{Action, ActionKind, ErrorCode, Violation};
use serde_json::Value;

/// The codes that say "this text is not in that file".
const NOT_IN_FILE: [ErrorCode; 3] = [
    ErrorCode::EditAnchorNotFound,
    ErrorCode::EditBeforeNotFound,
    ErrorCode::PatchApplyFailed,
];

/// One action moved to another file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Moved {
    /// The action's index in the answer.
    pub(crate) action: usize,
    /// The path the model named.
    pub(crate) from: String,
    /// The one sent file its edits fit.
    pub(crate) to: String,
}

/// The answer with every action that failed only for want of its text pointed at the one other
/// sent file where all of its edits apply, or `None` when any failed action has no such file
/// (none, or several), or when anything else is wrong with the answer.
///
/// A target must be a file papayu sent that still holds the sent bytes, that no other action
/// of the answer touches, and that is not a test file unless the named file was one too: the
/// prompt tells the model to fix the code, not the tests, so an edit is never moved into them.
pub(crate) fn retarget(
    root: &Utf8Path,
    answer: &str,
    violations: &[Violation],
    sent: &BTreeMap<String, String>,
    opts: &EngineOptions,
) -> Option<(String, Vec<Moved>)> {
    if violations.is_empty() || violations.iter().any(|v| !NOT_IN_FILE.contains(&v.code)) {
        return None;
    }
    let mut doc = papayu_protocol::extract_json(answer).ok()?;
    let actions = doc.get("actions")?.as_array()?.clone();
    let named: Vec<String> = actions
        .iter()
        .filter_map(|a| a.get("path").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let mut failed: Vec<usize> = violations
        .iter()
        .map(|v| v.action_index)
        .collect::<Option<Vec<usize>>>()?;
    failed.sort_unstable();
    failed.dedup();

    let mut moved = Vec::new();
    for index in failed {
        let raw = actions.get(index)?;
        let action: Action = serde_json::from_value(raw.clone()).ok()?;
        if !matches!(action.kind, ActionKind::EditFile | ActionKind::PatchFile) {
            return None;
        }
        let from_test = papayu_context::is_test_path(&action.path);
        let mut fits = sent.iter().filter(|(path, sha)| {
            **path != action.path
                && !named.contains(path)
                && (from_test || !papayu_context::is_test_path(path))
                && applies_to(root, path, sha, &action, opts)
        });
        let (to, _) = match (fits.next(), fits.next()) {
            (Some(one), None) => one,
            _ => return None,
        };
        let slot = doc
            .pointer_mut(&format!("/actions/{index}"))?
            .as_object_mut()?;
        slot.insert("path".into(), Value::String(to.clone()));
        slot.insert("base_sha256".into(), Value::String(sent[to].clone()));
        moved.push(Moved {
            action: index,
            from: action.path.clone(),
            to: to.clone(),
        });
    }
    Some((doc.to_string(), moved))
}

/// Whether `action`'s edits all apply to the sent file `path` (still holding the bytes whose
/// hash is `sha`).
fn applies_to(
    root: &Utf8Path,
    path: &str,
    sha: &str,
    action: &Action,
    opts: &EngineOptions,
) -> bool {
    let Some(bytes) = super::sent_bytes(root, path, sha) else {
        return false;
    };
    let mut moved = action.clone();
    moved.path = path.to_owned();
    moved.base_sha256 = Some(sha.to_owned());
    compute(Some(&bytes), &moved, opts).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use papayu_protocol::sha256_hex;
    use serde_json::json;

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, BTreeMap<String, String>) {
        let dir = tempfile::tempdir().unwrap();
        let mut sent = BTreeMap::new();
        for (path, text) in files {
            let p = dir.path().join(path);
            fs_err::create_dir_all(p.parent().unwrap()).unwrap();
            fs_err::write(&p, text).unwrap();
            sent.insert((*path).to_owned(), sha256_hex(text.as_bytes()));
        }
        (dir, sent)
    }

    fn root(dir: &tempfile::TempDir) -> &Utf8Path {
        Utf8Path::from_path(dir.path()).unwrap()
    }

    fn edit(path: &str, sha: &str, before: &str, after: &str) -> Value {
        json!({"kind": "EDIT_FILE", "path": path, "base_sha256": sha,
            "edits": [{"op": "replace", "anchor": before, "before": before, "after": after}]})
    }

    fn missing(index: usize, path: &str) -> Violation {
        Violation::new(ErrorCode::EditAnchorNotFound, "anchor not found").at_action(index, path)
    }

    const PRICING: &str = "def total(lines):\n    return sum(lines)\n";
    const TAX: &str = "RATES = {\n    \"DE\": 19,\n}\n";
    const TESTS: &str = "def test_rates():\n    assert RATES[\"DE\"] == 19\n";

    #[test]
    fn an_edit_whose_text_is_in_one_other_sent_file_is_moved_there() {
        let (dir, sent) = project(&[
            ("pricing.py", PRICING),
            ("tax.py", TAX),
            ("test_tax.py", TESTS),
        ]);
        let answer = json!({"actions": [edit("pricing.py", &sent["pricing.py"], "    \"DE\": 19,", "    \"DE\": 16,")]});
        let (text, moved) = retarget(
            root(&dir),
            &answer.to_string(),
            &[missing(0, "pricing.py")],
            &sent,
            &EngineOptions::default(),
        )
        .unwrap();
        assert_eq!(
            moved,
            vec![Moved {
                action: 0,
                from: "pricing.py".into(),
                to: "tax.py".into()
            }]
        );
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["actions"][0]["path"], "tax.py");
        assert_eq!(doc["actions"][0]["base_sha256"], sent["tax.py"].as_str());
        assert_eq!(doc["actions"][0]["edits"][0]["after"], "    \"DE\": 16,");
    }

    #[test]
    fn no_single_file_other_violations_changed_files_or_tests_leave_the_answer_alone() {
        let opts = EngineOptions::default();
        // The text is in two other files: no guess.
        let (dir, sent) = project(&[
            ("pricing.py", PRICING),
            ("tax.py", TAX),
            ("old_tax.py", TAX),
        ]);
        let answer =
            json!({"actions": [edit("pricing.py", &sent["pricing.py"], "    \"DE\": 19,", "x")]});
        let v = [missing(0, "pricing.py")];
        assert!(retarget(root(&dir), &answer.to_string(), &v, &sent, &opts).is_none());

        // Only in a test file: the edit is not moved into the tests.
        let (dir, sent) = project(&[("pricing.py", PRICING), ("tests/test_tax.py", TESTS)]);
        let answer = json!({"actions": [edit("pricing.py", &sent["pricing.py"], "    assert RATES[\"DE\"] == 19", "x")]});
        assert!(retarget(root(&dir), &answer.to_string(), &v, &sent, &opts).is_none());

        // Another kind of violation too: the repair round deals with the answer.
        let (dir, sent) = project(&[("pricing.py", PRICING), ("tax.py", TAX)]);
        let answer =
            json!({"actions": [edit("pricing.py", &sent["pricing.py"], "    \"DE\": 19,", "x")]});
        let other = Violation::new(ErrorCode::BaseMismatch, "base").at_action(0, "pricing.py");
        let both = [missing(0, "pricing.py"), other];
        assert!(retarget(root(&dir), &answer.to_string(), &both, &sent, &opts).is_none());

        // Another action already edits the file that has the text.
        let answer = json!({"actions": [
            edit("pricing.py", &sent["pricing.py"], "    \"DE\": 19,", "x"),
            edit("tax.py", &sent["tax.py"], "RATES = {", "RATES: dict = {"),
        ]});
        assert!(retarget(root(&dir), &answer.to_string(), &v, &sent, &opts).is_none());

        // The file changed since papayu sent it.
        fs_err::write(dir.path().join("tax.py"), format!("{TAX}# edited\n")).unwrap();
        let answer =
            json!({"actions": [edit("pricing.py", &sent["pricing.py"], "    \"DE\": 19,", "x")]});
        assert!(retarget(root(&dir), &answer.to_string(), &v, &sent, &opts).is_none());
    }
}
