//! Online research against stub Tavily and SearXNG services and stub web pages.

use papayu_context::ContextExtras;
use papayu_integrations::config::SearchBackend;
use papayu_integrations::extras::{Extras, unknown_library};
use papayu_integrations::research::{FetchState, Researcher, extract_html, normalize_domain};
use papayu_integrations::{ResearchError, trends};
use serde_json::json;
use wiremock::matchers::{body_partial_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{config, project, research};

const PAGE: &str = r#"<!doctype html><html><head><title>Serde guide</title>
<meta property="article:published_time" content="2025-03-01T10:00:00Z"></head>
<body><nav><p>Home Docs Blog navigation words serde</p></nav>
<article><h1>Serde derive</h1>
<p>Serde derive generates Serialize and Deserialize implementations for your structs.</p>
<p>Unrelated paragraph about cooking pasta for dinner tonight.</p>
<script>var serde = "tracking";</script></article>
<footer><p>Copyright serde footer</p></footer></body></html>"#;

fn tavily(server: &MockServer) -> SearchBackend {
    SearchBackend::Tavily {
        url: server.uri(),
        key: "tvly-test-key".to_owned(),
    }
}

fn page_mocks() -> Vec<Mock> {
    vec![
        Mock::given(method("GET"))
            .and(path("/robots.txt"))
            .respond_with(ResponseTemplate::new(200).set_body_string(
                "User-agent: papayu\nDisallow: /private\n\nUser-agent: *\nAllow: /\n",
            )),
        Mock::given(method("GET")).and(path("/guide")).respond_with(
            ResponseTemplate::new(200).set_body_raw(PAGE, "text/html; charset=utf-8"),
        ),
    ]
}

#[tokio::test]
async fn tavily_search_fetches_extracts_and_cites() {
    let server = MockServer::start().await;
    let guide = format!("{}/guide", server.uri());
    let private = format!("{}/private/notes", server.uri());
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(header("authorization", "Bearer tvly-test-key"))
        .and(body_partial_json(json!({"max_results": 5, "include_domains": []})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": "serde derive usage",
            "answer": null,
            "images": [],
            "results": [
                {"title": "", "url": guide, "content": "snippet one", "score": 0.9, "raw_content": null},
                {"title": "Private", "url": private, "content": "private snippet", "score": 0.5, "raw_content": null},
                {"title": "Evil", "url": "javascript:alert(1)", "content": "x", "score": 0.4}
            ],
            "response_time": 0.4
        })))
        .expect(2)
        .mount(&server)
        .await;
    for m in page_mocks() {
        m.expect(1).mount(&server).await;
    }
    Mock::given(method("GET"))
        .and(path("/private/notes"))
        .respond_with(ResponseTemplate::new(200).set_body_string("secret"))
        .expect(0)
        .mount(&server)
        .await;
    let researcher = Researcher::new(research(tavily(&server))).expect("configured");
    let r = researcher
        .research("serde derive usage", &[])
        .await
        .expect("research");
    assert_eq!(r.backend, "tavily");
    assert_eq!(r.sources.len(), 2, "the javascript: result is dropped");
    let first = &r.sources[0];
    assert_eq!(first.fetch, FetchState::Fetched);
    assert_eq!(
        first.title, "Serde guide",
        "the page title replaces an empty one"
    );
    assert_eq!(first.published.as_deref(), Some("2025-03-01T10:00:00Z"));
    assert!(
        first.summary.contains("generates Serialize"),
        "{}",
        first.summary
    );
    assert!(!first.summary.contains("pasta"));
    assert_eq!(r.sources[1].fetch, FetchState::RobotsDisallowed);
    assert_eq!(r.sources[1].summary, "private snippet");
    let answer = r.render(2_000);
    assert!(answer.body.contains("[1] Serde guide"));
    assert!(answer.body.contains(&format!("SOURCES:\n[1] {guide}")));
    assert_eq!(answer.sources, vec![guide.clone(), private]);
    assert!(answer.body.chars().count() <= 2_000);

    // The second time the page comes from the cache: robots.txt and the page are asked once
    // (the mocks' `expect(1)`, checked when the server drops).
    let again = researcher
        .research("serde derive", &[])
        .await
        .expect("research");
    assert_eq!(again.sources[0].fetch, FetchState::Cached);
    assert_eq!(again.sources[0].title, "Serde guide");
}

#[tokio::test]
async fn the_diet_caps_the_block_and_keeps_the_sources() {
    let server = MockServer::start().await;
    let results: Vec<_> = (0..5)
        .map(|i| json!({"title": format!("Page {i}"), "url": format!("{}/p{i}", server.uri()), "content": "word ".repeat(400)}))
        .collect();
    Mock::given(method("POST"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": results})))
        .mount(&server)
        .await;
    let mut c = research(tavily(&server));
    c.fetch_pages = 0;
    let r = Researcher::new(c)
        .expect("configured")
        .research("word", &[])
        .await
        .expect("research");
    assert!(r.sources.iter().all(|s| s.fetch == FetchState::NotFetched));
    let answer = r.render(800);
    assert!(
        answer.body.chars().count() <= 800,
        "{}",
        answer.body.chars().count()
    );
    for i in 0..5 {
        assert!(
            answer.body.contains(&format!("/p{i}")),
            "source {i} is cited"
        );
    }
}

#[tokio::test]
async fn include_domains_are_sent_and_enforced() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(body_partial_json(json!({"include_domains": ["docs.rs"]})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [
            {"title": "ok", "url": "https://docs.rs/serde", "content": "a"},
            {"title": "sub", "url": "https://www.docs.rs/x", "content": "b"},
            {"title": "off", "url": "https://evil.example/docs.rs", "content": "c"}
        ]})))
        .expect(1)
        .mount(&server)
        .await;
    let mut c = research(tavily(&server));
    c.fetch_pages = 0;
    let researcher = Researcher::new(c).expect("configured");
    let (_, domains, hits) = researcher
        .search("serde", &["https://docs.rs/".to_owned()])
        .await
        .expect("search");
    assert_eq!(domains, vec!["docs.rs"]);
    let urls: Vec<_> = hits.iter().map(|h| h.url.as_str()).collect();
    assert_eq!(urls, vec!["https://docs.rs/serde", "https://www.docs.rs/x"]);
    let bad = researcher
        .search("serde", &["not a domain".to_owned()])
        .await;
    assert!(matches!(bad, Err(ResearchError::BadDomain { .. })));
}

#[tokio::test]
async fn searxng_json_backend() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .and(query_param("q", "tokio select site:docs.rs"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": "tokio select site:docs.rs",
            "number_of_results": 1,
            "results": [{"url": "https://docs.rs/tokio", "title": "tokio", "content": "select! macro",
                         "engine": "duckduckgo", "engines": ["duckduckgo"], "score": 1.0,
                         "category": "general", "publishedDate": "2025-01-02T00:00:00"}],
            "answers": [], "suggestions": [], "unresponsive_engines": []
        })))
        .expect(1)
        .mount(&server)
        .await;
    let mut c = research(SearchBackend::Searxng { url: server.uri() });
    c.fetch_pages = 0;
    let r = Researcher::new(c)
        .expect("configured")
        .research("tokio select", &["docs.rs".to_owned()])
        .await
        .expect("research");
    assert_eq!(r.backend, "searxng");
    assert_eq!(
        r.sources[0].published.as_deref(),
        Some("2025-01-02T00:00:00")
    );
    assert_eq!(r.sources[0].summary, "select! macro");
}

#[tokio::test]
async fn searxng_without_json_format_says_how_to_fix_it() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(403))
        .mount(&server)
        .await;
    let err = Researcher::new(research(SearchBackend::Searxng { url: server.uri() }))
        .expect("configured")
        .research("q", &[])
        .await
        .expect_err("403");
    assert!(err.to_string().contains("search.formats"), "{err}");
}

#[tokio::test]
async fn service_errors_are_clear() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"detail": {"error": "Unauthorized: missing or invalid API key."}}),
        ))
        .mount(&server)
        .await;
    let err = Researcher::new(research(tavily(&server)))
        .expect("configured")
        .research("q", &[])
        .await
        .expect_err("401");
    assert!(
        matches!(
            err,
            ResearchError::Status {
                status: 401,
                service: "tavily",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("invalid API key"));

    // Nothing listens on a port that was bound and released (wiremock keeps its servers
    // alive in a pool, so a dropped MockServer would still answer).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let uri = format!("http://127.0.0.1:{port}");
    let err = Researcher::new(research(SearchBackend::Tavily {
        url: uri,
        key: "k".into(),
    }))
    .expect("configured")
    .research("q", &[])
    .await
    .expect_err("unreachable");
    assert!(matches!(err, ResearchError::Unreachable { .. }), "{err}");
}

#[tokio::test]
async fn secrets_are_redacted_from_queries() {
    let server = MockServer::start().await;
    let secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    Mock::given(method("POST"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": []})))
        .mount(&server)
        .await;
    let r = Researcher::new(research(tavily(&server)))
        .expect("configured")
        .research(&format!("why does {secret} fail"), &[])
        .await
        .expect("research");
    let sent = server.received_requests().await.expect("recorded");
    let body = String::from_utf8_lossy(&sent[0].body).into_owned();
    assert!(!body.contains(secret), "{body}");
    assert!(!r.query.contains(secret));
}

#[test]
fn off_or_unconfigured_research_sends_nothing() {
    let off = config(&[("PAPAYU_TAVILY_API_KEY", "tvly-x")]);
    assert!(matches!(
        Researcher::new(off.research.clone()),
        Err(ResearchError::Disabled)
    ));
    let extras = Extras::new(project().root.clone(), off);
    assert!(
        extras.web_search("q", &[]).is_none(),
        "no answer without research"
    );
    let none = config(&[("PAPAYU_RESEARCH", "1")]);
    let err = Researcher::new(none.research).expect_err("no backend");
    assert!(matches!(err, ResearchError::NotConfigured { .. }));
    assert!(err.to_string().contains("TAVILY_API_KEY"), "{err}");
}

#[test]
fn web_search_through_context_extras() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .and(path("/search"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [
                {"title": "Axum", "url": format!("{}/axum", server.uri()), "content": "Router and handlers"}
            ]})))
            .mount(&server),
    );
    let cfg = config(&[
        ("PAPAYU_RESEARCH", "1"),
        ("PAPAYU_TAVILY_API_KEY", "tvly-x"),
        ("PAPAYU_TAVILY_URL", &server.uri()),
        ("PAPAYU_RESEARCH_PAGES", "0"),
    ]);
    let extras = Extras::new(project().root.clone(), cfg);
    let answer = extras
        .web_search("axum router", &[])
        .expect("enabled")
        .expect("answer");
    assert!(answer.body.contains("Router and handlers"));
    assert_eq!(answer.sources, vec![format!("{}/axum", server.uri())]);
    assert!(extras.prompt_note().expect("a note").contains("web_search"));
}

#[test]
fn extraction_keeps_content_and_drops_chrome() {
    let page = extract_html(PAGE, true);
    assert_eq!(page.title.as_deref(), Some("Serde guide"));
    assert!(page.text.contains("Serde derive generates"));
    assert!(!page.text.contains("navigation"));
    assert!(!page.text.contains("tracking"));
    assert!(!page.text.contains("Copyright"));
}

#[test]
fn domains_and_import_errors() {
    assert_eq!(
        normalize_domain("https://Docs.RS/serde").as_deref(),
        Some("docs.rs")
    );
    assert_eq!(
        normalize_domain("*.mozilla.org").as_deref(),
        Some("mozilla.org")
    );
    assert_eq!(normalize_domain("localhost"), None);
    assert_eq!(normalize_domain("a b.com"), None);
    assert_eq!(
        unknown_library("ModuleNotFoundError: No module named 'requests'").as_deref(),
        Some("requests")
    );
    assert_eq!(
        unknown_library("Error: Cannot find module 'left-pad'").as_deref(),
        Some("left-pad")
    );
    assert_eq!(unknown_library("Error: Cannot find module './util'"), None);
    assert_eq!(
        unknown_library("error[E0432]: unresolved import `serde_yaml`").as_deref(),
        Some("serde_yaml")
    );
    assert_eq!(unknown_library("assertion failed: left == right"), None);
}

#[tokio::test]
async fn trends_are_cards_from_the_curated_domains() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(body_partial_json(json!({"query": "icons latest", "include_domains": ["lucide.dev"]})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [
            {"title": "Lucide 1.0", "url": "https://lucide.dev/blog/1", "content": "New icons.", "published_date": "2025-05-01"},
            {"title": "Off list", "url": "https://elsewhere.example/x", "content": "No."}
        ]})))
        .expect(1)
        .mount(&server)
        .await;
    let mut c = research(tavily(&server));
    c.fetch_pages = 0;
    let researcher = Researcher::new(c).expect("configured");
    let t = trends::trends(&researcher, Some("icons"), &["lucide.dev".to_owned()])
        .await
        .expect("trends");
    assert_eq!(t.cards.len(), 1);
    assert_eq!(t.cards[0].url, "https://lucide.dev/blog/1");
    assert_eq!(t.cards[0].source, "lucide.dev");
    assert_eq!(t.cards[0].date.as_deref(), Some("2025-05-01"));
    let empty = trends::trends(&researcher, None, &[]).await;
    assert!(matches!(empty, Err(ResearchError::NotConfigured { .. })));
}
