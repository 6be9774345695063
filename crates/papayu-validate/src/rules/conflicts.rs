//! Rules across actions: two actions on one path, a path inside a deleted directory or under a
//! file another action creates.

use std::collections::HashMap;

use papayu_protocol::{ActionKind, ErrorCode};

use super::Sink;
use crate::plan::ValidatedAction;

/// How two actions on the same (case-folded) path conflict, if they do.
fn same_path_conflict(a: &ActionKind, b: &ActionKind) -> Option<&'static str> {
    use ActionKind::*;
    match (a, b) {
        (EditFile, EditFile) => None,
        (x, y) if x.is_file_writer() && y.is_file_writer() => Some("both write the file"),
        (x, y)
            if (x.is_file_writer() && y.is_delete()) || (x.is_delete() && y.is_file_writer()) =>
        {
            Some("one writes and the other deletes it")
        }
        (DeleteDir, _) | (_, DeleteDir) => Some("the directory is deleted"),
        (CreateDir, y) | (y, CreateDir) if y.is_file_writer() => {
            Some("one makes it a directory, the other a file")
        }
        _ => None,
    }
}

pub(super) fn check_conflicts(sink: &mut Sink<'_>, candidates: &[(usize, ValidatedAction)]) {
    let folded: Vec<String> = candidates.iter().map(|(_, a)| a.path.folded()).collect();
    let mut deleted_dirs: HashMap<&str, usize> = HashMap::new();
    let mut created_files: HashMap<&str, usize> = HashMap::new();
    for ((_, a), f) in candidates.iter().zip(&folded) {
        match a.kind() {
            ActionKind::DeleteDir => {
                deleted_dirs.entry(f).or_insert(a.index);
            }
            ActionKind::CreateFile => {
                created_files.entry(f).or_insert(a.index);
            }
            _ => {}
        }
    }
    let mut seen: HashMap<&str, Vec<(usize, &ActionKind)>> = HashMap::new();
    for ((i, a), f) in candidates.iter().zip(&folded) {
        let earlier = seen.entry(f).or_default();
        if let Some((j, why)) = earlier
            .iter()
            .find_map(|(j, k)| same_path_conflict(k, a.kind()).map(|w| (*j, w)))
        {
            sink.action(
                *i,
                ErrorCode::ActionConflict,
                format!("{} conflicts with action {j} on the same path ({why}); merge them into one action", a.kind()),
            );
        }
        earlier.push((a.index, a.kind()));
        let ancestors: Vec<&str> = ancestors_of(f).collect();
        if let Some((dir, j)) = ancestors
            .iter()
            .find_map(|d| deleted_dirs.get(d).map(|j| (*d, *j)))
        {
            sink.action(
                *i,
                ErrorCode::ActionConflict,
                format!("`{}` lies inside `{dir}`, which action {j} deletes", a.path),
            );
        }
        if let Some((file, j)) = ancestors
            .iter()
            .find_map(|d| created_files.get(d).map(|j| (*d, *j)))
        {
            sink.action(
                *i,
                ErrorCode::ActionConflict,
                format!(
                    "`{}` needs `{file}` to be a directory, but action {j} creates it as a file",
                    a.path
                ),
            );
        }
    }
}

fn ancestors_of(folded: &str) -> impl Iterator<Item = &str> {
    folded.match_indices('/').rev().map(|(i, _)| &folded[..i])
}
