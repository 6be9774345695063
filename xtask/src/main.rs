//! papayu's automation entry point: `cargo xtask <ci|codegen|bench|golden>`.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_methods,
    clippy::disallowed_types
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use papayu_protocol::{ProtocolVersion, SchemaVariant, schema};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("codegen") => codegen(&root, args.iter().any(|a| a == "--check")),
        Some("ci") => ci(&root),
        _ => {
            eprintln!("usage: cargo xtask <ci|codegen [--check]>");
            bail!("unknown or missing xtask command")
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Regenerate `schemas/*.json` from papayu-protocol's generator; `--check` fails on drift.
fn codegen(root: &Path, check: bool) -> Result<()> {
    let dir = root.join("crates/papayu-protocol/schemas");
    let mut stale = Vec::new();
    for version in ProtocolVersion::ALL {
        for variant in [SchemaVariant::Normal, SchemaVariant::Strict] {
            let path = dir.join(schema::file_name(version, variant));
            let want = schema::render(version, variant);
            let have = std::fs::read_to_string(&path).unwrap_or_default();
            if have != want {
                if check {
                    stale.push(path.display().to_string());
                } else {
                    std::fs::write(&path, want)
                        .with_context(|| format!("writing {}", path.display()))?;
                    println!("wrote {}", path.display());
                }
            }
        }
    }
    if !stale.is_empty() {
        bail!(
            "stale schema files (run `cargo xtask codegen`):\n  {}",
            stale.join("\n  ")
        );
    }
    Ok(())
}

fn run(root: &Path, program: &str, args: &[&str]) -> Result<()> {
    eprintln!("xtask: $ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(root)
        .status()
        .with_context(|| format!("running {program}"))?;
    if !status.success() {
        bail!("`{program} {}` failed with {status}", args.join(" "));
    }
    Ok(())
}

/// The single CI entry point: fmt, clippy, schema drift, tests, docs.
fn ci(root: &Path) -> Result<()> {
    run(root, "cargo", &["fmt", "--all", "--", "--check"])?;
    codegen(root, true)?;
    run(
        root,
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run(
        root,
        "cargo",
        &[
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ],
    )?;
    run(root, "cargo", &["test", "--workspace", "--doc", "--locked"])?;
    let docs_env = [("RUSTDOCFLAGS", "-D warnings")];
    eprintln!("xtask: $ RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps");
    let status = Command::new("cargo")
        .args(["doc", "--workspace", "--no-deps", "--locked"])
        .envs(docs_env)
        .current_dir(root)
        .status()?;
    if !status.success() {
        bail!("cargo doc failed");
    }
    Ok(())
}
