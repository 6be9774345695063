//! The ENGINEERING_MEMORY block.

use papayu_memory::MAX_BLOCK_BYTES;

use crate::Dirs;

#[test]
fn empty_memory_gives_an_empty_block() {
    assert_eq!(Dirs::new().load().block(), "");
}

#[test]
fn block_snapshot() {
    let d = Dirs::new();
    d.write_user(r#"{"preferred_style":"brief","ask_budget":1,"future":"hidden"}"#);
    d.write_project(
        r#"{"test_roots":["tests"],"default_test_command":"pytest -q",
            "default_lint_command":"ruff check .","src_roots":["src"],
            "log_files":{"app":"logs/app.log"}}"#,
    );
    let block = d.load().block();
    insta::assert_snapshot!("block", block);
}

#[test]
fn only_set_fields_appear() {
    let d = Dirs::new();
    let mut m = d.load();
    m.set("project.build_command", "make").unwrap();
    let block = m.block();
    assert!(block.starts_with("ENGINEERING_MEMORY"), "{block}");
    assert!(
        block.contains(r#"{"project":{"build_command":"make"}}"#),
        "{block}"
    );
    for absent in [
        "\"user\"",
        "preferred_style",
        "ask_budget",
        "src_roots",
        "null",
        "log_files",
    ] {
        assert!(!block.contains(absent), "{absent} in {block}");
    }
}

#[test]
fn block_is_deterministic_whatever_the_file_order() {
    let a = Dirs::new();
    a.write_user(r#"{"risk_tolerance":"low","preferred_style":"verbose"}"#);
    a.write_project(r#"{"log_files":{"b":"b.log","a":"a.log"},"ci_notes":"n"}"#);
    let b = Dirs::new();
    b.write_user(r#"{"preferred_style":"verbose","risk_tolerance":"low"}"#);
    b.write_project(r#"{"ci_notes":"n","log_files":{"a":"a.log","b":"b.log"}}"#);
    assert_eq!(a.load().block(), b.load().block());
    assert_eq!(a.load().block(), a.load().block());
}

#[test]
fn oversized_memory_is_cut_to_the_budget_and_says_what_it_left_out() {
    let d = Dirs::new();
    let mut m = d.load();
    let long = "x".repeat(300);
    for key in [
        "project.default_test_command",
        "project.default_lint_command",
        "project.default_format_command",
        "project.package_manager",
        "project.build_command",
        "project.ci_notes",
    ] {
        m.set(key, &long).unwrap();
    }
    let roots: Vec<String> = (0..20)
        .map(|i| format!("dir{i:02}/{}", "y".repeat(40)))
        .collect();
    m.set("project.src_roots", &roots.join(",")).unwrap();
    let block = m.block();
    assert!(block.len() <= MAX_BLOCK_BYTES, "{} bytes", block.len());
    assert!(
        block.contains("Omitted to keep this block under 2 KB: "),
        "{block}"
    );
    assert!(block.contains("project.ci_notes"), "{block}");
    // The most essential field survives.
    assert!(block.contains("default_test_command"), "{block}");
}
