//! Test set-up shared by the rooms that read a change against the project (renames, moves,
//! merged actions): a project on disk, a validated plan, and what the project search answers.

use camino::Utf8Path;
use papayu_validate::ValidatedPlan;
use serde_json::{Value, json};

/// A temporary project holding `files` (path, text).
pub(super) fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let full = dir.path().join(p);
        fs_err::create_dir_all(full.parent().unwrap()).unwrap();
        fs_err::write(full, c).unwrap();
    }
    dir
}

/// `actions` as a validated protocol-v3 plan.
pub(super) fn plan_of(actions: Value) -> ValidatedPlan {
    let text = json!({"actions": actions, "summary": "s"}).to_string();
    papayu_validate::check_text(
        &text,
        &papayu_validate::Context::new(papayu_protocol::ProtocolVersion::V3),
        &papayu_validate::Policy::default(),
    )
    .into_plan()
    .unwrap()
}

/// Files under `root` whose text holds `name` (what the project search answers), sorted.
pub(super) fn users_in(root: &Utf8Path) -> impl Fn(&str) -> Vec<String> + '_ {
    move |name: &str| {
        let mut out = Vec::new();
        let mut stack = vec![root.as_std_path().to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs_err::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if fs_err::read_to_string(&p).is_ok_and(|t| t.contains(name)) {
                    let rel = p.strip_prefix(root.as_std_path()).unwrap();
                    out.push(rel.to_string_lossy().into_owned());
                }
            }
        }
        out.sort();
        out
    }
}
