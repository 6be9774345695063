//! Scenario fixtures `tests/fixtures/NNN_name/{before/, plan.json, after/ or error.txt}`,
//! compared as whole trees.

use std::path::{Path, PathBuf};

use papayu_patch::Project;
use papayu_protocol::ProtocolVersion;

use crate::common::{copy_tree, plan, tree_no_mode};

fn fixture_dirs() -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap_or_else(|e| panic!("no fixture directory {}: {e}", base.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("plan.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn check(dir: &Path) -> Result<(), String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let version = match std::fs::read_to_string(dir.join("protocol")) {
        Ok(s) => ProtocolVersion::from_number(s.trim().parse().unwrap()).unwrap(),
        Err(_) => ProtocolVersion::V2,
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("project");
    copy_tree(&dir.join("before"), &root);
    let before = tree_no_mode(&root);
    let plan = plan(
        &std::fs::read_to_string(dir.join("plan.json")).unwrap(),
        version,
    );
    let project = Project::open(&root).unwrap();
    let preview = project.transaction(&plan).preview().unwrap();
    let result = project.transaction(&plan).apply();
    let expected_error = std::fs::read_to_string(dir.join("error.txt")).ok();
    match (expected_error, result) {
        (None, Ok(_)) => {
            if !preview.is_ok() {
                return Err(format!(
                    "{name}: preview predicted an error but apply succeeded: {preview:?}"
                ));
            }
            let want = tree_no_mode(&{
                let w = tmp.path().join("want");
                copy_tree(&dir.join("after"), &w);
                w
            });
            let got = tree_no_mode(&root);
            if got != want {
                return Err(format!(
                    "{name}: tree differs\n got: {got:?}\nwant: {want:?}"
                ));
            }
            // And undo restores the before tree exactly.
            project
                .undo(false)
                .map_err(|e| format!("{name}: undo failed: {e}"))?;
            if tree_no_mode(&root) != before {
                return Err(format!("{name}: undo did not restore the before tree"));
            }
        }
        (None, Err(e)) => return Err(format!("{name}: expected success, got {e}")),
        (Some(code), Ok(_)) => {
            return Err(format!(
                "{name}: expected {}, but apply succeeded",
                code.trim()
            ));
        }
        (Some(code), Err(e)) => {
            if e.code().as_str() != code.trim() {
                return Err(format!(
                    "{name}: expected {}, got {} ({e})",
                    code.trim(),
                    e.code()
                ));
            }
            if preview.is_ok() {
                return Err(format!("{name}: preview did not predict {}", code.trim()));
            }
            let predicted: Vec<_> = preview
                .files
                .iter()
                .filter_map(|f| f.error.as_ref())
                .map(|e| e.code)
                .collect();
            if !predicted.contains(&e.code()) {
                return Err(format!(
                    "{name}: preview predicted {predicted:?}, apply hit {}",
                    e.code()
                ));
            }
            if tree_no_mode(&root) != before {
                return Err(format!("{name}: a failed apply changed the tree"));
            }
        }
    }
    Ok(())
}

#[test]
fn fixture_scenarios() {
    let dirs = fixture_dirs();
    assert!(
        dirs.len() >= 20,
        "expected the fixture scenarios, found {}",
        dirs.len()
    );
    let failures: Vec<String> = dirs.iter().filter_map(|d| check(d).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_error_code_of_section_5_has_a_fixture_or_a_test() {
    let mut covered: Vec<String> = fixture_dirs()
        .iter()
        .filter_map(|d| std::fs::read_to_string(d.join("error.txt")).ok())
        .map(|s| s.trim().to_owned())
        .collect();
    // Covered by dedicated tests in this binary (lock, symlinks, checks, undo, I/O faults).
    covered.extend(
        [
            "ERR_LOCKED",
            "ERR_PATH_ESCAPES_ROOT",
            "ERR_CHECK_FAILED",
            "ERR_UNDO_CONFLICT",
            "ERR_NOTHING_TO_UNDO",
            "ERR_IO",
            // harm::rollback
            "ERR_ROLLBACK_CONFLICT",
        ]
        .map(String::from),
    );
    for code in [
        "ERR_LOCKED",
        "ERR_BASE_MISMATCH",
        "ERR_EDIT_BASE_MISMATCH",
        "ERR_NON_UTF8_FILE",
        "ERR_PATCH_APPLY_FAILED",
        "ERR_EDIT_AMBIGUOUS",
        "ERR_EDIT_ANCHOR_NOT_FOUND",
        "ERR_EDIT_BEFORE_NOT_FOUND",
        "ERR_FILE_EXISTS",
        "ERR_CHECK_FAILED",
        "ERR_UNDO_CONFLICT",
        "ERR_ROLLBACK_CONFLICT",
        "ERR_PATH_ESCAPES_ROOT",
        "ERR_RANGE_INVALID",
        "ERR_V2_UPDATE_EXISTING_FORBIDDEN",
    ] {
        assert!(
            covered.iter().any(|c| c == code),
            "no fixture or test for {code}"
        );
    }
}
