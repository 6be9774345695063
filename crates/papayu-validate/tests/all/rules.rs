//! Every SPEC §4 rule with positive and negative cases, driven through `check_text`.

use std::collections::BTreeSet;

use papayu_protocol::{ErrorCode, ProtocolVersion, parse_document};
use papayu_validate::{
    Context, Mode, Policy, RelPath, check_text, find_placeholder, validate, validate_document,
};
use serde_json::json;

use crate::common::{check, check_with, one, v2, v3};

const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const DIFF: &str =
    "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,2 @@\n fn a() {}\n-fn b() {}\n+fn c() {}\n";

fn create(path: &str, content: &str) -> serde_json::Value {
    json!({"kind": "CREATE_FILE", "path": path, "content": content})
}

fn many(actions: Vec<serde_json::Value>) -> String {
    json!({"actions": actions, "summary": "s"}).to_string()
}

#[test]
fn kinds() {
    check(
        &one(json!({"kind": "CREATE_DIR", "path": "src"})),
        &v2(),
        &[],
    );
    check(
        &one(json!({"kind": "MOVE_FILE", "path": "src/a.rs"})),
        &v2(),
        &["0:ERR_UNKNOWN_KIND"],
    );
    check(
        &one(json!({"path": "src/a.rs", "content": "x"})),
        &v2(),
        &["0:ERR_UNKNOWN_KIND"],
    );
    check(
        &one(json!({"kind": "create_file", "path": "a.rs", "content": "x"})),
        &v2(),
        &["0:ERR_UNKNOWN_KIND"],
    );
    let edit = json!({"kind": "EDIT_FILE", "path": "src/a.rs", "base_sha256": SHA,
        "edits": [{"op": "replace", "anchor": "fn a", "before": "1", "after": "2"}]});
    check(&one(edit.clone()), &v3(), &[]);
    check(&one(edit), &v2(), &["0:ERR_UNKNOWN_KIND"]);
    let patch =
        json!({"kind": "PATCH_FILE", "path": "src/lib.rs", "patch": DIFF, "base_sha256": SHA});
    check(&one(patch.clone()), &v2(), &[]);
    // Seed 001 §B: REPLACE_RANGE is a v2 kind, with its own fields only.
    let range = json!({"kind": "REPLACE_RANGE", "path": "src/a.rs", "start_line": 1, "end_line": 2,
        "content": "x\n", "base_sha256": SHA});
    check(&one(range.clone()), &v2(), &[]);
    let mut foreign = range.clone();
    foreign["patch"] = json!(DIFF);
    check(&one(foreign), &v2(), &["0:ERR_FIELD_NOT_ALLOWED"]);
    check(
        &json!([range]).to_string(),
        &Context::new(ProtocolVersion::V1),
        &["0:ERR_UNKNOWN_KIND"],
    );
    check(
        &json!([patch]).to_string(),
        &Context::new(ProtocolVersion::V1),
        &["0:ERR_UNKNOWN_KIND"],
    );
    // Path rules still run on an action of unknown kind.
    check(
        &one(json!({"kind": "NOPE", "path": "../x"})),
        &v2(),
        &["0:ERR_INVALID_PATH", "0:ERR_UNKNOWN_KIND"],
    );
}

#[test]
fn unknown_kind_pointer_names_the_kind_field() {
    let r = check_text(
        &one(json!({"kind": "X", "path": "a.rs"})),
        &v2(),
        &Policy::default(),
    );
    assert_eq!(
        r.violations()[0].pointer.as_deref(),
        Some("/actions/0/kind")
    );
}

#[test]
fn fields_not_belonging_to_the_kind() {
    let bad = json!({"kind": "CREATE_FILE", "path": "a.rs", "content": "x", "patch": DIFF});
    check(&one(bad.clone()), &v2(), &["0:ERR_FIELD_NOT_ALLOWED"]);
    check(&one(bad.clone()), &v3(), &["0:ERR_FIELD_NOT_ALLOWED"]);
    check(
        &json!([bad]).to_string(),
        &Context::new(ProtocolVersion::V1),
        &[],
    );
    check(
        &one(json!({"kind": "DELETE_FILE", "path": "a.rs", "content": "x"})),
        &v2(),
        &["0:ERR_FIELD_NOT_ALLOWED"],
    );
    check(
        &one(json!({"kind": "DELETE_FILE", "path": "a.rs", "color": "red"})),
        &v3(),
        &["0:ERR_FIELD_NOT_ALLOWED"],
    );
    let r = check_text(&one(bad), &v2(), &Policy::default());
    assert_eq!(
        r.violations()[0].pointer.as_deref(),
        Some("/actions/0/patch")
    );
}

#[test]
fn content_required() {
    check(
        &one(json!({"kind": "CREATE_FILE", "path": "a.rs"})),
        &v2(),
        &["0:ERR_CONTENT_REQUIRED"],
    );
    check(
        &one(json!({"kind": "UPDATE_FILE", "path": "a.rs"})),
        &v2(),
        &["0:ERR_CONTENT_REQUIRED"],
    );
    check(&one(create("a.rs", "")), &v2(), &[]);
    check(&one(create("a.rs", "")), &v3(), &[]);
    check(
        &json!([create("a.rs", "")]).to_string(),
        &Context::new(ProtocolVersion::V1),
        &["0:ERR_CONTENT_REQUIRED"],
    );
    check(
        &json!([create("a.rs", "x")]).to_string(),
        &Context::new(ProtocolVersion::V1),
        &[],
    );
}

#[test]
fn pseudo_binary() {
    check(
        &one(create("a.rs", "fn main() {}\0")),
        &v2(),
        &["0:ERR_PSEUDO_BINARY"],
    );
    check(&one(create("a.rs", "\0")), &v2(), &["0:ERR_PSEUDO_BINARY"]);
    let mostly_control: String = "\u{1}\u{2}\u{3}abcdefgh".into();
    check(
        &one(create("a.md", &mostly_control)),
        &v2(),
        &["0:ERR_PSEUDO_BINARY"],
    );
    // Exactly 10 % is still text; U+FFFD counts as control.
    check(&one(create("a.md", "\u{1}abcdefghi")), &v2(), &[]);
    check(
        &one(create("a.md", "\u{FFFD}\u{FFFD}abcdefgh")),
        &v2(),
        &["0:ERR_PSEUDO_BINARY"],
    );
    // Tabs, newlines, CR, form feed are text; so is every script and emoji.
    check(
        &one(create("a.md", "\t\t\t\r\n\r\n\u{c}\u{c}x")),
        &v2(),
        &[],
    );
    check(
        &one(create(
            "docs/readme.md",
            "# Привет, мир\n\nЭто документация. 你好，世界。🎉👍\n",
        )),
        &v2(),
        &[],
    );
    let patch = json!({"kind": "PATCH_FILE", "path": "a.rs", "patch": format!("{DIFF}\0"), "base_sha256": SHA});
    check(&one(patch), &v2(), &["0:ERR_PSEUDO_BINARY"]);
}

#[test]
fn placeholders_in_full_content_actions() {
    for bad in [
        "fn a() {}\n// ... rest of the code unchanged ...\n",
        "def f():\n    pass\n# ... existing code ...\n",
        "int x;\n/* ... */ unchanged\n",
        "fn a() {\n    // ...\n}\n",
        "x = 1\n# ...\n",
        "<div>\n<!-- ... -->\n</div>\n",
        "fn a() {}\n    // rest of the code unchanged\n",
        "class A:\n    # existing code here\n",
        "a();\n// … other methods …\n",
        "-- ... existing code ...\nSELECT 1;\n",
        "fn a() {}\n// rest of the file...\n",
    ] {
        check(
            &one(create("src/a.rs", bad)),
            &v2(),
            &["0:ERR_PLACEHOLDER_CONTENT"],
        );
    }
    for good in [
        "const f = (...args) => g(...args);\n",
        "function h({ ...rest }) { return [...rest]; }\n",
        "def f(): ...\n",
        "class P(Protocol):\n    def m(self) -> int:\n        ...\n",
        "x = a[..., 0]\n",
        "fn f(args: ...) {}\n",
        "/// Example:\n/// ...\n/// let x = 1;\n",
        "//! Usage: `foo ...`\n",
        "// Loading existing config...\nload();\n",
        "// TODO: handle the rest of the cases\n",
        "printf(\"%d...\", x); // print\n",
        "# Wait... this is a heading in Python?\n",
        "let s = \"... rest of the code unchanged ...\";\n",
        "// keep going...\n",
    ] {
        check(&one(create("src/a.rs", good)), &v2(), &[]);
    }
    // Prose: `#` is a heading, not a comment.
    check(
        &one(create(
            "docs/a.md",
            "# ... existing code ...\nWell... that is the rest of it.\n",
        )),
        &v2(),
        &[],
    );
    check(
        &one(create(
            "docs/a.md",
            "text\n<!-- ... rest of the file unchanged ... -->\n",
        )),
        &v2(),
        &["0:ERR_PLACEHOLDER_CONTENT"],
    );
    // Off by policy; not applied to partial-edit actions.
    let off = Policy::from_json(r#"{"reject_placeholders": false}"#).unwrap();
    check_with(&one(create("src/a.rs", "// ...\n")), &v2(), &off, &[]);
    let range = json!({"kind": "REPLACE_RANGE", "path": "a.rs", "start_line": 1, "end_line": 2, "content": "// ...\n", "base_sha256": SHA});
    check(&one(range), &v3(), &[]);
    assert_eq!(find_placeholder("a\n// ...\n", "rs"), Some((2, "// ...")));
}

#[test]
fn patch_shape() {
    let p = |patch: serde_json::Value, sha: &str| json!({"kind": "PATCH_FILE", "path": "src/lib.rs", "patch": patch, "base_sha256": sha});
    check(&one(p(json!(DIFF), SHA)), &v2(), &[]);
    check(
        &one(json!({"kind": "PATCH_FILE", "path": "src/lib.rs", "base_sha256": SHA})),
        &v2(),
        &["0:ERR_PATCH_REQUIRED"],
    );
    check(
        &one(p(json!("  \n"), SHA)),
        &v2(),
        &["0:ERR_PATCH_REQUIRED"],
    );
    check(
        &one(p(json!("replace fn b with fn c"), SHA)),
        &v2(),
        &["0:ERR_PATCH_NOT_UNIFIED"],
    );
    check(
        &one(p(json!("--- a\n+++ b\n-x\n+y\n"), SHA)),
        &v2(),
        &["0:ERR_PATCH_NOT_UNIFIED"],
    );
    check(&one(p(json!("@@ -1 +1 @@\n-x\n+y\n"), SHA)), &v2(), &[]);
    // The single-file forms the engine reads validate too; a malformed one keeps the code.
    let codex = "*** Begin Patch\n*** Update File: src/lib.rs\n@@ fn a\n x\n-y\n+z\n*** End of File\n*** End Patch\n";
    check(&one(p(json!(codex), SHA)), &v2(), &[]);
    let add = "*** Begin Patch\n*** Add File: src/lib.rs\n+x\n*** End Patch\n";
    check(&one(p(json!(add), SHA)), &v2(), &[]);
    let blocks = "src/lib.rs\n```\n<<<<<<< SEARCH\ny\n=======\nz\n>>>>>>> REPLACE\n```\n";
    check(&one(p(json!(blocks), SHA)), &v2(), &[]);
    for malformed in [
        "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-y\n+z\n",
        "*** Begin Patch\n*** Update File: a\n-y\n*** Update File: b\n-y\n*** End Patch\n",
        "*** Begin Patch\n*** Delete File: src/lib.rs\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: a\n*** Move to: b\n-y\n+z\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: src/lib.rs\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: src/lib.rs\nprose\n*** End Patch\n",
        "<<<<<<< SEARCH\ny\n=======\nz\n",
        "<<<<<<< SEARCH\ny\n>>>>>>> REPLACE\n",
    ] {
        check(
            &one(p(json!(malformed), SHA)),
            &v2(),
            &["0:ERR_PATCH_NOT_UNIFIED"],
        );
    }
    check(
        &one(p(json!(DIFF), &SHA.to_uppercase())),
        &v2(),
        &["0:ERR_BASE_SHA256_INVALID"],
    );
    check(
        &one(p(json!(DIFF), "abc")),
        &v2(),
        &["0:ERR_BASE_SHA256_INVALID"],
    );
    check(
        &one(p(json!(DIFF), &format!("{SHA}0"))),
        &v2(),
        &["0:ERR_BASE_SHA256_INVALID"],
    );
    check(
        &one(p(json!(DIFF), &SHA.replace('e', "g"))),
        &v2(),
        &["0:ERR_BASE_SHA256_INVALID"],
    );
    check(
        &one(json!({"kind": "PATCH_FILE", "path": "src/lib.rs", "patch": DIFF})),
        &v2(),
        &["0:ERR_BASE_SHA256_INVALID"],
    );
}

fn edit_action(edits: serde_json::Value) -> serde_json::Value {
    json!({"kind": "EDIT_FILE", "path": "src/a.rs", "base_sha256": SHA, "edits": edits})
}

#[test]
fn edit_shape() {
    let e = |anchor: &str, before: &str| json!({"op": "replace", "anchor": anchor, "before": before, "after": "x"});
    check(&one(edit_action(json!([e("fn a", "1")]))), &v3(), &[]);
    check(
        &one(edit_action(json!([]))),
        &v3(),
        &["0:ERR_PATCH_REQUIRED"],
    );
    check(
        &one(json!({"kind": "EDIT_FILE", "path": "src/a.rs", "base_sha256": SHA})),
        &v3(),
        &["0:ERR_PATCH_REQUIRED"],
    );
    check(
        &one(edit_action(json!([e("", "1")]))),
        &v3(),
        &["0:ERR_EDIT_APPLY_FAILED"],
    );
    check(
        &one(edit_action(json!([e("fn a", "")]))),
        &v3(),
        &["0:ERR_EDIT_APPLY_FAILED"],
    );
    check(
        &one(edit_action(
            json!([{"op": "replace", "anchor": "a", "before": "b", "after": "c", "occurrence": 0}]),
        )),
        &v3(),
        &["0:ERR_EDIT_APPLY_FAILED"],
    );
    check(
        &one(edit_action(
            json!([{"op": "replace", "anchor": "a", "before": "b", "after": "c", "occurrence": 2}]),
        )),
        &v3(),
        &[],
    );
    let fifty: Vec<_> = (0..50).map(|i| e(&format!("a{i}"), "b")).collect();
    check(&one(edit_action(json!(fifty))), &v3(), &[]);
    let fifty_one: Vec<_> = (0..51).map(|i| e(&format!("a{i}"), "b")).collect();
    check(
        &one(edit_action(json!(fifty_one))),
        &v3(),
        &["0:ERR_EDIT_APPLY_FAILED"],
    );
    let big = "x".repeat(100_001);
    check(
        &one(edit_action(json!([e("a", &big), e("b", &big)]))),
        &v3(),
        &["0:ERR_EDIT_APPLY_FAILED"],
    );
    check(&one(edit_action(json!([e("a", &big)]))), &v3(), &[]);
    let r = check_text(
        &one(edit_action(json!([e("a", "b"), e("", "b")]))),
        &v3(),
        &Policy::default(),
    );
    assert_eq!(
        r.violations()[0].pointer.as_deref(),
        Some("/actions/0/edits/1/anchor")
    );
}

#[test]
fn range_shape() {
    let r = |start: serde_json::Value, end: serde_json::Value| {
        let mut a = json!({"kind": "REPLACE_RANGE", "path": "src/a.rs", "content": "y\n", "base_sha256": SHA});
        if !start.is_null() {
            a["start_line"] = start;
        }
        if !end.is_null() {
            a["end_line"] = end;
        }
        a
    };
    check(&one(r(json!(1), json!(1))), &v3(), &[]);
    check(&one(r(json!(3), json!(7))), &v3(), &[]);
    check(&one(r(json!(0), json!(1))), &v3(), &["0:ERR_RANGE_INVALID"]);
    check(&one(r(json!(5), json!(4))), &v3(), &["0:ERR_RANGE_INVALID"]);
    check(
        &one(r(json!(null), json!(4))),
        &v3(),
        &["0:ERR_RANGE_INVALID"],
    );
    check(
        &one(r(json!(4), json!(null))),
        &v3(),
        &["0:ERR_RANGE_INVALID"],
    );
    check(
        &one(
            json!({"kind": "REPLACE_RANGE", "path": "src/a.rs", "start_line": 1, "end_line": 1, "base_sha256": SHA}),
        ),
        &v3(),
        &["0:ERR_CONTENT_REQUIRED"],
    );
}

#[test]
fn limits() {
    let actions: Vec<_> = (0..200).map(|i| create(&format!("f{i}.rs"), "x")).collect();
    check(&many(actions), &v2(), &[]);
    let actions: Vec<_> = (0..201).map(|i| create(&format!("f{i}.rs"), "x")).collect();
    check(&many(actions), &v2(), &["-:ERR_TOO_MANY_ACTIONS"]);

    let mib = "a".repeat(1024 * 1024);
    check(&one(create("a.txt", &mib)), &v2(), &[]);
    check(
        &one(create("a.txt", &format!("{mib}b"))),
        &v2(),
        &["0:ERR_CONTENT_TOO_LARGE"],
    );
    let five: Vec<_> = (0..5).map(|i| create(&format!("f{i}.txt"), &mib)).collect();
    check(&many(five), &v2(), &[]);
    let six: Vec<_> = (0..6).map(|i| create(&format!("f{i}.txt"), &mib)).collect();
    check(&many(six), &v2(), &["-:ERR_CONTENT_TOO_LARGE"]);

    let small =
        Policy::from_json(r#"{"max_actions": 2, "max_file_bytes": 3, "max_total_bytes": 5}"#)
            .unwrap();
    let three: Vec<_> = (0..3).map(|i| create(&format!("f{i}.rs"), "xx")).collect();
    check_with(
        &many(three),
        &v2(),
        &small,
        &["-:ERR_CONTENT_TOO_LARGE", "-:ERR_TOO_MANY_ACTIONS"],
    );
    check_with(
        &one(create("a.rs", "xxxx")),
        &v2(),
        &small,
        &["0:ERR_CONTENT_TOO_LARGE"],
    );
}

#[test]
fn conflicts() {
    let del = |p: &str| json!({"kind": "DELETE_FILE", "path": p});
    let deldir = |p: &str| json!({"kind": "DELETE_DIR", "path": p});
    let mkdir = |p: &str| json!({"kind": "CREATE_DIR", "path": p});
    let upd = |p: &str| json!({"kind": "UPDATE_FILE", "path": p, "content": "u"});
    let patch =
        |p: &str| json!({"kind": "PATCH_FILE", "path": p, "patch": DIFF, "base_sha256": SHA});
    let edit = |p: &str| {
        edit_action(json!([{"op": "replace", "anchor": "a", "before": "b", "after": "c"}]))
            .as_object()
            .map(|o| {
                let mut o = o.clone();
                o.insert("path".into(), json!(p));
                serde_json::Value::Object(o)
            })
            .unwrap()
    };

    // two writers, case-folded, in any pair
    check(
        &many(vec![create("a.rs", "1"), create("b.rs", "2")]),
        &v2(),
        &[],
    );
    check(
        &many(vec![create("a.rs", "1"), upd("A.RS")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![patch("a.rs"), create("a.rs", "1")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![edit("a.rs"), patch("./a.rs")]),
        &v3(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![upd("src\\a.rs"), upd("src/a.rs")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    // several EDIT_FILEs of one file are merged by the engine
    check(
        &many(vec![edit("a.rs"), edit("a.rs"), edit("A.rs")]),
        &v3(),
        &[],
    );
    // writer + delete
    check(
        &many(vec![create("a.rs", "1"), del("a.rs")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![del("a.rs"), upd("a.rs")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(&many(vec![del("a.rs"), del("a.rs")]), &v2(), &[]);
    check(&many(vec![del("a.rs"), create("b.rs", "1")]), &v2(), &[]);
    // DELETE_DIR with anything inside it, whatever the order
    check(
        &many(vec![deldir("old"), create("old/x.rs", "1")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![create("Old/x.rs", "1"), deldir("old")]),
        &v2(),
        &["0:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![deldir("old"), del("old/a/b.rs")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![deldir("old"), deldir("old/a")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![deldir("old"), mkdir("old")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![
            deldir("old"),
            create("older/x.rs", "1"),
            create("old.rs", "1"),
        ]),
        &v2(),
        &[],
    );
    // CREATE_FILE whose parent is a file created in the same plan
    check(
        &many(vec![create("a.md", "1"), create("a.md/b.md", "2")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
    check(
        &many(vec![create("x/a.md", "2"), create("X", "1")]),
        &v2(),
        &["0:ERR_ACTION_CONFLICT", "1:ERR_FORBIDDEN_PATH"],
    );
    check(
        &many(vec![mkdir("a"), create("a/b.md", "2"), mkdir("a")]),
        &v2(),
        &[],
    );
    // a directory and a file at one path
    check(
        &many(vec![mkdir("a.md"), create("a.md", "1")]),
        &v2(),
        &["1:ERR_ACTION_CONFLICT"],
    );
}

#[test]
fn mode_rules() {
    let plan = Context::new(ProtocolVersion::V2).with_mode(Mode::Plan);
    let apply = Context::new(ProtocolVersion::V2).with_mode(Mode::Apply);
    check(r#"{"actions": [], "summary": "plan: do x"}"#, &plan, &[]);
    check(
        &one(create("a.rs", "x")),
        &plan,
        &["-:ERR_PLAN_HAS_ACTIONS"],
    );
    check(
        r#"{"actions": [], "summary": "NO_CHANGES: already done"}"#,
        &apply,
        &[],
    );
    check(
        r#"{"actions": [], "summary": "  NO_CHANGES: ok"}"#,
        &apply,
        &[],
    );
    check(
        r#"{"actions": [], "summary": "nothing to do"}"#,
        &apply,
        &["-:ERR_APPLY_EMPTY_ACTIONS"],
    );
    check(r#"{"actions": []}"#, &apply, &["-:ERR_APPLY_EMPTY_ACTIONS"]);
    check(
        r#"{"actions": [], "summary": "no_changes: x"}"#,
        &apply,
        &["-:ERR_APPLY_EMPTY_ACTIONS"],
    );
    check(r#"{"actions": []}"#, &v2(), &[]);
}

#[test]
fn update_without_base() {
    let sent = BTreeSet::from([RelPath::parse("src/Lib.rs").unwrap()]);
    let none = BTreeSet::new();
    let apply = Context::new(ProtocolVersion::V3)
        .with_mode(Mode::Apply)
        .with_sent_files(&sent);
    let plan = Context::new(ProtocolVersion::V3)
        .with_mode(Mode::Plan)
        .with_sent_files(&none);
    let upd = |p: &str| json!({"kind": "UPDATE_FILE", "path": p, "content": "u"});
    let patch =
        |p: &str| json!({"kind": "PATCH_FILE", "path": p, "patch": DIFF, "base_sha256": SHA});
    check(&one(upd("src/lib.rs")), &apply, &[]);
    check(&one(patch("src/lib.rs")), &apply, &[]);
    check(
        &one(upd("src/main.rs")),
        &apply,
        &["0:ERR_UPDATE_WITHOUT_BASE"],
    );
    check(
        &one(patch("src/main.rs")),
        &apply,
        &["0:ERR_UPDATE_WITHOUT_BASE"],
    );
    check(
        &one(edit_action(
            json!([{"op": "replace", "anchor": "a", "before": "b", "after": "c"}]),
        )),
        &apply,
        &["0:ERR_UPDATE_WITHOUT_BASE"],
    );
    check(&one(create("src/new.rs", "x")), &apply, &[]);
    check(
        &one(json!({"kind": "DELETE_FILE", "path": "src/old.rs"})),
        &apply,
        &[],
    );
    // Only APPLY mode.
    check(&one(upd("src/main.rs")), &plan, &["-:ERR_PLAN_HAS_ACTIONS"]);
    // Not tracked → not checked.
    check(
        &one(upd("src/main.rs")),
        &Context::new(ProtocolVersion::V3).with_mode(Mode::Apply),
        &[],
    );
}

#[test]
fn v2_update_of_existing_file() {
    let exists = |p: &RelPath| p.as_str() == "src/lib.rs";
    let upd = one(json!({"kind": "UPDATE_FILE", "path": "src/lib.rs", "content": "u"}));
    check(
        &upd,
        &Context::new(ProtocolVersion::V2).with_exists(&exists),
        &["0:ERR_V2_UPDATE_EXISTING_FORBIDDEN"],
    );
    check(
        &upd,
        &Context::new(ProtocolVersion::V3).with_exists(&exists),
        &[],
    );
    check(
        &json!([{"kind": "UPDATE_FILE", "path": "src/lib.rs", "content": "u"}]).to_string(),
        &Context::new(ProtocolVersion::V1).with_exists(&exists),
        &[],
    );
    check(
        &one(json!({"kind": "UPDATE_FILE", "path": "src/new.rs", "content": "u"})),
        &Context::new(ProtocolVersion::V2).with_exists(&exists),
        &[],
    );
}

#[test]
fn parse_failures_are_one_json_parse_violation() {
    check("", &v2(), &["-:ERR_JSON_PARSE"]);
    check(
        "I think you should edit main.rs",
        &v2(),
        &["-:ERR_JSON_PARSE"],
    );
    check(
        "```json\n{\"actions\": [\n```",
        &v2(),
        &["-:ERR_JSON_PARSE"],
    );
}

#[test]
fn envelope_violations_are_merged_and_indices_are_original() {
    // Action 1 is unreadable (not an object); action 2's index must stay 2.
    let text = r#"{"actions": [{"kind":"CREATE_DIR","path":"a"}, 7, {"kind":"CREATE_FILE","path":"/etc/x"}], "bogus": 1}"#;
    let report = check_text(text, &v2(), &Policy::default());
    let got: Vec<_> = report
        .violations()
        .iter()
        .map(|v| (v.action_index, v.code))
        .collect();
    assert!(
        got.contains(&(Some(1), ErrorCode::SchemaValidation)),
        "{report}"
    );
    assert!(got.contains(&(Some(2), ErrorCode::InvalidPath)), "{report}");
    assert!(
        got.iter()
            .any(|(i, c)| i.is_none() && *c == ErrorCode::SchemaValidation),
        "{report}"
    );
    let doc = parse_document(text, ProtocolVersion::V2).unwrap();
    assert_eq!(validate_document(&doc, &v2(), &Policy::default()), report);
}

#[test]
fn fenced_and_prose_answers_validate() {
    let text = "Here you go:\n```json\n{\"actions\":[{\"kind\":\"CREATE_FILE\",\"path\":\"docs/заметки.md\",\"content\":\"# Заметки\\n\"}],\"summary\":\"s\"}\n```\nDone.";
    check(text, &v2(), &[]);
    check(
        "Sure. {\"actions\": [{\"kind\": \"CREATE_DIR\", \"path\": \"x\"}]} hope it helps",
        &v2(),
        &[],
    );
}

#[test]
fn into_plan_hands_over_validated_actions() {
    let text = many(vec![
        json!({"kind": "CREATE_DIR", "path": "./src/util"}),
        create("src\\util\\mod.rs", "pub fn f() {}\n"),
    ]);
    let plan = check_text(&text, &v2(), &Policy::default())
        .into_plan()
        .unwrap();
    assert_eq!(plan.version(), ProtocolVersion::V2);
    let paths: Vec<_> = plan
        .actions()
        .iter()
        .map(|a| (a.index, a.path.as_str()))
        .collect();
    assert_eq!(paths, [(0, "src/util"), (1, "src/util/mod.rs")]);
    let errs = check_text(&one(create("../x.rs", "")), &v2(), &Policy::default())
        .into_plan()
        .unwrap_err();
    assert_eq!(errs.violations().len(), 1);
    let resp = papayu_protocol::parse_response(&text, ProtocolVersion::V2).unwrap();
    assert!(validate(&resp, &v2(), &Policy::default()).is_valid());
}

#[test]
fn select_keeps_the_chosen_actions_in_plan_order() {
    let text = many(vec![
        create("a.rs", "a\n"),
        create("b.rs", "b\n"),
        create("c.rs", "c\n"),
    ]);
    let plan = check_text(&text, &v2(), &Policy::default())
        .into_plan()
        .unwrap();
    let part = plan.select(&[2, 0, 2]).unwrap();
    assert_eq!(part.version(), plan.version());
    let paths: Vec<_> = part
        .actions()
        .iter()
        .map(|a| (a.index, a.path.as_str()))
        .collect();
    assert_eq!(paths, [(0, "a.rs"), (2, "c.rs")]);
    assert!(plan.select(&[]).unwrap().actions().is_empty());
}

#[test]
fn select_names_an_index_the_plan_does_not_have() {
    let text = many(vec![create("a.rs", "a\n"), create("b.rs", "b\n")]);
    let plan = check_text(&text, &v2(), &Policy::default())
        .into_plan()
        .unwrap();
    let err = plan.select(&[1, 7, 9]).unwrap_err();
    assert_eq!((err.index, err.len), (7, 2));
    assert!(err.to_string().contains("action index 7"), "{err}");
}

#[test]
fn rejected_is_an_error_listing_every_violation() {
    let text = many(vec![create("../x.rs", "x"), create(".env", "KEY=1")]);
    let report = check_text(&text, &v2(), &Policy::default());
    let shown = report.to_string();
    let rejected = report.into_plan().unwrap_err();
    assert_eq!(
        rejected.codes(),
        [ErrorCode::InvalidPath, ErrorCode::ProtectedPath]
    );
    assert_eq!(rejected.to_string(), shown);
    assert_eq!(rejected.to_string().lines().count(), 2);
    let as_error: &dyn std::error::Error = &rejected;
    assert!(as_error.to_string().contains("ERR_PROTECTED_PATH"));
    let violations = rejected.clone().into_violations();
    assert_eq!(violations, rejected.violations());
}

#[test]
fn violations_are_sorted_by_index_then_code() {
    let text = many(vec![
        json!({"kind": "NOPE", "path": "C:\\x"}),
        create(".env", "\0"),
        create("a.exe", "x"),
    ]);
    let apply = Context::new(ProtocolVersion::V2).with_mode(Mode::Plan);
    check(
        &text,
        &apply,
        &[
            "-:ERR_PLAN_HAS_ACTIONS",
            "0:ERR_INVALID_PATH",
            "0:ERR_UNKNOWN_KIND",
            "1:ERR_PROTECTED_PATH",
            "1:ERR_PSEUDO_BINARY",
            "2:ERR_FORBIDDEN_PATH",
        ],
    );
}

#[test]
fn issue_2_acceptance_plan_lists_every_problem() {
    let mut actions = vec![
        create("../x.rs", "x"),
        create("/etc/passwd", "x"),
        create("C:\\x.rs", "x"),
        create("\\\\srv\\share\\x.rs", "x"),
        create(".env", "x"),
        create("con.txt", "x"),
        create("id_rsa", "x"),
        create("nul.rs", "a\0b"),
        json!({"kind": "TELEPORT_FILE", "path": "t.rs"}),
        create("dup.rs", "x"),
        json!({"kind": "DELETE_FILE", "path": "dup.rs"}),
    ];
    while actions.len() < 201 {
        actions.push(json!({"kind": "CREATE_DIR", "path": format!("d{}", actions.len())}));
    }
    let report = check_text(&many(actions), &v2(), &Policy::default());
    let codes: BTreeSet<_> = report.codes().into_iter().collect();
    for code in [
        ErrorCode::TooManyActions,
        ErrorCode::InvalidPath,
        ErrorCode::ProtectedPath,
        ErrorCode::UnknownKind,
        ErrorCode::ActionConflict,
    ] {
        assert!(codes.contains(&code), "{code} missing from\n{report}");
    }
    let nul_content = report
        .violations()
        .iter()
        .any(|v| v.action_index == Some(7));
    assert!(nul_content, "{report}");
}
