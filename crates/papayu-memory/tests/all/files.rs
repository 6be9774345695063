//! Loading and saving the two preference files.

use papayu_memory::{
    Memory, MemoryError, OutputFormat, PreferredStyle, ProjectPrefs, RejectReason, RiskTolerance,
    UserPrefs,
};
use papayu_protocol::ErrorCode;
use serde_json::{Value, json};

use crate::{Dirs, listing};

#[test]
fn missing_files_give_defaults_and_write_nothing() {
    let d = Dirs::new();
    let mut m = d.load();
    assert_eq!(m.user(), &UserPrefs::default());
    assert_eq!(m.project(), &ProjectPrefs::default());
    assert_eq!(m.block(), "");
    assert_eq!(m.save().unwrap(), Vec::<camino::Utf8PathBuf>::new());
    assert!(!d.config.exists());
    assert_eq!(listing(&d.project), Vec::<String>::new());
}

#[test]
fn full_files_load_typed() {
    let d = Dirs::new();
    d.write_user(
        r#"{"preferred_style":"verbose","ask_budget":0,"risk_tolerance":"high",
            "default_language":"rust","output_format":"plan_first"}"#,
    );
    d.write_project(
        r#"{"default_test_command":"cargo test","default_lint_command":"cargo clippy",
            "default_format_command":"cargo fmt","package_manager":"cargo",
            "build_command":"cargo build","src_roots":["src","crates"],"test_roots":["tests"],
            "ci_notes":"CI runs on Linux","log_files":{"app":"logs/app.log"}}"#,
    );
    let m = d.load();
    let u = m.user();
    assert_eq!(u.preferred_style(), Some(PreferredStyle::Verbose));
    assert_eq!(u.ask_budget(), Some(0));
    assert_eq!(u.risk_tolerance(), Some(RiskTolerance::High));
    assert_eq!(u.default_language(), Some("rust"));
    assert_eq!(u.output_format(), Some(OutputFormat::PlanFirst));
    let p = m.project();
    assert_eq!(p.default_test_command(), Some("cargo test"));
    assert_eq!(p.default_lint_command(), Some("cargo clippy"));
    assert_eq!(p.default_format_command(), Some("cargo fmt"));
    assert_eq!(p.package_manager(), Some("cargo"));
    assert_eq!(p.build_command(), Some("cargo build"));
    assert_eq!(
        p.src_roots(),
        Some(&["src".to_owned(), "crates".to_owned()][..])
    );
    assert_eq!(p.test_roots(), Some(&["tests".to_owned()][..]));
    assert_eq!(p.ci_notes(), Some("CI runs on Linux"));
    assert_eq!(
        p.log_files().get("app").map(String::as_str),
        Some("logs/app.log")
    );
}

#[test]
fn set_save_load_round_trip() {
    let d = Dirs::new();
    let mut m = d.load();
    m.set("user.preferred_style", "brief").unwrap();
    m.set("user.ask_budget", "1").unwrap();
    m.set("project.src_roots", "src, lib").unwrap();
    m.set("project.log_files.build", "target/build.log")
        .unwrap();
    let written = m.save().unwrap();
    assert_eq!(written, vec![d.user_file(), d.project_file()]);

    let again = d.load();
    assert_eq!(again.user(), m.user());
    assert_eq!(again.project(), m.project());
    assert_eq!(again.to_json(), m.to_json());
    // Saved with only the set fields, in whitelist order, pretty-printed with a newline.
    let text = fs_err::read_to_string(d.user_file()).unwrap();
    assert_eq!(
        text,
        "{\n  \"preferred_style\": \"brief\",\n  \"ask_budget\": 1\n}\n"
    );
}

#[test]
fn second_save_without_changes_writes_nothing() {
    let d = Dirs::new();
    let mut m = d.load();
    m.set("user.default_language", "go").unwrap();
    assert_eq!(m.save().unwrap().len(), 1);
    assert!(m.save().unwrap().is_empty());
}

#[test]
fn unknown_fields_are_kept_on_save_and_hidden_from_the_model() {
    let d = Dirs::new();
    d.write_user(r#"{"future_setting":{"x":1},"ask_budget":2,"zzz":"keep me"}"#);
    let mut m = d.load();
    assert_eq!(m.user().unknown_fields().len(), 2);
    assert!(!m.block().contains("future_setting"));
    assert!(m.to_json()["user"].get("future_setting").is_none());
    m.set("user.ask_budget", "0").unwrap();
    m.save().unwrap();
    let saved: Value =
        serde_json::from_str(&fs_err::read_to_string(d.user_file()).unwrap()).unwrap();
    assert_eq!(
        saved,
        json!({"ask_budget": 0, "future_setting": {"x": 1}, "zzz": "keep me"})
    );
}

#[test]
fn null_fields_mean_unset() {
    let d = Dirs::new();
    d.write_user(r#"{"preferred_style":null,"ask_budget":1}"#);
    let m = d.load();
    assert_eq!(m.user().preferred_style(), None);
    assert_eq!(m.user().ask_budget(), Some(1));
}

#[test]
fn atomic_save_leaves_no_temp_files() {
    let d = Dirs::new();
    let mut m = d.load();
    for i in 0..3 {
        m.set("project.ci_notes", &format!("note {i}")).unwrap();
        m.set("user.default_language", &format!("lang{i}")).unwrap();
        m.save().unwrap();
    }
    assert_eq!(listing(&d.config.join("papayu")), ["preferences.json"]);
    assert_eq!(listing(&d.project.join(".papa-yu")), ["project.json"]);
    assert_eq!(d.load().project().ci_notes(), Some("note 2"));
}

#[test]
fn failed_save_removes_its_temp_file() {
    // A non-empty directory where the file should be: the rename fails after the temp file
    // was written, and the temp file must not stay behind.
    let d = Dirs::new();
    fs_err::create_dir_all(d.project_file()).unwrap();
    fs_err::write(d.project_file().join("inner"), "x").unwrap();
    let mut m = Memory::load(&d.config, d.project.join("elsewhere")).unwrap();
    m.set("project.ci_notes", "x").unwrap();
    let err = m.project().save(&d.project_file()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Io);
    assert_eq!(listing(&d.project.join(".papa-yu")), ["project.json"]);
}

#[test]
fn project_save_does_not_create_a_missing_project_root() {
    let d = Dirs::new();
    let missing = d.project.join("no-such-project");
    let mut m = Memory::load(&d.config, &missing).unwrap();
    m.set("project.build_command", "make").unwrap();
    let err = m.save().unwrap_err();
    assert!(matches!(err, MemoryError::Io { .. }), "{err:?}");
    assert!(!missing.exists());
}

fn field_error(err: MemoryError) -> (String, String, RejectReason) {
    assert_eq!(err.code(), ErrorCode::InvalidConfig, "{err}");
    let message = err.to_string();
    match err {
        MemoryError::InvalidField {
            path,
            field,
            reason,
        } => {
            assert!(message.contains(path.as_str()), "{message}");
            assert!(message.contains(&field), "{message}");
            (path.into_string(), field, reason)
        }
        other => panic!("expected InvalidField, got {other:?}"),
    }
}

#[test]
fn malformed_user_fields_are_invalid_config_naming_file_and_field() {
    let cases: &[(&str, &str)] = &[
        (r#"{"ask_budget":300}"#, "ask_budget"),
        (r#"{"ask_budget":"1"}"#, "ask_budget"),
        (r#"{"ask_budget":1.5}"#, "ask_budget"),
        (r#"{"ask_budget":-1}"#, "ask_budget"),
        (r#"{"preferred_style":"Brief"}"#, "preferred_style"),
        (r#"{"risk_tolerance":3}"#, "risk_tolerance"),
        (r#"{"output_format":"diff"}"#, "output_format"),
        (r#"{"default_language":""}"#, "default_language"),
        (r#"{"default_language":["rust"]}"#, "default_language"),
    ];
    for (text, field) in cases {
        let d = Dirs::new();
        d.write_user(text);
        let (path, got_field, _) = field_error(d.load_err());
        assert_eq!(&got_field, field, "{text}");
        assert!(path.ends_with("papayu/preferences.json"), "{path}");
    }
}

#[test]
fn malformed_project_fields_are_invalid_config_naming_file_and_field() {
    let cases: &[(&str, &str)] = &[
        (r#"{"default_test_command":42}"#, "default_test_command"),
        (r#"{"src_roots":"src"}"#, "src_roots"),
        (r#"{"src_roots":["src",1]}"#, "src_roots"),
        (r#"{"src_roots":["../outside"]}"#, "src_roots"),
        (r#"{"test_roots":["/abs/tests"]}"#, "test_roots"),
        (r#"{"test_roots":[]}"#, "test_roots"),
        (r#"{"log_files":["a.log"]}"#, "log_files"),
        (
            r#"{"log_files":{"app":"/var/log/app.log"}}"#,
            "log_files.app",
        ),
        (
            r#"{"log_files":{"bad name":"a.log"}}"#,
            "log_files.bad name",
        ),
        (r#"{"ci_notes":"bell\u0007"}"#, "ci_notes"),
    ];
    for (text, field) in cases {
        let d = Dirs::new();
        d.write_project(text);
        let (path, got_field, _) = field_error(d.load_err());
        assert_eq!(&got_field, field, "{text}");
        assert!(path.ends_with(".papa-yu/project.json"), "{path}");
    }
}

#[test]
fn out_of_range_ask_budget_in_file_is_reported_not_truncated() {
    let d = Dirs::new();
    d.write_user(r#"{"ask_budget":300}"#);
    let (_, _, reason) = field_error(d.load_err());
    assert_eq!(
        reason,
        RejectReason::OutOfRange {
            min: 0,
            max: 2,
            got: "300".to_owned()
        }
    );
}

#[test]
fn invalid_json_and_non_objects_are_invalid_config() {
    let d = Dirs::new();
    d.write_project("{\n  \"ci_notes\": \"x\",\n}");
    let err = d.load_err();
    assert_eq!(err.code(), ErrorCode::InvalidConfig);
    match &err {
        MemoryError::Malformed { path, line, .. } => {
            assert_eq!(path, &d.project_file());
            assert_eq!(*line, 3);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("project.json"), "{err}");

    let d = Dirs::new();
    d.write_user("[1, 2]");
    let err = d.load_err();
    assert!(matches!(err, MemoryError::NotAnObject { .. }), "{err:?}");
    assert_eq!(err.code(), ErrorCode::InvalidConfig);
}

/// `examples/preferences.example.json` and `examples/project.example.json` (seed 000's example
/// files) load with every field set and nothing papayu would not read.
#[test]
fn example_files_are_valid_preferences() {
    let examples = camino::Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let u = UserPrefs::load(&examples.join("preferences.example.json")).unwrap();
    assert!(u.unknown_fields().is_empty(), "{:?}", u.unknown_fields());
    assert_eq!(u.preferred_style(), Some(PreferredStyle::Brief));
    assert_eq!(u.ask_budget(), Some(1));
    assert_eq!(u.risk_tolerance(), Some(RiskTolerance::Medium));
    assert_eq!(u.default_language(), Some("python"));
    assert_eq!(u.output_format(), Some(OutputFormat::PlanFirst));
    let p = ProjectPrefs::load(&examples.join("project.example.json")).unwrap();
    assert!(p.unknown_fields().is_empty(), "{:?}", p.unknown_fields());
    assert_eq!(p.default_test_command(), Some("pytest -q"));
    assert_eq!(p.default_lint_command(), Some("ruff check ."));
    assert_eq!(p.default_format_command(), Some("ruff format ."));
    assert_eq!(p.package_manager(), Some("uv"));
    assert_eq!(p.build_command(), Some("uv build"));
    assert_eq!(p.src_roots(), Some(&["src".to_owned()][..]));
    assert_eq!(p.test_roots(), Some(&["tests".to_owned()][..]));
    assert!(p.ci_notes().is_some());
    assert_eq!(p.log_files()["app"], "logs/app.log");
}

/// Seed 000's original app kept `app_data_dir()/papa-yu/preferences.json`: papayu reads it as
/// the lowest-priority source, value by value, and never writes it.
#[test]
fn original_app_preferences_fill_only_what_papayu_leaves_unset() {
    let d = Dirs::new();
    d.write_user(r#"{"preferred_style":"verbose"}"#);
    let data = tempfile::tempdir().unwrap();
    let data = camino::Utf8Path::from_path(data.path()).unwrap();
    let original = data.join(papayu_memory::ORIGINAL_USER_PREFS_FILE);
    let mut m = d.load();
    assert_eq!(
        m.fill_from_original_user_prefs(&original).unwrap(),
        Vec::<String>::new(),
        "a missing file changes nothing"
    );
    std::fs::create_dir_all(original.parent().unwrap()).unwrap();
    let text = r#"{"preferred_style":"brief","ask_budget":2,"risk_tolerance":"осторожно",
        "default_language":"python","output_format":"plan_first","theme":"dark"}"#;
    std::fs::write(&original, text).unwrap();
    let taken = m.fill_from_original_user_prefs(&original).unwrap();
    assert_eq!(
        taken,
        [
            "user.ask_budget",
            "user.default_language",
            "user.output_format"
        ]
    );
    let u = m.user();
    assert_eq!(
        u.preferred_style(),
        Some(PreferredStyle::Verbose),
        "papayu's own file wins"
    );
    assert_eq!(u.ask_budget(), Some(2));
    assert_eq!(u.risk_tolerance(), None, "an invalid value is skipped");
    assert_eq!(u.output_format(), Some(OutputFormat::PlanFirst));
    assert!(u.unknown_fields().is_empty());
    assert_eq!(m.save().unwrap(), Vec::<camino::Utf8PathBuf>::new());
    assert_eq!(std::fs::read_to_string(&original).unwrap(), text);
    std::fs::write(&original, "not json").unwrap();
    let mut fresh = d.load();
    assert!(
        fresh
            .fill_from_original_user_prefs(&original)
            .unwrap()
            .is_empty()
    );
}
