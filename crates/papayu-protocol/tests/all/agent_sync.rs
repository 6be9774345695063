//! The agent-sync schema: the committed file equals the generator's output, and the generator
//! describes exactly the fields the types serialise; a document papayu writes validates.

use std::collections::BTreeSet;

use papayu_protocol::agent_sync::{
    AGENT_SYNC_VERSION, AgentSync, Finding, Severity, SyncKind, SyncLast, SyncPlan, SyncProject,
    SyncResult, SyncStatus, render_schema, schema, schema_text,
};
use papayu_protocol::{ContextRequest, ProtocolVersion, Response, parse_value};
use serde_json::{Value, json};

const FIX: &str = "run `cargo xtask codegen` and commit crates/papayu-protocol/schemas/";

fn full() -> AgentSync {
    AgentSync {
        schema_version: AGENT_SYNC_VERSION,
        updated_unix_ms: 1,
        project: SyncProject {
            root: "/p".into(),
            name: "p".into(),
            test_command: Some("cargo test".into()),
        },
        last: Some(SyncLast {
            kind: SyncKind::Plan,
            at_unix_ms: 1,
            goal: Some("fix".into()),
            plan: Some(SyncPlan {
                summary: Some("s".into()),
                steps: vec!["a: b".into()],
            }),
            result: SyncResult {
                status: SyncStatus::Planned,
                code: Some("ERR_X".into()),
                message: Some("m".into()),
                changed_files: vec!["src/a.rs".into()],
            },
            trace_id: Some("t".into()),
        }),
        snyk_findings: vec![Finding {
            title: "XSS".into(),
            details: "d".into(),
            path: Some("src/a.js".into()),
            line: Some(3),
            severity: Severity::High,
            rule_id: Some("javascript/DOMXSS".into()),
            source: "sarif".into(),
        }],
        architecture_summary: Some("layers".into()),
        open_questions: vec!["q".into()],
        proposed_commands: vec!["cargo test".into()],
    }
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn committed_agent_sync_schema_matches_the_generator() {
    assert_eq!(
        schema_text(),
        render_schema(),
        "agent-sync schema drifted; {FIX}"
    );
    assert!(!schema_text().contains('\r'));
}

#[test]
fn agent_sync_fields_in_types_and_schema_agree() {
    let doc = serde_json::to_value(full()).unwrap();
    let s = schema();
    let defs = &s["definitions"];
    let pairs = [
        (&doc, &s["properties"], "root"),
        (&doc["project"], &defs["project"]["properties"], "project"),
        (&doc["last"], &defs["last"]["properties"], "last"),
        (&doc["last"]["plan"], &defs["plan"]["properties"], "plan"),
        (
            &doc["last"]["result"],
            &defs["result"]["properties"],
            "result",
        ),
        (
            &doc["snyk_findings"][0],
            &defs["finding"]["properties"],
            "finding",
        ),
    ];
    for (value, props, name) in pairs {
        assert_eq!(keys(value), keys(props), "{name} drifted; {FIX}");
    }
    let enum_of = |v: &Value| -> Vec<String> {
        v["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_owned())
            .collect()
    };
    for status in SyncStatus::ALL {
        let wire = serde_json::to_value(status).unwrap();
        assert_eq!(wire, json!(status.as_str()));
        assert!(
            enum_of(&defs["result"]["properties"]["status"]).contains(&status.as_str().to_owned())
        );
    }
    for kind in SyncKind::ALL {
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
    }
    for sev in Severity::ALL {
        assert_eq!(serde_json::to_value(sev).unwrap(), json!(sev.as_str()));
        assert_eq!(Severity::parse(sev.as_str()), Some(sev));
    }
}

#[test]
fn written_documents_validate_and_round_trip() {
    let validator = jsonschema::draft7::new(&schema()).unwrap();
    let mut empty = full();
    empty.last = None;
    empty.snyk_findings.clear();
    empty.architecture_summary = None;
    for doc in [full(), empty] {
        let value = serde_json::to_value(&doc).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        let back: AgentSync = serde_json::from_value(value).unwrap();
        assert_eq!(back, doc);
    }
    let mut wrong = serde_json::to_value(full()).unwrap();
    wrong["snyk_findings"][0]["severity"] = json!("urgent");
    assert!(
        !validator.is_valid(&wrong),
        "an unknown severity must not validate"
    );
}

#[test]
fn sarif_levels_map_to_severities() {
    assert_eq!(Severity::parse("error"), Some(Severity::High));
    assert_eq!(Severity::parse("WARNING"), Some(Severity::Medium));
    assert_eq!(Severity::parse("note"), Some(Severity::Low));
    assert_eq!(Severity::parse("none"), Some(Severity::Info));
    assert_eq!(Severity::parse("urgent"), None);
}

#[test]
fn web_search_requests_parse_in_every_version() {
    for version in ProtocolVersion::ALL {
        let answer = json!({
            "actions": [],
            "summary": "look it up",
            "context_requests": [
                {"type": "web_search", "query": "tokio 2 migration", "domains": ["docs.rs"]},
                {"type": "web_search", "query": "serde flatten"}
            ]
        });
        let r: Response = parse_value(answer, version).unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(
            r.context_requests,
            vec![
                ContextRequest::WebSearch {
                    query: "tokio 2 migration".into(),
                    domains: vec!["docs.rs".into()]
                },
                ContextRequest::WebSearch {
                    query: "serde flatten".into(),
                    domains: vec![]
                }
            ]
        );
        let missing =
            json!({"actions": [], "summary": "s", "context_requests": [{"type": "web_search"}]});
        assert!(
            parse_value(missing, version).is_err(),
            "{version}: web_search needs a query"
        );
    }
}
