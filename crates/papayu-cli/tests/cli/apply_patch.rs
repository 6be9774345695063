//! `papayu apply-patch` through the real binary: one file, a multi-file patch as one
//! transaction, and a batch manifest (whose items run on several threads and must still be
//! reported in manifest order).

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::papayu;

const BEFORE: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
const AFTER: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";
const FIX: &str = "--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,3 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n \n";
/// A hunk whose removed line is nowhere in the file.
const STALE: &str = "--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,3 @@\n def add(a, b):\n-    return a // b\n+    return a + b\n \n";

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn one_file_is_patched_and_a_stale_patch_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("calc.py"), BEFORE).unwrap();
    fs::write(dir.path().join("fix.diff"), FIX).unwrap();
    fs::write(dir.path().join("stale.diff"), STALE).unwrap();

    let r = papayu(dir.path(), &["apply-patch", "calc.py", "fix.diff"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("hunk 1: exact at line"), "{}", r.stdout);
    assert_eq!(
        fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        AFTER
    );

    fs::write(dir.path().join("calc.py"), BEFORE).unwrap();
    let r = papayu(
        dir.path(),
        &["--json", "apply-patch", "calc.py", "stale.diff"],
    );
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    let doc = json(&r.stdout);
    assert_eq!(doc["ok"], false);
    assert!(doc["code"].as_str().unwrap().starts_with("ERR_"), "{doc}");
    assert_eq!(
        fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        BEFORE
    );

    // The human form names the same stable code.
    let r = papayu(dir.path(), &["apply-patch", "calc.py", "stale.diff"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(doc["code"].as_str().unwrap()),
        "{}",
        r.stderr
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("calc.py")).unwrap(),
        BEFORE
    );
}

#[test]
fn a_multi_file_patch_is_one_transaction_all_or_nothing_and_undoable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join(".papa-yu")).unwrap();
    fs::write(root.join("calc.py"), BEFORE).unwrap();
    fs::write(root.join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    let both = "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b\n*** Add File: NEWS.md\n+fixed add\n*** End Patch\n";
    fs::write(root.join("both.patch"), both).unwrap();

    let r = papayu(root, &["--json", "apply-patch", "both.patch"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(fs::read_to_string(root.join("calc.py")).unwrap(), AFTER);
    assert_eq!(
        fs::read_to_string(root.join("NEWS.md")).unwrap(),
        "fixed add\n"
    );
    let history = json(&papayu(root, &["--json", "history"]).stdout);
    assert_eq!(
        history["history"]["undo"].as_array().map(Vec::len),
        Some(1),
        "{history}"
    );

    let undo = papayu(root, &["undo"]);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert_eq!(fs::read_to_string(root.join("calc.py")).unwrap(), BEFORE);
    assert!(!root.join("NEWS.md").exists());

    // The second file's hunk cannot apply: the first file's change must not be written either.
    let half = "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b\n*** Update File: notes.txt\n@@\n-four\n+FOUR\n*** End Patch\n";
    fs::write(root.join("half.patch"), half).unwrap();
    let r = papayu(root, &["--json", "apply-patch", "half.patch"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    assert!(
        json(&r.stdout)["code"]
            .as_str()
            .unwrap()
            .starts_with("ERR_"),
        "{}",
        r.stdout
    );
    assert_eq!(fs::read_to_string(root.join("calc.py")).unwrap(), BEFORE);
    assert_eq!(
        fs::read_to_string(root.join("notes.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
}

/// `n` numbered cases: every third one stale (rejected), the rest applied to `NNN.out`.
fn batch_dir(root: &Path, n: usize) -> String {
    let mut manifest = String::new();
    for i in 0..n {
        fs::write(root.join(format!("{i:03}.py")), BEFORE).unwrap();
        let patch = if i % 3 == 2 { STALE } else { FIX };
        fs::write(root.join(format!("{i:03}.diff")), patch).unwrap();
        manifest.push_str(&format!(
            "{{\"file\":\"{i:03}.py\",\"patch\":\"{i:03}.diff\",\"out\":\"{i:03}.out\"}}\n"
        ));
    }
    manifest
}

#[test]
fn a_batch_reports_every_item_in_manifest_order_and_writes_only_the_applied() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let n = 90;
    fs::write(root.join("manifest.jsonl"), batch_dir(root, n)).unwrap();

    let r = papayu(
        root,
        &["--json", "apply-patch", "--batch", "manifest.jsonl"],
    );
    assert_eq!(
        r.code, 4,
        "a rejected item makes the batch exit 4: {}",
        r.stderr
    );
    let doc = json(&r.stdout);
    assert_eq!(doc["total"], n);
    assert_eq!(doc["rejected"], n / 3);
    assert_eq!(doc["applied"], n - n / 3);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), n);
    for (i, item) in results.iter().enumerate() {
        assert!(
            item["file"]
                .as_str()
                .unwrap()
                .ends_with(&format!("{i:03}.py")),
            "item {i} out of order: {item}"
        );
        let out = root.join(format!("{i:03}.out"));
        if i % 3 == 2 {
            assert_eq!(item["ok"], false, "{item}");
            assert!(!out.exists(), "a rejected item wrote {}", out.display());
        } else {
            assert_eq!(item["ok"], true, "{item}");
            assert_eq!(fs::read_to_string(&out).unwrap(), AFTER);
        }
        assert_eq!(
            fs::read_to_string(root.join(format!("{i:03}.py"))).unwrap(),
            BEFORE,
            "with `out`, the input stays as it was"
        );
    }

    // All applicable: exit 0.
    let clean: String = (0..n)
        .filter(|i| i % 3 != 2)
        .map(|i| {
            format!("{{\"file\":\"{i:03}.py\",\"patch\":\"{i:03}.diff\",\"out\":\"{i:03}.out\"}}\n")
        })
        .collect();
    fs::write(root.join("clean.jsonl"), clean).unwrap();
    let r = papayu(root, &["--json", "apply-patch", "--batch", "clean.jsonl"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(json(&r.stdout)["rejected"], 0);
}

#[test]
fn a_batch_with_a_missing_input_or_a_bad_line_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut manifest = batch_dir(root, 4);
    manifest.push_str("{\"file\":\"absent.py\",\"patch\":\"000.diff\"}\n");
    fs::write(root.join("missing.jsonl"), manifest).unwrap();
    let r = papayu(root, &["apply-patch", "--batch", "missing.jsonl"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("absent.py"), "{}", r.stderr);

    // A malformed line anywhere stops the batch before any item runs.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut manifest = batch_dir(root, 4);
    manifest.push_str("{\"file\":\"000.py\"}\n");
    fs::write(root.join("bad.jsonl"), manifest).unwrap();
    let r = papayu(root, &["apply-patch", "--batch", "bad.jsonl"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("bad.jsonl:5"), "{}", r.stderr);
    assert!(
        !root.join("000.out").exists(),
        "nothing is applied before the manifest is read whole"
    );
}
