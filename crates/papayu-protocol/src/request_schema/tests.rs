use super::*;

fn shape(edit: EditStyle) -> RequestShape {
    RequestShape {
        edit,
        files: vec!["calc.py".into(), "test_calc.py".into()],
        ..RequestShape::default()
    }
}

#[test]
fn edits_name_only_sent_files_and_carry_only_their_fields() {
    let s = request_schema(&shape(EditStyle::SearchReplace));
    let edit = &s["properties"]["actions"]["items"]["anyOf"][0];
    assert_eq!(
        edit["properties"]["path"]["enum"],
        json!(["calc.py", "test_calc.py"])
    );
    assert_eq!(edit["properties"]["kind"]["enum"], json!(["EDIT_FILE"]));
    assert_eq!(edit["required"], json!(["kind", "path", "edits"]));
    assert_eq!(edit["additionalProperties"], false);
    let e = &edit["properties"]["edits"]["items"];
    assert_eq!(e["required"], json!(["before", "after"]));
    // Creates name any relative path.
    let create = &s["properties"]["actions"]["items"]["anyOf"][1];
    assert_eq!(create["required"], json!(["kind", "path", "content"]));
    assert_eq!(s["required"], json!(["summary", "actions"]));
}

#[test]
fn each_style_has_its_kind() {
    for (style, kind, field) in [
        (EditStyle::WholeFile, "UPDATE_FILE", "content"),
        (EditStyle::UnifiedDiff, "PATCH_FILE", "patch"),
    ] {
        let s = request_schema(&shape(style));
        let a = &s["properties"]["actions"]["items"]["anyOf"][0];
        assert_eq!(a["properties"]["kind"]["enum"], json!([kind]));
        assert!(a["properties"].get(field).is_some());
        assert!(a["properties"].get("base_sha256").is_none());
    }
    let plan = request_schema(&RequestShape {
        apply: false,
        ..shape(EditStyle::SearchReplace)
    });
    assert_eq!(plan["properties"]["actions"]["maxItems"], 0);
}

#[test]
fn without_files_only_creates_are_possible() {
    let s = request_schema(&RequestShape::default());
    let items = &s["properties"]["actions"]["items"];
    assert_eq!(items["properties"]["kind"]["enum"], json!(["CREATE_FILE"]));
}

#[test]
fn a_required_change_rules_out_an_empty_answer() {
    let mut shape = shape(EditStyle::WholeFile);
    let empty = json!({"summary": "NO_CHANGES: fine", "actions": []});
    let one = json!({"summary": "s", "actions": [
        {"kind": "UPDATE_FILE", "path": "calc.py", "content": "x"}]});
    for schema in [request_schema(&shape), compact_schema(&shape)] {
        let v = jsonschema::draft7::new(&schema).unwrap();
        assert!(v.is_valid(&empty) && v.is_valid(&one));
    }
    shape.change_required = true;
    for schema in [request_schema(&shape), compact_schema(&shape)] {
        assert_eq!(schema["properties"]["actions"]["minItems"], 1);
        let v = jsonschema::draft7::new(&schema).unwrap();
        assert!(!v.is_valid(&empty), "an empty answer passed");
        assert!(v.is_valid(&one));
    }
    // A PLAN has no actions, required or not.
    shape.apply = false;
    assert_eq!(
        request_schema(&shape)["properties"]["actions"]["maxItems"],
        0
    );
}

#[test]
fn fill_in_puts_back_what_papayu_knows() {
    let sent = BTreeMap::from([("calc.py".to_owned(), "ab".repeat(32))]);
    let answer = r#"{"summary":"s","actions":[{"kind":"EDIT_FILE","path":"calc.py","edits":[{"before":"a - b","after":"a + b"}]},{"kind":"CREATE_FILE","path":"n.py","content":"x"}]}"#;
    let filled: Value = serde_json::from_str(&fill_in(answer, &sent)).unwrap();
    let a = &filled["actions"][0];
    assert_eq!(a["base_sha256"], "ab".repeat(32));
    assert_eq!(a["edits"][0]["op"], "replace");
    assert_eq!(a["edits"][0]["anchor"], "a - b");
    assert!(filled["actions"][1].get("base_sha256").is_none());
    // What the model wrote stays.
    let own =
        r#"{"actions":[{"kind":"PATCH_FILE","path":"calc.py","base_sha256":"x","patch":"p"}]}"#;
    let kept: Value = serde_json::from_str(&fill_in(own, &sent)).unwrap();
    assert_eq!(kept["actions"][0]["base_sha256"], "x");
    assert_eq!(fill_in("not json", &sent), "not json");
}

#[test]
fn line_numbers_copied_from_the_context_are_taken_off() {
    let sent = BTreeMap::new();
    let answer = r#"{"actions":[{"kind":"EDIT_FILE","path":"c.py","edits":[{"before":"2|    return a - b\n","after":"2|    return a + b\n"}]}]}"#;
    let v: Value = serde_json::from_str(&fill_in(answer, &sent)).unwrap();
    assert_eq!(v["actions"][0]["edits"][0]["before"], "    return a - b\n");
    assert_eq!(v["actions"][0]["edits"][0]["after"], "    return a + b\n");
    assert_eq!(v["actions"][0]["edits"][0]["anchor"], "    return a - b\n");
    // Text that merely has a number and a bar somewhere is left alone.
    assert_eq!(strip_line_numbers("a | b\n12|x\n"), None);
    assert_eq!(strip_line_numbers("1|a\n\n3|c"), Some("a\n\nc".to_owned()));
}

#[test]
fn the_compact_schema_states_no_bounds() {
    let s = compact_schema(&RequestShape {
        delete: true,
        ..shape(EditStyle::SearchReplace)
    });
    let text = s.to_string();
    for bound in ["maxLength", "maxItems", "{0,158}"] {
        assert!(!text.contains(bound), "{bound} in {text}");
    }
    // The kinds and their fields are those of the bounded form.
    let bounded = request_schema(&RequestShape {
        delete: true,
        ..shape(EditStyle::SearchReplace)
    });
    let kinds = |v: &Value| -> Vec<Value> {
        v["properties"]["actions"]["items"]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["required"].clone())
            .collect()
    };
    assert_eq!(kinds(&s), kinds(&bounded));
    assert_eq!(kinds(&s).len(), 3);
}

#[test]
fn answer_tokens_follow_the_request() {
    let plan = RequestShape {
        apply: false,
        ..shape(EditStyle::SearchReplace)
    };
    assert_eq!(answer_tokens(&plan, 1_000_000), PLAN_TOKENS);
    let edit = shape(EditStyle::SearchReplace);
    let small = answer_tokens(&edit, 3_000);
    let large = answer_tokens(&edit, 30_000);
    assert!(small < large, "{small} {large}");
    // Twice the text sent, plus the envelope, a new file and context requests.
    assert_eq!(
        small as usize,
        ENVELOPE_TOKENS + 2_000 + NEW_FILE_TOKENS + CONTEXT_REQUEST_TOKENS
    );
    assert!(answer_tokens(&edit, usize::MAX) > 0);
}

mod property {
    use super::*;
    use crate::ProtocolVersion;
    use proptest::prelude::*;

    const FILES: [&str; 2] = ["calc.py", "src/test_calc.py"];

    fn text() -> impl Strategy<Value = String> {
        // Long texts, quotes, backslashes, newlines and non-ASCII: what JSON escapes.
        prop_oneof![".{0,40}", "[a-z \n\"\\\\{}é🦀]{0,3000}",]
    }

    fn new_path() -> impl Strategy<Value = String> {
        "[a-z][a-z0-9_]{0,12}(/[a-z][a-z0-9_]{0,12}){0,3}\\.(py|rs|md)"
    }

    fn action(style: EditStyle) -> impl Strategy<Value = Value> {
        let file = prop::sample::select(FILES.to_vec());
        let edit = (file.clone(), prop::collection::vec(("\\PC{1,60}", text()), 1..5))
            .prop_map(move |(path, edits)| match style {
                EditStyle::SearchReplace => json!({
                    "kind": "EDIT_FILE", "path": path,
                    "edits": edits.iter().map(|(b, a)| json!({"before": b, "after": a})).collect::<Vec<_>>(),
                }),
                EditStyle::WholeFile => {
                    json!({"kind": "UPDATE_FILE", "path": path, "content": edits[0].1})
                }
                EditStyle::UnifiedDiff => {
                    json!({"kind": "PATCH_FILE", "path": path, "patch": edits[0].1})
                }
            });
        let create = (new_path(), text()).prop_map(
            |(path, content)| json!({"kind": "CREATE_FILE", "path": path, "content": content}),
        );
        let delete = file.prop_map(|path| json!({"kind": "DELETE_FILE", "path": path}));
        prop_oneof![edit, create, delete]
    }

    fn answer(style: EditStyle, apply: bool) -> impl Strategy<Value = Value> {
        let actions = prop::collection::vec(action(style), 0..12);
        let reads = prop::option::of(prop::collection::vec(
            "[a-z][a-z/._]{0,200}".prop_map(|p| json!({"type": "read_file", "path": p})),
            0..3,
        ));
        (text(), actions, reads).prop_map(move |(summary, actions, reads)| {
            let mut v = json!({
                "summary": summary,
                "actions": if apply { actions } else { Vec::new() },
            });
            if let Some(reads) = reads {
                v["context_requests"] = json!(reads);
            }
            v
        })
    }

    fn style() -> impl Strategy<Value = EditStyle> {
        prop_oneof![
            Just(EditStyle::SearchReplace),
            Just(EditStyle::WholeFile),
            Just(EditStyle::UnifiedDiff),
        ]
    }

    fn any_shape() -> impl Strategy<Value = RequestShape> {
        (
            (
                any::<bool>(),
                style(),
                prop::sample::subsequence(FILES.to_vec(), 0..=2),
            ),
            (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        )
            .prop_map(
                |((apply, edit, files), (create, delete, context_requests, papayu_fills))| {
                    RequestShape {
                        apply,
                        edit,
                        files: files.into_iter().map(str::to_owned).collect(),
                        create,
                        delete,
                        context_requests,
                        papayu_fills,
                        ..RequestShape::default()
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Whatever the shape, the root of the compact schema is one object with `summary`
        /// and `actions` required and nothing else allowed, never a union: a converter
        /// (llama-cpp-python's, llama.cpp's) then starts its grammar with `{`, so no
        /// answer decoded under it is a bare array or any other value at the root.
        #[test]
        fn the_compact_schema_has_an_object_at_the_root(shape in any_shape()) {
            let schema = compact_schema(&shape);
            prop_assert_eq!(&schema["type"], "object");
            prop_assert_eq!(&schema["additionalProperties"], false);
            let required = schema["required"].as_array().unwrap();
            prop_assert!(required.contains(&json!("summary")) && required.contains(&json!("actions")));
            for union in ["anyOf", "oneOf", "allOf", "$ref"] {
                prop_assert!(schema.get(union).is_none(), "{union} at the root");
            }
            // Every alternative of an action is itself an object with its kind required.
            if let Some(alternatives) = schema["properties"]["actions"]["items"]["anyOf"].as_array() {
                for a in alternatives {
                    prop_assert_eq!(&a["type"], "object");
                    prop_assert!(a["required"].as_array().unwrap().contains(&json!("kind")));
                }
            }
            let validator = jsonschema::draft7::new(&schema).unwrap();
            for not_an_answer in [json!([]), json!([{"kind": "CREATE_FILE"}]), json!("s"), json!({"actions": []})] {
                prop_assert!(!validator.is_valid(&not_an_answer), "{not_an_answer}");
            }
        }

        /// Every answer of the request's shape, whatever the length of its texts and the
        /// number of its actions, passes the compact schema; filled in, the protocol's own
        /// validation accepts it too (so the generated answers are valid plans).
        #[test]
        fn every_valid_answer_passes_the_compact_schema(
            (style, apply, v) in (style(), any::<bool>())
                .prop_flat_map(|(s, a)| (Just(s), Just(a), answer(s, a)))
        ) {
            let shape = RequestShape {
                apply,
                edit: style,
                files: FILES.iter().map(|f| (*f).to_owned()).collect(),
                delete: true,
                ..RequestShape::default()
            };
            let schema = compact_schema(&shape);
            let validator = jsonschema::draft7::new(&schema).unwrap();
            let errors: Vec<String> =
                validator.iter_errors(&v).map(|e| e.to_string()).collect();
            prop_assert!(errors.is_empty(), "{errors:?}\n{v}");
            if style == EditStyle::SearchReplace {
                let sent: BTreeMap<String, String> =
                    FILES.iter().map(|f| ((*f).to_owned(), "ab".repeat(32))).collect();
                let filled = fill_in(&v.to_string(), &sent);
                let parsed = crate::parse_response(&filled, ProtocolVersion::V3);
                prop_assert!(
                    parsed.is_ok() || v["actions"].as_array().is_some_and(|a| a.len() > crate::MAX_ACTIONS),
                    "{parsed:?}\n{filled}"
                );
            }
        }
    }
}
