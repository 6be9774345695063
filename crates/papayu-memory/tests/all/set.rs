//! `Memory::set` / `unset` / `get`: the string interface of `papayu memory set`.

use papayu_memory::{MemoryError, RejectReason};
use papayu_protocol::ErrorCode;
use serde_json::json;

use crate::Dirs;

/// `set(key, raw)` stores `expect`, or fails with a reason matching `bad`.
fn check(key: &str, raw: &str, expect: Result<serde_json::Value, fn(&RejectReason) -> bool>) {
    let d = Dirs::new();
    let mut m = d.load();
    match (m.set(key, raw), expect) {
        (Ok(got), Ok(want)) => {
            assert_eq!(got, want, "{key}={raw:?}");
            assert_eq!(m.get(key).unwrap(), Some(want));
        }
        (Err(err), Err(bad)) => {
            assert_eq!(err.code(), ErrorCode::InvalidConfig);
            match &err {
                MemoryError::InvalidValue { key: k, reason } => {
                    assert_eq!(k, key);
                    assert!(bad(reason), "{key}={raw:?}: {reason:?}");
                }
                other => panic!("{key}={raw:?}: {other:?}"),
            }
            assert_eq!(m.get(key).unwrap(), None, "nothing stored on error");
        }
        (got, _) => panic!("{key}={raw:?}: unexpected {got:?}"),
    }
}

#[test]
fn values_are_parsed_per_key_type() {
    check("user.ask_budget", "0", Ok(json!(0)));
    check("user.ask_budget", "2", Ok(json!(2)));
    check("user.preferred_style", "verbose", Ok(json!("verbose")));
    check(
        "user.output_format",
        "patch_first",
        Ok(json!("patch_first")),
    );
    check(
        "user.default_language",
        "TypeScript",
        Ok(json!("TypeScript")),
    );
    check("project.src_roots", "src", Ok(json!(["src"])));
    check(
        "project.src_roots",
        "src, lib ,app/x",
        Ok(json!(["src", "lib", "app/x"])),
    );
    check(
        "project.test_roots",
        r#"["tests", "a,b"]"#,
        Ok(json!(["tests", "a,b"])),
    );
    check(
        "project.default_test_command",
        "pytest -q -k 'a, b'",
        Ok(json!("pytest -q -k 'a, b'")),
    );
    check(
        "project.log_files.app",
        "logs/app.log",
        Ok(json!("logs/app.log")),
    );
}

#[test]
fn bad_values_are_refused_without_coercion() {
    let out_of_range: fn(&RejectReason) -> bool = |r| matches!(r, RejectReason::OutOfRange { .. });
    let wrong_type: fn(&RejectReason) -> bool = |r| matches!(r, RejectReason::WrongType { .. });
    let invalid: fn(&RejectReason) -> bool = |r| matches!(r, RejectReason::Invalid { .. });
    let not_one_of: fn(&RejectReason) -> bool = |r| matches!(r, RejectReason::NotOneOf { .. });
    check("user.ask_budget", "300", Err(out_of_range));
    check("user.ask_budget", "-1", Err(out_of_range));
    check(
        "user.ask_budget",
        "99999999999999999999999",
        Err(out_of_range),
    );
    check("user.ask_budget", "1.0", Err(wrong_type));
    check("user.ask_budget", " 1", Err(wrong_type));
    check("user.ask_budget", "one", Err(wrong_type));
    check("user.ask_budget", "", Err(wrong_type));
    check("user.preferred_style", "Brief", Err(not_one_of));
    check("user.risk_tolerance", "", Err(not_one_of));
    check("user.default_language", "", Err(invalid));
    check("project.src_roots", "src,,lib", Err(invalid));
    check("project.src_roots", "[\"src\"", Err(invalid));
    check("project.src_roots", "[1]", Err(wrong_type));
    check("project.src_roots", "[]", Err(invalid));
    check("project.test_roots", "/abs", Err(invalid));
    check("project.log_files.app", "../app.log", Err(invalid));
    check("project.log_files.a b", "app.log", Err(invalid));
}

#[test]
fn unknown_keys_are_refused() {
    let d = Dirs::new();
    let mut m = d.load();
    for key in [
        "user.colour",
        "project.log_files",
        "ask_budget",
        "project.",
        "",
    ] {
        let err = m.set(key, "1").unwrap_err();
        assert!(
            matches!(err, MemoryError::UnknownKey { .. }),
            "{key}: {err:?}"
        );
        assert_eq!(err.code(), ErrorCode::InvalidConfig);
        assert!(m.get(key).is_err());
        assert!(m.unset(key).is_err());
    }
}

#[test]
fn unset_removes_and_saves() {
    let d = Dirs::new();
    let mut m = d.load();
    m.set("project.ci_notes", "slow").unwrap();
    m.set("project.log_files.app", "app.log").unwrap();
    m.set("user.ask_budget", "1").unwrap();
    m.save().unwrap();
    assert!(m.unset("project.ci_notes").unwrap());
    assert!(!m.unset("project.ci_notes").unwrap());
    assert!(m.unset("project.log_files.app").unwrap());
    assert_eq!(m.save().unwrap(), vec![d.project_file()]);
    let again = d.load();
    assert_eq!(again.project().ci_notes(), None);
    assert!(again.project().log_files().is_empty());
    assert_eq!(again.user().ask_budget(), Some(1));
}
