//! The preview of any plan validation allows finishes in bounded time: its diffs are minimal
//! only within a time budget (Myers' diff was quadratic here: 453 s for one 1 MB file).
//!
//! Each case is timed against a linear reference measured in the same build (the preview of a
//! change of the same size that Myers finds at once): debug or release, a quadratic diff
//! misses the bound by orders of magnitude.

use std::time::{Duration, Instant};

use papayu_patch::Project;
use papayu_protocol::ProtocolVersion;
use serde_json::json;

use crate::common::{plan, sha, write_files};

/// Preview `actions` (protocol v3) on a project holding `files`; the time it took and the
/// diff lengths.
fn preview(files: &[(&str, &str)], actions: serde_json::Value) -> (Duration, Vec<usize>) {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), files);
    let plan = plan(
        &json!({"actions": actions, "summary": "s"}).to_string(),
        ProtocolVersion::V3,
    );
    let project = Project::open(dir.path()).unwrap();
    let started = Instant::now();
    let preview = project.transaction(&plan).preview().unwrap();
    let took = started.elapsed();
    assert!(preview.is_ok(), "{:?}", preview.files[0].error);
    (took, preview.files.iter().map(|f| f.diff.len()).collect())
}

fn lines(n: usize, f: impl Fn(usize) -> String) -> String {
    (0..n).map(|i| f(i) + "\n").collect()
}

/// The bound: generous, in terms of the linear reference.
fn bound(reference: Duration) -> Duration {
    Duration::from_secs(5) + reference * 20
}

#[test]
fn r_preview_of_a_500k_line_file_replaced_whole_is_bounded() {
    let old = lines(500_000, |i| if i % 2 == 0 { "a" } else { "b" }.to_owned());
    let new = lines(500_000, |i| if i % 3 == 0 { "c" } else { "d" }.to_owned());
    assert!(new.len() <= 1024 * 1024);
    // The reference: the same file with its last line changed (Myers: common prefix, done).
    let mut near = old.clone();
    near.replace_range(near.len() - 2.., "z\n");
    let (reference, _) = preview(
        &[("big.txt", &old)],
        json!([{"kind": "UPDATE_FILE", "path": "big.txt", "content": near}]),
    );
    let (took, diffs) = preview(
        &[("big.txt", &old)],
        json!([{"kind": "UPDATE_FILE", "path": "big.txt", "content": new}]),
    );
    assert!(
        took < bound(reference),
        "{took:?} (reference {reference:?})"
    );
    assert!(diffs[0] > new.len(), "the diff shows every line");
}

#[test]
fn r_preview_of_100k_changed_lines_spread_over_a_file_is_bounded() {
    let old = lines(200_000, |i| format!("{}", i % 97));
    let new = lines(200_000, |i| {
        if i % 2 == 0 {
            format!("{}", i % 97)
        } else {
            format!("{}x", i % 97)
        }
    });
    let mut near = old.clone();
    near.insert_str(0, "0x\n");
    let (reference, _) = preview(
        &[("f.txt", &old)],
        json!([{"kind": "UPDATE_FILE", "path": "f.txt", "content": near}]),
    );
    let (took, diffs) = preview(
        &[("f.txt", &old)],
        json!([{"kind": "UPDATE_FILE", "path": "f.txt", "content": new}]),
    );
    assert!(
        took < bound(reference),
        "{took:?} (reference {reference:?})"
    );
    assert!(diffs[0] > 100_000);
}

#[test]
fn r_preview_of_a_50k_line_patch_is_bounded() {
    let old = lines(50_000, |i| format!("o{}", i % 89));
    let hunk = |changed: &dyn Fn(usize) -> bool| {
        let mut patch = String::from("@@ -1,50000 +1,50000 @@\n");
        for i in 0..50_000 {
            if changed(i) {
                patch.push_str(&format!("-o{}\n+n{}\n", i % 89, i % 89));
            } else {
                patch.push_str(&format!(" o{}\n", i % 89));
            }
        }
        patch
    };
    let action = |patch: String| json!([{"kind": "PATCH_FILE", "path": "p.txt", "base_sha256": sha(old.as_bytes()), "patch": patch}]);
    let (reference, _) = preview(&[("p.txt", &old)], action(hunk(&|i| i == 0)));
    let (took, diffs) = preview(&[("p.txt", &old)], action(hunk(&|_| true)));
    assert!(
        took < bound(reference),
        "{took:?} (reference {reference:?})"
    );
    assert!(diffs[0] > 50_000 * 6);
}

#[test]
fn small_diffs_stay_minimal() {
    let old = lines(1_000, |i| format!("line {i}"));
    let new = old.replace("line 500\n", "line five hundred\n");
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &[("s.txt", &old)]);
    let plan = plan(
        &json!({"actions": [{"kind": "UPDATE_FILE", "path": "s.txt", "content": new}], "summary": "s"}).to_string(),
        ProtocolVersion::V3,
    );
    let preview = Project::open(dir.path())
        .unwrap()
        .transaction(&plan)
        .preview()
        .unwrap();
    let diff = &preview.files[0].diff;
    assert_eq!(
        diff.lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"))
            .count(),
        1,
        "{diff}"
    );
    assert_eq!(
        diff.lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .count(),
        1,
        "{diff}"
    );
}
