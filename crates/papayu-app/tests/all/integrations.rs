//! The integrations in the UI's runs (the same ones the CLI installs) and the Trends tab's
//! commands, against the scripted model and a stub SearXNG on 127.0.0.1.

use papayu_app::api::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::*;

const ARCHITECTURE: &str = "# Architecture\n\nThe answer lives in src/lib.rs (marker ARCH-7F3A).\n";

/// The text of every message of the `n`-th request the model received.
async fn request_text(model: &Model, n: usize) -> String {
    let requests = model.server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[n].body).unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A SearXNG instance (JSON format on) that answers every search with `results`.
async fn searxng(results: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": "q", "number_of_results": 2, "results": results,
            "answers": [], "suggestions": [], "unresponsive_engines": []
        })))
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ui_plan_sends_the_architecture_summary_and_writes_agent_sync() {
    let model = Model::start(&[plan_answer("1) return 42")]).await;
    let f = Fixture::new(
        &[
            ("src/lib.rs", LIB_RS),
            (".papa-yu/architecture.md", ARCHITECTURE),
        ],
        Some(&model),
        &[("PAPAYU_AGENT_SYNC", "1")],
    )
    .await;
    assert_eq!(f.read(".papa-yu/agent-sync.json"), None);
    f.plan("make answer() return 42").await.unwrap();

    let sent = request_text(&model, 0).await;
    assert!(
        sent.contains("ARCH-7F3A"),
        "the architecture summary is in the model's request:\n{sent}"
    );
    let sync: Value = serde_json::from_str(&f.read(".papa-yu/agent-sync.json").unwrap()).unwrap();
    assert_eq!(sync["last"]["kind"], "plan");
    assert_eq!(sync["last"]["goal"], "make answer() return 42");
    assert_eq!(sync["last"]["plan"]["summary"], "1) return 42");
    assert!(
        sync["architecture_summary"]
            .as_str()
            .unwrap()
            .contains("ARCH-7F3A")
    );
    assert_eq!(sync["project"]["root"], f.project.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_sync_off_writes_nothing() {
    let model = Model::start(&[plan_answer("1) return 42")]).await;
    let f = Fixture::new(&[("src/lib.rs", LIB_RS)], Some(&model), &[]).await;
    f.plan("make answer() return 42").await.unwrap();
    assert_eq!(f.read(".papa-yu/agent-sync.json"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ui_plan_can_ask_for_a_web_search() {
    let search = searxng(json!([{
        "url": "https://docs.rs/tokio/latest/tokio/macro.select.html", "title": "select in tokio",
        "content": "Waits on multiple concurrent branches (marker WEB-51C2).",
        "engine": "duckduckgo", "publishedDate": null
    }]))
    .await;
    let model = Model::start(&[
        json!({"actions": [], "summary": "need the docs", "context_requests": [
            {"type": "web_search", "query": "tokio select", "domains": ["docs.rs"]}
        ]}),
        plan_answer("1) use select!"),
    ])
    .await;
    let f = Fixture::new(
        &[("src/lib.rs", LIB_RS)],
        Some(&model),
        &[
            ("PAPAYU_RESEARCH", "1"),
            ("PAPAYU_SEARXNG_URL", &search.uri()),
            ("PAPAYU_RESEARCH_PAGES", "0"),
        ],
    )
    .await;
    let plan = f.plan("wait on two channels").await.unwrap();
    assert_eq!(plan["summary"], "1) use select!");
    assert!(
        request_text(&model, 0).await.contains("web_search"),
        "research on: the system prompt offers web_search"
    );
    let second = request_text(&model, 1).await;
    assert!(second.contains("WEB-51C2"), "the ONLINE block:\n{second}");
    assert!(second.contains("https://docs.rs/tokio/latest/tokio/macro.select.html"));
    let searched = search.received_requests().await.unwrap();
    assert_eq!(searched.len(), 1);
    assert_eq!(
        searched[0]
            .url
            .query_pairs()
            .find(|(k, _)| k == "q")
            .unwrap()
            .1,
        "tokio select site:docs.rs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trends_are_cards_from_the_curated_domains_only() {
    let search = searxng(json!([
        {"url": "https://lucide.dev/blog/lucide-1", "title": "Lucide 1.0",
         "content": "A thousand new icons.", "publishedDate": "2026-05-01T00:00:00"},
        {"url": "https://elsewhere.example/x", "title": "Off the list", "content": "No."}
    ]))
    .await;
    let f = Fixture::new(
        &[],
        None,
        &[
            ("PAPAYU_RESEARCH", "1"),
            ("PAPAYU_SEARXNG_URL", &search.uri()),
            ("PAPAYU_RESEARCH_PAGES", "0"),
            ("PAPAYU_TRENDS_DOMAINS", "lucide.dev,phosphoricons.com"),
        ],
    )
    .await;
    let research = f.app.app_info(NoArgs {}).await.unwrap().research;
    assert!(research.on);
    assert_eq!(research.backend.as_deref(), Some("searxng"));
    assert_eq!(research.problem, None);
    let t = f
        .app
        .trends(TrendsArgs {
            topic: Some("icons".into()),
        })
        .await
        .unwrap();
    assert_eq!(t.topic, "icons");
    assert_eq!(t.domains, ["lucide.dev", "phosphoricons.com"]);
    assert_eq!(
        t.cards,
        [TrendCard {
            title: "Lucide 1.0".into(),
            url: "https://lucide.dev/blog/lucide-1".into(),
            source: "lucide.dev".into(),
            date: Some("2026-05-01T00:00:00".into()),
            summary: "A thousand new icons.".into(),
        }]
    );
    let searched = search.received_requests().await.unwrap();
    assert_eq!(searched.len(), 1);
    assert!(
        searched[0]
            .url
            .query_pairs()
            .any(|(k, v)| k == "q" && v.starts_with("icons latest"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trends_without_research_is_a_config_error_and_sends_nothing() {
    let search = searxng(json!([])).await;
    for env in [
        vec![("PAPAYU_SEARXNG_URL", search.uri())],
        vec![("PAPAYU_RESEARCH", "1".to_owned())],
    ] {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let f = Fixture::new(&[], None, &env).await;
        let err = f.app.trends(TrendsArgs::default()).await.unwrap_err();
        assert_eq!(err.code, "ERR_INVALID_CONFIG", "{env:?}");
        assert!(err.message.contains("PAPAYU_"), "{err:?}");
        let research = f.app.app_info(NoArgs {}).await.unwrap().research;
        assert!(!research.on, "{env:?}");
        assert!(
            err.message.contains(research.problem.as_deref().unwrap()),
            "Settings says what the error says: {research:?} / {err:?}"
        );
    }
    assert_eq!(search.received_requests().await.unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_url_hands_only_http_links_to_the_opener() {
    let dir = tempfile::tempdir().unwrap();
    let argv = dir.path().join("argv");
    let opener = dir.path().join("opener");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n", argv.display()),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&opener).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&opener, perms).unwrap();
    let f = Fixture::new(&[], None, &[("PAPAYU_OPENER", opener.to_str().unwrap())]).await;

    for hostile in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://user:pw@lucide.dev/",
    ] {
        let err = f
            .app
            .open_url(OpenUrlArgs {
                url: hostile.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(err.code, "ERR_CANCELLED", "{hostile}");
    }
    assert!(!argv.exists(), "a refused URL runs nothing");
    let opened = f
        .app
        .open_url(OpenUrlArgs {
            url: "https://lucide.dev/blog/lucide-1".into(),
        })
        .await
        .unwrap();
    assert_eq!(opened.url, "https://lucide.dev/blog/lucide-1");
    assert_eq!(
        std::fs::read_to_string(&argv).unwrap(),
        "https://lucide.dev/blog/lucide-1\n"
    );
}
