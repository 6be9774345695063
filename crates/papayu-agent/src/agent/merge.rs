//! Several actions on one path in one answer, read as the one change they mean (D80). Small
//! models repeat an action word for word, write two pieces of one file as two UPDATE_FILEs, or
//! delete a file and create it again with its new text; validation rejects two actions that
//! write one path (ERR_ACTION_CONFLICT), and a repair round costs a model call for a change
//! whose meaning is plain. Identical actions are kept once. For a file papayu sent (while it
//! still holds the sent bytes), a DELETE_FILE followed by writes, and a CREATE_FILE beside other
//! writes, are UPDATE_FILEs; several UPDATE_FILEs are read in turn — each against the file as
//! the ones before left it, with the readings of a whole-file answer (`fragment.rs`) — into one
//! whose content is the whole file. A write followed by a delete, edits (EDIT_FILE, PATCH_FILE)
//! beside other writes, and files papayu did not send are left for validation to name. Reads
//! the files papayu sent; writes nothing.

use std::collections::BTreeMap;

use camino::Utf8Path;
use serde_json::{Value, json};

/// How the actions on one path became one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum How {
    /// The same action, repeated: kept once.
    Repeated,
    /// The file deleted and written again: the write is an update of the file.
    Rewritten,
    /// Several different writes: read in turn into one update.
    InTurn,
}

impl How {
    /// The stable word for traces and progress.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Repeated => "repeated",
            Self::Rewritten => "rewritten",
            Self::InTurn => "in_turn",
        }
    }
}

/// The actions on one path that became one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Merged {
    /// The file.
    pub(crate) path: String,
    /// How many actions named it.
    pub(crate) actions: usize,
    /// How they became one.
    pub(crate) how: How,
}

/// The answer with the actions on each path merged as the module docs say, or `None` when no
/// path has more than one action that can be merged.
pub(crate) fn merge(
    root: &Utf8Path,
    answer: &str,
    sent: &BTreeMap<String, String>,
) -> Option<(String, Vec<Merged>)> {
    let mut doc = papayu_protocol::extract_json(answer).ok()?;
    let actions = doc.get_mut("actions")?.as_array_mut()?;
    let mut merged: Vec<Merged> = Vec::new();

    // Identical actions: the first is kept.
    let mut kept: Vec<Value> = Vec::with_capacity(actions.len());
    let mut repeats: BTreeMap<String, usize> = BTreeMap::new();
    for a in actions.drain(..) {
        if kept.contains(&a) {
            *repeats.entry(path_of(&a).unwrap_or_default()).or_insert(1) += 1;
        } else {
            kept.push(a);
        }
    }

    // Per path, the positions of its actions, in order.
    let mut by_path: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, a) in kept.iter().enumerate() {
        if let Some(p) = path_of(a) {
            by_path.entry(p).or_default().push(i);
        }
    }
    let mut drop = vec![false; kept.len()];
    for (path, at) in &by_path {
        let repeated = repeats.get(path).map(|&n| Merged {
            path: path.clone(),
            actions: n,
            how: How::Repeated,
        });
        let file = || {
            sent.get(path)
                .and_then(|sha| super::sent_bytes(root, path, sha))
                .and_then(|b| String::from_utf8(b).ok())
        };
        let one = (at.len() > 1)
            .then(file)
            .flatten()
            .and_then(|file| one_update(path, &file, at.iter().map(|&i| &kept[i])));
        let Some((content, how)) = one else {
            merged.extend(repeated);
            continue;
        };
        let first = at[0];
        kept[first] = json!({"kind": "UPDATE_FILE", "path": path, "content": content});
        for &i in &at[1..] {
            drop[i] = true;
        }
        merged.push(Merged {
            path: path.clone(),
            actions: at.len() + repeats.get(path).map_or(0, |n| n - 1),
            how,
        });
    }
    if merged.is_empty() {
        return None;
    }
    *actions = kept
        .into_iter()
        .zip(drop)
        .filter_map(|(a, d)| (!d).then_some(a))
        .collect();
    Some((doc.to_string(), merged))
}

/// The path an action names, without a leading `./`.
fn path_of(action: &Value) -> Option<String> {
    action
        .get("path")
        .and_then(Value::as_str)
        .map(|p| p.trim_start_matches("./").to_owned())
}

/// The content of the one UPDATE_FILE that the actions on `file` (at `path`, two or more, in
/// order) mean, and how; `None` when they are not deletes followed by whole-file writes.
fn one_update<'a>(
    path: &str,
    file: &str,
    actions: impl Iterator<Item = &'a Value>,
) -> Option<(String, How)> {
    let mut writes: Vec<&str> = Vec::new();
    for a in actions {
        match a.get("kind").and_then(Value::as_str)? {
            "DELETE_FILE" if writes.is_empty() => {}
            "UPDATE_FILE" | "CREATE_FILE" => writes.push(a.get("content").and_then(Value::as_str)?),
            _ => return None,
        }
    }
    match writes.as_slice() {
        [] => None,
        // One write, so the other actions were deletes before it: the update as the model wrote it (the readings of a
        // whole-file answer then see it like any other).
        [only] => Some(((*only).to_owned(), How::Rewritten)),
        [..] => {
            let mut text = file.to_owned();
            for w in &writes {
                text = match super::fragment::read(path, &text, w) {
                    Some(r) => r.whole,
                    // A piece the file already holds (the model repeating a line it kept)
                    // changes nothing; anything else is the whole new file.
                    None if !w.trim().is_empty() && text.contains(w.trim()) => continue,
                    None => (*w).to_owned(),
                };
            }
            Some((text, How::InTurn))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::testkit::project;

    fn sent_of(dir: &tempfile::TempDir, paths: &[&str]) -> BTreeMap<String, String> {
        paths
            .iter()
            .map(|p| {
                let bytes = fs_err::read(dir.path().join(p)).expect("read");
                ((*p).to_owned(), papayu_protocol::sha256_hex(&bytes))
            })
            .collect()
    }

    fn root_of(dir: &tempfile::TempDir) -> &Utf8Path {
        Utf8Path::from_path(dir.path()).expect("utf-8 temp dir")
    }

    fn actions_of(text: &str) -> Vec<Value> {
        let doc: Value = serde_json::from_str(text).expect("json");
        doc["actions"].as_array().expect("actions").clone()
    }

    const CALC: &str = "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a - b\n\n\ndef mul(a, b):\n    \"\"\"Product.\"\"\"\n    return a + b\n\n\ndef neg(a):\n    return -a\n";

    #[test]
    fn a_repeated_action_is_kept_once() {
        let dir = project(&[("calc.py", CALC), ("util.py", "X = 1\n")]);
        let root = root_of(&dir);
        let sent = sent_of(&dir, &["calc.py"]);
        let update = json!({"kind": "UPDATE_FILE", "path": "calc.py", "content": "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n"});
        let other = json!({"kind": "UPDATE_FILE", "path": "util.py", "content": "X = 2\n"});
        let answer = json!({"actions": [update, other, update, update]}).to_string();
        let (text, merged) = merge(root, &answer, &sent).expect("merged");
        assert_eq!(actions_of(&text), vec![update, other]);
        assert_eq!(
            merged,
            vec![Merged {
                path: "calc.py".into(),
                actions: 3,
                how: How::Repeated
            }]
        );
    }

    #[test]
    fn two_pieces_of_one_sent_file_are_read_in_turn_into_one_update() {
        let dir = project(&[("calc.py", CALC)]);
        let root = root_of(&dir);
        let sent = sent_of(&dir, &["calc.py"]);
        let answer = json!({"actions": [
            {"kind": "UPDATE_FILE", "path": "calc.py", "content": "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n"},
            {"kind": "UPDATE_FILE", "path": "./calc.py", "content": "def mul(a, b):\n    \"\"\"Product.\"\"\"\n    return a * b\n"},
        ]})
        .to_string();
        let (text, merged) = merge(root, &answer, &sent).expect("merged");
        let actions = actions_of(&text);
        assert_eq!(actions.len(), 1);
        assert_eq!(actions[0]["kind"], "UPDATE_FILE");
        assert_eq!(
            actions[0]["content"],
            CALC.replace("a - b", "a + b")
                .replace("return a + b\n\n\ndef neg", "return a * b\n\n\ndef neg")
        );
        assert_eq!(merged[0].how, How::InTurn);
        assert_eq!(merged[0].actions, 2);
    }

    #[test]
    fn a_second_piece_the_file_already_holds_changes_nothing() {
        let dir = project(&[("calc.py", CALC)]);
        let root = root_of(&dir);
        let sent = sent_of(&dir, &["calc.py"]);
        let answer = json!({"actions": [
            {"kind": "UPDATE_FILE", "path": "calc.py", "content": "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n"},
            {"kind": "UPDATE_FILE", "path": "calc.py", "content": "def neg(a):\n    return -a\n"},
        ]})
        .to_string();
        let (text, _) = merge(root, &answer, &sent).expect("merged");
        assert_eq!(
            actions_of(&text)[0]["content"],
            CALC.replacen("a - b", "a + b", 1)
        );
    }

    #[test]
    fn a_deleted_and_recreated_file_is_one_update() {
        let dir = project(&[("calc.py", CALC)]);
        let root = root_of(&dir);
        let sent = sent_of(&dir, &["calc.py"]);
        let new = CALC.replacen("a - b", "a + b", 1);
        let answer = json!({"actions": [
            {"kind": "DELETE_FILE", "path": "calc.py"},
            {"kind": "CREATE_FILE", "path": "calc.py", "content": new},
        ]})
        .to_string();
        let (text, merged) = merge(root, &answer, &sent).expect("merged");
        assert_eq!(
            actions_of(&text),
            vec![json!({"kind": "UPDATE_FILE", "path": "calc.py", "content": new})]
        );
        assert_eq!(merged[0].how, How::Rewritten);
    }

    #[test]
    fn contradictions_edits_unsent_and_changed_files_are_left_for_validation() {
        let dir = project(&[("calc.py", CALC), ("new.py", "A = 1\n")]);
        let root = root_of(&dir);
        let sent = sent_of(&dir, &["calc.py", "new.py"]);
        let write = json!({"kind": "UPDATE_FILE", "path": "calc.py", "content": "def add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n"});
        let other = json!({"kind": "UPDATE_FILE", "path": "calc.py", "content": "def mul(a, b):\n    \"\"\"Product.\"\"\"\n    return a * b\n"});
        let delete = json!({"kind": "DELETE_FILE", "path": "calc.py"});
        let edit = json!({"kind": "EDIT_FILE", "path": "calc.py", "edits": []});
        // A write, then a delete: the model contradicts itself.
        let answer = json!({"actions": [write, delete]}).to_string();
        assert_eq!(merge(root, &answer, &sent), None);
        // An edit beside a write.
        let answer = json!({"actions": [write, edit]}).to_string();
        assert_eq!(merge(root, &answer, &sent), None);
        // A file papayu did not send.
        let unsent = |c: &str| json!({"kind": "CREATE_FILE", "path": "other.py", "content": c});
        let answer = json!({"actions": [unsent("A = 1\n"), unsent("A = 2\n")]}).to_string();
        assert_eq!(merge(root, &answer, &sent), None);
        // A file changed since it was sent.
        fs_err::write(dir.path().join("calc.py"), "changed\n").expect("write");
        let answer = json!({"actions": [write, other]}).to_string();
        assert_eq!(merge(root, &answer, &sent), None);
        // One action per path: nothing to merge.
        let answer =
            json!({"actions": [{"kind": "UPDATE_FILE", "path": "new.py", "content": "A = 2\n"}]})
                .to_string();
        assert_eq!(merge(root, &answer, &sent), None);
    }
}
