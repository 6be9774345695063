//! Scripted models on 127.0.0.1 and temp projects.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_agent::{Agent, AgentConfig};
use papayu_llm::{HttpProvider, ProviderConfig, ProviderKind, RetryPolicy};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A scripted answer that is no answer: a 2xx whose body lacks `choices` (ERR_LLM_BAD_RESPONSE).
pub const SPOILED: &str = "<spoiled answer>";

pub const LIB_RS: &str = "pub fn answer() -> u32 {\n    41\n}\n";
pub const LIB_PATCH: &str = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn answer() -> u32 {\n-    41\n+    42\n }\n";
pub const LIB_RS_42: &str = "pub fn answer() -> u32 {\n    42\n}\n";

struct Script {
    answers: Vec<String>,
    next: AtomicUsize,
}

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        match self.answers.get(i) {
            // A 2xx without the envelope the API promises: the provider's BadResponse.
            Some(a) if a == SPOILED => {
                ResponseTemplate::new(200).set_body_json(json!({"unexpected": true}))
            }
            Some(a) => ResponseTemplate::new(200).set_body_json(json!({
                "choices": [{"index": 0, "message": {"role": "assistant", "content": a}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}
            })),
            None => ResponseTemplate::new(400).set_body_string("the script has no more answers"),
        }
    }
}

/// A model that answers the scripted texts in order.
pub struct Model {
    pub server: MockServer,
}

impl Model {
    pub async fn start(answers: &[Value]) -> Model {
        let texts = answers
            .iter()
            .map(|a| match a {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Script {
                answers: texts,
                next: AtomicUsize::new(0),
            })
            .mount(&server)
            .await;
        Model { server }
    }

    pub fn provider(&self) -> Arc<HttpProvider> {
        let mut c = ProviderConfig::new(
            ProviderKind::OpenAiCompatible,
            format!("{}/v1", self.server.uri()),
            "scripted",
        )
        .with_timeout(Duration::from_secs(10));
        c.retry = RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        };
        Arc::new(HttpProvider::new(c).unwrap())
    }

    /// The JSON bodies the model received, in order.
    pub async fn requests(&self) -> Vec<Value> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| serde_json::from_slice(&r.body).unwrap())
            .collect()
    }
}

/// The messages of a request body.
pub fn messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new(files: &[(&str, &[u8])]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for (p, bytes) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        Project { dir }
    }

    pub fn root(&self) -> &Utf8Path {
        Utf8Path::from_path(self.dir.path()).unwrap()
    }

    pub fn config_dir(&self) -> Utf8PathBuf {
        self.root().join(".test-config")
    }

    pub fn read(&self, p: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(p)).unwrap()
    }

    pub fn agent(&self, model: &Model, env: &[(&str, &str)]) -> Agent {
        let map: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let config = AgentConfig::from_env_map(&map).unwrap();
        Agent::new(config, self.root(), self.config_dir(), model.provider()).unwrap()
    }

    pub fn traces(&self) -> Vec<papayu_agent::trace::TraceRecord> {
        papayu_agent::trace::load_traces(self.root())
            .unwrap()
            .0
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }
}

pub fn sha(bytes: &[u8]) -> String {
    papayu_protocol::sha256_hex(bytes)
}

pub fn plan_answer(summary: &str) -> Value {
    json!({"actions": [], "summary": summary})
}

pub fn read_request(path: &str) -> Value {
    json!({"actions": [], "summary": "I need to read the file first.", "context_requests": [{"type": "read_file", "path": path}]})
}

pub fn patch_answer(base: &str) -> Value {
    json!({"actions": [{"kind": "PATCH_FILE", "path": "src/lib.rs", "base_sha256": base, "patch": LIB_PATCH}], "summary": "answer is 42"})
}
