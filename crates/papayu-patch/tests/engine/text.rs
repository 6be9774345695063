//! `apply_patch_to_text`: tiers, ambiguity, EOL/BOM/final-newline fidelity, parse strictness.

use papayu_patch::engine::HunkTier::{Exact, Indentation, Offset, Realigned, TrailingWhitespace};
use papayu_protocol::ErrorCode::{PatchApplyFailed, PatchNotUnified};

use super::{check, check_err};

const TEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

#[test]
fn exact_at_stated_line() {
    check(
        TEN,
        "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n four\n-five\n+FIVE\n six\n",
        &TEN.replace("five", "FIVE"),
        &[Exact],
    );
}

#[test]
fn offset_when_header_line_is_wrong_but_match_unique() {
    check(
        TEN,
        "@@ -1,3 +1,3 @@\n four\n-five\n+FIVE\n six\n",
        &TEN.replace("five", "FIVE"),
        &[Offset],
    );
}

#[test]
fn later_hunks_use_previous_offset() {
    let patch = "@@ -2,1 +2,1 @@\n-three\n+3\n@@ -6,1 +6,1 @@\n-seven\n+7\n";
    // both stated one line early; the second is found at stated+drift, so it is Exact
    check(
        TEN,
        patch,
        &TEN.replace("three", "3").replace("seven", "7"),
        &[Offset, Exact],
    );
}

#[test]
fn trailing_whitespace_tier() {
    let text = "fn a() {   \n    x();\t\n}\n";
    check(
        text,
        "@@ -1,3 +1,3 @@\n fn a() {\n-    x();\n+    y();\n }\n",
        "fn a() {   \n    y();\n}\n",
        &[TrailingWhitespace],
    );
}

#[test]
fn indentation_tier_reindents_replacement_added_indent() {
    let text = "mod m {\n    fn a() {\n        x();\n    }\n}\n";
    let patch = "@@ -2,3 +2,4 @@\n fn a() {\n-    x();\n+    y();\n+    z();\n }\n";
    check(
        text,
        patch,
        "mod m {\n    fn a() {\n        y();\n        z();\n    }\n}\n",
        &[Indentation],
    );
}

#[test]
fn indentation_tier_reindents_replacement_removed_indent() {
    let text = "if a:\n  b()\n  c()\n";
    let patch = "@@ -1,3 +1,3 @@\n     if a:\n-      b()\n+      B()\n       c()\n";
    check(text, patch, "if a:\n  B()\n  c()\n", &[Indentation]);
}

#[test]
fn indentation_tier_with_tab_space_table() {
    let text = "fn f() {\n\tif x {\n\t\ty();\n\t}\n}\n";
    let patch = "@@ -2,3 +2,3 @@\n     if x {\n-        y();\n+        z();\n     }\n";
    check(
        text,
        patch,
        "fn f() {\n\tif x {\n\t\tz();\n\t}\n}\n",
        &[Indentation],
    );
}

#[test]
fn inconsistent_indent_that_cannot_be_mapped_is_rejected() {
    let text = "a\n  b\n    c\n";
    // `+` line indent (3 spaces) maps to nothing the old lines establish
    check_err(
        text,
        "@@ -1,3 +1,3 @@\n  a\n b\n-  c\n+   d\n",
        PatchApplyFailed,
        &["indentation"],
    );
}

#[test]
fn duplicated_block_with_usable_hint_applies_at_hint() {
    let text = "x\nA\nB\nC\ny\nA\nB\nC\nz\n";
    check(
        text,
        "@@ -6,3 +6,3 @@\n A\n-B\n+BB\n C\n",
        "x\nA\nB\nC\ny\nA\nBB\nC\nz\n",
        &[Exact],
    );
}

#[test]
fn duplicated_block_without_usable_hint_is_ambiguous() {
    let text = "x\nA\nB\nC\ny\nA\nB\nC\nz\n";
    check_err(
        text,
        "@@ -4,3 +4,3 @@\n A\n-B\n+BB\n C\n",
        PatchApplyFailed,
        &["several places", "[2, 6]", "hunk #1"],
    );
}

#[test]
fn zero_context_ambiguous_hunk_with_untrusted_header_is_rejected() {
    let text = "a\n}\nb\n}\n";
    // counts wrong (says 2 lines) → header untrusted → `}` occurs twice → reject
    check_err(
        text,
        "@@ -2,2 +2,2 @@\n-}\n+};\n",
        PatchApplyFailed,
        &["several places"],
    );
}

#[test]
fn zero_context_non_unique_hunk_rejected_even_with_exact_header() {
    check_err(
        "a\n}\nb\n}\n",
        "@@ -4 +4 @@\n-}\n+};\n",
        PatchApplyFailed,
        &["several places"],
    );
}

#[test]
fn zero_context_hunk_placed_by_the_order_of_the_other_hunks() {
    // `}` is on lines 2 and 4 and both stated lines are wrong; the first hunk (`b`, unique) sits
    // on line 3, and hunks of an in-order patch follow each other, so only line 4 remains.
    check(
        "a\n}\nb\n}\nc\n",
        "@@ -6 +6 @@\n-b\n+B\n@@ -9 +9 @@\n-}\n+};\n",
        "a\n}\nB\n};\nc\n",
        &[Offset, Offset],
    );
    // Without a hunk before it, both places stay possible: rejected.
    check_err(
        "a\n}\nb\n}\nc\n",
        "@@ -9 +9 @@\n-}\n+};\n@@ -12 +12 @@\n-c\n+C\n",
        PatchApplyFailed,
        &["several places", "[2, 4]"],
    );
}

#[test]
fn zero_context_unique_hunk_applies() {
    check(
        "a\n}\nb\n}\n",
        "@@ -3 +3 @@\n-b\n+B\n",
        "a\n}\nB\n}\n",
        &[Exact],
    );
}

#[test]
fn pure_insertion_corroborated_by_exact_hunks() {
    check(
        "a\nb\nc\n",
        "@@ -1,0 +2 @@\n+x\n@@ -3 +4 @@\n-c\n+C\n",
        "a\nx\nb\nC\n",
        &[Exact, Exact],
    );
    check("", "@@ -0,0 +1,2 @@\n+x\n+y\n", "x\ny\n", &[Exact]);
}

#[test]
fn lone_context_free_insertion_into_non_empty_file_is_rejected() {
    check_err(
        "a\nb\n",
        "@@ -1,0 +2,1 @@\n+x\n",
        PatchApplyFailed,
        &["without context", "hunk #1"],
    );
}

#[test]
fn pure_insertion_past_end_is_rejected() {
    check_err(
        "a\nb\n",
        "@@ -5,0 +6,1 @@\n+x\n",
        PatchApplyFailed,
        &["only inserts"],
    );
}

#[test]
fn pure_insertion_after_relocated_hunk_is_rejected() {
    let patch = "@@ -1,1 +1,1 @@\n-five\n+5\n@@ -8,0 +9,1 @@\n+x\n";
    check_err(TEN, patch, PatchApplyFailed, &["hunk #2", "only inserts"]);
}

#[test]
fn overlapping_hunks_rejected() {
    let patch = "@@ -2,2 +2,2 @@\n two\n-three\n+3\n@@ -3,2 +3,2 @@\n three\n-four\n+4\n";
    check_err(TEN, patch, PatchApplyFailed, &["overlaps hunk #1"]);
}

#[test]
fn out_of_order_unique_hunks_apply() {
    let patch = "@@ -8,1 +8,1 @@\n-eight\n+8\n@@ -2,1 +2,1 @@\n-two\n+2\n";
    check(
        TEN,
        patch,
        &TEN.replace("eight", "8").replace("two", "2"),
        &[Exact, Exact],
    );
}

#[test]
fn out_of_order_non_unique_hunk_rejected() {
    let text = "a\nb\na\nc\n";
    let patch = "@@ -4,1 +4,1 @@\n-c\n+C\n@@ -3,1 +3,1 @@\n-a\n+A\n";
    check_err(
        text,
        patch,
        PatchApplyFailed,
        &["hunk #2", "several places"],
    );
}

#[test]
fn wrong_header_counts_tolerated() {
    check(
        TEN,
        "@@ -4,9 +4,1 @@\n four\n-five\n+FIVE\n six\n",
        &TEN.replace("five", "FIVE"),
        &[Exact],
    );
    check(
        TEN,
        "@@ -4,1 +4,1 @@\n four\n-five\n+FIVE\n six\n",
        &TEN.replace("five", "FIVE"),
        &[Exact],
    );
}

#[test]
fn empty_context_line_without_space_is_context() {
    let text = "a\n\nb\nc\n";
    check(
        text,
        "@@ -1,4 +1,4 @@\n a\n\n b\n-c\n+C\n",
        "a\n\nb\nC\n",
        &[Exact],
    );
}

#[test]
fn conflicting_edit_at_stated_place_is_not_relocated_to_a_look_alike() {
    let text = "let alpha = 1;\nlet beta = 2;\nlet gamma = 3;\nmid\nlet alpha = 1;\nlet beta = 20;\nlet gamma = 3;\n";
    // the patch targets lines 5-7, which someone changed (beta = 20); lines 1-3 look the same
    let patch =
        "@@ -5,3 +5,3 @@\n let alpha = 1;\n-let beta = 2;\n+let beta = 5;\n let gamma = 3;\n";
    check_err(
        text,
        patch,
        PatchApplyFailed,
        &["conflicting edit", "let beta = 20;"],
    );
}

#[test]
fn no_match_names_hunk_and_nearest_lines() {
    check_err(
        TEN,
        "@@ -3,2 +3,2 @@\n three\n-FOUR!\n+4\n",
        PatchApplyFailed,
        &["hunk #1", "@@ -3,2 +3,2 @@", "not found", "3 | three"],
    );
}

#[test]
fn crlf_file_with_lf_patch_keeps_crlf() {
    let text = TEN.replace('\n', "\r\n");
    check(
        &text,
        "@@ -4,3 +4,4 @@\n four\n-five\n+FIVE\n+5\n six\n",
        &text.replace("five", "FIVE\r\n5"),
        &[Exact],
    );
}

#[test]
fn lf_file_with_crlf_patch_keeps_lf() {
    check(
        TEN,
        "@@ -4,3 +4,3 @@\r\n four\r\n-five\r\n+FIVE\r\n six\r\n",
        &TEN.replace("five", "FIVE"),
        &[Exact],
    );
}

#[test]
fn mixed_eol_lines_keep_their_own_terminators() {
    check(
        "a\r\nb\nc\r\nd\r\n",
        "@@ -2,2 +2,2 @@\n b\n-c\n+C\n",
        "a\r\nb\nC\r\nd\r\n",
        &[Exact],
    );
}

#[test]
fn bom_preserved() {
    check(
        "\u{feff}a\nb\n",
        "@@ -1,2 +1,2 @@\n a\n-b\n+B\n",
        "\u{feff}a\nB\n",
        &[Exact],
    );
}

#[test]
fn no_final_newline_preserved_without_marker() {
    check(
        "a\nb\nc",
        "@@ -2,2 +2,2 @@\n b\n-c\n+C\n",
        "a\nb\nC",
        &[Exact],
    );
    check("a\nb", "@@ -2,1 +2,2 @@\n b\n+c\n", "a\nb\nc", &[Exact]);
}

#[test]
fn marker_removes_final_newline() {
    check(
        "a\nb\n",
        "@@ -2,1 +2,1 @@\n-b\n+B\n\\ No newline at end of file\n",
        "a\nB",
        &[Exact],
    );
}

#[test]
fn marker_adds_final_newline() {
    check(
        "a\nb",
        "@@ -2,1 +2,1 @@\n-b\n\\ No newline at end of file\n+b\n",
        "a\nb\n",
        &[Exact],
    );
}

#[test]
fn marker_on_context_keeps_no_newline() {
    check(
        "a\nb",
        "@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n",
        "A\nb",
        &[Exact],
    );
}

#[test]
fn git_headers_and_mail_signature_tolerated() {
    let patch = "From 123 Mon Sep 17 00:00:00 2001\nSubject: x\n\ndiff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n four\n-five\n+FIVE\n six\n-- \n2.43.0\n";
    check(TEN, patch, &TEN.replace("five", "FIVE"), &[Exact]);
}

#[test]
fn removed_line_starting_with_dashes_inside_counted_hunk() {
    let text = "a\n-- x\n++ y\nb\n";
    check(
        text,
        "@@ -1,4 +1,3 @@\n a\n--- x\n+++ y\n-++ y\n b\n",
        "a\n++ y\nb\n",
        &[Exact],
    );
}

#[test]
fn parse_rejections() {
    for (patch, needle) in [
        ("just text\n", "no `@@"),
        ("@@ -1,x +1 @@\n a\n", "malformed hunk header"),
        ("@@ -1 +1 @@\n", "has no lines"),
        ("@@ -1,2 +1,2 @@\nfoo\n-b\n", "must start with"),
        (
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-a\n+b\n",
            "more than one file",
        ),
        (
            "diff --git a/f b/f\nBinary files a/f and b/f differ\n",
            "binary",
        ),
        ("@@ -1 +1 @@\n-a\n+b\ntrailing garbage\n", "unexpected line"),
        (
            "@@ -1,1 +1,1 @@\n\\ No newline at end of file\n",
            "before any hunk line",
        ),
    ] {
        check_err("a\n", patch, PatchNotUnified, &[needle]);
    }
}

#[test]
fn r_huge_header_line_numbers_do_not_overflow() {
    let patch = "@@ -9223372036854775809 +1 @@\n-a\n+A\n@@ -18446744073709551615 +3 @@\n-c\n+C\n";
    check("a\nb\nc\n", patch, "A\nb\nC\n", &[Offset, Offset]);
}

#[test]
fn single_drifted_context_line_is_no_evidence_for_a_reindent() {
    // The only non-blank matched line gained a space in the patch; the `+` line has an
    // indentation no matched line confirms, so it is kept as written.
    let text = "/**\n * Registry.\n\n */\nexport {};\n";
    check(
        text,
        "@@ -3,2 +3,3 @@\n \n+ * Names are unique.\n   */\n",
        "/**\n * Registry.\n\n * Names are unique.\n */\nexport {};\n",
        &[Indentation],
    );
}

#[test]
fn single_drifted_line_whose_indent_the_added_line_shares_is_rejected() {
    // One matched line says the patch is 4 spaces off; one line is no evidence to move the
    // replacement, and keeping it as written would mix indentations: reject.
    check_err(
        "fn f() {\n        return 1;\n}\n",
        "@@ -2,1 +2,1 @@\n-    return 1;\n+    return 2;\n",
        PatchApplyFailed,
        &["indentation"],
    );
}

#[test]
fn drift_on_several_context_lines_keeps_added_lines_as_written() {
    let text = "def f(x):\n    if x:\n        y = 1\n        z = 2\n    return x\n";
    // two context lines drifted differently, the others unchanged
    let patch = "@@ -1,5 +1,6 @@\n  def f(x):\n      if x:\n         y = 1\n+        w = 3\n         z = 2\n     return x\n";
    check(
        text,
        patch,
        "def f(x):\n    if x:\n        y = 1\n        w = 3\n        z = 2\n    return x\n",
        &[Indentation],
    );
}

#[test]
fn crlf_to_lf_commit_writes_lf_on_added_lines() {
    check(
        "a\r\nb\r\n",
        "@@ -1,2 +1,2 @@\n-a\r\n-b\r\n+a\n+b\n",
        "a\nb\n",
        &[Exact],
    );
}

#[test]
fn lf_to_crlf_commit_writes_crlf_on_added_lines() {
    check(
        "a\nb\n",
        "@@ -1,2 +1,2 @@\n-a\n-b\n+a\r\n+b\r\n",
        "a\r\nb\r\n",
        &[Exact],
    );
}

#[test]
fn eof_hunk_without_marker_keeps_missing_final_newline() {
    check(
        "a\nb\nc",
        "@@ -2,2 +2,3 @@\n b\n-c\n+C\n+d\n",
        "a\nb\nC\nd",
        &[Exact],
    );
    check("a\nb\nc", "@@ -3,1 +3,1 @@\n-c\n+C\n", "a\nb\nC", &[Exact]);
}

#[test]
fn phantom_blank_context_line_is_realigned() {
    check(
        TEN,
        "@@ -4,4 +4,4 @@\n four\n-five\n+FIVE\n \n six\n",
        &TEN.replace("five", "FIVE"),
        &[Realigned],
    );
}

#[test]
fn omitted_interior_context_line_is_realigned() {
    check(
        TEN,
        "@@ -4,5 +4,5 @@\n four\n-five\n+FIVE\n six\n eight\n",
        &TEN.replace("five", "FIVE"),
        &[Realigned],
    );
}

#[test]
fn realignment_never_drops_a_removed_line() {
    // `-ten` is not in the file: dropping it would be a guess, only context lines may be phantom
    check_err(
        TEN,
        "@@ -4,4 +4,4 @@\n four\n-eleven\n+FIVE\n five\n six\n",
        PatchApplyFailed,
        &["not found"],
    );
}

#[test]
fn realignment_with_two_outcomes_is_rejected() {
    // `c` omitted between two context lines with an insertion between: before or after it?
    check_err(
        "alpha\nbeta\ngamma\ndelta\n",
        "@@ -1,3 +1,4 @@\n alpha\n beta\n+inserted\n delta\n",
        PatchApplyFailed,
        &["several places"],
    );
}

#[test]
fn realignment_far_from_a_conflicting_stated_place_is_rejected() {
    // The stated place was edited (`work()` changed); a one-off copy further down must not be
    // used instead.
    let text = "fn one() {\n    setup();\n    work(9);\n    finish();\n}\n\n// unrelated\n// lines\n\nfn two() {\n    setup();\n    log();\n    work();\n    finish();\n}\n";
    check_err(
        text,
        "@@ -2,3 +2,3 @@\n     setup();\n-    work();\n+    work(1);\n     finish();\n",
        PatchApplyFailed,
        &["hunk #1", "conflicting edit"],
    );
}

#[test]
fn zero_context_hunk_is_never_realigned() {
    // `-` lines only: a file line between them is no evidence of anything
    check_err(
        "alpha one\nkept line\nbeta two\n",
        "@@ -1,2 +1,1 @@\n-alpha one\n-beta two\n+gamma\n",
        PatchApplyFailed,
        &["not found"],
    );
}

#[test]
fn omitted_line_next_to_added_lines_is_rejected() {
    // `-five +FIVE` then `seven`: was `six` before or after FIVE? Not knowable.
    check_err(
        TEN,
        "@@ -4,4 +4,4 @@\n four\n-five\n+FIVE\n seven\n",
        PatchApplyFailed,
        &["several places"],
    );
}
