//! Per-provider wire conformance: the exact request JSON (snapshotted), headers, and parsing of
//! each dialect's response envelope.

use papayu_llm::{ChatRequest, Message, Provider, ProviderKind, ResponseFormat, Sampling, Usage};
use papayu_protocol::ProtocolVersion;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{base, endpoint_path, ok_body, plan, provider, request};

struct Seen {
    body: Value,
    headers: Vec<(String, String)>,
    completion: papayu_llm::Completion,
}

async fn roundtrip(kind: ProviderKind, request: &ChatRequest) -> Seen {
    let server = MockServer::start().await;
    let answer = plan().to_string();
    Mock::given(method("POST"))
        .and(path(endpoint_path(kind)))
        .respond_with(ResponseTemplate::new(200).set_body_json(ok_body(kind, &answer)))
        .expect(1)
        .mount(&server)
        .await;
    let p = provider(kind, &base(kind, &server.uri()));
    let completion = p.complete(request).await.unwrap();
    let received = server.received_requests().await.unwrap();
    let r = &received[0];
    let mut headers: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(k, _)| {
            [
                "authorization",
                "x-api-key",
                "anthropic-version",
                "content-type",
                "accept",
            ]
            .contains(&k.as_str())
        })
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
        .collect();
    headers.sort();
    Seen {
        body: r.body_json().unwrap(),
        headers,
        completion,
    }
}

fn header<'a>(seen: &'a Seen, name: &str) -> Option<&'a str> {
    seen.headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn openai_request_and_choices() {
    let seen = roundtrip(ProviderKind::OpenAi, &request()).await;
    insta::assert_json_snapshot!("openai_request", seen.body);
    assert_eq!(header(&seen, "authorization"), Some("Bearer test-key-123"));
    assert_eq!(header(&seen, "x-api-key"), None);
    let c = seen.completion;
    assert_eq!(serde_json::from_str::<Value>(&c.text).unwrap(), plan());
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: Some(11),
            output_tokens: Some(7)
        })
    );
    assert_eq!(c.finish_reason.as_deref(), Some("stop"));
    assert_eq!(c.format, ResponseFormat::JsonSchema);
    assert!(c.fallbacks.is_empty());
    assert_eq!(c.retries, 0);
}

#[tokio::test]
async fn openai_compatible_best_effort_has_no_response_format() {
    let seen = roundtrip(ProviderKind::OpenAiCompatible, &request().strict(false)).await;
    insta::assert_json_snapshot!("openai_compatible_best_effort_request", seen.body);
    assert!(seen.body.get("response_format").is_none());
    assert_eq!(seen.completion.format, ResponseFormat::None);
}

#[tokio::test]
async fn ollama_request_and_message() {
    let seen = roundtrip(ProviderKind::Ollama, &request()).await;
    insta::assert_json_snapshot!("ollama_request", seen.body);
    let c = seen.completion;
    assert_eq!(serde_json::from_str::<Value>(&c.text).unwrap(), plan());
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: Some(11),
            output_tokens: Some(7)
        })
    );
    assert_eq!(c.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn anthropic_request_and_tool_use_block() {
    let seen = roundtrip(ProviderKind::Anthropic, &request()).await;
    insta::assert_json_snapshot!("anthropic_request", seen.body);
    assert_eq!(header(&seen, "x-api-key"), Some("test-key-123"));
    assert_eq!(
        header(&seen, "anthropic-version"),
        Some(papayu_llm::ANTHROPIC_VERSION)
    );
    assert_eq!(header(&seen, "authorization"), None);
    let c = seen.completion;
    // The tool input, not the text block before it, is the answer.
    assert_eq!(serde_json::from_str::<Value>(&c.text).unwrap(), plan());
    assert_eq!(
        c.usage,
        Some(Usage {
            input_tokens: Some(11),
            output_tokens: Some(7)
        })
    );
    assert_eq!(c.finish_reason.as_deref(), Some("tool_use"));
}

#[tokio::test]
async fn anthropic_text_blocks_when_no_tool_was_forced() {
    let server = MockServer::start().await;
    let body = serde_json::json!({
        "content": [{ "type": "text", "text": "{\"actions\":[]," }, { "type": "text", "text": "\"summary\":\"x\"}" }],
        "stop_reason": "end_turn", "usage": { "input_tokens": 3, "output_tokens": 4 }
    });
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let p = provider(ProviderKind::Anthropic, &server.uri());
    let c = p.complete(&request().strict(false)).await.unwrap();
    assert_eq!(c.text, "{\"actions\":[],\"summary\":\"x\"}");
    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert!(sent.get("tools").is_none() && sent.get("tool_choice").is_none());
}

#[tokio::test]
async fn large_input_caps_max_tokens_and_secrets_are_redacted_before_sending() {
    let big = "x".repeat(papayu_llm::LARGE_INPUT_CHARS + 1);
    let key = format!("sk-proj-{}", "Ab12".repeat(8));
    let request = ChatRequest::new(vec![Message::user(format!("{big} key={key}"))])
        .protocol(ProtocolVersion::V3);
    let seen = roundtrip(ProviderKind::OpenAiCompatible, &request).await;
    assert_eq!(seen.body["max_tokens"], papayu_llm::LARGE_INPUT_MAX_TOKENS);
    let sent = seen.body["messages"][0]["content"].as_str().unwrap();
    assert!(
        sent.ends_with("key=[REDACTED:openai_project_key]"),
        "{}",
        &sent[sent.len() - 60..]
    );
    assert!(!seen.body.to_string().contains(&key));

    let small = ChatRequest::new(vec![Message::user("hi")]);
    let seen = roundtrip(ProviderKind::OpenAiCompatible, &small).await;
    assert_eq!(seen.body["max_tokens"], papayu_llm::DEFAULT_MAX_TOKENS);
    assert_eq!(seen.body["temperature"], 0.0);
    assert_eq!(seen.body["top_p"], 1.0);
}

#[test]
fn endpoints_are_derived_from_base_urls() {
    use papayu_llm::ProviderConfig;
    let e = |kind, url: &str| ProviderConfig::new(kind, url, "m").endpoint();
    assert_eq!(
        e(ProviderKind::OpenAi, ""),
        "https://api.openai.com/v1/chat/completions"
    );
    assert_eq!(
        e(ProviderKind::OpenAiCompatible, "http://h:1/v1/"),
        "http://h:1/v1/chat/completions"
    );
    assert_eq!(
        e(
            ProviderKind::OpenAiCompatible,
            "http://h:1/v1/chat/completions"
        ),
        "http://h:1/v1/chat/completions"
    );
    assert_eq!(
        e(ProviderKind::Ollama, "http://h:11434"),
        "http://h:11434/api/chat"
    );
    assert_eq!(
        e(ProviderKind::Anthropic, ""),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        e(ProviderKind::Anthropic, "http://h/v1"),
        "http://h/v1/messages"
    );
    assert_eq!(
        ProviderKind::infer_from_url("http://localhost:11434"),
        ProviderKind::Ollama
    );
    assert_eq!(
        ProviderKind::infer_from_url("http://localhost:11434/v1"),
        ProviderKind::OpenAiCompatible
    );
    assert_eq!(
        ProviderKind::infer_from_url("https://api.anthropic.com"),
        ProviderKind::Anthropic
    );
    assert_eq!(
        ProviderKind::infer_from_url("https://api.openai.com/v1"),
        ProviderKind::OpenAi
    );
    assert!("bogus".parse::<ProviderKind>().is_err());
}

#[test]
fn provider_entries_parse_and_keys_never_print() {
    let list = papayu_llm::ProviderEntry::parse_list(
        r#"[{"url":"http://127.0.0.1:11434","model":"llama3"},
            {"kind":"anthropic","url":"https://api.anthropic.com","model":"claude","api_key_env":"ANTHROPIC_API_KEY"}]"#,
    )
    .unwrap();
    assert_eq!(list[0].kind(), ProviderKind::Ollama);
    assert_eq!(list[1].api_key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
    let config = list[1]
        .clone()
        .into_config(Some("sk-ant-api03-secretsecretsecretsecret".into()));
    assert!(!format!("{config:?}").contains("secret"));
    assert!(papayu_llm::ProviderEntry::parse_list("[]").is_err());
    assert!(
        papayu_llm::ProviderEntry::parse_list(r#"[{"url":"u","model":"m","extra":1}]"#).is_err()
    );
}

#[test]
fn json_object_schema_form_spells_nullable_fields_with_any_of() {
    let p = provider(ProviderKind::OpenAiCompatible, "http://127.0.0.1:9/v1");
    let body = p.request_body(&request(), ResponseFormat::JsonObjectWithSchema);
    assert_eq!(body["response_format"]["type"], "json_object");
    let schema = &body["response_format"]["schema"];
    let text = schema.to_string();
    assert!(!text.contains(r#""null"]"#), "a type list survived: {text}");
    let mode = &schema["properties"]["mode"]["anyOf"];
    assert_eq!(mode[0]["enum"], serde_json::json!(["fix-plan", "apply"]));
    assert_eq!(mode[1]["type"], "null");
    let questions = &schema["properties"]["questions"]["anyOf"][0];
    assert_eq!(questions["items"]["type"], "string");
}

#[tokio::test]
async fn a_request_sampled_at_its_own_temperature_carries_it_and_its_seed() {
    let sampling = Sampling {
        temperature: 0.7,
        seed: 4242,
    };
    let sampled = request().sampled(sampling);
    let seen = roundtrip(ProviderKind::OpenAiCompatible, &sampled).await;
    assert_eq!(seen.body["temperature"], 0.7);
    assert_eq!(seen.body["seed"], 4242);
    let seen = roundtrip(ProviderKind::Ollama, &sampled).await;
    assert_eq!(seen.body["options"]["temperature"], 0.7);
    assert_eq!(seen.body["options"]["seed"], 4242);
    // The Messages API has no seed: the temperature alone.
    let seen = roundtrip(ProviderKind::Anthropic, &sampled).await;
    assert_eq!(seen.body["temperature"], 0.7);
    assert!(seen.body.get("seed").is_none(), "{}", seen.body);
    // Unsampled requests stay as configured, with no seed.
    let seen = roundtrip(ProviderKind::OpenAiCompatible, &request()).await;
    assert_eq!(seen.body["temperature"], 0.0);
    assert!(seen.body.get("seed").is_none(), "{}", seen.body);
}
