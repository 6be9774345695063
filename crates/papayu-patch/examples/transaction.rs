//! Preview, apply and undo a small plan in a temporary project.
//!
//! Run with `cargo run -p papayu-patch --example transaction`.
#![allow(clippy::print_stdout)]

use papayu_patch::{ApplyOptions, Project};
use papayu_protocol::ProtocolVersion;
use papayu_validate::{Context, Policy, check_text};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    fs_err::write(dir.path().join("greeting.txt"), "hello\nworld\n")?;
    let base = papayu_protocol::sha256_hex(b"hello\nworld\n");
    let answer = format!(
        r##"{{"summary": "demo", "actions": [
            {{"kind": "CREATE_FILE", "path": "docs/notes.md", "content": "# Notes\n"}},
            {{"kind": "PATCH_FILE", "path": "greeting.txt", "base_sha256": "{base}",
              "patch": "@@ -2,1 +2,1 @@\n-world\n+papayu\n"}}
        ]}}"##
    );
    let plan = check_text(
        &answer,
        &Context::new(ProtocolVersion::V2),
        &Policy::default(),
    )
    .into_plan()?;

    let project = Project::open(dir.path())?;
    let preview = project.transaction(&plan).preview()?;
    for file in &preview.files {
        println!("{} {}\n{}", file.kind, file.path, file.diff);
    }
    println!("summary: {:?}", preview.summary);

    let report = project
        .transaction(&plan)
        .options(
            ApplyOptions::default()
                .on_progress(|p| println!("  {:?} {}/{} {}", p.stage, p.done, p.total, p.item)),
        )
        .apply()?;
    println!("applied as {}", report.tx_id);
    println!(
        "greeting.txt is now {:?}",
        fs_err::read_to_string(dir.path().join("greeting.txt"))?
    );

    project.undo(false)?;
    println!(
        "after undo: {:?}",
        fs_err::read_to_string(dir.path().join("greeting.txt"))?
    );
    Ok(())
}
