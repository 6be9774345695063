//! The integrations' configuration: everything off by default, keys never shown, invalid
//! values named.

use std::collections::BTreeMap;

use papayu_integrations::IntegrationsConfig;
use papayu_integrations::config::SearchBackend;

use crate::support::config;

#[test]
fn everything_is_off_by_default() {
    let c = config(&[]);
    assert!(!c.research.enabled);
    assert!(c.research.backend.is_none());
    assert!(!c.snyk.sync);
    assert!(!c.agent_sync);
    assert!(!c.automation.enabled);
    assert!(!c.trends_domains.is_empty(), "the curated design domains");
    assert_eq!(c.architecture.path, ".papa-yu/architecture.md");
}

#[test]
fn backends_and_keys() {
    let env = BTreeMap::from([("PAPAYU_RESEARCH".to_owned(), "1".to_owned())]);
    let c = IntegrationsConfig::from_env(&env, &|name| {
        (name == "TAVILY_API_KEY").then(|| "tvly-secret".to_owned())
    })
    .expect("valid");
    assert!(
        matches!(c.research.backend, Some(SearchBackend::Tavily { ref key, .. }) if key == "tvly-secret")
    );
    let shown = serde_json::to_string(&c.snapshot()).expect("json");
    assert!(!shown.contains("tvly-secret"), "{shown}");
    assert!(shown.contains("<set>"));

    let c = config(&[
        ("PAPAYU_RESEARCH", "1"),
        ("PAPAYU_SEARXNG_URL", "http://127.0.0.1:8888/"),
    ]);
    assert_eq!(
        c.research.backend,
        Some(SearchBackend::Searxng {
            url: "http://127.0.0.1:8888".to_owned()
        })
    );
    let c = config(&[("PAPAYU_RESEARCH_BACKEND", "tavily")]);
    assert!(c.research.backend.is_none());
    assert!(
        c.research
            .backend_problem
            .expect("why")
            .contains("TAVILY_API_KEY")
    );
}

#[test]
fn invalid_values_name_their_variable() {
    for (k, v) in [
        ("PAPAYU_RESEARCH", "maybe"),
        ("PAPAYU_RESEARCH_BACKEND", "google"),
        ("PAPAYU_SEARXNG_URL", "file:///x"),
        ("PAPAYU_RESEARCH_MAX_RESULTS", "0"),
        ("PAPAYU_RESEARCH_DOMAINS", "docs.rs, not a domain"),
        ("PAPAYU_SNYK_ORG_ID", "../x"),
        ("PAPAYU_AUTOMATION_ALLOW", "git status, sh"),
    ] {
        let env = BTreeMap::from([(k.to_owned(), v.to_owned())]);
        let err = IntegrationsConfig::from_env(&env, &|_| None).expect_err(k);
        assert!(err.to_string().contains(k), "{k}: {err}");
    }
    let c = config(&[("PAPAYU_AUTOMATION_ALLOW", "")]);
    assert!(
        c.automation.allow.names().is_empty(),
        "an empty allow-list allows nothing"
    );
}
