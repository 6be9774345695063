//! Conformance of the edit formats models are trained on: the Codex `apply_patch` envelope and
//! SEARCH/REPLACE blocks, through `apply_patch_to_text` (detected) and `compute` (PATCH_FILE).

use papayu_patch::engine::HunkTier::{Exact, Offset, Punctuation, TrailingWhitespace};
use papayu_patch::engine::{
    CodexOp, EngineOptions, PatchFormat, apply_patch_to_text, apply_patch_to_text_as, compute,
    parse_codex,
};
use papayu_protocol::ErrorCode::{PatchApplyFailed, PatchNotUnified};
use papayu_protocol::{Action, ActionKind, sha256_hex};

use super::{check, check_err};

const FILE: &str = "import os\n\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef save(path, data):\n    with open(path, \"w\") as f:\n        f.write(data)\n";

#[test]
fn formats_are_detected() {
    assert_eq!(
        PatchFormat::detect("*** Begin Patch\n*** End Patch\n"),
        PatchFormat::CodexEnvelope
    );
    assert_eq!(
        PatchFormat::detect("f.py\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n"),
        PatchFormat::SearchReplace
    );
    assert_eq!(
        PatchFormat::detect("@@ -1 +1 @@\n-a\n+b\n"),
        PatchFormat::Unified
    );
    // a unified diff whose context shows a marker is still a unified diff
    assert_eq!(
        PatchFormat::detect("@@ -1,2 +1,2 @@\n <<<<<<< SEARCH\n-a\n+b\n"),
        PatchFormat::Unified
    );
}

#[test]
fn codex_update_with_context_marker() {
    let patch = "*** Begin Patch\n*** Update File: io.py\n@@ def save(path, data):\n     with open(path, \"w\") as f:\n-        f.write(data)\n+        f.write(data.strip())\n*** End Patch\n";
    check(
        FILE,
        patch,
        &FILE.replace("f.write(data)", "f.write(data.strip())"),
        &[Offset],
    );
}

#[test]
fn codex_chunks_with_non_unique_lines_are_placed_by_order_or_rejected() {
    // `with open(path) as f:` style lines repeat; the chunk's own lines decide, never the marker
    let text = "def a():\n    x = 1\n    return x\n\ndef b():\n    x = 1\n    return x\n";
    let ambiguous = "*** Begin Patch\n*** Update File: m.py\n@@ def b():\n     x = 1\n-    return x\n+    return -x\n*** End Patch\n";
    check_err(text, ambiguous, PatchApplyFailed, &["several places"]);
    // two chunks in file order: the second must follow the first
    let ordered = "*** Begin Patch\n*** Update File: m.py\n@@\n def a():\n-    x = 1\n+    x = 2\n@@\n     x = 1\n-    return x\n+    return -x\n*** End Patch\n";
    check(
        text,
        ordered,
        "def a():\n    x = 2\n    return x\n\ndef b():\n    x = 1\n    return -x\n",
        &[Offset, Offset],
    );
}

#[test]
fn codex_whitespace_padded_markers_and_lost_blank_prefix() {
    let patch = "  *** Begin Patch  \n*** Update File:  io.py  \n@@   def load(path):   \n     with open(path) as f:\n-        return f.read()\n+        return f.read().strip()\n\n \n def save(path, data):\n*** End Patch   \n";
    let err = apply_patch_to_text(FILE, patch);
    // a padded `*** Begin Patch` is still recognised
    assert!(err.is_ok(), "{err:?}");
    assert_eq!(
        err.unwrap().text,
        FILE.replace("f.read()", "f.read().strip()")
    );
}

#[test]
fn codex_end_of_file_chunk_is_stated_at_the_end() {
    let text = "x = 1\ny = 2\nx = 1\ny = 2\n";
    let patch = "*** Begin Patch\n*** Update File: v.py\n@@\n x = 1\n-y = 2\n+y = 3\n*** End of File\n*** End Patch\n";
    check(text, patch, "x = 1\ny = 2\nx = 1\ny = 3\n", &[Exact]);
}

#[test]
fn codex_end_of_file_chunk_after_another_chunk_is_still_at_the_end() {
    let text = "head = 1\nx = 1\ny = 2\nmid = 1\nx = 1\ny = 2\n";
    let patch = "*** Begin Patch\n*** Update File: v.py\n@@\n-mid = 1\n+mid = 2\n@@\n x = 1\n-y = 2\n+y = 3\n*** End of File\n*** End Patch\n";
    check(
        text,
        patch,
        "head = 1\nx = 1\ny = 2\nmid = 2\nx = 1\ny = 3\n",
        &[Offset, Exact],
    );
}

#[test]
fn codex_add_file_applies_to_an_empty_text_only() {
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** End Patch\n";
    check("", patch, "hello\nworld\n", &[Exact]);
    check_err("old\n", patch, PatchApplyFailed, &["inserts lines"]);
}

#[test]
fn codex_envelope_sections_are_parsed() {
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Delete File: b.txt\n*** Update File: c.txt\n*** Move to: d.txt\n@@\n-x\n+y\n*** End Patch\n";
    let files = parse_codex(patch).unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(
        files[0].op,
        CodexOp::Add {
            content: "a\n".into()
        }
    );
    assert_eq!(files[1].path, "b.txt");
    assert_eq!(files[1].op, CodexOp::Delete);
    match &files[2].op {
        CodexOp::Update { move_to, patch } => {
            assert_eq!(move_to.as_deref(), Some("d.txt"));
            assert_eq!(patch.hunks.len(), 1);
        }
        other => panic!("expected an update, got {other:?}"),
    }
    // one file's text cannot take three sections
    check_err(
        "x\n",
        patch,
        PatchNotUnified,
        &["codex_envelope", "3 file sections"],
    );
}

#[test]
fn malformed_codex_envelopes_are_rejected() {
    for (patch, needle) in [
        (
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n",
            "End Patch",
        ),
        ("*** Begin Patch\n*** End Patch\n", "no file section"),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch\n",
            "chunk line",
        ),
        (
            "*** Begin Patch\n*** Frobnicate: a\n*** End Patch\n",
            "expected a",
        ),
    ] {
        check_err("x\n", patch, PatchNotUnified, &[needle]);
    }
}

#[test]
fn codex_failure_in_a_later_chunk_applies_nothing() {
    let patch = "*** Begin Patch\n*** Update File: io.py\n@@\n def load(path):\n-    with open(path) as f:\n+    with open(path, encoding=\"utf-8\") as f:\n@@\n-        f.write(missing)\n+        f.write(data)\n*** End Patch\n";
    check_err(FILE, patch, PatchApplyFailed, &["hunk #2"]);
}

#[test]
fn search_replace_block_applies_at_its_unique_match() {
    let patch = "io.py\n```python\n<<<<<<< SEARCH\n    with open(path) as f:\n        return f.read()\n=======\n    with open(path, encoding=\"utf-8\") as f:\n        return f.read()\n>>>>>>> REPLACE\n```\n";
    check(
        FILE,
        patch,
        &FILE.replace("open(path) as f", "open(path, encoding=\"utf-8\") as f"),
        &[Offset],
    );
}

#[test]
fn search_replace_requires_a_unique_match_even_with_several_blocks() {
    let text = "a = 1\nb = 2\na = 1\n";
    let patch = "<<<<<<< SEARCH\na = 1\n=======\na = 10\n>>>>>>> REPLACE\n";
    check_err(text, patch, PatchApplyFailed, &["several places"]);
    // a second block does not make the first one's place unique by order
    let two = "<<<<<<< SEARCH\nb = 2\n=======\nb = 20\n>>>>>>> REPLACE\n<<<<<<< SEARCH\na = 1\n=======\na = 10\n>>>>>>> REPLACE\n";
    check_err(text, two, PatchApplyFailed, &["several places"]);
}

#[test]
fn search_replace_trailing_whitespace_drift_and_crlf_file() {
    let text = "first line\r\nsecond line   \r\nthird line\r\n";
    let patch = "<<<<<<< SEARCH\nsecond line\nthird line\n=======\nsecond line\nthird line changed\n>>>>>>> REPLACE\n";
    check(
        text,
        patch,
        // the unchanged line keeps the file's bytes, trailing spaces included
        "first line\r\nsecond line   \r\nthird line changed\r\n",
        &[TrailingWhitespace],
    );
}

#[test]
fn search_replace_keeps_missing_final_newline_and_bom() {
    let text = "\u{feff}alpha\nbeta";
    let patch = "<<<<<<< SEARCH\nbeta\n=======\nBETA\n>>>>>>> REPLACE\n";
    check(text, patch, "\u{feff}alpha\nBETA", &[Offset]);
}

#[test]
fn search_replace_empty_search_creates_content_of_an_empty_text_only() {
    let patch = "<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n";
    check("", patch, "new\n", &[Exact]);
    check_err("old\n", patch, PatchApplyFailed, &["inserts lines"]);
}

#[test]
fn malformed_search_replace_is_rejected() {
    for (patch, needle) in [
        ("<<<<<<< SEARCH\na\n=======\nb\n", "not closed"),
        ("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", "unexpected"),
    ] {
        check_err("a\n", patch, PatchNotUnified, &["search_replace", needle]);
    }
    // named explicitly, a text without blocks is an error, not a no-op
    let err = apply_patch_to_text_as("a\n", "just prose\n", PatchFormat::SearchReplace)
        .expect_err("no block");
    assert_eq!(err.code(), PatchNotUnified);
}

#[test]
fn patch_file_action_takes_any_single_file_format() {
    let before = b"one\ntwo\nthree\n";
    for patch in [
        "@@ -2 +2 @@\n-two\n+TWO\n",
        "*** Begin Patch\n*** Update File: f\n@@\n one\n-two\n+TWO\n*** End Patch\n",
        "<<<<<<< SEARCH\ntwo\n=======\nTWO\n>>>>>>> REPLACE\n",
    ] {
        let mut a = Action::new(ActionKind::PatchFile, "f");
        a.patch = Some(patch.into());
        a.base_sha256 = Some(sha256_hex(before));
        let out = compute(Some(before), &a, &EngineOptions::default()).unwrap();
        assert_eq!(out.new_bytes, b"one\nTWO\nthree\n", "{patch}");
    }
}

#[test]
fn codex_unicode_punctuation_drift_in_context_is_read_as_ascii() {
    // the file has typographic quotes and an en dash where the model typed ASCII
    let text = "msg = \u{201C}don\u{2019}t panic\u{201D}\nrange = 1 \u{2013} 2\nend = True\n";
    let patch = "*** Begin Patch\n*** Update File: t.py\n@@\n msg = \"don't panic\"\n-range = 1 - 2\n+range = 1 - 3\n end = True\n*** End Patch\n";
    check(
        text,
        patch,
        "msg = \u{201C}don\u{2019}t panic\u{201D}\nrange = 1 - 3\nend = True\n",
        &[Punctuation],
    );
    // the same drift must still be unique
    let twice = format!("{text}{text}");
    check_err(&twice, patch, PatchApplyFailed, &["several places"]);
}

#[test]
fn search_replace_keeps_the_files_bytes_for_lines_it_does_not_change() {
    // the model's copy of the unchanged lines lost their trailing whitespace
    let text = "items:  \n  - one  \n  - two\n  - three\n";
    let patch = "<<<<<<< SEARCH\nitems:\n  - one\n  - two\n  - three\n=======\nitems:\n  - one\n  - 2\n  - three\n>>>>>>> REPLACE\n";
    check(
        text,
        patch,
        "items:  \n  - one  \n  - 2\n  - three\n",
        &[TrailingWhitespace],
    );
}
