//! A scripted OpenAI-compatible model on 127.0.0.1, temp projects, and an [`App`] wired to both.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use papayu_app::api::*;
use papayu_app::{ApiError, App, AppOptions, Transport};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const LIB_RS: &str = "pub fn answer() -> u32 {\n    41\n}\n";
pub const LIB_RS_42: &str = "pub fn answer() -> u32 {\n    42\n}\n";
pub const LIB_PATCH: &str = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn answer() -> u32 {\n-    41\n+    42\n }\n";

/// The answer as the provider sends it: SSE when streaming was asked for (the app streams).
fn answer(req: &Request, text: &str, delay: Duration) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let t = if body["stream"] == json!(true) {
        let chunk =
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
        let last = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
        ResponseTemplate::new(200).set_body_raw(
            format!("data: {chunk}\n\ndata: {last}\n\ndata: [DONE]\n\n"),
            "text/event-stream",
        )
    } else {
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "x", "object": "chat.completion", "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
        }))
    };
    t.set_delay(delay)
}

struct Script {
    answers: Vec<String>,
    next: AtomicUsize,
    delay: Duration,
}

impl Respond for Script {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        match self.answers.get(i) {
            Some(a) => answer(req, a, self.delay),
            None => ResponseTemplate::new(400).set_body_string("the script has no more answers"),
        }
    }
}

pub struct Model {
    pub server: MockServer,
}

impl Model {
    pub async fn start(answers: &[Value]) -> Model {
        Self::start_delayed(answers, Duration::ZERO).await
    }

    pub async fn start_delayed(answers: &[Value], delay: Duration) -> Model {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Script {
                answers: answers
                    .iter()
                    .map(|a| match a {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect(),
                next: AtomicUsize::new(0),
                delay,
            })
            .mount(&server)
            .await;
        Model { server }
    }

    pub fn url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    pub async fn calls(&self) -> usize {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .len()
    }
}

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub app: App,
    pub project: String,
}

/// A model that answers "create a.txt", a project whose check command is `check`, and that
/// plan's apply started (the model is returned too: it must outlive the job).
pub async fn apply_with_check(check: &str) -> (Model, Fixture, JobStarted) {
    let model = Model::start(&[
        json!({"actions": [{"kind": "CREATE_FILE", "path": "a.txt", "content": "a\n"}]}),
    ])
    .await;
    let project_json = json!({ "default_test_command": check }).to_string();
    let f = Fixture::new(
        &[(".papa-yu/project.json", project_json.as_str())],
        Some(&model),
        &[],
    )
    .await;
    let preview = f.prepare(Some("create a.txt")).await.unwrap();
    let job = f
        .app
        .start_apply(f.apply_args(&preview, &[0]))
        .await
        .unwrap();
    (model, f, job)
}

impl Fixture {
    /// Every event of the job `job` so far, and its state.
    pub async fn status(&self, job: &JobStarted) -> JobStatus {
        self.app
            .job_status(JobStatusArgs {
                job_id: job.job_id.clone(),
                since: 0,
            })
            .await
            .unwrap()
    }

    /// A project with `files`, an app whose environment points at `model` (tracing on), and
    /// the project opened.
    pub async fn new(
        files: &[(&str, &str)],
        model: Option<&Model>,
        env: &[(&str, &str)],
    ) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap().to_owned();
        let project = root.join("project");
        std::fs::create_dir_all(&project).unwrap();
        for (p, text) in files {
            let f = project.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        }
        let mut map: BTreeMap<String, String> = BTreeMap::from([
            ("PAPAYU_TRACE".to_owned(), "1".to_owned()),
            ("PAPAYU_LLM_TIMEOUT_SEC".to_owned(), "20".to_owned()),
        ]);
        if let Some(m) = model {
            map.insert("PAPAYU_LLM_API_URL".into(), m.url());
            map.insert("PAPAYU_LLM_MODEL".into(), "scripted".into());
        }
        for (k, v) in env {
            map.insert((*k).into(), (*v).into());
        }
        let app = App::new(
            AppOptions::new(root.join("config"), Transport::Http)
                .env(map)
                .home_dir(root.clone())
                .key_lookup(|name| (name == "TEST_KEY").then(|| "sk-test-key".to_owned())),
        );
        let view = app
            .open_project(OpenProjectArgs {
                path: project.to_string(),
            })
            .await
            .unwrap();
        Fixture {
            dir,
            app,
            project: view.path,
        }
    }

    pub fn root(&self) -> Utf8PathBuf {
        Utf8PathBuf::from(&self.project)
    }

    pub fn read(&self, p: &str) -> Option<String> {
        std::fs::read_to_string(self.root().join(p)).ok()
    }

    pub async fn wait(&self, started: Result<JobStarted, ApiError>) -> Result<Value, ApiError> {
        let job = started.unwrap();
        tokio::time::timeout(Duration::from_secs(30), self.app.wait(&job.job_id))
            .await
            .expect("the job ended within 30 s")
    }

    pub async fn plan(&self, goal: &str) -> Result<Value, ApiError> {
        self.wait(
            self.app
                .start_plan(PlanArgs {
                    project: self.project.clone(),
                    goal: goal.into(),
                })
                .await,
        )
        .await
    }

    pub async fn prepare(&self, goal: Option<&str>) -> Result<Value, ApiError> {
        self.wait(
            self.app
                .start_prepare_apply(PrepareApplyArgs {
                    project: self.project.clone(),
                    goal: goal.map(str::to_owned),
                })
                .await,
        )
        .await
    }

    pub async fn apply(&self, preview: &Value, selection: &[usize]) -> Result<Value, ApiError> {
        self.wait(
            self.app
                .start_apply(self.apply_args(preview, selection))
                .await,
        )
        .await
    }

    pub fn apply_args(&self, preview: &Value, selection: &[usize]) -> ApplyArgs {
        ApplyArgs {
            project: self.project.clone(),
            preview_id: preview["preview_id"].as_str().unwrap().to_owned(),
            selection: selection.to_vec(),
            confirmed_deletes: false,
        }
    }

    pub fn undo_args(&self) -> UndoArgs {
        UndoArgs {
            project: self.project.clone(),
            force: false,
        }
    }

    pub fn project_args(&self) -> ProjectArgs {
        ProjectArgs {
            project: self.project.clone(),
        }
    }
}

pub fn sha(text: &str) -> String {
    papayu_protocol::sha256_hex(text.as_bytes())
}

pub fn plan_answer(summary: &str) -> Value {
    json!({"actions": [], "summary": summary, "risks": ["none really"], "questions": ["ok?"]})
}

pub fn read_request(path: &str) -> Value {
    json!({"actions": [], "summary": "need the file", "context_requests": [{"type": "read_file", "path": path}]})
}

/// The preview entry of `path` (the engine orders files by path, not by action).
pub fn file<'a>(preview: &'a Value, path: &str) -> &'a Value {
    preview["preview"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no preview file {path}"))
}
