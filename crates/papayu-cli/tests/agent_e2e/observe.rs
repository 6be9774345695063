//! Traces (and that no API key reaches them), `report`, `memory`, `doctor`.

use serde_json::{Value, json};
use wiremock::{Request, Respond, ResponseTemplate};

use crate::support::*;

#[test]
fn trace_list_shows_the_trace_and_no_file_holds_the_api_key() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let model = Model::start(&[
        read_request("src/lib.rs"),
        change_answer(&sha(LIB_RS.as_bytes())),
    ]);
    let env = [
        ("PAPAYU_TRACE", "1"),
        ("PAPAYU_TRACE_RAW", "1"),
        ("PAPAYU_LLM_API_KEY", API_KEY),
    ];
    let run = project.papayu(&model, &env, &["run", "--yes", "make it 42"]);
    run.expect_code(0);

    // The key was used (so it was there to leak) …
    let received = model.received();
    assert!(!received.is_empty());
    for r in &received {
        let auth = r
            .headers
            .get("authorization")
            .expect("authorization header");
        assert_eq!(auth.to_str().unwrap(), format!("Bearer {API_KEY}"));
    }
    // … and is in no file papayu wrote, nor in its output.
    let files = project.papayu_files();
    assert!(
        files.keys().any(|k| k.starts_with("traces/")),
        "{:?}",
        files.keys()
    );
    for (path, bytes) in &files {
        assert!(
            !String::from_utf8_lossy(bytes).contains("SECRET"),
            "{path} holds the API key"
        );
    }
    assert!(!run.stdout.contains("SECRET") && !run.stderr.contains("SECRET"));

    let traces = project.traces();
    assert_eq!(traces.len(), 1);
    let trace = &traces[0];
    let id = trace["trace_id"].as_str().unwrap();
    assert_eq!(trace["mode"], json!("APPLY"));
    assert_eq!(trace["apply"]["outcome"], json!("applied"));
    assert_eq!(trace["model"], json!("scripted"));
    assert_eq!(trace["context_rounds"], json!(1));

    let list = project.papayu(&model, &env, &["trace", "list"]);
    list.expect_code(0);
    assert!(list.stdout.contains(id), "{list:#?}");
    assert!(list.stdout.contains("APPLY"), "{list:#?}");
    assert!(list.stdout.contains("applied"), "{list:#?}");

    let list_json = project.papayu(&model, &env, &["--json", "trace", "list"]);
    list_json.expect_code(0);
    let doc = list_json.json();
    assert_eq!(doc["ok"], json!(true));
    assert_eq!(doc["traces"].as_array().unwrap().len(), 1, "{doc}");

    let show = project.papayu(&model, &env, &["trace", "show", &id[..13]]);
    show.expect_code(0);
    let shown = show.json();
    assert_eq!(shown["trace_id"], json!(id));
    assert!(!show.stdout.contains("SECRET"));
}

#[test]
fn report_json_counts_plans_applies_repairs_and_errors() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let bad = json!({"actions": [{"kind": "CREATE_FILE", "path": "../x", "content": "x"}], "summary": "s"});
    let model = Model::start(&[
        // plan: a context round, a broken answer, its repair
        read_request("src/lib.rs"),
        json!("Sure! {not json"),
        plan_answer("1) return 42"),
        // apply of the saved plan
        change_answer(&sha(LIB_RS.as_bytes())),
        // run: rejected twice (answer, repair)
        bad.clone(),
        bad,
    ]);
    let env = [("PAPAYU_TRACE", "1")];
    project
        .papayu(&model, &env, &["plan", "make it 42"])
        .expect_code(0);
    project
        .papayu(&model, &env, &["apply", "--yes"])
        .expect_code(0);
    project
        .papayu(&model, &env, &["run", "--yes", "escape"])
        .expect_code(3);

    let report = project.papayu(&model, &env, &["report", "--json"]);
    report.expect_code(0);
    let r = report.json();
    let expect = |field: &str, value: Value| {
        assert_eq!(r[field], value, "{field} in {r:#}");
    };
    expect("ok", json!(true));
    expect("trace_count", json!(3));
    expect("plan_count", json!(1));
    expect("apply_count", json!(2));
    expect("applied_count", json!(1));
    expect("repair_count", json!(2));
    expect("repair_success_count", json!(1));
    expect("repair_success_rate", json!(0.5));
    expect("fallback_count", json!(0));
    expect("error_codes", json!({"ERR_INVALID_PATH": 1}));
    assert!(r["context_avg_chars"].as_f64().unwrap() > 0.0, "{r:#}");

    let recent = project.papayu(&model, &env, &["report", "--json", "--since", "1h"]);
    recent.expect_code(0);
    assert_eq!(recent.json()["trace_count"], json!(3));
    let bad_since = project.papayu(&model, &env, &["report", "--since", "soon"]);
    bad_since.expect_code(2);
}

#[test]
fn memory_set_show_unset_and_the_model_sees_it() {
    let project = Project::new(&[("src/lib.rs", LIB_RS)]);
    let model = Model::start(&[plan_answer("1) nothing")]);
    project
        .papayu(
            &model,
            &[],
            &["memory", "set", "user.preferred_style", "brief"],
        )
        .expect_code(0);
    let set = project.papayu(
        &model,
        &[],
        &[
            "--json",
            "memory",
            "set",
            "project.default_test_command",
            "cargo nextest run",
        ],
    );
    set.expect_code(0);
    assert_eq!(set.json()["ok"], json!(true));

    // The user file lives under XDG_CONFIG_HOME, the project file under .papa-yu/.
    let user_file = project.config_dir().join("papayu/preferences.json");
    let user: Value = serde_json::from_slice(&std::fs::read(&user_file).unwrap()).unwrap();
    assert!(user.to_string().contains("brief"), "{user}");
    assert!(project.root().join(".papa-yu/project.json").is_file());

    let show = project.papayu(&model, &[], &["--json", "memory", "show"]);
    show.expect_code(0);
    let doc = show.json();
    let block = doc["block"].as_str().unwrap();
    assert!(block.contains("brief"), "{doc:#}");
    assert!(block.contains("cargo nextest run"), "{doc:#}");
    let human = project.papayu(&model, &[], &["memory", "show"]);
    human.expect_code(0);
    assert!(
        human.stdout.contains(user_file.to_str().unwrap()),
        "{human:#?}"
    );

    // The model gets the block in its system prompt.
    project
        .papayu(&model, &[], &["plan", "look"])
        .expect_code(0);
    let system = model.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("cargo nextest run"), "{system}");

    let unset = project.papayu(
        &model,
        &[],
        &["--json", "memory", "unset", "project.default_test_command"],
    );
    unset.expect_code(0);
    assert_eq!(unset.json()["removed"], json!(true));
    let after = project.papayu(&model, &[], &["--json", "memory", "show"]);
    assert!(!after.json()["block"].as_str().unwrap().contains("nextest"));

    let unknown = project.papayu(
        &model,
        &[],
        &["memory", "set", "user.favourite_colour", "green"],
    );
    unknown.expect_code(2);
}

/// A llama.cpp-like server: refuses `json_schema` naming `response_format`, answers the rest.
struct RefusesJsonSchema;

impl Respond for RefusesJsonSchema {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        if body["response_format"]["type"] == json!("json_schema") {
            return ResponseTemplate::new(400).set_body_json(json!({"error": {
                "message": "response_format: json_schema is not supported", "type": "invalid_request_error"}}));
        }
        answer_response(req, &json!({"actions": [], "summary": "ok"}).to_string())
    }
}

#[test]
fn doctor_json_detects_the_structured_output_form() {
    let project = Project::new(&[]);
    let model = Model::with(RefusesJsonSchema);
    let env = [("PAPAYU_LLM_API_KEY", API_KEY)];
    let doctor = project.papayu(&model, &env, &["doctor", "--json"]);
    doctor.expect_code(0);
    let doc = doctor.json();
    assert_eq!(doc["ok"], json!(true), "{doc:#}");
    let p = &doc["providers"][0];
    assert_eq!(p["reachable"], json!(true), "{doc:#}");
    assert_eq!(
        p["structured_output"],
        json!("json_object_schema"),
        "{doc:#}"
    );
    assert_eq!(p["fallbacks"][0]["from"], json!("json_schema"), "{doc:#}");
    assert_eq!(p["answer_valid"], json!(true), "{doc:#}");
    assert_eq!(p["api_key_set"], json!(true), "{doc:#}");
    assert!(
        !doctor.stdout.contains("SECRET"),
        "the key is never printed"
    );
    let forms: Vec<Value> = model
        .requests()
        .iter()
        .map(|b| b["response_format"]["type"].clone())
        .collect();
    assert_eq!(forms, vec![json!("json_schema"), json!("json_object")]);

    // Unreachable: exit 1, still one JSON document.
    let dead = Project::new(&[]);
    let mut cmd = dead.command(&model, &[], &["doctor", "--json"]);
    cmd.env("PAPAYU_LLM_API_URL", "http://127.0.0.1:9/v1");
    let run = run_bounded(cmd);
    run.expect_code(1);
    let doc = run.json();
    assert_eq!(doc["ok"], json!(false), "{doc:#}");
    assert_eq!(doc["providers"][0]["reachable"], json!(false), "{doc:#}");

    // Offline: configuration only, no request.
    let before = model.requests().len();
    let offline = project.papayu(&model, &[], &["doctor", "--offline", "--json"]);
    offline.expect_code(0);
    assert_eq!(model.requests().len(), before);
}

#[test]
fn r_verbose_logs_piped_to_a_file_have_no_colour_codes() {
    let project = Project::new(&[]);
    let model = Model::start(&[plan_answer("1) nothing")]);
    let plan = project.papayu(&model, &[], &["-v", "plan", "look"]);
    plan.expect_code(0);
    assert!(plan.stderr.contains("LLM_REQUEST_SENT"), "{plan:#?}");
    assert!(!plan.stderr.contains('\u{1b}'), "{plan:#?}");
}
