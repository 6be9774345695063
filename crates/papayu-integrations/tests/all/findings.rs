//! Snyk Code findings from a stub REST API (JSON:API, paginated, versioned) and from a SARIF
//! fixture.

use papayu_integrations::FindingsError;
use papayu_integrations::findings::{self, StoredFindings, fetch_snyk, import_sarif, parse_sarif};
use papayu_protocol::agent_sync::Severity;
use serde_json::json;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{config, project, write};

const SARIF: &str = include_str!("../fixtures/snyk-code.sarif");

fn issue(
    id: &str,
    title: &str,
    file: &str,
    line: u64,
    severity: &str,
    status: &str,
) -> serde_json::Value {
    json!({
        "id": id,
        "type": "issue",
        "attributes": {
            "title": title,
            "description": format!("{title} in {file}"),
            "effective_severity_level": severity,
            "status": status,
            "ignored": false,
            "key": format!("rule-{id}"),
            "type": "code",
            "created_at": "2025-01-01T00:00:00Z",
            "coordinates": [{"representations": [{"sourceLocation": {
                "file": file,
                "region": {"start": {"line": line, "column": 1}, "end": {"line": line, "column": 9}}
            }}]}],
            "classes": [{"id": "CWE-79", "source": "CWE", "type": "weakness"}]
        },
        "relationships": {"organization": {"data": {"id": "org-1", "type": "organization"}}}
    })
}

#[tokio::test]
async fn snyk_rest_issues_are_paginated_and_versioned() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/rest/orgs/org-1/issues"))
        .and(query_param("version", "2024-10-15"))
        .and(query_param("type", "code"))
        .and(query_param("scan_item.id", "proj-9"))
        .and(query_param("scan_item.type", "project"))
        .and(query_param("starting_after", "cursor-1"))
        .and(header("authorization", "token snyk-secret"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "jsonapi": {"version": "1.0"},
            "data": [issue("b", "SQL Injection", "db.py", 40, "critical", "open")],
            "links": {"self": "/orgs/org-1/issues?version=2024-10-15&starting_after=cursor-1"}
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/orgs/org-1/issues"))
        .and(query_param("limit", "100"))
        .and(header("accept", "application/vnd.api+json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "jsonapi": {"version": "1.0"},
            "data": [
                issue("a", "Cross-site Scripting (XSS)", "src/app.js", 12, "high", "open"),
                issue("r", "Fixed already", "src/old.js", 1, "low", "resolved")
            ],
            "links": {"next": "/rest/orgs/org-1/issues?version=2024-10-15&type=code&scan_item.id=proj-9&scan_item.type=project&starting_after=cursor-1"}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let cfg = config(&[
        ("PAPAYU_SNYK_SYNC", "1"),
        ("PAPAYU_SNYK_TOKEN", "snyk-secret"),
        ("PAPAYU_SNYK_ORG_ID", "org-1"),
        ("PAPAYU_SNYK_PROJECT_ID", "proj-9"),
        ("PAPAYU_SNYK_API_URL", &format!("{}/rest", server.uri())),
    ]);
    let found = fetch_snyk(&cfg.snyk).await.expect("issues");
    assert_eq!(found.len(), 2, "the resolved issue is left out: {found:?}");
    assert_eq!(found[0].title, "Cross-site Scripting (XSS)");
    assert_eq!(found[0].path.as_deref(), Some("src/app.js"));
    assert_eq!(found[0].line, Some(12));
    assert_eq!(found[0].severity, Severity::High);
    assert_eq!(found[0].rule_id.as_deref(), Some("rule-a"));
    assert_eq!(found[0].source, "snyk-api");
    assert_eq!(found[1].severity, Severity::Critical);
}

#[tokio::test]
async fn snyk_errors_and_foreign_next_links() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/rest/orgs/bad-org/issues"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "jsonapi": {"version": "1.0"},
            "errors": [{"status": "404", "detail": "Org bad-org was not found"}]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/rest/orgs/org-2/issues"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [], "links": {"next": "https://attacker.example/steal"}
        })))
        .mount(&server)
        .await;
    let api = format!("{}/rest", server.uri());
    let cfg = |org: &str| {
        config(&[
            ("PAPAYU_SNYK_SYNC", "1"),
            ("PAPAYU_SNYK_TOKEN", "t"),
            ("PAPAYU_SNYK_ORG_ID", org),
            ("PAPAYU_SNYK_API_URL", &api),
        ])
    };
    let err = fetch_snyk(&cfg("bad-org").snyk).await.expect_err("404");
    assert!(matches!(err, FindingsError::Status { status: 404, .. }));
    assert!(
        err.to_string().contains("Org bad-org was not found"),
        "{err}"
    );
    let err = fetch_snyk(&cfg("org-2").snyk)
        .await
        .expect_err("foreign link");
    assert!(err.to_string().contains("not followed"), "{err}");
}

#[tokio::test]
async fn unconfigured_snyk_sends_nothing() {
    let off = config(&[("PAPAYU_SNYK_TOKEN", "t"), ("PAPAYU_SNYK_ORG_ID", "o")]);
    let err = fetch_snyk(&off.snyk).await.expect_err("off");
    assert!(err.to_string().contains("PAPAYU_SNYK_SYNC"), "{err}");
    let no_org = config(&[("PAPAYU_SNYK_SYNC", "1"), ("PAPAYU_SNYK_TOKEN", "t")]);
    let err = fetch_snyk(&no_org.snyk).await.expect_err("no org");
    assert!(matches!(err, FindingsError::NotConfigured { .. }));
    assert!(err.to_string().contains("PAPAYU_SNYK_ORG_ID"), "{err}");
}

#[test]
fn sarif_fixture_imports_offline() {
    let p = project();
    let found = parse_sarif(SARIF, &p.root).expect("valid SARIF");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].title, "Cross-site Scripting (XSS)");
    assert_eq!(found[0].path.as_deref(), Some("src/app main.js"));
    assert_eq!(found[0].line, Some(12));
    assert_eq!(found[0].severity, Severity::High);
    assert_eq!(found[0].rule_id.as_deref(), Some("javascript/DOMXSS"));
    assert!(found[0].details.contains("innerHTML"));
    assert_eq!(
        found[1].title, "Hardcoded Secret",
        "the rule is found by id"
    );
    assert_eq!(
        found[1].severity,
        Severity::Low,
        "no level: the rule's default, note"
    );
    assert_eq!(found[1].source, "sarif");
    let abs = SARIF.replace(
        "config/keys.js",
        &format!("file://{}/config/keys.js", p.root),
    );
    let found = parse_sarif(&abs, &p.root).expect("valid SARIF");
    assert_eq!(found[1].path.as_deref(), Some("config/keys.js"));
    assert!(parse_sarif(r#"{"version":"1.0.0","runs":[]}"#, &p.root).is_err());
    assert!(parse_sarif("not json", &p.root).is_err());
}

#[test]
fn findings_block_stored_and_configured_sarif() {
    let p = project();
    write(&p.root, "reports/snyk.sarif", SARIF);
    let err = import_sarif(&p.root, "missing.sarif".into()).expect_err("missing");
    assert!(matches!(err, FindingsError::Read { .. }));
    let cfg = config(&[("PAPAYU_SNYK_SARIF", "reports/snyk.sarif")]);
    let mut stored = StoredFindings {
        source: "snyk-api".into(),
        findings: parse_sarif(SARIF, &p.root).expect("sarif"),
        ..StoredFindings::default()
    };
    stored.findings[0].source = "snyk-api".into();
    findings::store(&p.root, &stored).expect("stored");
    let known = findings::known(&p.root, &cfg.snyk);
    assert_eq!(
        known.len(),
        3,
        "stored and SARIF findings, exact duplicates removed"
    );
    assert_eq!(known[0].severity, Severity::High);
    let block = findings::block(&known, &["config/keys.js".to_owned()], 20).expect("a finding");
    assert!(
        block.body.contains("config/keys.js:3 Hardcoded Secret"),
        "{}",
        block.body
    );
    assert!(!block.body.contains("app main.js"));
    assert!(findings::block(&known, &["other.rs".to_owned()], 20).is_none());
}
