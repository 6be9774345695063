//! The one-call API a frontend uses, and its errors.

use papayu_context::{ContextConfig, ContextError, assemble};
use papayu_protocol::{ContextRequest, ErrorCode};

use crate::common::{TempProject, hermetic_config};

#[test]
fn assemble_renders_requested_then_auto_blocks() {
    let p = TempProject::new(&[
        (
            "src/main.rs",
            "mod parse;\nfn main() {\n    parse::run();\n}\n",
        ),
        (
            "src/parse.rs",
            "pub fn run() {\n    let v: Vec<u8> = vec![];\n    v[3];\n}\n",
        ),
        (".env", "TOKEN=needle\n"),
    ]);
    let requests = [
        ContextRequest::ReadFile {
            path: "src/main.rs".into(),
            start_line: None,
            end_line: None,
        },
        ContextRequest::Search {
            query: "needle".into(),
            glob: None,
        },
        ContextRequest::Search {
            query: "run".into(),
            glob: Some("*.rs".into()),
        },
        ContextRequest::ReadFile {
            path: ".env".into(),
            start_line: None,
            end_line: None,
        },
    ];
    let goal = "thread 'main' panicked at src/parse.rs:3:5:\nindex out of bounds: the len is 0 but the index is 3";
    let ctx = assemble(p.path(), &requests, Some(goal), &hermetic_config()).unwrap();
    insta::assert_snapshot!("assembled_text", ctx.text);
    assert_eq!(ctx.stats.context_files_count, 2);
    assert_eq!(ctx.sent_files.len(), 2);
    assert_eq!(ctx.stats.context_total_chars, ctx.text.chars().count());
    let json = serde_json::to_value(&ctx).unwrap();
    assert_eq!(json["blocks"][4]["origin"], "auto");
    assert_eq!(json["blocks"][0]["diet"]["state"], "kept");
}

#[test]
fn unusable_roots_are_errors_with_codes() {
    let p = TempProject::new(&[("file.txt", "x\n")]);
    let missing = assemble(&p.root.join("nope"), &[], None, &ContextConfig::default()).unwrap_err();
    assert!(matches!(missing, ContextError::Root { .. }));
    assert_eq!(missing.code(), ErrorCode::Io);
    let file = assemble(
        &p.root.join("file.txt"),
        &[],
        None,
        &ContextConfig::default(),
    )
    .unwrap_err();
    assert!(matches!(file, ContextError::RootNotDirectory { .. }));
    assert_eq!(file.code(), ErrorCode::InvalidPath);
    assert!(file.to_string().contains("is not a directory"));
}
