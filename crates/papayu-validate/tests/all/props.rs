//! Properties: validation never panics; path normalisation is idempotent and its output safe.

use papayu_protocol::ProtocolVersion;
use papayu_validate::{Context, Mode, Policy, RelPath, check_text};
use proptest::prelude::*;
use serde_json::Value;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "CREATE_FILE",
            "PATCH_FILE",
            "EDIT_FILE",
            "REPLACE_RANGE",
            "DELETE_DIR",
            "../a",
            ".env",
            "@@ -1 +1 @@\n-a\n+b"
        ])
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "actions",
                    "kind",
                    "path",
                    "content",
                    "patch",
                    "edits",
                    "base_sha256",
                    "start_line",
                    "end_line",
                    "summary",
                    "proposed_changes",
                    "anchor",
                    "before",
                    "after",
                    "occurrence",
                    "mode",
                    "x",
                ]),
                inner,
                0..6,
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn path_like() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "a", "B", ".", "..", "/", "\\", ":", "~", " ", "%2e", "con", ".txt", "é", "文",
            "\u{FF0F}", "\0", "//", "./",
        ]),
        0..10,
    )
    .prop_map(|parts| parts.concat())
}

fn ctx(v: u8, apply: bool) -> Context<'static> {
    let c = Context::new(ProtocolVersion::from_number(v).unwrap_or_default());
    if apply {
        c.with_mode(Mode::Apply)
    } else {
        c.with_mode(Mode::Plan)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn check_text_never_panics_on_strings(text in "\\PC{0,200}", v in 1u8..=3, apply: bool) {
        let report = check_text(&text, &ctx(v, apply), &Policy::default());
        // Deterministic: a second run gives the same report.
        prop_assert_eq!(&report, &check_text(&text, &ctx(v, apply), &Policy::default()));
    }

    #[test]
    fn check_text_never_panics_on_json(value in json_value(), v in 1u8..=3, apply: bool) {
        let text = value.to_string();
        let report = check_text(&text, &ctx(v, apply), &Policy::default());
        let sorted = report.violations().windows(2).all(|w| {
            (w[0].action_index, w[0].code.as_str()) <= (w[1].action_index, w[1].code.as_str())
        });
        prop_assert!(sorted, "{}", report);
    }

    #[test]
    fn check_text_never_panics_on_action_lists(
        kinds in prop::collection::vec(prop::sample::select(vec!["CREATE_FILE", "UPDATE_FILE", "DELETE_DIR", "DELETE_FILE", "CREATE_DIR", "EDIT_FILE", "PATCH_FILE", "REPLACE_RANGE", "?"]), 0..8),
        paths in prop::collection::vec(path_like(), 8),
        content in "\\PC{0,40}",
        v in 1u8..=3,
    ) {
        let actions: Vec<Value> = kinds.iter().zip(&paths).map(|(k, p)| serde_json::json!({
            "kind": k, "path": p, "content": content, "patch": content, "start_line": 0, "end_line": 1,
            "edits": [{"op": "replace", "anchor": content, "before": "", "after": content}],
        })).collect();
        let text = serde_json::json!({"actions": actions}).to_string();
        let report = check_text(&text, &ctx(v, true), &Policy::default());
        if let Ok(plan) = report.into_plan() {
            prop_assert!(plan.actions().iter().all(|a| RelPath::parse(a.path.as_str()).as_ref() == Ok(&a.path)));
        }
    }

    #[test]
    fn normalisation_is_idempotent(raw in prop_oneof![path_like(), "\\PC{0,40}"]) {
        if let Ok(p) = RelPath::parse(&raw) {
            prop_assert_eq!(RelPath::parse(p.as_str()), Ok(p.clone()));
        }
    }

    #[test]
    fn accepted_paths_are_safe(raw in prop_oneof![path_like(), "\\PC{0,40}"]) {
        if let Ok(p) = RelPath::parse(&raw) {
            let s = p.as_str();
            prop_assert!(!s.is_empty() && s.len() <= 240);
            prop_assert!(!s.starts_with('/') && !s.starts_with('~'));
            prop_assert!(!s.contains(':') && !s.contains('\\') && !s.contains('\0'));
            prop_assert!(!s.chars().any(char::is_control));
            prop_assert!(s.split('/').all(|seg| !seg.is_empty() && seg != "." && seg != ".." && !seg.ends_with('.') && !seg.ends_with(' ')));
        }
    }
}
