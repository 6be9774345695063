//! Project analysis: languages, size, manifests, test command, findings.

use papayu_integrations::analyze::analyze;

use crate::support::{config, project, write};

#[test]
fn a_small_project_is_described() {
    let p = project();
    write(
        &p.root,
        "package.json",
        r#"{"name":"x","scripts":{"test":"node --test"}}"#,
    );
    write(&p.root, "src/a.js", "let a = 1;\nlet b = 2;\n");
    write(&p.root, "src/b.ts", "export const c = 3;");
    write(&p.root, "node_modules/dep/index.js", "ignored\n");
    write(&p.root, ".gitignore", "node_modules/\n");
    write(
        &p.root,
        "scan.sarif",
        include_str!("../fixtures/snyk-code.sarif"),
    );
    let a = analyze(&p.root, &config(&[("PAPAYU_SNYK_SARIF", "scan.sarif")])).expect("analysed");
    let js = a
        .languages
        .iter()
        .find(|l| l.language == "JavaScript")
        .expect("js");
    assert_eq!(
        (js.files, js.lines),
        (1, 2),
        "node_modules is ignored: {:?}",
        a.languages
    );
    assert!(
        a.languages
            .iter()
            .any(|l| l.language == "TypeScript" && l.lines == 1)
    );
    assert_eq!(
        a.manifests,
        vec![("package.json".to_owned(), "node".to_owned())]
    );
    assert!(a.test_command.is_some(), "npm test is detected");
    assert_eq!(a.findings.len(), 2);
    assert!(a.hot_spots.is_empty());
    assert!(!p.root.join(".papa-yu").exists(), "analysis writes nothing");
    let text = a.render();
    assert!(text.contains("manifests: package.json (node)"), "{text}");
    assert!(analyze(&p.root.join("missing"), &config(&[])).is_err());
}

#[test]
fn goals_files_lines_and_jsonl() {
    use papayu_integrations::BatchError;
    use papayu_integrations::batch::{BatchRow, parse_goals, render_table};
    let goals =
        parse_goals("# fixes\nfix the parser\n\n{\"goal\": \"add a test\"}\n").expect("goals");
    assert_eq!(goals, vec!["fix the parser", "add a test"]);
    assert!(matches!(
        parse_goals("# nothing\n\n"),
        Err(BatchError::Empty)
    ));
    assert!(matches!(
        parse_goals("ok\n{\"task\": 1}"),
        Err(BatchError::Line { line: 2, .. })
    ));
    let rows = vec![
        BatchRow {
            goal: "fix the parser".into(),
            outcome: "verified".into(),
            code: None,
            attempts: 1,
        },
        BatchRow {
            goal: "add a test".into(),
            outcome: "not_solved".into(),
            code: Some("ERR_CHECK_FAILED".into()),
            attempts: 3,
        },
    ];
    let table = render_table(&rows);
    assert!(table.contains("ERR_CHECK_FAILED"), "{table}");
    assert!(table.ends_with("1 of 2 goals succeeded"));
}
