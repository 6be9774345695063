//! `memory_patch`: whitelist, types, ranges, the remember/autopatch gate, the report.

use std::collections::BTreeMap;

use papayu_memory::{PatchTrigger, RejectReason};
use papayu_protocol::{ErrorCode, MEMORY_PATCH_KEYS};
use serde_json::{Value, json};

use crate::Dirs;

const ASK: &str = "Please remember this for the future";

fn patch(entries: &[(&str, Value)]) -> BTreeMap<String, Value> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// A valid value for every whitelisted key.
fn valid_value(key: &str) -> Value {
    match key {
        "user.preferred_style" => json!("brief"),
        "user.ask_budget" => json!(2),
        "user.risk_tolerance" => json!("low"),
        "user.default_language" => json!("python"),
        "user.output_format" => json!("apply"),
        "project.src_roots" => json!(["src"]),
        "project.test_roots" => json!(["tests", "it"]),
        _ => json!("pytest -q"),
    }
}

/// Check one rejected entry: `(key, value) -> reason`, nothing applied, nothing written.
fn check_rejected(key: &str, value: Value, expect: impl Fn(&RejectReason) -> bool) {
    let d = Dirs::new();
    let mut m = d.load();
    let report = m
        .apply_patch(&patch(&[(key, value.clone())]), ASK, false)
        .unwrap();
    assert!(report.applied.is_empty(), "{key}={value}: {report:?}");
    assert_eq!(report.rejected.len(), 1, "{key}={value}");
    let r = &report.rejected[0];
    assert_eq!(r.key, key);
    assert_eq!(r.value, value);
    assert_eq!(r.code, ErrorCode::MemoryPatchRejected);
    assert!(expect(&r.reason), "{key}={value}: {:?}", r.reason);
    assert_eq!(report.code(), Some(ErrorCode::MemoryPatchRejected));
    assert!(report.written.is_empty());
    assert!(!d.config.exists() && !d.project.join(".papa-yu").exists());
    assert_eq!(m.to_json(), json!({"user": {}, "project": {}}));
}

#[test]
fn every_whitelisted_key_is_accepted_and_persisted() {
    for (key, _) in MEMORY_PATCH_KEYS {
        let d = Dirs::new();
        let mut m = d.load();
        let value = valid_value(key);
        let report = m
            .apply_patch(&patch(&[(key, value.clone())]), ASK, false)
            .unwrap();
        assert!(report.rejected.is_empty(), "{key}: {report:?}");
        assert_eq!(report.applied.len(), 1);
        assert!(report.applied[0].changed);
        assert_eq!(report.applied[0].value, value);
        assert_eq!(report.trigger, Some(PatchTrigger::UserAsked));
        assert_eq!(report.code(), None);
        let file = if key.starts_with("user.") {
            d.user_file()
        } else {
            d.project_file()
        };
        assert_eq!(report.written, vec![file]);
        assert_eq!(
            d.load().get(key).unwrap(),
            Some(value),
            "{key} after reload"
        );
    }
}

#[test]
fn every_whitelisted_key_rejects_the_wrong_type() {
    for (key, _) in MEMORY_PATCH_KEYS {
        let wrong = match valid_value(key) {
            Value::String(_) => json!(7),
            Value::Number(_) => json!("1"),
            _ => json!("src"),
        };
        check_rejected(key, wrong, |r| matches!(r, RejectReason::WrongType { .. }));
        check_rejected(
            key,
            json!(true),
            |r| matches!(r, RejectReason::WrongType { found, .. } if found == "boolean"),
        );
        check_rejected(key, json!({"a": 1}), |r| {
            matches!(r, RejectReason::WrongType { .. })
        });
    }
}

#[test]
fn ask_budget_300_is_rejected_not_truncated() {
    check_rejected("user.ask_budget", json!(300), |r| {
        *r == RejectReason::OutOfRange {
            min: 0,
            max: 2,
            got: "300".to_owned(),
        }
    });
    // 300 truncated to u8 is 44: make sure neither value sneaks in.
    let d = Dirs::new();
    let mut m = d.load();
    m.apply_patch(&patch(&[("user.ask_budget", json!(300))]), ASK, true)
        .unwrap();
    assert_eq!(m.user().ask_budget(), None);
}

#[test]
fn out_of_range_and_invalid_values_are_rejected() {
    let out_of_range = |r: &RejectReason| matches!(r, RejectReason::OutOfRange { .. });
    check_rejected("user.ask_budget", json!(3), out_of_range);
    check_rejected("user.ask_budget", json!(-1), out_of_range);
    check_rejected("user.ask_budget", json!(u64::MAX), out_of_range);
    check_rejected("user.ask_budget", json!(1.0), |r| {
        matches!(r, RejectReason::WrongType { .. })
    });
    let not_one_of = |r: &RejectReason| matches!(r, RejectReason::NotOneOf { .. });
    check_rejected("user.preferred_style", json!("terse"), not_one_of);
    check_rejected("user.preferred_style", json!("BRIEF"), not_one_of);
    check_rejected("user.risk_tolerance", json!("extreme"), not_one_of);
    check_rejected("user.output_format", json!("patch"), not_one_of);
    let invalid = |r: &RejectReason| matches!(r, RejectReason::Invalid { .. });
    check_rejected("project.default_test_command", json!("   "), invalid);
    check_rejected("project.ci_notes", json!("x".repeat(301)), invalid);
    check_rejected("project.build_command", json!("make\u{1b}[31m"), invalid);
    check_rejected("project.src_roots", json!([]), invalid);
    check_rejected("project.src_roots", json!(["../x"]), invalid);
    check_rejected("project.test_roots", json!(["C:\\tests"]), invalid);
    check_rejected("project.test_roots", json!(vec!["t"; 21]), invalid);
    check_rejected(
        "project.src_roots",
        json!(["src", 1]),
        |r| matches!(r, RejectReason::WrongType { found, .. } if found == "integer at index 1"),
    );
}

#[test]
fn unknown_keys_are_dropped_and_reported() {
    for key in [
        "user.favourite_colour",
        "preferred_style",
        "project.log_files",
        "project.log_files.app",
        "system.prompt",
        "",
        "user.",
    ] {
        check_rejected(key, json!("x"), |r| *r == RejectReason::UnknownKey);
    }
}

#[test]
fn valid_keys_are_not_applied_without_a_request_or_autopatch() {
    let d = Dirs::new();
    let mut m = d.load();
    let p = patch(&[
        ("user.preferred_style", json!("brief")),
        ("user.ask_budget", json!(300)),
        ("nope", json!(1)),
    ]);
    let report = m.apply_patch(&p, "fix the failing test", false).unwrap();
    assert_eq!(report.trigger, None);
    assert!(report.applied.is_empty());
    let reasons: Vec<_> = report
        .rejected
        .iter()
        .map(|r| (r.key.as_str(), r.reason.clone()))
        .collect();
    assert_eq!(reasons[0].0, "nope");
    assert_eq!(reasons[0].1, RejectReason::UnknownKey);
    assert_eq!(reasons[1].0, "user.ask_budget");
    assert!(matches!(reasons[1].1, RejectReason::OutOfRange { .. }));
    assert_eq!(
        reasons[2],
        ("user.preferred_style", RejectReason::NotRequested)
    );
    assert!(report.written.is_empty());
    assert!(!d.config.exists());

    // The same patch with the autopatch flag applies the valid key.
    let report = m.apply_patch(&p, "fix the failing test", true).unwrap();
    assert_eq!(report.trigger, Some(PatchTrigger::Autopatch));
    assert_eq!(report.applied.len(), 1);
    assert_eq!(report.rejected.len(), 2);
    assert_eq!(
        d.load().user().preferred_style().map(|s| s.as_str()),
        Some("brief")
    );
}

#[test]
fn null_values_are_skipped_and_empty_patches_write_nothing() {
    let d = Dirs::new();
    let mut m = d.load();
    let all_null: BTreeMap<String, Value> = MEMORY_PATCH_KEYS
        .iter()
        .map(|(k, _)| ((*k).to_owned(), Value::Null))
        .collect();
    let report = m.apply_patch(&all_null, ASK, true).unwrap();
    assert!(report.is_empty());
    assert!(report.written.is_empty());
    let report = m.apply_patch(&BTreeMap::new(), ASK, true).unwrap();
    assert!(report.is_empty());
    assert!(!d.config.exists());
}

#[test]
fn reapplying_the_same_value_is_applied_but_unchanged_and_not_rewritten() {
    let d = Dirs::new();
    let mut m = d.load();
    let p = patch(&[("project.default_test_command", json!("pytest -q"))]);
    assert_eq!(m.apply_patch(&p, ASK, false).unwrap().written.len(), 1);
    let report = m.apply_patch(&p, ASK, false).unwrap();
    assert_eq!(report.applied.len(), 1);
    assert!(!report.applied[0].changed);
    assert!(report.written.is_empty());
}

#[test]
fn report_serialises_applied_and_rejected_with_reasons() {
    let d = Dirs::new();
    let mut m = d.load();
    let p = patch(&[
        ("user.ask_budget", json!(300)),
        ("user.preferred_style", json!("brief")),
        ("user.risk_tolerance", json!(1)),
        ("x.y", json!("z")),
    ]);
    let mut report = m.apply_patch(&p, "запомни: коротко", false).unwrap();
    report.written.clear(); // temp paths
    insta::assert_json_snapshot!("patch_report", report);
}
