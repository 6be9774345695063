//! Properties: diff → apply round trips (CRLF, missing final newline, repetitive lines) and
//! "never panics" on arbitrary patches, edits and ranges.

use papayu_patch::engine::{EngineOptions, apply_patch_to_text, compute};
use papayu_protocol::{Action, ActionKind, Edit, sha256_hex};
use proptest::prelude::*;

const POOL: &[&str] = &[
    "a",
    "b",
    "  c",
    "fn x() {",
    "}",
    "",
    "\tt",
    "ü€ 🦀",
    "    return 1;",
    "x  ",
];

fn render(lines: &[&str], crlf: bool, final_newline: bool) -> String {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.join(eol);
    if final_newline && !lines.is_empty() {
        s.push_str(eol);
    }
    s
}

fn lines_strategy() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(POOL), 0..40)
}

fn mutate(old: &[&'static str], ops: &[(u8, usize, &'static str)]) -> Vec<&'static str> {
    let mut new = old.to_vec();
    for &(op, at, line) in ops {
        let i = if new.is_empty() {
            0
        } else {
            at % (new.len() + 1)
        };
        match op % 3 {
            0 => new.insert(i, line),
            1 if i < new.len() => {
                new.remove(i);
            }
            _ if i < new.len() => new[i] = line,
            _ => new.push(line),
        }
    }
    new
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn diff_then_apply_round_trips(
        old in lines_strategy(),
        ops in prop::collection::vec((any::<u8>(), any::<usize>(), prop::sample::select(POOL)), 1..8),
        crlf in any::<bool>(),
        old_nl in any::<bool>(),
        new_nl in any::<bool>(),
        radius in 0usize..4,
    ) {
        let new = mutate(&old, &ops);
        let (old_text, new_text) = (render(&old, crlf, old_nl), render(&new, crlf, new_nl));
        prop_assume!(old_text != new_text);
        let diff = similar::TextDiff::from_lines(&old_text, &new_text)
            .unified_diff()
            .context_radius(radius)
            .missing_newline_hint(true)
            .header("a/f", "b/f")
            .to_string();
        match apply_patch_to_text(&old_text, &diff) {
            Ok(out) => prop_assert_eq!(out.text, new_text, "diff:\n{}", diff),
            // A diff without context on repetitive text may be legitimately refused as
            // ambiguous — but a diff with context never is.
            Err(e) => prop_assert!(radius == 0, "refused ({}): {e}\ndiff:\n{}", e.code(), diff),
        }
    }

    #[test]
    fn arbitrary_patch_never_panics(
        text in "(?s).{0,300}",
        pieces in prop::collection::vec(prop_oneof![
            Just("@@ -1,3 +1,3 @@".to_owned()),
            Just("@@ -0,0 +1 @@".to_owned()),
            Just("@@ -18446744073709551615,2 +1 @@".to_owned()),
            Just("\\ No newline at end of file".to_owned()),
            Just("--- a/f".to_owned()),
            Just("+++ b/f".to_owned()),
            Just("".to_owned()),
            "[ +-][a-cü\t ]{0,6}\r?",
            "@@ -[0-9]{1,3}(,[0-9]{1,2})? \\+[0-9]{1,3}(,[0-9]{1,2})? @@.{0,5}",
            "(?s).{0,20}",
        ], 0..30),
    ) {
        let patch = pieces.join("\n");
        if let Ok(out) = apply_patch_to_text(&text, &patch) {
            // whatever applied must at least be reported hunk by hunk
            prop_assert!(!out.hunks.is_empty());
        }
    }

    #[test]
    fn arbitrary_edits_and_ranges_never_panic(
        text in "(?s)[aé🦀\n\r x]{0,200}",
        edits in prop::collection::vec(("[aé🦀\n x]{0,4}", "[aé🦀\n\r x]{0,4}", "[bé\n]{0,3}", prop::option::of(0u32..4)), 0..4),
        start in 0u64..30,
        end in 0u64..30,
        nl in any::<bool>(),
    ) {
        let opts = EngineOptions { normalize_eol_lf: nl };
        let mut a = Action::new(ActionKind::EditFile, "f");
        a.base_sha256 = Some(sha256_hex(text.as_bytes()));
        a.edits = Some(edits.into_iter().map(|(anchor, before, after, occurrence)| Edit { anchor, before, after, occurrence, ..Edit::default() }).collect());
        let _ = compute(Some(text.as_bytes()), &a, &opts);
        let mut r = Action::new(ActionKind::ReplaceRange, "f");
        r.base_sha256 = a.base_sha256.clone();
        r.start_line = Some(start);
        r.end_line = Some(end);
        r.content = Some("z\r\ny".into());
        if let Ok(out) = compute(Some(text.as_bytes()), &r, &opts) {
            prop_assert!(std::str::from_utf8(&out.new_bytes).is_ok());
        }
    }

    /// Edits as papayu fills them in (the anchor is `before`), over texts full of what the
    /// loose readings treat alike: quotes, dashes, blanks, `\n` escapes and line breaks.
    #[test]
    fn filled_edits_read_loosely_never_panic_and_are_reported(
        text in "(?s)[ab'\"\\-–\\\\n \t\né]{0,160}",
        before in "[ab'\"\\-\\\\n \t\né]{1,24}",
        after in "[ab'\"\n é]{0,8}",
        nl in any::<bool>(),
    ) {
        let opts = EngineOptions { normalize_eol_lf: nl };
        let mut a = Action::new(ActionKind::EditFile, "f");
        a.base_sha256 = Some(sha256_hex(text.as_bytes()));
        let exact = text.contains(before.as_str());
        a.edits = Some(vec![Edit { anchor: before.clone(), before, after, ..Edit::default() }]);
        if let Ok(out) = compute(Some(text.as_bytes()), &a, &opts) {
            prop_assert!(std::str::from_utf8(&out.new_bytes).is_ok());
            // an edit that did not match as written says how it was placed
            if !exact {
                prop_assert!(!out.hunks.is_empty());
            }
        }
    }
}
