//! papayu-mcp in process: the tool list each option offers, bad input of every tool answered
//! without a write, and the rules this server adds to the CLI's. The real-client end-to-end test
//! is papayu-cli's `tests/mcp.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use std::path::Path;

use papayu_mcp::{CallToolResult, ErrorData, McpOptions, McpTool, PapayuMcp};
use serde_json::{Value, json};

const APP: &str = "def greet(name):\n    return 'hello ' + name\n";

fn project() -> (tempfile::TempDir, PapayuMcp) {
    let dir = tempfile::tempdir().expect("tempdir");
    fs_err::create_dir_all(dir.path().join("src")).expect("mkdir");
    fs_err::write(dir.path().join("src/app.py"), APP).expect("write");
    let root = camino::Utf8Path::from_path(dir.path()).expect("utf-8");
    let server = PapayuMcp::new(McpOptions::new(root)).expect("open");
    (dir, server)
}

/// Every file under `root` (the parent too, to catch a write outside), papayu's state aside.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs_err::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(base)
                .expect("prefix")
                .to_string_lossy()
                .into_owned();
            if rel.contains(".papa-yu") {
                continue;
            }
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                out.insert(rel, fs_err::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn call(server: &PapayuMcp, name: &str, args: Value) -> Result<CallToolResult, ErrorData> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(server.call(name, args.as_object().cloned()))
}

fn body(r: &CallToolResult) -> &Value {
    r.structured_content.as_ref().expect("structured result")
}

fn sha(text: &str) -> String {
    papayu_protocol::sha256_hex(text.as_bytes())
}

#[test]
fn read_only_offers_only_the_tools_that_write_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = camino::Utf8Path::from_path(dir.path()).expect("utf-8");
    let server = PapayuMcp::new(McpOptions::new(root).read_only(true)).expect("open");
    let names: Vec<&str> = server.tools().into_iter().map(McpTool::name).collect();
    assert_eq!(
        names,
        [
            "validate_plan",
            "preview_plan",
            "history",
            "read_file",
            "search",
            "context"
        ]
    );
    let e = call(&server, "apply_plan", json!({"plan": {"actions": []}})).unwrap_err();
    assert_eq!(e.code.0, -32602);
    assert!(e.message.contains("read-only"), "{}", e.message);
}

#[test]
fn no_provider_no_goal_tools() {
    let (_dir, server) = project();
    assert!(!server.tools().contains(&McpTool::PlanGoal));
    let e = call(&server, "run_goal", json!({"goal": "fix it"})).unwrap_err();
    assert_eq!(e.code.0, -32602);
    assert!(e.message.contains("no model configured"), "{}", e.message);
}

#[test]
fn every_tool_has_an_object_schema_and_a_description() {
    for tool in McpTool::ALL {
        let def = tool.definition();
        assert_eq!(def.input_schema["type"], "object", "{}", tool.name());
        assert!(
            def.description.as_deref().is_some_and(|d| d.len() > 40),
            "{}",
            tool.name()
        );
    }
}

/// Bad input of every tool: a JSON-RPC error or a rejection with a code, never a panic, never a
/// write (inside the project or beside it).
#[test]
fn bad_input_of_every_tool_is_answered_without_a_write() {
    let outer = tempfile::tempdir().expect("tempdir");
    let inner = outer.path().join("project");
    fs_err::create_dir_all(inner.join("src")).expect("mkdir");
    fs_err::write(inner.join("src/app.py"), APP).expect("write");
    let root = camino::Utf8Path::from_path(&inner).expect("utf-8");
    let server = PapayuMcp::new(McpOptions::new(root)).expect("open");
    let before = tree(outer.path());
    let zero = "0".repeat(64);
    let create =
        |path: &str| json!({"actions": [{"kind": "CREATE_FILE", "path": path, "content": "x"}]});
    let cases: Vec<(&str, Value)> = vec![
        ("validate_plan", json!({})),
        ("validate_plan", json!({"plan": null})),
        ("validate_plan", json!({"plan": "not json at all"})),
        ("preview_plan", json!({"plan": [1, 2, 3]})),
        ("preview_plan", json!({"plan": create("../escape.txt")})),
        ("apply_plan", json!({"plan": create("../escape.txt")})),
        ("apply_plan", json!({"plan": create("/etc/passwd")})),
        (
            "apply_plan",
            json!({"plan": create("src/../../escape.txt")}),
        ),
        ("apply_plan", json!({"plan": create(".git/config")})),
        (
            "apply_plan",
            json!({"plan": {"actions": [{"kind": "UPDATE_FILE", "path": "src/app.py", "content": "x"}]}}),
        ),
        (
            "apply_plan",
            json!({"plan": {"actions": [{"kind": "EDIT_FILE", "path": "src/app.py", "base_sha256": zero,
            "edits": [{"op": "replace", "anchor": "def", "before": "hello", "after": "x"}]}]}}),
        ),
        (
            "apply_plan",
            json!({"plan": {"actions": [{"kind": "DELETE_FILE", "path": "src/app.py"}]}}),
        ),
        (
            "apply_plan",
            json!({"plan": create("n.txt"), "checks": {"commands": ["true"], "detect": true}}),
        ),
        (
            "apply_plan",
            json!({"plan": create("n.txt"), "protocol": 9}),
        ),
        ("apply_plan", json!({"plan": {"actions": "many"}})),
        ("apply_patch", json!({"path": "src/app.py"})),
        (
            "apply_patch",
            json!({"path": "src/app.py", "base_sha256": sha(APP), "patch": "garbage"}),
        ),
        (
            "apply_patch",
            json!({"path": "../x", "base_sha256": sha(APP), "patch": "@@ -1 +1 @@\n-a\n+b\n"}),
        ),
        (
            "apply_patch",
            json!({"path": "src/app.py", "base_sha256": "nothex", "edits": []}),
        ),
        (
            "apply_patch",
            json!({"path": "src/app.py", "base_sha256": sha(APP), "patch": "x", "edits": []}),
        ),
        ("undo", json!({"force": "yes"})),
        ("undo", json!({})),
        ("redo", json!({})),
        ("history", json!({"extra": 1})),
        ("read_file", json!({"path": "../outside"})),
        ("read_file", json!({"path": "/etc/passwd"})),
        ("read_file", json!({"path": ".env"})),
        (
            "read_file",
            json!({"path": "src/app.py", "start_line": 3, "end_line": 1}),
        ),
        ("read_file", json!({"path": "src/app.py", "start_line": -1})),
        ("read_file", json!({"path": "missing.py"})),
        ("search", json!({"query": "(", "regex": true})),
        ("search", json!({})),
        ("context", json!({"requests": [42]})),
        (
            "context",
            json!({"requests": [{"type": "read_file", "path": "../x"}]}),
        ),
        (
            "context",
            json!({"goal": "g", "requests": [{"type": "env"}]}),
        ),
        ("no_such_tool", json!({})),
    ];
    for (name, args) in cases {
        match call(&server, name, args.clone()) {
            Err(e) => assert_eq!(e.code.0, -32602, "{name} {args}: {e:?}"),
            Ok(r) => {
                let b = body(&r);
                let refused = r.is_error == Some(true)
                    && b["code"].as_str().is_some_and(|c| c.starts_with("ERR_"));
                // validate_plan and preview_plan answer a broken plan as a result listing it.
                let reported = b["valid"] == false
                    || b["would_apply"] == false
                    || b["blocked"].as_array().is_some_and(|v| !v.is_empty());
                // context reports a refused request inside its blocks.
                let gathered = name == "context";
                assert!(refused || reported || gathered, "{name} {args}: {b}");
            }
        }
        assert_eq!(tree(outer.path()), before, "{name} {args} wrote");
    }
}

#[test]
fn update_file_of_an_existing_file_needs_a_base_hash() {
    let (dir, server) = project();
    let plan = json!({"summary": "s", "actions": [{"kind": "UPDATE_FILE", "path": "src/app.py", "content": "x\n"}]});
    let r = call(&server, "apply_plan", json!({"plan": plan})).expect("a result");
    assert_eq!(body(&r)["code"], "ERR_UPDATE_WITHOUT_BASE", "{}", body(&r));
    assert_eq!(
        fs_err::read_to_string(dir.path().join("src/app.py")).expect("read"),
        APP
    );
}

#[test]
fn apply_patch_takes_a_unified_diff_with_wrong_line_numbers() {
    let (dir, server) = project();
    let patch = "@@ -7,2 +7,2 @@\n def greet(name):\n-    return 'hello ' + name\n+    return 'hi ' + name\n";
    let r = call(
        &server,
        "apply_patch",
        json!({"path": "src/app.py", "base_sha256": sha(APP), "patch": patch}),
    )
    .expect("a result");
    assert_eq!(body(&r)["ok"], true, "{}", body(&r));
    assert!(body(&r)["tx_id"].is_string());
    assert_eq!(
        fs_err::read_to_string(dir.path().join("src/app.py")).expect("read"),
        "def greet(name):\n    return 'hi ' + name\n"
    );
    let undone = call(&server, "undo", json!({})).expect("undo");
    assert_eq!(body(&undone)["ok"], true);
    assert_eq!(
        fs_err::read_to_string(dir.path().join("src/app.py")).expect("read"),
        APP
    );
}

#[test]
fn deletes_apply_only_with_confirm_deletes() {
    let (dir, server) = project();
    let plan = json!({"summary": "s", "actions": [{"kind": "DELETE_FILE", "path": "src/app.py"}]});
    let r = call(&server, "apply_plan", json!({"plan": plan})).expect("a result");
    assert_eq!(body(&r)["code"], "ERR_CANCELLED");
    assert!(dir.path().join("src/app.py").exists());
    let r = call(
        &server,
        "apply_plan",
        json!({"plan": plan, "confirm_deletes": true}),
    )
    .expect("a result");
    assert_eq!(body(&r)["ok"], true, "{}", body(&r));
    assert!(!dir.path().join("src/app.py").exists());
}
