//! A perfect model for one task, over the OpenAI chat-completions wire format on 127.0.0.1
//! (wiremock): it answers an APPLY request with the task's reference fix — reading first any
//! file the fix changes that papayu has not sent — and a PLAN request with a plan.

use std::collections::BTreeMap;

use anyhow::Result;
use regex::Regex;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::bench_run::sha256;
use crate::tasks::Task;

/// The reference fix of a task: the new content of each changed or added file, and the deleted
/// files, with the project's original content of each.
#[derive(Debug, Clone)]
struct Fix {
    /// Path → (original content if the file exists, content after the fix).
    writes: BTreeMap<String, (Option<String>, String)>,
    deletes: Vec<String>,
}

impl Fix {
    fn of(task: &Task) -> Result<Fix> {
        let mut writes = BTreeMap::new();
        let solution = task.solution_dir();
        for (rel, path) in files(&solution)? {
            let after = fs_err::read_to_string(&path)?;
            let original = fs_err::read_to_string(task.project_dir().join(&rel)).ok();
            writes.insert(rel, (original, after));
        }
        Ok(Fix {
            writes,
            deletes: task.solution_deletes.clone(),
        })
    }

    /// The answer to an APPLY request that has sent the files in `sent` (path → sha256).
    fn answer(&self, sent: &BTreeMap<String, String>) -> Value {
        let missing: Vec<&String> = self
            .writes
            .iter()
            .filter(|(p, (original, _))| original.is_some() && !sent.contains_key(*p))
            .map(|(p, _)| p)
            .collect();
        if !missing.is_empty() {
            let requests: Vec<Value> = missing
                .iter()
                .map(|p| json!({"type": "read_file", "path": p, "start_line": 1, "end_line": 100000}))
                .collect();
            return json!({"actions": [], "summary": "I need to read the files the fix changes.", "context_requests": requests});
        }
        let mut actions = Vec::new();
        for (path, (original, after)) in &self.writes {
            match original {
                Some(before) => {
                    let diff = similar::TextDiff::from_lines(before.as_str(), after.as_str())
                        .unified_diff()
                        .context_radius(3)
                        .header(&format!("a/{path}"), &format!("b/{path}"))
                        .to_string();
                    let base = sent
                        .get(path)
                        .cloned()
                        .unwrap_or_else(|| sha256(before.as_bytes()));
                    actions.push(json!({"kind": "PATCH_FILE", "path": path, "base_sha256": base, "patch": diff}));
                }
                None => {
                    actions.push(json!({"kind": "CREATE_FILE", "path": path, "content": after}))
                }
            }
        }
        for path in &self.deletes {
            actions.push(json!({"kind": "DELETE_FILE", "path": path}));
        }
        json!({"actions": actions, "summary": "The reference fix."})
    }
}

fn files(dir: &std::path::Path) -> Result<Vec<(String, std::path::PathBuf)>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs_err::read_dir(&d)? {
            let e = e?;
            let p = e.path();
            if e.file_type()?.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(dir) {
                out.push((rel.to_string_lossy().replace('\\', "/"), p));
            }
        }
    }
    out.sort();
    Ok(out)
}

struct Responder {
    fix: Fix,
    header: Regex,
}

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return ResponseTemplate::new(400).set_body_string("not JSON");
        };
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let text = |m: &Value| m["content"].as_str().unwrap_or_default().to_owned();
        let system = messages.first().map(text).unwrap_or_default();
        let mut sent = BTreeMap::new();
        for m in messages.iter().filter(|m| m["role"] == "user") {
            for c in self.header.captures_iter(&text(m)) {
                sent.insert(c[1].to_owned(), c[2].to_owned());
            }
        }
        let answer = if system.contains("CURRENT MODE: PLAN") {
            json!({"actions": [], "summary": "1) apply the reference fix\nCheck: the task's tests"})
        } else {
            self.fix.answer(&sent)
        };
        completion(&body, &answer.to_string())
    }
}

/// A chat-completions response to the request `body` whose answer is `content` (streamed as one
/// SSE chunk when the request asked for a stream), with a rough token count.
pub fn completion(body: &Value, content: &str) -> ResponseTemplate {
    let input: usize = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["content"].as_str().map_or(0, str::len))
        .sum();
    let usage = json!({"prompt_tokens": input / 4, "completion_tokens": content.len() / 4});
    if body["stream"] == true {
        let chunk = json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": "stop"}], "usage": usage});
        return ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(format!("data: {chunk}\n\ndata: [DONE]\n\n"));
    }
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": usage,
    }))
}

/// The server of one task's perfect model.
pub struct PerfectModel {
    server: MockServer,
}

impl PerfectModel {
    /// Start it on 127.0.0.1.
    pub async fn start(task: &Task) -> Result<PerfectModel> {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Responder {
                fix: Fix::of(task)?,
                header: Regex::new(r"FILE\[([^\]\n]+)\] \(sha256=([0-9a-f]{64})\)")?,
            })
            .mount(&server)
            .await;
        Ok(PerfectModel { server })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        self.server.uri()
    }
}
