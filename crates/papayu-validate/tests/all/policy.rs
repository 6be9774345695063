//! Policy defaults and `.papa-yu/policy.json` parsing.

use papayu_protocol::{Action, ActionKind, ErrorCode, ProtocolVersion};
use papayu_validate::{Context, Policy, PolicyError, RelPath, validate_actions};

#[track_caller]
fn check(policy: &Policy, path: &str, expect: &[ErrorCode]) {
    let mut a = Action::new(ActionKind::CreateFile, path);
    a.content = Some("x".into());
    let report = validate_actions(&[a], &Context::new(ProtocolVersion::V2), policy);
    assert_eq!(report.codes(), expect, "{path}\n{report}");
}

#[test]
fn defaults() {
    let p = Policy::default();
    let c = p.config();
    assert_eq!(
        (c.max_actions, c.max_total_bytes, c.max_file_bytes),
        (200, 5 * 1024 * 1024, 1024 * 1024)
    );
    assert!(c.reject_placeholders);
    assert_eq!(Policy::from_json("{}").unwrap().config(), c);
    for ok in [
        "a.rs",
        "a.PY",
        "run.sh",
        "x.tsx",
        "Makefile",
        "readme",
        ".editorconfig",
        "a/.gitignore",
        "docs/x.MD",
    ] {
        check(&p, ok, &[]);
    }
}

#[test]
fn widen_and_narrow() {
    let p = Policy::from_json(
        r#"{"add_extensions": [".proto", "GLSL"], "remove_extensions": ["sh"], "add_names": ["Earthfile"],
            "remove_names": ["Makefile"], "protected_globs": ["deploy/prod/**", "**/*.sqlite"],
            "add_forbidden_dirs": ["dist"], "remove_forbidden_dirs": ["target"]}"#,
    )
    .unwrap();
    check(&p, "api.proto", &[]);
    check(&p, "shader.glsl", &[]);
    check(&p, "run.sh", &[ErrorCode::ForbiddenPath]);
    check(&p, "Earthfile", &[]);
    check(&p, "Makefile", &[ErrorCode::ForbiddenPath]);
    check(&p, "deploy/prod/app.yml", &[ErrorCode::ProtectedPath]);
    check(&p, "DEPLOY/Prod/app.yml", &[ErrorCode::ProtectedPath]);
    check(&p, "deploy/staging/app.yml", &[]);
    check(&p, "data/x.SQLite", &[ErrorCode::ProtectedPath]);
    check(&p, "dist/app.js", &[ErrorCode::ForbiddenPath]);
    check(&p, "src/target/mod.rs", &[]);
    // Built-in protections cannot be removed.
    check(&p, ".env", &[ErrorCode::ProtectedPath]);
    assert_eq!(
        p.protected_by(&RelPath::parse("deploy/prod/a.yml").unwrap())
            .as_deref(),
        Some("deploy/prod/**")
    );

    let only = Policy::from_json(r#"{"extensions": ["rs"]}"#).unwrap();
    check(&only, "a.rs", &[]);
    check(&only, "a.py", &[ErrorCode::ForbiddenPath]);
}

#[test]
fn typed_errors() {
    assert!(matches!(
        Policy::from_json(r#"{"max_action": 1}"#),
        Err(PolicyError::Json { line: 1, .. })
    ));
    assert!(matches!(
        Policy::from_json(r#"{"max_actions": "many"}"#),
        Err(PolicyError::Json { .. })
    ));
    assert!(matches!(
        Policy::from_json("not json"),
        Err(PolicyError::Json { .. })
    ));
    assert_eq!(
        Policy::from_json(r#"{"max_actions": 0}"#).unwrap_err(),
        PolicyError::ZeroLimit {
            field: "max_actions"
        }
    );
    assert!(matches!(
        Policy::from_json(r#"{"protected_globs": ["a/{b"]}"#),
        Err(PolicyError::InvalidGlob { .. })
    ));
    assert!(matches!(
        Policy::from_json(r#"{"add_extensions": ["a/b"]}"#),
        Err(PolicyError::InvalidEntry {
            field: "add_extensions",
            ..
        })
    ));
    assert!(matches!(
        Policy::from_json(r#"{"add_names": [" "]}"#),
        Err(PolicyError::InvalidEntry { .. })
    ));
    let msg = Policy::from_json(r#"{"max_action": 1}"#)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("max_action"), "{msg}");
}
