//! Machine output: the one `{"ok", "code", …}` document of `--json`, the `--json-stream`
//! transcripts of plan, apply and run (their shapes as insta snapshots), and no prompt under
//! either.

use serde_json::{Value, json};

use crate::support::*;

fn lib_project() -> Project {
    Project::new(&[("src/lib.rs", LIB_RS)])
}

/// Every line of stdout as one JSON object (a line that is not fails the test).
fn events(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("a line is not JSON ({e}): {l:?}\n{run:#?}"))
        })
        .collect()
}

/// A transcript's shape: per line its `event`, its `stage` when it has one, and its keys.
/// Values (ids, times, texts) vary between runs; the shape is the contract. `tokens` lines are
/// checked and left out: how many arrive depends on how the answer's chunks are timed.
fn shape(events: &[Value]) -> String {
    for e in events.iter().filter(|e| e["event"] == json!("tokens")) {
        assert!(e["chars"].is_u64(), "{e}");
    }
    events
        .iter()
        .filter(|e| e["event"] != json!("tokens"))
        .map(|e| {
            let keys: Vec<&str> = e
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let tag = e["event"].as_str().unwrap_or("?");
            match e["stage"].as_str() {
                Some(stage) => format!("{tag}/{stage}: {}", keys.join(" ")),
                None => format!("{tag}: {}", keys.join(" ")),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn plan_and_apply_stream_events_ending_in_the_json_document() {
    let project = lib_project();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("Diagnosis: answer() returns 41.\n1) return 42"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);

    let plan = project.papayu(&model, &[], &["plan", "--json-stream", "make it 42"]);
    plan.expect_code(0);
    let lines = events(&plan);
    assert!(lines.iter().all(|e| e["event"].is_string()), "{lines:#?}");
    let last = lines.last().unwrap();
    assert_eq!(last["event"], json!("result"), "{lines:#?}");
    assert_eq!(last["ok"], json!(true), "{last}");
    assert_eq!(last["code"], Value::Null, "{last}");
    insta::assert_snapshot!("plan_stream", shape(&lines));

    let apply = project.papayu(&model, &[], &["apply", "--json-stream", "--yes"]);
    apply.expect_code(0);
    let lines = events(&apply);
    let preview = lines.iter().find(|e| e["event"] == json!("preview"));
    assert!(
        preview.is_some(),
        "the change is shown before it is applied: {lines:#?}"
    );
    let last = lines.last().unwrap();
    assert_eq!(last["event"], json!("result"), "{lines:#?}");
    assert_eq!(last["ok"], json!(true), "{last}");
    assert_eq!(project.tree()["src/lib.rs"], LIB_RS_42.as_bytes());
    insta::assert_snapshot!("apply_stream", shape(&lines));
}

#[test]
fn run_streams_the_preview_and_the_result() {
    let project = lib_project();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    let run = project.papayu(
        &model,
        &[],
        &["run", "--json-stream", "--yes", "make answer() return 42"],
    );
    run.expect_code(0);
    let lines = events(&run);
    let tags: Vec<&str> = lines.iter().filter_map(|e| e["event"].as_str()).collect();
    assert!(tags.contains(&"stage"), "{tags:?}");
    let preview = tags.iter().position(|t| *t == "preview");
    assert!(preview.is_some(), "{tags:?}");
    assert_eq!(tags.last(), Some(&"result"), "{tags:?}");
    let last = lines.last().unwrap();
    assert_eq!(last["ok"], json!(true), "{last}");
    assert!(last["attempts"].is_array(), "the run report: {last}");
    insta::assert_snapshot!("run_stream", shape(&lines));
}

#[test]
fn machine_output_never_prompts_it_asks_for_yes() {
    let project = lib_project();
    let before = project.tree();
    let model = Model::start(&[
        read_request("src/lib.rs"),
        plan_answer("1) return 42"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    project
        .papayu(&model, &[], &["plan", "--json", "make it 42"])
        .expect_code(0);
    let apply = project.papayu(&model, &[], &["apply", "--json"]);
    apply.expect_code(2);
    let doc = apply.json();
    assert_eq!(doc["ok"], json!(false), "{doc}");
    assert_eq!(doc["code"], json!("ERR_CONFIRMATION_REQUIRED"), "{doc}");
    assert!(doc["error"].as_str().unwrap().contains("--yes"), "{doc}");
    assert!(!apply.stderr.contains("[y/N]"), "{apply:#?}");
    assert_tree(&project, &before, &apply);

    let run = project.papayu(&model, &[], &["run", "--json-stream", "make it 42"]);
    run.expect_code(2);
    let lines = events(&run);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["event"], json!("result"));
    assert_eq!(lines[0]["code"], json!("ERR_CONFIRMATION_REQUIRED"));
    assert_tree(&project, &before, &run);
}

#[test]
fn a_json_document_is_one_compact_line_with_ok_and_code_first() {
    let project = lib_project();
    let model = Model::start(&[]);
    let history = project.papayu(&model, &[], &["history", "--json"]);
    history.expect_code(0);
    assert_eq!(history.stdout.lines().count(), 1, "{history:#?}");
    assert!(
        history.stdout.starts_with(r#"{"ok":true,"code":null,"#),
        "{history:#?}"
    );
    let undo = project.papayu(&model, &[], &["undo", "--json"]);
    assert!(
        undo.stdout.starts_with(r#"{"ok":false,"code":"ERR_"#),
        "{undo:#?}"
    );
}

#[test]
fn report_shows_tables_and_a_chart_per_day_and_json_keeps_the_numbers() {
    let project = lib_project();
    let model = Model::start(&[read_request("src/lib.rs"), plan_answer("1) return 42")]);
    project
        .papayu(&model, &[("PAPAYU_TRACE", "1")], &["plan", "make it 42"])
        .expect_code(0);

    let human = project.papayu(&model, &[], &["report"]);
    human.expect_code(0);
    for needle in [
        "metric",
        "plan calls",
        "day (UTC)",
        "calls",
        "repair success",
    ] {
        assert!(human.stdout.contains(needle), "{needle}: {human:#?}");
    }
    // The one day's bar is full: it has the most calls.
    assert!(human.stdout.contains("██████████"), "{human:#?}");
    assert!(
        !human.stdout.contains('{'),
        "no JSON for people: {human:#?}"
    );

    let json = project.papayu(&model, &[], &["report", "--json"]);
    json.expect_code(0);
    let doc = json.json();
    assert_eq!(doc["ok"], json!(true), "{doc}");
    assert_eq!(doc["plan_count"], json!(1), "{doc}");
    assert_eq!(doc["timeline"].as_array().map(Vec::len), Some(1), "{doc}");
}

#[test]
fn doctor_shows_its_configuration_and_providers_as_tables() {
    let project = lib_project();
    let model = Model::start(&[]);
    let human = project.papayu(&model, &[], &["doctor", "--offline"]);
    human.expect_code(0);
    assert!(human.stdout.contains("setting (effective)"), "{human:#?}");
    assert!(human.stdout.contains("structured output"), "{human:#?}");
    assert!(human.stdout.contains('│'), "a table: {human:#?}");
    let json = project.papayu(&model, &[], &["doctor", "--offline", "--json"]);
    json.expect_code(0);
    let doc = json.json();
    assert_eq!(
        (doc["ok"].clone(), doc["code"].clone()),
        (json!(true), Value::Null)
    );
    assert!(doc["providers"].is_array(), "{doc}");
}
