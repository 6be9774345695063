//! A recorded model for one task (`bench tasks --run --replay DIR`): over the OpenAI
//! chat-completions wire format on 127.0.0.1 (wiremock), it answers each request for a change
//! with the next raw answer a real model gave in a recorded run of the task, in the order it gave
//! them, whatever the prompt. papayu's readings of answers (fragments, parts, renames, moves…)
//! can so be measured on a model's real answers in seconds, without the model; what it cannot
//! show is how the model would have answered papayu's new feedback. Recordings are a task's
//! traces (`--traces DIR` keeps them, `DIR/<task id>/*.json`) or the compact list
//! `DIR/<task id>.answers.json` that `--extract-answers DIR` writes from them.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// What the recorded model says once its answers run out.
const NO_MORE: &str = "{\"actions\": [], \"summary\": \"The recording holds no more answers.\"}";

/// The raw answers of one recorded run of a task, in the order the model gave them: from
/// `dir/<id>.answers.json` when it exists, else from the traces in `dir/<id>/` (each trace's
/// protocol attempts in order, traces by creation time; traces of changes papayu derived from
/// another — `part_of` — hold no answer of the model's).
pub fn answers(dir: &Path, id: &str) -> Result<Vec<String>> {
    let compact = dir.join(format!("{id}.answers.json"));
    if compact.is_file() {
        let text = fs_err::read_to_string(&compact)?;
        return serde_json::from_str(&text).with_context(|| format!("{}", compact.display()));
    }
    let traces = dir.join(id);
    let mut recorded: Vec<(u64, Vec<String>)> = Vec::new();
    for entry in fs_err::read_dir(&traces)? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let trace: Value = serde_json::from_str(&fs_err::read_to_string(&path)?)
            .with_context(|| format!("{}", path.display()))?;
        if trace["part_of"].is_string() {
            continue;
        }
        let raws: Vec<String> = trace["attempts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["raw"].as_str().map(str::to_owned))
            .collect();
        recorded.push((trace["created_unix_ms"].as_u64().unwrap_or(0), raws));
    }
    recorded.sort_by_key(|(at, _)| *at);
    Ok(recorded.into_iter().flat_map(|(_, r)| r).collect())
}

/// Write `dir/<id>.answers.json` for every task directory of traces under `dir`; the ids
/// written.
pub fn extract(dir: &Path) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let id = entry.file_name().to_string_lossy().into_owned();
        let list = answers(dir, &id)?;
        let text = serde_json::to_string_pretty(&list)?;
        fs_err::write(dir.join(format!("{id}.answers.json")), text + "\n")?;
        ids.push(id);
    }
    ids.sort();
    Ok(ids)
}

struct Responder {
    answers: Mutex<VecDeque<String>>,
}

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return ResponseTemplate::new(400).set_body_string("not JSON");
        };
        let plan_mode = body["messages"][0]["content"]
            .as_str()
            .is_some_and(|system| system.contains("CURRENT MODE: PLAN"));
        let content = if plan_mode {
            json!({"actions": [], "summary": "1) apply the recorded answers"}).to_string()
        } else {
            self.answers
                .lock()
                .ok()
                .and_then(|mut a| a.pop_front())
                .unwrap_or_else(|| NO_MORE.to_owned())
        };
        crate::perfect::completion(&body, &content)
    }
}

/// The recorded model, serving on 127.0.0.1.
pub struct ReplayModel {
    server: MockServer,
}

impl ReplayModel {
    pub async fn start(answers: Vec<String>) -> Result<ReplayModel> {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Responder {
                answers: Mutex::new(answers.into()),
            })
            .mount(&server)
            .await;
        Ok(ReplayModel { server })
    }

    pub fn uri(&self) -> String {
        self.server.uri()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_from_traces_in_order_without_derived_ones() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("py-01");
        fs_err::create_dir_all(&task).unwrap();
        let trace = |at: u64, raws: &[&str], part_of: Option<&str>| {
            let attempts: Vec<Value> = raws.iter().map(|r| json!({"raw": r})).collect();
            json!({"created_unix_ms": at, "attempts": attempts, "part_of": part_of}).to_string()
        };
        fs_err::write(task.join("b.json"), trace(2, &["second"], None)).unwrap();
        fs_err::write(task.join("a.json"), trace(1, &["first", "repaired"], None)).unwrap();
        fs_err::write(
            task.join("c.json"),
            trace(3, &["derived"], Some("hunks 1 of 2")),
        )
        .unwrap();
        fs_err::write(task.join("notes.txt"), "not a trace").unwrap();
        assert_eq!(
            answers(dir.path(), "py-01").unwrap(),
            ["first", "repaired", "second"]
        );
        assert_eq!(extract(dir.path()).unwrap(), ["py-01"]);
        // The compact list is read first once it exists.
        fs_err::remove_dir_all(&task).unwrap();
        assert_eq!(
            answers(dir.path(), "py-01").unwrap(),
            ["first", "repaired", "second"]
        );
    }

    #[test]
    fn the_recorded_model_answers_in_order_then_says_it_has_no_more() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let model = ReplayModel::start(vec!["{\"a\": 1}".into()]).await.unwrap();
            let client = reqwest::Client::new();
            let ask = || async {
                let body =
                    json!({"messages": [{"role": "system", "content": "CURRENT MODE: APPLY"}]});
                let v: Value = client
                    .post(format!("{}/v1/chat/completions", model.uri()))
                    .json(&body)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                v["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            };
            assert_eq!(ask().await, "{\"a\": 1}");
            assert_eq!(ask().await, NO_MORE);
        });
    }
}
