//! `cargo xtask ui-bundle [--check]`: the web UI's committed build, `crates/papayu-app/ui-dist`,
//! which papayu-app embeds so every `papayu` serves the real UI without Node (DECISIONS D35).
//! Without `--check` it rebuilds the bundle in place; with it, it builds `ui/` into a scratch
//! directory and fails when any file's name or bytes differ (Vite names files by content hash
//! and writes no dates, so the same sources and lockfile give the same bytes).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::run_env;

/// The committed bundle, relative to the workspace root.
pub(crate) const BUNDLE: &str = "crates/papayu-app/ui-dist";

/// Every file under `dir` (path relative to it, `/`-separated) → bytes.
fn files(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) -> Result<()> {
        let entries =
            std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                walk(base, &path, out)?;
            } else {
                let rel = path
                    .strip_prefix(base)?
                    .to_string_lossy()
                    .replace('\\', "/");
                let bytes =
                    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
                out.insert(rel, bytes);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out)?;
    }
    Ok(out)
}

/// The files that differ between the committed bundle and a fresh build, each with why.
fn drift(committed: &BTreeMap<String, Vec<u8>>, fresh: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, bytes) in fresh {
        match committed.get(name) {
            None => out.push(format!("{name}: missing from {BUNDLE}")),
            Some(have) if have != bytes => out.push(format!("{name}: differs from a fresh build")),
            Some(_) => {}
        }
    }
    for name in committed.keys().filter(|n| !fresh.contains_key(*n)) {
        out.push(format!("{name}: not in a fresh build"));
    }
    out
}

/// Rebuild the bundle (`check`: build it aside and compare).
pub(crate) fn cli(root: &Path, check: bool) -> Result<()> {
    let ui = root.join("ui");
    let bundle = root.join(BUNDLE);
    if !check {
        return run_env(root, &ui, "npm", &["run", "build"], &[]);
    }
    let scratch = tempfile::Builder::new()
        .prefix("papayu-ui-bundle-")
        .tempdir()?;
    let out = scratch.path().join("dist");
    let out_arg = out.to_string_lossy();
    run_env(
        root,
        &ui,
        "npm",
        &["run", "build", "--", "--outDir", &out_arg],
        &[],
    )?;
    let problems = drift(&files(&bundle)?, &files(&out)?);
    if !problems.is_empty() {
        bail!(
            "{BUNDLE} is not what ui/ builds (run `cargo xtask ui-bundle` and commit it):\n  {}",
            problems.join("\n  ")
        );
    }
    eprintln!("xtask: {BUNDLE} matches a fresh build of ui/");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(entries: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        entries
            .iter()
            .map(|(n, b)| ((*n).to_owned(), b.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn drift_names_missing_changed_and_extra_files() {
        let fresh = tree(&[("index.html", "a"), ("assets/app-2.js", "js2")]);
        assert!(drift(&fresh, &fresh).is_empty());
        let committed = tree(&[("index.html", "b"), ("assets/app-1.js", "js1")]);
        assert_eq!(
            drift(&committed, &fresh),
            [
                format!("assets/app-2.js: missing from {BUNDLE}"),
                "index.html: differs from a fresh build".to_owned(),
                "assets/app-1.js: not in a fresh build".to_owned(),
            ]
        );
    }

    #[test]
    fn files_reads_a_tree_with_relative_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("assets")).unwrap();
        std::fs::write(dir.path().join("index.html"), "i").unwrap();
        std::fs::write(dir.path().join("assets/a.js"), "a").unwrap();
        let got = files(dir.path()).unwrap();
        assert_eq!(got, tree(&[("assets/a.js", "a"), ("index.html", "i")]));
        assert!(files(&dir.path().join("none")).unwrap().is_empty());
    }
}
