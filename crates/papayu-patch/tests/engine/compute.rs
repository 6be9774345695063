//! `compute` / `compute_with_base`: base hashes, every action kind, EDIT_FILE and REPLACE_RANGE.

use papayu_patch::engine::{EngineOptions, compute, compute_with_base};
use papayu_protocol::ErrorCode::{self, *};
use papayu_protocol::{Action, ActionKind, Edit, sha256_hex};

fn action(kind: ActionKind, old: &[u8]) -> Action {
    let mut a = Action::new(kind, "f.txt");
    a.base_sha256 = Some(sha256_hex(old));
    a
}

fn edit(anchor: &str, before: &str, after: &str, occurrence: Option<u32>) -> Edit {
    Edit {
        anchor: anchor.into(),
        before: before.into(),
        after: after.into(),
        occurrence,
        ..Edit::default()
    }
}

fn edit_action(old: &str, edits: Vec<Edit>) -> Action {
    let mut a = action(ActionKind::EditFile, old.as_bytes());
    a.edits = Some(edits);
    a
}

#[track_caller]
fn ok(old: Option<&str>, a: &Action, opts: EngineOptions, expect: &str) {
    match compute(old.map(str::as_bytes), a, &opts) {
        Ok(out) => assert_eq!(String::from_utf8_lossy(&out.new_bytes), expect),
        Err(e) => panic!("expected success, got {}: {e}", e.code()),
    }
}

#[track_caller]
fn err(old: Option<&[u8]>, a: &Action, code: ErrorCode, needles: &[&str]) {
    match compute(old, a, &EngineOptions::default()) {
        Ok(out) => panic!(
            "expected {code}, got {:?}",
            String::from_utf8_lossy(&out.new_bytes)
        ),
        Err(e) => {
            assert_eq!(e.code(), code, "{e}");
            let msg = e.to_string();
            for n in needles {
                assert!(msg.contains(n), "{msg:?} lacks {n:?}");
            }
        }
    }
}

const LF: EngineOptions = EngineOptions {
    normalize_eol_lf: true,
};
const KEEP: EngineOptions = EngineOptions {
    normalize_eol_lf: false,
};

#[test]
fn base_mismatch_reports_both_hashes() {
    let mut a = action(ActionKind::PatchFile, b"other");
    a.patch = Some("@@ -1 +1 @@\n-a\n+b\n".into());
    err(
        Some(b"a\n"),
        &a,
        BaseMismatch,
        &[&sha256_hex(b"other"), &sha256_hex(b"a\n")],
    );
}

#[test]
fn missing_file_is_base_mismatch() {
    let mut a = action(ActionKind::ReplaceRange, b"x");
    a.start_line = Some(1);
    a.end_line = Some(1);
    a.content = Some("y".into());
    err(None, &a, BaseMismatch, &["is missing"]);
}

#[test]
fn edit_base_mismatch_and_missing_use_edit_code() {
    let mut a = edit_action("x", vec![edit("a", "a", "b", None)]);
    err(None, &a, EditBaseMismatch, &["is missing"]);
    a.base_sha256 = Some(sha256_hex(b"y"));
    err(Some(b"a"), &a, EditBaseMismatch, &[&sha256_hex(b"a")]);
}

#[test]
fn non_utf8_file_rejected() {
    let old = b"ok\n\xff\xfe\n";
    let mut a = action(ActionKind::PatchFile, old);
    a.patch = Some("@@ -1 +1 @@\n-ok\n+ko\n".into());
    err(Some(old), &a, NonUtf8File, &["offset 3"]);
}

#[test]
fn missing_fields_and_unsupported_kinds() {
    err(
        Some(b"a"),
        &Action::new(ActionKind::UpdateFile, "f"),
        ContentRequired,
        &["content"],
    );
    err(
        Some(b"a"),
        &action(ActionKind::PatchFile, b"a"),
        PatchRequired,
        &["patch"],
    );
    err(
        Some(b"a"),
        &action(ActionKind::EditFile, b"a"),
        PatchRequired,
        &["edits"],
    );
    err(
        Some(b"a"),
        &Action::new(ActionKind::PatchFile, "f"),
        BaseSha256Invalid,
        &["base_sha256"],
    );
    err(
        Some(b"a"),
        &Action::new(ActionKind::DeleteFile, "f"),
        UnknownKind,
        &["DELETE_FILE"],
    );
}

#[test]
fn patch_file_reports_tiers() {
    let old = "a\nb\nc\n";
    let mut a = action(ActionKind::PatchFile, old.as_bytes());
    a.patch = Some("@@ -2 +2 @@\n-b\n+B\n".into());
    let out = compute(Some(old.as_bytes()), &a, &KEEP).unwrap();
    assert_eq!(out.new_bytes, b"a\nB\nc\n");
    assert_eq!(out.hunks.len(), 1);
    assert_eq!(out.hunks[0].old_start, 2);
    assert_eq!(out.hunks[0].header, "@@ -2 +2 @@");
}

#[test]
fn create_and_update_keep_existing_eol_bom_and_final_newline() {
    let mut a = Action::new(ActionKind::UpdateFile, "f");
    a.content = Some("x\ny\n".into());
    ok(Some("\u{feff}a\r\nb"), &a, KEEP, "\u{feff}x\r\ny");
    ok(Some("a\nb\n"), &a, KEEP, "x\ny\n");
    ok(None, &a, KEEP, "x\ny\n");
    a.content = Some("x\r\ny".into());
    ok(None, &a, KEEP, "x\r\ny");
    ok(None, &a, LF, "x\ny\n");
    ok(Some("\u{feff}a\r\nb"), &a, LF, "\u{feff}x\ny\n");
    let mut c = Action::new(ActionKind::CreateFile, "f");
    c.content = Some(String::new());
    ok(None, &c, KEEP, "");
}

#[test]
fn replace_range() {
    let old = "1\r\n2\r\n3\r\n4";
    let mut a = action(ActionKind::ReplaceRange, old.as_bytes());
    a.content = Some("two\nzwei\n".into());
    a.start_line = Some(2);
    a.end_line = Some(3);
    ok(Some(old), &a, KEEP, "1\r\ntwo\r\nzwei\r\n4");
    a.start_line = Some(4);
    a.end_line = Some(4);
    ok(Some(old), &a, KEEP, "1\r\n2\r\n3\r\ntwo\r\nzwei");
    ok(Some(old), &a, LF, "1\n2\n3\ntwo\nzwei\n");
    a.content = Some(String::new());
    ok(Some(old), &a, KEEP, "1\r\n2\r\n3");
    for (s, e) in [(0, 1), (3, 2), (4, 5), (u64::MAX, u64::MAX)] {
        a.start_line = Some(s);
        a.end_line = Some(e);
        err(Some(old.as_bytes()), &a, RangeInvalid, &["4 lines"]);
    }
}

#[test]
fn edit_file_semantics() {
    let old = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
    ok(
        Some(old),
        &edit_action(old, vec![edit("fn b", "x();", "y();", None)]),
        KEEP,
        "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n",
    );
    // `before` is never searched before the anchor
    err(
        Some(old.as_bytes()),
        &edit_action(old, vec![edit("fn b", "fn a", "z", None)]),
        EditBeforeNotFound,
        &["line 4"],
    );
    err(
        Some(old.as_bytes()),
        &edit_action(old, vec![edit("fn c", "x", "z", None)]),
        EditAnchorNotFound,
        &["\"fn c\""],
    );
    err(
        Some(old.as_bytes()),
        &edit_action(old, vec![edit("fn", "x", "z", None)]),
        EditAmbiguous,
        &["anchor occurs 2 times"],
    );
    // after `fn a` the text `x();` occurs twice within the window
    err(
        Some(old.as_bytes()),
        &edit_action(old, vec![edit("fn a", "x();", "z", None)]),
        EditAmbiguous,
        &["before occurs 2 times"],
    );
    // occurrence picks the anchor; the first `before` after it is used
    ok(
        Some(old),
        &edit_action(old, vec![edit("fn", "x();", "z();", Some(2))]),
        KEEP,
        "fn a() {\n    x();\n}\nfn b() {\n    z();\n}\n",
    );
    err(
        Some(old.as_bytes()),
        &edit_action(old, vec![edit("fn", "x", "z", Some(3))]),
        EditAnchorNotFound,
        &["occurrence 3, file has 2"],
    );
    err(
        Some(old.as_bytes()),
        &edit_action(old, vec![edit("fn", "x", "z", Some(0))]),
        EditApplyFailed,
        &["1-based"],
    );
    err(
        Some(old.as_bytes()),
        &edit_action(old, vec![edit("", "x", "z", None)]),
        EditApplyFailed,
        &["anchor"],
    );
    err(
        Some(old.as_bytes()),
        &edit_action(old, vec![edit("fn a", "", "z", None)]),
        EditApplyFailed,
        &["before"],
    );
    // edits apply in order to the evolving text
    let seq = vec![
        edit("fn a", "x();", "AAA();", Some(1)),
        edit("AAA", "AAA", "BBB", None),
    ];
    ok(
        Some(old),
        &edit_action(old, seq),
        KEEP,
        &old.replacen("x();", "BBB();", 1),
    );
}

#[test]
fn edit_window_is_4000_characters_not_bytes() {
    // 3999 three-byte characters after the anchor's start: still within the window by chars
    let pad: String = "é".repeat(3990);
    let old = format!("ANCHOR{pad}TARGET\n");
    ok(
        Some(&old),
        &edit_action(&old, vec![edit("ANCHOR", "TARGET", "done", None)]),
        KEEP,
        &format!("ANCHOR{pad}done\n"),
    );
    let far = format!("ANCHOR{}TARGET\n", "é".repeat(4001));
    err(
        Some(far.as_bytes()),
        &edit_action(&far, vec![edit("ANCHOR", "TARGET", "x", None)]),
        EditBeforeNotFound,
        &["4000"],
    );
}

#[test]
fn edit_crlf_file_with_lf_strings() {
    let old = "\u{feff}a\r\nb\r\nc\r\n";
    ok(
        Some(old),
        &edit_action(old, vec![edit("a", "a\nb", "A\nB\nB2", None)]),
        KEEP,
        "\u{feff}A\r\nB\r\nB2\r\nc\r\n",
    );
    ok(
        Some(old),
        &edit_action(old, vec![edit("a", "a\nb", "A\nB", None)]),
        LF,
        "\u{feff}A\nB\nc\n",
    );
}

#[test]
fn edit_multibyte_is_char_safe() {
    let old = "ñandú — 🦀 crab\n";
    ok(
        Some(old),
        &edit_action(old, vec![edit("🦀", "🦀 crab", "🦞 lobster", None)]),
        KEEP,
        "ñandú — 🦞 lobster\n",
    );
    ok(
        Some(old),
        &edit_action(old, vec![edit("ñ", "ú", "u", None)]),
        KEEP,
        "ñandu — 🦀 crab\n",
    );
}

#[test]
fn compute_with_base_checks_the_original_hash() {
    let original = "a\nb\nc\n";
    let first = edit_action(original, vec![edit("a", "a", "A", None)]);
    let second = edit_action(original, vec![edit("c", "c", "C", None)]);
    let step1 = compute(Some(original.as_bytes()), &first, &KEEP)
        .unwrap()
        .new_bytes;
    // plain compute on the evolved bytes sees a different hash …
    assert_eq!(
        compute(Some(&step1), &second, &KEEP).unwrap_err().code(),
        EditBaseMismatch
    );
    // … compute_with_base checks against the original
    let step2 = compute_with_base(Some(&step1), Some(original.as_bytes()), &second, &KEEP)
        .unwrap()
        .new_bytes;
    assert_eq!(step2, b"A\nb\nC\n");
}

/// The edits small models write (measured in `cargo xtask bench tasks`): the right change, with
/// text copied not quite as the file has it. Placed like a SEARCH/REPLACE block (D52) when the
/// whole text admits one place; never a guess.
mod relocated_edits {
    use super::*;
    use papayu_patch::engine::HunkTier;

    const CALC: &str = "\"\"\"A tiny calculator.\"\"\"\n\n\ndef add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a - b\n\n\ndef mean(values):\n    return sum(values) / len(values)\n";

    /// Like papayu fills it in: the anchor is the `before` text itself.
    fn filled(before: &str, after: &str) -> Edit {
        edit(before, before, after, None)
    }

    #[track_caller]
    fn relocated(old: &str, e: Edit, expect: &str) -> HunkTier {
        let out = compute(Some(old.as_bytes()), &edit_action(old, vec![e]), &KEEP)
            .unwrap_or_else(|e| panic!("expected success, got {}: {e}", e.code()));
        assert_eq!(String::from_utf8_lossy(&out.new_bytes), expect);
        assert_eq!(out.hunks.len(), 1, "{:?}", out.hunks);
        assert_eq!(out.hunks[0].index, 0);
        out.hunks[0].tier
    }

    /// A filled edit the file lacks as written that no reading places: the exact-match error.
    #[track_caller]
    fn not_placed(old: &str, before: &str, after: &str) {
        err(
            Some(old.as_bytes()),
            &edit_action(old, vec![filled(before, after)]),
            EditAnchorNotFound,
            &[],
        );
    }

    #[test]
    fn an_edit_that_leaves_out_the_docstring_keeps_it() {
        let tier = relocated(
            CALC,
            filled(
                "def add(a, b):\n    return a - b",
                "def add(a, b):\n    return a + b",
            ),
            &CALC.replace("a - b", "a + b"),
        );
        assert_eq!(tier, HunkTier::Realigned);
    }

    #[test]
    fn an_edit_at_the_wrong_indentation_is_reindented() {
        let old =
            "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n";
        let tier = relocated(
            old,
            filled(
                "def g(self):\n    return 2\n",
                "def g(self):\n    return 3\n",
            ),
            &old.replace("return 2", "return 3"),
        );
        assert_eq!(tier, HunkTier::Indentation);
    }

    #[test]
    fn trailing_whitespace_and_typographic_quotes_do_not_block_an_edit() {
        let old = "fn main() {\n    let s = \"x\";   \n    println!(\"{s}\");\n}\n";
        relocated(
            old,
            filled(
                "    let s = \"x\";\n    println!(\"{s}\");",
                "    let s = \"y\";\n    println!(\"{s}\");",
            ),
            "fn main() {\n    let s = \"y\";\n    println!(\"{s}\");\n}\n",
        );
    }

    #[test]
    fn the_edits_that_matched_as_written_are_not_reported() {
        let e = filled("def mean(values):", "def average(values):");
        let out = compute(Some(CALC.as_bytes()), &edit_action(CALC, vec![e]), &KEEP).unwrap();
        assert!(out.hunks.is_empty());
    }

    #[test]
    fn two_places_that_fit_are_an_error_not_a_guess() {
        let old = "def a():\n    x = 1\n    return x\n\ndef b():\n    x = 1\n    return x\n";
        not_placed(old, "x = 1\n  return x", "x = 2\n  return x");
    }

    #[test]
    fn a_text_unlike_the_file_is_still_not_found() {
        err(
            Some(CALC.as_bytes()),
            &edit_action(
                CALC,
                vec![filled(
                    "def add(x, y):\n    return x - y",
                    "def add(x, y):\n    return x + y",
                )],
            ),
            EditAnchorNotFound,
            &["def add(x, y)"],
        );
    }

    #[test]
    fn a_found_anchor_still_bounds_where_before_may_be() {
        // `before` (ignoring indentation) is only above the anchor: not placed there.
        let old = "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n";
        err(
            Some(old.as_bytes()),
            &edit_action(old, vec![edit("fn b", "  x();\n}", "  z();\n}", None)]),
            EditBeforeNotFound,
            &["line 4"],
        );
        // Below it, it is.
        ok(
            Some(old),
            &edit_action(old, vec![edit("fn a", "  y();\n}", "  z();\n}", None)]),
            KEEP,
            "fn a() {\n    x();\n}\nfn b() {\n    z();\n}\n",
        );
    }

    #[test]
    fn a_crlf_file_keeps_its_line_endings_when_an_edit_is_relocated() {
        let old = CALC.replace('\n', "\r\n");
        ok(
            Some(&old),
            &edit_action(
                &old,
                vec![filled(
                    "def add(a, b):\n    return a - b",
                    "def add(a, b):\n    return a + b",
                )],
            ),
            KEEP,
            &old.replace("a - b", "a + b"),
        );
    }

    /// A line with a string literal's `\n`, as ini.py has it (bench task py-05).
    const INI: &str = "def fold(previous, stripped):\n    value = f'{previous}\\n{_strip(stripped)}'\n    return value\n";

    #[test]
    fn a_json_newline_for_a_literal_backslash_n_is_read_as_the_file_spells_it() {
        // The model wrote JSON "\n" (a line break) where the file has `\n` (two characters).
        let tier = relocated(
            INI,
            filled(
                "    value = f'{previous}\n{_strip(stripped)}'",
                "    value = f'{previous}\n{stripped}'",
            ),
            &INI.replace("{_strip(stripped)}", "{stripped}"),
        );
        assert_eq!(tier, HunkTier::EscapedNewline);
    }

    #[test]
    fn real_and_literal_line_breaks_mix_by_the_line_they_end() {
        let e = filled(
            "def fold(previous, stripped):\n    value = f'{previous}\n{_strip(stripped)}'",
            "def fold(previous, stripped, keep):\n    value = f'{previous}\n{stripped}'",
        );
        let tier = relocated(
            INI,
            e,
            &INI.replace("stripped):", "stripped, keep):")
                .replace("{_strip(stripped)}", "{stripped}"),
        );
        assert_eq!(tier, HunkTier::EscapedNewline);
    }

    #[test]
    fn an_escaped_newline_reading_found_twice_is_not_a_guess() {
        let old = "a = 'x\\ny'\nb = 'x\\ny'\n";
        not_placed(old, "'x\ny'", "'x\nz'");
    }

    /// slug.py of bench task py-02: double quotes the model copies as single ones.
    const SLUG: &str = "def slugify(title):\n    text = _NON_WORD.sub(\"-\", title)\n    text = _DASHES.sub(\"-\", text).strip(\"-\")\n    return text\n";

    #[test]
    fn single_quotes_for_the_files_double_quotes_keep_the_files_spelling() {
        let tier = relocated(
            SLUG,
            filled(
                "text = _DASHES.sub('-', text).strip('-')",
                "text = re.sub(r'-+', '-', text).strip('-')",
            ),
            // what the edit kept is spelled as the file spells it; what it added, as written
            &SLUG.replace("_DASHES.sub(\"-\", text)", "re.sub(r'-+', \"-\", text)"),
        );
        assert_eq!(tier, HunkTier::Respelled);
    }

    #[test]
    fn a_block_written_on_one_line_is_found_and_the_kept_text_keeps_its_lines() {
        let js = "export function normalize(path) {\n  for (const part of parts) {\n    if (part === '..') {\n      out.pop();\n      continue;\n    }\n    out.push(part);\n  }\n}\n";
        let tier = relocated(
            js,
            filled(
                "if (part === \"..\") { out.pop(); continue; }",
                "if (part === \"..\") { if (out.length) out.pop(); continue; }",
            ),
            &js.replace("      out.pop();", "      if (out.length) out.pop();"),
        );
        assert_eq!(tier, HunkTier::Respelled);
    }

    #[test]
    fn words_are_never_joined_or_split_by_a_loose_reading() {
        let old = "let total = base + extra;\nlet count = n;\n";
        err(
            Some(old.as_bytes()),
            &edit_action(
                old,
                vec![filled("lettotal = base + extra;", "let total = 0;")],
            ),
            EditAnchorNotFound,
            &[],
        );
    }

    #[test]
    fn a_loose_reading_that_fits_twice_is_not_a_guess() {
        let old = "a = f(\"x\", 1)\nb = f(\"x\", 1)\n";
        not_placed(old, "f('x', 1)", "f('y', 1)");
    }

    #[test]
    fn too_short_a_text_is_not_placed_loosely() {
        let old = "print(\"a\")\n";
        not_placed(old, "('a')", "('b')");
    }

    #[test]
    fn a_repetitive_text_is_not_searched_loosely_for_ever() {
        // 400 000 `a`s, and a `before` of 20 000 `a`s with a quote the file never has: every
        // start matches far before failing; the step budget ends the search (about a second
        // of work in a debug build; its cost is in `cargo xtask bench`, not timed here).
        let old = format!("{}\n", "a".repeat(400_000));
        let before = format!("{}'", "a".repeat(20_000));
        not_placed(&old, &before, "b");
    }
}
