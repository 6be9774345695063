//! The unified-diff shape parser.

use papayu_validate::{DiffShapeReason, HunkLine, parse_unified_diff};

#[track_caller]
fn check(text: &str, expect: Result<usize, (usize, &str)>) {
    let got = parse_unified_diff(text).map(|h| h.len()).map_err(|e| {
        let kind = match e.reason {
            DiffShapeReason::NoHunk => "no_hunk",
            DiffShapeReason::BadHunkHeader(_) => "header",
            DiffShapeReason::EmptyHunk => "empty",
            DiffShapeReason::BadBodyLine(_) => "body",
            DiffShapeReason::BadPreamble(_) => "preamble",
            _ => "other",
        };
        (e.line, kind)
    });
    assert_eq!(got, expect, "{text:?}");
}

#[test]
fn shapes() {
    check("@@ -1,2 +1,2 @@\n a\n-b\n+c\n", Ok(1));
    check("@@ -1 +1 @@\n-a\n+b", Ok(1));
    check("@@ -0,0 +1,2 @@\n+a\n+b\n", Ok(1));
    check("@@ -3,0 +4 @@ fn main() {\n+x\n", Ok(1));
    check(
        "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n-c\n+d\n\n\n",
        Ok(2),
    );
    check(
        "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
        Ok(1),
    );
    check("", Err((0, "no_hunk")));
    check("just prose", Err((1, "preamble")));
    check("--- a/x\n+++ b/x\n", Err((0, "no_hunk")));
    check("@@ -1,2 +1,2\n a\n", Err((1, "header")));
    check("@@ 1,2 1,2 @@\n a\n", Err((1, "header")));
    check("@@ -a,b +c,d @@\n a\n", Err((1, "header")));
    check("@@ -1, +1 @@\n a\n", Err((1, "header")));
    check("@@ -1 +1 @@\n", Err((1, "empty")));
    check("@@ -1 +1 @@\n@@ -2 +2 @@\n-a\n", Err((1, "empty")));
    check("@@ -1 +1 @@\n\\ No newline\n", Err((1, "empty")));
    check("@@ -1,3 +1,3 @@\n a\n\n b\n", Err((3, "body")));
    check(
        "@@ -1 +1 @@\n-a\n+b\ndiff --git a/y b/y\n",
        Err((4, "body")),
    );
    check("*** a/x\n--- b/x\n", Err((1, "preamble")));
}

#[test]
fn hunk_contents_and_counts() {
    let hunks = parse_unified_diff("@@ -1,3 +1,2 @@ section\n a\n-b\n-c\n+d\n").unwrap();
    let h = &hunks[0];
    assert_eq!(
        (
            h.old_start,
            h.old_count,
            h.new_start,
            h.new_count,
            h.section
        ),
        (1, 3, 1, 2, "section")
    );
    assert_eq!(
        h.lines,
        [
            HunkLine::Context("a"),
            HunkLine::Removed("b"),
            HunkLine::Removed("c"),
            HunkLine::Added("d")
        ]
    );
    assert!(h.counts_match());
    let wrong = parse_unified_diff("@@ -1,5 +1,2 @@\n a\n-b\n").unwrap();
    assert!(!wrong[0].counts_match());
}

#[test]
fn envelope_shapes_name_format_line_and_reason() {
    use papayu_validate::{EnvelopeReason, PatchFormat, PatchShapeError, check_patch_shape};
    let err = |text: &str| match check_patch_shape(text) {
        Err(PatchShapeError::Envelope {
            format,
            line,
            reason,
        }) => (format, line, reason),
        other => panic!("{text:?}: {other:?}"),
    };
    assert_eq!(
        err("*** Begin Patch\n*** Delete File: a\n*** End Patch\n"),
        (PatchFormat::CodexEnvelope, 2, EnvelopeReason::Delete)
    );
    assert_eq!(
        err("*** Begin Patch\n*** Update File: a\n@@\n-x\n"),
        (PatchFormat::CodexEnvelope, 5, EnvelopeReason::NoEnd)
    );
    assert_eq!(
        err("note\n<<<<<<< SEARCH\nx\n=======\ny\n"),
        (PatchFormat::SearchReplace, 2, EnvelopeReason::Unclosed)
    );
    let msg = check_patch_shape("<<<<<<< SEARCH\nx\n<<<<<<< SEARCH\n")
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("search_replace") && msg.contains("line 3"),
        "{msg}"
    );
    // A unified diff keeps the message it always had.
    let msg = check_patch_shape("change x").unwrap_err().to_string();
    assert!(
        msg.starts_with("`patch` is not a unified diff: line 1"),
        "{msg}"
    );
}
