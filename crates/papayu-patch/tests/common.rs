//! Shared helpers: plans from JSON, whole-tree snapshots.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use papayu_protocol::ProtocolVersion;
use papayu_validate::{Context, Policy, ValidatedPlan, check_text};

/// Parse and validate a model answer the way a frontend does.
pub fn plan(json: &str, version: ProtocolVersion) -> ValidatedPlan {
    let report = check_text(json, &Context::new(version), &Policy::default());
    match report.into_plan() {
        Ok(p) => p,
        Err(v) => panic!("plan rejected by validation: {v:?}"),
    }
}

pub fn v2(json: &str) -> ValidatedPlan {
    plan(json, ProtocolVersion::V2)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File(Vec<u8>, u32),
    Dir,
    Link(String),
}

/// Every path below `root` (except `.papa-yu/` and `.gitkeep` placeholders), with content and mode.
pub fn tree(root: &Path) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out, true);
    out
}

/// Like [`tree`] but without permission bits (fixture trees from git have arbitrary modes).
pub fn tree_no_mode(root: &Path) -> BTreeMap<String, Node> {
    tree(root)
        .into_iter()
        .map(|(k, v)| match v {
            Node::File(b, _) => (k, Node::File(b, 0)),
            other => (k, other),
        })
        .collect()
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Node>, top: bool) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().into_string().unwrap();
        if (top && name == ".papa-yu") || name == ".gitkeep" {
            continue;
        }
        let path = e.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let md = std::fs::symlink_metadata(&path).unwrap();
        if md.file_type().is_symlink() {
            out.insert(
                rel,
                Node::Link(std::fs::read_link(&path).unwrap().display().to_string()),
            );
        } else if md.is_dir() {
            out.insert(rel, Node::Dir);
            walk(root, &path, out, false);
        } else {
            out.insert(
                rel,
                Node::File(
                    std::fs::read(&path).unwrap(),
                    md.permissions().mode() & 0o7777,
                ),
            );
        }
    }
}

/// Copy a fixture tree (skipping `.gitkeep`).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == ".gitkeep" {
            continue;
        }
        let dst = to.join(&name);
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// Write files (`path` → content) under `root`.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (p, c) in files {
        let full = root.join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, c).unwrap();
    }
}

pub fn sha(bytes: &[u8]) -> String {
    papayu_protocol::sha256_hex(bytes)
}

/// Hold the project lock as another live papayu would: an `flock` on `.papa-yu/` and the note
/// naming this process. Released when the returned handle is dropped.
pub fn hold_lock(root: &Path) -> std::fs::File {
    std::fs::create_dir_all(root.join(".papa-yu")).unwrap();
    let dir = std::fs::File::open(root.join(".papa-yu")).unwrap();
    rustix::fs::flock(&dir, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    std::fs::write(
        root.join(".papa-yu/lock"),
        format!("pid={}\nstart=0\n", std::process::id()),
    )
    .unwrap();
    dir
}
