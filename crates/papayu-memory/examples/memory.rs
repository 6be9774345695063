//! Load the memory of a throw-away project, set a preference, apply a model's `memory_patch`
//! and print the report and the resulting memory block.
//!
//! Run with `cargo run -p papayu-memory --example memory`.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;

use camino::Utf8Path;
use papayu_memory::Memory;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    let root = Utf8Path::from_path(tmp.path()).ok_or("temp dir is not UTF-8")?;
    let (config_dir, project) = (root.join("config"), root.join("project"));
    fs_err::create_dir(&project)?;

    let mut memory = Memory::load(&config_dir, &project)?;
    memory.set("project.src_roots", "src, tests/helpers")?;
    memory.save()?;

    // What a model might send after "запомни: тесты гоняем через pytest -q, отвечай коротко".
    let patch = BTreeMap::from([
        (
            "project.default_test_command".to_owned(),
            json!("pytest -q"),
        ),
        ("user.preferred_style".to_owned(), json!("brief")),
        ("user.ask_budget".to_owned(), json!(300)),
        ("user.shell".to_owned(), json!("zsh")),
    ]);
    let report = memory.apply_patch(
        &patch,
        "запомни: тесты гоняем через pytest -q, отвечай коротко",
        false,
    )?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    println!();
    print!("{}", memory.block());
    Ok(())
}
