//! Assemble the context a model would get for a goal, from the command line.
//!
//! `cargo run -p papayu-context --example context -- PROJECT_ROOT [GOAL_TEXT_FILE]`
//!
//! Prints the rendered blocks, then the stats and the files sent as JSON.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use camino::Utf8PathBuf;
use papayu_context::{ContextConfig, ContextEngine};
use papayu_protocol::ContextRequest;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = Utf8PathBuf::from(args.first().map_or(".", String::as_str));
    let goal = match args.get(1).map(fs_err::read_to_string).transpose() {
        Ok(goal) => goal,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut engine = match ContextEngine::new(&root, ContextConfig::default()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error [{}]: {e}", e.code());
            return ExitCode::FAILURE;
        }
    };
    let requests = [
        ContextRequest::ReadFile {
            path: "README.md".into(),
            start_line: None,
            end_line: Some(40),
        },
        ContextRequest::Search {
            query: "TODO".into(),
            glob: None,
        },
    ];
    let ctx = engine.assemble(&requests, goal.as_deref());
    println!("{}\n", ctx.text);
    let summary =
        serde_json::json!({ "stats": ctx.stats, "sent_files": ctx.sent_files, "cache": ctx.cache });
    println!(
        "{}",
        serde_json::to_string_pretty(&summary).unwrap_or_default()
    );
    ExitCode::SUCCESS
}
