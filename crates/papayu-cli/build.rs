//! Embeds the web UI (`ui/dist`, built by `npm --prefix ui run build`) into the `papayu`
//! binary for `papayu ui`. Without a build the table is empty and papayu-app's server shows a
//! page that says how to make it, so the CLI always builds (a checkout without Node still has
//! every other command).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::expect_used,
    reason = "a build script: std::fs, cargo: lines on stdout, and a panic is the error report"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("reading ui/dist")
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            walk(&path, base, out);
        } else if let Ok(rel) = path.strip_prefix(base) {
            let rel = rel.to_string_lossy().replace('\\', "/");
            out.push((rel, path));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let dist = manifest.join("../../ui/dist");
    println!("cargo:rerun-if-changed={}", dist.display());
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    if dist.join("index.html").is_file() {
        walk(&dist, &dist, &mut files);
    }
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let mut code = String::from(
        "/// The embedded UI files: (path relative to ui/dist, bytes); empty without a build.\npub static ASSETS: &[(&str, &[u8])] = &[\n",
    );
    for (rel, path) in &files {
        let abs = path.canonicalize().expect("canonical path");
        writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        )
        .expect("format");
    }
    code.push_str("];\n");
    std::fs::write(out_dir.join("ui_assets.rs"), code).expect("writing ui_assets.rs");
}
