//! agent-sync: the document written atomically, valid against the committed schema, keeping
//! what the last operation did not change.

use papayu_integrations::sync;
use papayu_protocol::agent_sync::{AGENT_SYNC_FILE, SyncKind, SyncStatus};

use crate::support::{config, project, write};

#[test]
fn the_document_carries_findings_architecture_and_questions() {
    let p = project();
    write(&p.root, ".papa-yu/architecture.md", "core -> fs");
    write(
        &p.root,
        "scan.sarif",
        include_str!("../fixtures/snyk-code.sarif"),
    );
    let cfg = config(&[
        ("PAPAYU_AGENT_SYNC", "1"),
        ("PAPAYU_SNYK_SARIF", "scan.sarif"),
    ]);
    let mut plan = sync::last(SyncKind::Plan, Some("fix xss".into()), SyncStatus::Planned);
    plan.trace_id = Some("t-1".into());
    let path = sync::write(
        &p.root,
        &cfg,
        plan,
        Some(vec!["Which browser?".into()]),
        Some(vec!["npm test".into()]),
        Some("npm test".into()),
    )
    .expect("written");
    assert_eq!(path, p.root.join(AGENT_SYNC_FILE));
    let text = fs_err::read_to_string(&path).expect("read");
    let value: serde_json::Value = serde_json::from_str(&text).expect("json");
    let schema = papayu_protocol::agent_sync::schema();
    let validator = jsonschema::validator_for(&schema).expect("schema");
    assert!(
        validator.is_valid(&value),
        "valid against the schema: {text}"
    );
    let doc = sync::read(&p.root).expect("document");
    assert_eq!(doc.snyk_findings.len(), 2);
    assert_eq!(doc.architecture_summary.as_deref(), Some("core -> fs"));
    assert_eq!(doc.open_questions, vec!["Which browser?"]);
    assert_eq!(doc.project.test_command.as_deref(), Some("npm test"));

    // An apply keeps the questions and test command it does not know about.
    let apply = sync::last(SyncKind::Apply, Some("fix xss".into()), SyncStatus::Applied);
    sync::write(&p.root, &cfg, apply, None, Some(vec![]), None).expect("written");
    let doc = sync::read(&p.root).expect("document");
    assert_eq!(doc.last.expect("last").kind, SyncKind::Apply);
    assert_eq!(doc.open_questions, vec!["Which browser?"]);
    assert!(doc.proposed_commands.is_empty());
    assert_eq!(doc.project.test_command.as_deref(), Some("npm test"));
    let leftovers: Vec<_> = fs_err::read_dir(p.root.join(".papa-yu"))
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "agent-sync.json" && n != "architecture.md")
        .collect();
    assert!(
        leftovers.is_empty(),
        "no temporary file is left: {leftovers:?}"
    );
}
