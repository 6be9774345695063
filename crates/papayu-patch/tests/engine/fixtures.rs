//! Scenario fixtures: `fixtures/NNN_name/{before, patch | action.json, after | error.txt}`.
//!
//! `patch` is a raw unified diff applied as a PATCH_FILE action; `action.json` is one protocol
//! action whose `base_sha256` may be `"auto"` (replaced by the hash of `before`). A missing `before`
//! means the file does not exist. `error.txt`: the expected code on the first line, then lines the
//! message must contain.

use std::path::Path;

use papayu_patch::engine::{EngineOptions, compute};
use papayu_protocol::{Action, ActionKind, sha256_hex};

fn run(dir: &Path) -> Result<(), String> {
    let read = |name: &str| std::fs::read(dir.join(name)).ok();
    let before = read("before");
    let mut action = if let Some(patch) = read("patch") {
        let mut a = Action::new(ActionKind::PatchFile, "file");
        a.patch = Some(String::from_utf8(patch).map_err(|e| e.to_string())?);
        a.base_sha256 = Some("auto".into());
        a
    } else {
        let json = read("action.json").ok_or("neither `patch` nor `action.json`")?;
        serde_json::from_slice::<Action>(&json).map_err(|e| format!("action.json: {e}"))?
    };
    if action.base_sha256.as_deref() == Some("auto") {
        action.base_sha256 = Some(sha256_hex(before.as_deref().unwrap_or_default()));
    }
    let opts = EngineOptions {
        normalize_eol_lf: dir.join("normalize_eol_lf").exists(),
    };
    let result = compute(before.as_deref(), &action, &opts);
    match (read("after"), read("error.txt")) {
        (Some(after), None) => match result {
            Ok(out) if out.new_bytes == after => Ok(()),
            Ok(out) => Err(format!(
                "wrong result:\n--- got\n{}\n--- expected\n{}",
                String::from_utf8_lossy(&out.new_bytes).escape_debug(),
                String::from_utf8_lossy(&after).escape_debug()
            )),
            Err(e) => Err(format!("expected success, got {}: {e}", e.code())),
        },
        (None, Some(error)) => {
            let error = String::from_utf8(error).map_err(|e| e.to_string())?;
            let mut lines = error.lines();
            let code = lines.next().unwrap_or_default().trim();
            match result {
                Ok(out) => Err(format!(
                    "expected {code}, got {:?}",
                    String::from_utf8_lossy(&out.new_bytes)
                )),
                Err(e) if e.code().as_str() != code => {
                    Err(format!("expected {code}, got {}: {e}", e.code()))
                }
                Err(e) => {
                    let msg = e.to_string();
                    match lines
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .find(|n| !msg.contains(n))
                    {
                        Some(n) => Err(format!("message {msg:?} lacks {n:?}")),
                        None => Ok(()),
                    }
                }
            }
        }
        _ => Err("exactly one of `after` and `error.txt` must exist".into()),
    }
}

#[test]
fn engine_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/engine/fixtures");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 10,
        "expected the engine fixtures under {}, found {}",
        root.display(),
        dirs.len()
    );
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| {
            run(d).err().map(|e| {
                format!(
                    "{}: {e}",
                    d.file_name().unwrap_or_default().to_string_lossy()
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}
