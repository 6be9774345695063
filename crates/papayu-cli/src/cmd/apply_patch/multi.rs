//! `papayu apply-patch [--project DIR] PATCH`: a multi-file patch (Codex envelope or unified
//! diff with `---`/`+++` headers) applied to the project as one transaction.
//!
//! Every file's new bytes are computed by the engine first, against the files as they are; a
//! single rejection reports its code and writes nothing. The result becomes a plan
//! (CREATE_FILE / DELETE_FILE / PATCH_FILE with `base_sha256`; a move is a CREATE_FILE of the
//! new path and a DELETE_FILE of the old) applied by the journaled transaction, so it is
//! all-or-nothing and undoable like any plan.

use std::path::Path;

use anyhow::Result;
use papayu_patch::engine::{
    CodexOp, EngineOptions, PatchFormat, apply_patch_to_text_as, compute, parse_codex,
};
use papayu_patch::{ApplyOptions, Checks};
use papayu_protocol::{Action, ActionKind, ErrorCode, sha256_hex};
use papayu_validate::{Context, RelPath, check_text};
use serde_json::json;

use crate::cmd::apply_plan::{open_project, report_error};
use crate::exit::{Exit, read_input, with_code};
use crate::global::Global;

/// Why the patch was not turned into a plan: the stable code, the file, the message.
#[derive(Debug)]
struct Rejection {
    code: ErrorCode,
    path: String,
    message: String,
}

fn reject(code: ErrorCode, path: &str, message: impl Into<String>) -> Rejection {
    Rejection {
        code,
        path: path.to_owned(),
        message: message.into(),
    }
}

/// One file's part of the patch, before the engine ran.
#[derive(Debug, PartialEq, Eq)]
enum Part {
    /// A new file with this content.
    Add { path: String, content: String },
    /// The file goes away.
    Delete { path: String },
    /// The file changes (and maybe moves); `patch` is read with `format`.
    Update {
        path: String,
        move_to: Option<String>,
        patch: String,
        format: PatchFormat,
    },
}

/// The parts of a Codex envelope or of a multi-file unified diff.
fn parts(patch: &str) -> Result<Vec<Part>, Rejection> {
    if PatchFormat::detect(patch) == PatchFormat::CodexEnvelope {
        let files = parse_codex(patch).map_err(|e| reject(e.code(), "", e.to_string()))?;
        return files
            .into_iter()
            .map(|f| match f.op {
                CodexOp::Add { content } => Ok(Part::Add {
                    path: f.path,
                    content,
                }),
                CodexOp::Delete => Ok(Part::Delete { path: f.path }),
                CodexOp::Update { move_to, .. } => Ok(Part::Update {
                    patch: codex_section(patch, &f.path),
                    path: f.path,
                    move_to,
                    format: PatchFormat::CodexEnvelope,
                }),
                other => Err(reject(
                    ErrorCode::PatchNotUnified,
                    &f.path,
                    format!("unsupported section {other:?}"),
                )),
            })
            .collect();
    }
    split_unified(patch)
}

/// The `*** Update File: path` section of an envelope, as an envelope of its own.
fn codex_section(patch: &str, path: &str) -> String {
    let mut out = String::from("*** Begin Patch\n");
    let mut inside = false;
    for line in patch.lines() {
        let t = line.trim_end();
        if let Some(p) = t.strip_prefix("*** Update File: ") {
            inside = p.trim() == path;
        } else if t.starts_with("*** ") && t != "*** End of File" && !t.starts_with("*** Move to: ")
        {
            inside = false;
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str("*** End Patch\n");
    out
}

/// A path from a `---`/`+++` header: `None` for `/dev/null`, else without its `a/`/`b/` prefix
/// and any tab-separated timestamp.
fn header_path(rest: &str) -> Option<String> {
    let p = rest.split('\t').next().unwrap_or(rest).trim_end();
    if p == "/dev/null" {
        return None;
    }
    let p = p
        .strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(p);
    Some(p.to_owned())
}

/// Split a unified diff at its file headers (`---` followed by `+++`).
fn split_unified(patch: &str) -> Result<Vec<Part>, Rejection> {
    let lines: Vec<&str> = patch.split_inclusive('\n').collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            lines[i].starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ "))
        })
        .collect();
    if starts.is_empty() {
        return Err(reject(
            ErrorCode::PatchNotUnified,
            "",
            "no `---`/`+++` file headers: give FILE PATCH for a single-file patch",
        ));
    }
    let mut out = Vec::new();
    for (k, &at) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(lines.len());
        let old = header_path(lines[at][4..].trim_end_matches(['\n', '\r']));
        let new = header_path(lines[at + 1][4..].trim_end_matches(['\n', '\r']));
        let body: String = lines[at..end].concat();
        let part = match (old, new) {
            (None, Some(path)) => Part::Add {
                content: added_text(&body, &path)?,
                path,
            },
            (Some(path), None) => Part::Delete { path },
            (Some(path), Some(to)) => Part::Update {
                move_to: (to != path).then_some(to),
                path,
                patch: body,
                format: PatchFormat::Unified,
            },
            (None, None) => {
                return Err(reject(
                    ErrorCode::PatchNotUnified,
                    "",
                    format!("line {}: both sides are /dev/null", at + 1),
                ));
            }
        };
        out.push(part);
    }
    Ok(out)
}

/// The content of a file a unified diff creates: its hunk applied to an empty text.
fn added_text(section: &str, path: &str) -> Result<String, Rejection> {
    apply_patch_to_text_as("", section, PatchFormat::Unified)
        .map(|p| p.text)
        .map_err(|e| reject(e.code(), path, e.to_string()))
}

/// The plan's actions: every part computed by the engine against the project's files.
fn actions(root: &Path, parts: &[Part]) -> Result<Vec<Action>, Rejection> {
    let read = |path: &str| -> Result<Option<Vec<u8>>, Rejection> {
        match fs_err::read(root.join(path)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(reject(ErrorCode::Io, path, e.to_string())),
        }
    };
    let mut out = Vec::new();
    for part in parts {
        match part {
            Part::Add { path, content } => {
                let mut a = Action::new(ActionKind::CreateFile, path);
                a.content = Some(content.clone());
                out.push(a);
            }
            Part::Delete { path } => {
                if read(path)?.is_none() {
                    return Err(reject(
                        ErrorCode::BaseMismatch,
                        path,
                        "the patch deletes a file that does not exist",
                    ));
                }
                out.push(Action::new(ActionKind::DeleteFile, path));
            }
            Part::Update {
                path,
                move_to,
                patch,
                format,
            } => {
                let old = read(path)?.ok_or_else(|| {
                    reject(
                        ErrorCode::BaseMismatch,
                        path,
                        "the patch updates a file that does not exist",
                    )
                })?;
                let mut a = Action::new(ActionKind::PatchFile, path);
                a.patch = Some(patch.clone());
                a.base_sha256 = Some(sha256_hex(&old));
                let new = compute(Some(&old), &a, &EngineOptions::default())
                    .map_err(|e| reject(e.code(), path, format!("{format}: {e}")))?
                    .new_bytes;
                // The transaction re-runs PATCH_FILE, which validation accepts only as a unified
                // diff: hand it the engine's result as a whole-file replacement.
                a.patch = Some(whole_file_diff(path, &old, &new));
                match move_to {
                    None => out.push(a),
                    Some(to) => {
                        let mut create = Action::new(ActionKind::CreateFile, to);
                        create.content = Some(String::from_utf8(new).map_err(|_| {
                            reject(ErrorCode::NonUtf8File, path, "the result is not UTF-8")
                        })?);
                        out.push(create);
                        out.push(Action::new(ActionKind::DeleteFile, path));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// A unified diff replacing every line of `old` by every line of `new`, byte for byte (CRs kept
/// on each side, `\ No newline` markers where a side has no final newline, BOM left to the
/// engine, which keeps the file's).
fn whole_file_diff(path: &str, old: &[u8], new: &[u8]) -> String {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    let side = |b: &[u8], mark: char| -> (usize, String) {
        let b = b.strip_prefix(BOM).unwrap_or(b);
        let text = String::from_utf8_lossy(b);
        let mut body = String::new();
        let mut n = 0usize;
        for line in text.split_inclusive('\n') {
            n += 1;
            body.push(mark);
            body.push_str(line);
            if !line.ends_with('\n') {
                body.push_str("\n\\ No newline at end of file\n");
            }
        }
        (n, body)
    };
    let (on, ob) = side(old, '-');
    let (nn, nb) = side(new, '+');
    let range = |n: usize| {
        if n == 0 {
            "0,0".to_owned()
        } else {
            format!("1,{n}")
        }
    };
    format!(
        "--- a/{path}\n+++ b/{path}\n@@ -{} +{} @@\n{ob}{nb}",
        range(on),
        range(nn)
    )
}

/// Exit 0 applied, 4 rejected by the engine or rolled back (nothing written), 3 rejected by
/// validation.
pub fn run(patch_path: &Path, global: &Global) -> Result<Exit> {
    let patch = read_input(patch_path)?;
    let project = open_project(global)?;
    let root = global.project_root()?;
    let planned = parts(&patch).and_then(|p| actions(&root, &p));
    let actions = match planned {
        Ok(a) => a,
        Err(r) => {
            if global.json {
                let doc = json!({"ok": false, "code": r.code, "path": r.path, "error": r.message});
                println!("{}", serde_json::to_string_pretty(&doc)?);
            } else {
                let at = if r.path.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", r.path)
                };
                eprintln!(
                    "papayu: {}: {at}{}",
                    crate::tr!("apply-patch-nothing-written"),
                    with_code(r.code, &r.message)
                );
            }
            return Ok(if r.code == ErrorCode::PatchNotUnified {
                Exit::from(ErrorCode::PatchApplyFailed)
            } else {
                Exit::from(r.code)
            });
        }
    };
    let version = global.protocol_version()?;
    let policy = crate::cmd::validate::load_policy(None, Some(&root))?;
    let plan_json = serde_json::to_string(
        &json!({"actions": actions, "summary": format!("papayu apply-patch {}", patch_path.display())}),
    )?;
    let exists = |p: &RelPath| root.join(p.as_str()).is_file();
    let ctx = Context::new(version).with_exists(&exists);
    let plan = match check_text(&plan_json, &ctx, &policy).into_plan() {
        Ok(p) => p,
        Err(rejected) => {
            let violations = rejected.violations();
            if global.json {
                let doc = json!({"ok": false, "stage": "validate", "violations": violations});
                println!("{}", serde_json::to_string_pretty(&doc)?);
            } else {
                for v in violations {
                    eprintln!(
                        "papayu: {}: {}",
                        crate::tr!("apply-patch-nothing-written"),
                        with_code(v.code, &v.message)
                    );
                }
            }
            return Ok(Exit::from(
                violations
                    .first()
                    .map_or(ErrorCode::PatchApplyFailed, |v| v.code),
            ));
        }
    };
    let options = ApplyOptions::default().checks(Checks::None);
    match project.transaction(&plan).options(options).apply() {
        Ok(report) => {
            if global.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({"ok": true, "report": report}))?
                );
            } else {
                for a in &actions {
                    println!("{:<12} {}", a.kind.as_str(), a.path);
                }
                println!(
                    "{}",
                    crate::tr!("apply-patch-applied-tx", tx = report.tx_id.to_string())
                );
            }
            Ok(Exit::Ok)
        }
        Err(e) => report_error(&e, global),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        dir
    }

    fn kinds(actions: &[Action]) -> Vec<(String, String)> {
        actions
            .iter()
            .map(|a| (a.kind.as_str().to_owned(), a.path.clone()))
            .collect()
    }

    #[test]
    fn codex_envelope_maps_to_create_patch_delete_and_move() {
        let dir = project(&[
            ("a.py", "x = 1\ny = 2\n"),
            ("old.txt", "gone\n"),
            ("m.txt", "keep\nme\n"),
        ]);
        let patch = "*** Begin Patch\n*** Add File: new/b.py\n+print('b')\n*** Update File: a.py\n@@\n x = 1\n-y = 2\n+y = 3\n*** Delete File: old.txt\n*** Update File: m.txt\n*** Move to: n.txt\n@@\n keep\n-me\n+you\n*** End Patch\n";
        let actions = actions(dir.path(), &parts(patch).unwrap()).unwrap();
        assert_eq!(
            kinds(&actions),
            [
                ("CREATE_FILE", "new/b.py"),
                ("PATCH_FILE", "a.py"),
                ("DELETE_FILE", "old.txt"),
                ("CREATE_FILE", "n.txt"),
                ("DELETE_FILE", "m.txt"),
            ]
            .map(|(k, p)| (k.to_owned(), p.to_owned()))
        );
        assert_eq!(actions[0].content.as_deref(), Some("print('b')\n"));
        assert_eq!(actions[3].content.as_deref(), Some("keep\nyou\n"));
        // the PATCH_FILE re-applies to exactly the engine's result
        let out = compute(
            Some(b"x = 1\ny = 2\n"),
            &actions[1],
            &EngineOptions::default(),
        )
        .unwrap();
        assert_eq!(out.new_bytes, b"x = 1\ny = 3\n");
    }

    #[test]
    fn multi_file_unified_diff_is_split_at_its_headers() {
        let patch = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\ndiff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n";
        let parts = parts(patch).unwrap();
        assert_eq!(parts.len(), 3);
        assert!(matches!(&parts[0], Part::Update { path, move_to: None, .. } if path == "a.txt"));
        assert_eq!(
            parts[1],
            Part::Add {
                path: "n.txt".into(),
                content: "one\ntwo\n".into()
            }
        );
        assert_eq!(
            parts[2],
            Part::Delete {
                path: "d.txt".into()
            }
        );
    }

    #[test]
    fn a_failure_after_a_partial_success_rejects_the_whole_patch() {
        let dir = project(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
        let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-missing\n+B\n*** End Patch\n";
        let err = actions(dir.path(), &parts(patch).unwrap()).unwrap_err();
        assert_eq!(err.code, ErrorCode::PatchApplyFailed);
        assert_eq!(err.path, "b.txt");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "a\n"
        );
    }

    #[test]
    fn whole_file_diff_is_byte_faithful() {
        for (old, new) in [
            (&b"a\r\nb\r\n"[..], &b"a\r\nB\r\n"[..]),
            (b"a\nb", b"a\nc"),
            (b"a\n", b"a"),
            (b"", b"x\n"),
            ("\u{feff}a\n".as_bytes(), "\u{feff}b\n".as_bytes()),
        ] {
            let mut a = Action::new(ActionKind::PatchFile, "f");
            a.patch = Some(whole_file_diff("f", old, new));
            a.base_sha256 = Some(sha256_hex(old));
            let out = compute(Some(old), &a, &EngineOptions::default()).unwrap();
            assert_eq!(out.new_bytes, new, "{:?}", a.patch);
        }
    }

    #[test]
    fn deleting_or_updating_a_missing_file_is_rejected() {
        let dir = project(&[]);
        for patch in [
            "*** Begin Patch\n*** Delete File: x\n*** End Patch\n",
            "*** Begin Patch\n*** Update File: x\n@@\n-a\n+b\n*** End Patch\n",
        ] {
            let err = actions(dir.path(), &parts(patch).unwrap()).unwrap_err();
            assert_eq!(err.code, ErrorCode::BaseMismatch);
        }
    }
}
