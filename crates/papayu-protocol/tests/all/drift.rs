//! The committed schemas must equal the generator's output, and the generator must describe
//! exactly the fields the Rust types (de)serialise. Either drift fails with the fix command.

use std::collections::BTreeSet;

use papayu_protocol::schema::{self, SchemaVariant};
use papayu_protocol::{
    ACTION_FIELDS, Action, ActionKind, ContextRequest, Edit, MEMORY_PATCH_KEYS, PlanStep,
    ProposedChanges, ProtocolVersion, ROOT_FIELDS, Response, ResponseMode, parse_value,
};
use serde_json::{Value, json};

const FIX: &str = "run `cargo xtask codegen` and commit crates/papayu-protocol/schemas/";

fn variants() -> impl Iterator<Item = (ProtocolVersion, SchemaVariant)> {
    ProtocolVersion::ALL
        .into_iter()
        .flat_map(|v| [(v, SchemaVariant::Normal), (v, SchemaVariant::Strict)])
}

#[test]
fn committed_schemas_match_the_generator() {
    let mut stale = Vec::new();
    for (version, variant) in variants() {
        if schema::schema_text(version, variant) != schema::render(version, variant) {
            stale.push(schema::file_name(version, variant));
        }
    }
    assert!(
        stale.is_empty(),
        "schemas drifted from the generator: {stale:?}\n{FIX}"
    );
}

#[test]
fn schema_files_are_lf_only_and_hash_is_stable() {
    for (version, variant) in variants() {
        assert!(!schema::schema_text(version, variant).contains('\r'));
    }
    let h = papayu_protocol::schema_hash(ProtocolVersion::V2);
    assert_eq!(h.len(), 64);
    assert_eq!(
        h,
        papayu_protocol::sha256_hex(
            schema::schema_text(ProtocolVersion::V2, SchemaVariant::Normal).as_bytes()
        )
    );
    assert_ne!(h, papayu_protocol::schema_hash(ProtocolVersion::V3));
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// A value of every type with every optional field set.
fn full_action(kind: ActionKind) -> Action {
    Action {
        kind,
        path: "src/lib.rs".into(),
        content: Some("x".into()),
        patch: Some("@@ -1 +1 @@\n-a\n+b\n".into()),
        base_sha256: Some("0".repeat(64)),
        edits: Some(vec![Edit {
            anchor: "a".into(),
            before: "b".into(),
            after: "c".into(),
            occurrence: Some(1),
            context_lines: Some(3),
            ..Edit::default()
        }]),
        start_line: Some(1),
        end_line: Some(2),
        extra: Default::default(),
    }
}

#[test]
fn action_fields_in_types_and_schemas_agree() {
    let serialized = serde_json::to_value(full_action(ActionKind::EditFile)).unwrap();
    let type_fields = keys(&serialized);
    let mut declared: BTreeSet<String> = ACTION_FIELDS.iter().map(|s| s.to_string()).collect();
    declared.extend(["kind".to_owned(), "path".to_owned()]);
    assert_eq!(
        type_fields, declared,
        "Action fields drifted from ACTION_FIELDS; {FIX}"
    );

    let v3 = schema::schema_value(ProtocolVersion::V3, SchemaVariant::Normal);
    assert_eq!(
        keys(&v3["definitions"]["action"]["properties"]),
        declared,
        "v3 action schema drifted; {FIX}"
    );
    let strict = schema::schema_value(ProtocolVersion::V3, SchemaVariant::Strict);
    assert_eq!(
        keys(&strict["properties"]["actions"]["items"]["properties"]),
        declared
    );

    let edit = serde_json::to_value(&full_action(ActionKind::EditFile).edits.unwrap()[0]).unwrap();
    assert_eq!(
        keys(&edit),
        keys(&v3["definitions"]["edit"]["properties"]),
        "Edit drifted; {FIX}"
    );

    for kind in ActionKind::KNOWN {
        for field in kind.fields() {
            assert!(
                ACTION_FIELDS.contains(field),
                "{kind}: {field} not an action field"
            );
        }
    }
}

#[test]
fn root_fields_in_types_and_schemas_agree() {
    let full = Response {
        actions: vec![full_action(ActionKind::CreateFile)],
        summary: Some("s".into()),
        context_requests: vec![ContextRequest::Env],
        memory_patch: Some([("user.ask_budget".to_owned(), json!(1))].into()),
        mode: Some(ResponseMode::FixPlan),
        questions: vec!["q".into()],
        plan: vec![PlanStep {
            step: "a".into(),
            details: "b".into(),
        }],
        proposed_changes: Some(ProposedChanges {
            patch: Some("p".into()),
            actions: Some(vec![]),
            commands_to_run: vec!["t".into()],
        }),
        patch: Some("p".into()),
        commands_to_run: vec!["c".into()],
        verification: vec!["v".into()],
        risks: vec!["r".into()],
        rollback: vec!["b".into()],
        extra: Default::default(),
    };
    let serialized = serde_json::to_value(&full).unwrap();
    let declared: BTreeSet<String> = ROOT_FIELDS.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        keys(&serialized),
        declared,
        "Response fields drifted from ROOT_FIELDS; {FIX}"
    );
    for (version, variant) in variants() {
        let s = schema::schema_value(version, variant);
        let props = match variant {
            SchemaVariant::Normal => &s["definitions"]["response"]["properties"],
            SchemaVariant::Strict => &s["properties"],
        };
        assert_eq!(
            keys(props),
            declared,
            "{version} {variant:?} root drifted; {FIX}"
        );
    }
    let strict_memory = &schema::schema_value(ProtocolVersion::V2, SchemaVariant::Strict)["properties"]
        ["memory_patch"];
    let memory_keys = keys(&strict_memory["properties"]);
    assert_eq!(memory_keys.len(), MEMORY_PATCH_KEYS.len());
    assert_eq!(memory_keys.len(), 13);
}

#[test]
fn every_serialised_type_validates_against_its_version() {
    for version in ProtocolVersion::ALL {
        let actions: Vec<Action> = version
            .kinds()
            .iter()
            .map(|k| {
                let mut a = Action::new(k.clone(), "src/a.rs");
                for f in k.fields() {
                    let full = full_action(k.clone());
                    match *f {
                        "content" => a.content = full.content,
                        "patch" => a.patch = full.patch,
                        "base_sha256" => a.base_sha256 = full.base_sha256,
                        "edits" => a.edits = full.edits,
                        "start_line" => a.start_line = full.start_line,
                        "end_line" => a.end_line = full.end_line,
                        other => panic!("unexpected field {other}"),
                    }
                }
                a
            })
            .collect();
        let response = Response {
            actions: actions.clone(),
            summary: Some("ok".into()),
            context_requests: vec![
                ContextRequest::ReadFile {
                    path: "a".into(),
                    start_line: Some(1),
                    end_line: None,
                },
                ContextRequest::Search {
                    query: "q".into(),
                    glob: Some("*.rs".into()),
                },
                ContextRequest::Logs {
                    source: "check".into(),
                    last_n: Some(5),
                },
                ContextRequest::Env,
            ],
            ..Response::default()
        };
        let value = serde_json::to_value(&response).unwrap();
        let back = parse_value(value, version).unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(back, response, "{version} round trip");
    }
}

/// A strict-mode answer (every field present, unused ones null) validates against the strict
/// schema and parses under the normal one.
#[test]
fn strict_shaped_answers_parse() {
    for version in ProtocolVersion::ALL {
        let strict = schema::schema_value(version, SchemaVariant::Strict);
        let mut action = serde_json::Map::new();
        for key in keys(&strict["properties"]["actions"]["items"]["properties"]) {
            action.insert(key, Value::Null);
        }
        action.insert("kind".into(), json!("CREATE_FILE"));
        action.insert("path".into(), json!("README.md"));
        action.insert("content".into(), json!("# hi\n"));
        let mut root = serde_json::Map::new();
        for key in keys(&strict["properties"]) {
            root.insert(key, Value::Null);
        }
        root.insert("actions".into(), json!([action]));
        root.insert("summary".into(), json!("add readme"));
        let answer = Value::Object(root);
        let validator = jsonschema_validator(&strict);
        assert!(
            validator(&answer),
            "{version}: strict answer does not match the strict schema"
        );
        let parsed = parse_value(answer, version).unwrap();
        assert_eq!(
            parsed.effective_actions()[0].content.as_deref(),
            Some("# hi\n")
        );
    }
}

fn jsonschema_validator(schema: &Value) -> impl Fn(&Value) -> bool {
    let compiled = jsonschema_compile(schema);
    move |v| compiled.is_valid(v)
}

fn jsonschema_compile(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft7::new(schema).unwrap()
}
