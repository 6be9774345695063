//! Validate a model answer and print every violation, or the plan the engine would receive.
//!
//! ```text
//! cargo run -p papayu-validate --example validate_plan            # built-in demo answer
//! cargo run -p papayu-validate --example validate_plan -- plan.json 3
//! ```
// A binary: printing is its job, and reading the one file it is given needs no fs-err context.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

use std::process::ExitCode;

use papayu_protocol::ProtocolVersion;
use papayu_validate::{Context, Mode, Policy, check_text};

const DEMO: &str = r##"Here is the change:
```json
{"actions": [
  {"kind": "CREATE_FILE", "path": "docs/заметки.md", "content": "# Заметки\n"},
  {"kind": "CREATE_FILE", "path": "..\\..\\evil.sh", "content": "rm -rf ~"},
  {"kind": "UPDATE_FILE", "path": ".env", "content": "TOKEN=x"},
  {"kind": "PATCH_FILE", "path": "src/lib.rs", "patch": "make it faster", "base_sha256": "nope"}
], "summary": "notes and a speed-up"}
```"##;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let text = match args.next() {
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                println!("{path}: {e}");
                return ExitCode::from(2);
            }
        },
        None => DEMO.to_owned(),
    };
    let version = args
        .next()
        .and_then(|n| n.parse().ok())
        .and_then(ProtocolVersion::from_number)
        .unwrap_or_default();
    let ctx = Context::new(version).with_mode(Mode::Apply);
    let report = check_text(&text, &ctx, &Policy::default());
    println!("{report}");
    match report.into_plan() {
        Ok(plan) => {
            for a in plan.actions() {
                println!("  {} {}", a.kind(), a.path);
            }
            ExitCode::SUCCESS
        }
        Err(_) => ExitCode::from(3),
    }
}
