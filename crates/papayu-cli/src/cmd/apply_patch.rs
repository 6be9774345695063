//! `papayu apply-patch <file> <patch> [-o OUT]`, `papayu apply-patch [--project DIR] <patch>`
//! (a multi-file patch as one transaction) and `--batch <manifest.jsonl>`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use papayu_patch::engine::apply_patch_to_text;
use serde_json::json;

use crate::exit::{Exit, UsageError, read_input};
use crate::global::Global;

mod multi;

/// Apply a patch: FILE PATCH patches one file (outside any transaction), reporting the tier per
/// hunk; PATCH alone applies a multi-file patch (a Codex `*** Begin Patch` envelope or a unified
/// diff with `---`/`+++` headers) to the project as one undoable transaction.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The file to patch (with PATCH); alone, the multi-file patch to apply to the project.
    #[arg(required_unless_present = "batch")]
    pub file: Option<PathBuf>,
    /// The patch: a unified diff, a Codex envelope or SEARCH/REPLACE blocks.
    pub patch: Option<PathBuf>,
    /// Write the result here instead of over FILE.
    #[arg(short = 'o', long, value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// Apply every line `{"file":…,"patch":…,"out":…}` of a JSONL manifest in one process.
    #[arg(long, value_name = "MANIFEST", conflicts_with_all = ["file", "patch", "out"])]
    pub batch: Option<PathBuf>,
}

struct One {
    ok: bool,
    value: serde_json::Value,
}

fn apply_one(file: &Path, patch: &Path, out: Option<&Path>) -> Result<One> {
    let text = fs_err::read(file).map_err(|e| UsageError(e.to_string()))?;
    let patch_text = read_input(patch)?;
    let Ok(text) = String::from_utf8(text) else {
        return Ok(One {
            ok: false,
            value: json!({"file": file, "ok": false, "code": "ERR_NON_UTF8_FILE", "error": "the file is not UTF-8"}),
        });
    };
    match apply_patch_to_text(&text, &patch_text) {
        Ok(p) => {
            let target = out.unwrap_or(file);
            fs_err::write(target, p.text.as_bytes()).map_err(|e| UsageError(e.to_string()))?;
            let hunks: Vec<_> = p
                .hunks
                .iter()
                .map(|h| json!({"index": h.index, "header": h.header, "tier": h.tier.as_str(), "old_start": h.old_start}))
                .collect();
            Ok(One {
                ok: true,
                value: json!({"file": file, "out": target, "ok": true, "hunks": hunks}),
            })
        }
        Err(e) => Ok(One {
            ok: false,
            value: json!({"file": file, "ok": false, "code": e.code(), "error": e.to_string()}),
        }),
    }
}

/// One line of a batch manifest.
struct Job {
    file: PathBuf,
    patch: PathBuf,
    out: Option<PathBuf>,
}

/// Apply every job, in manifest order, on as many threads as the machine has: each item is
/// independent (its own input and output files), and one thread left the second core idle
/// while it waited on reads and writes (issue #17's batch throughput).
fn apply_all(jobs: &[Job]) -> Vec<Result<One>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, jobs.len().max(1));
    let per_thread = jobs.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(per_thread)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|j| apply_one(&j.file, &j.patch, j.out.as_deref()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(results) => results,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}

/// Exit 0 applied, 4 rejected (any line, in batch mode), 2 unreadable input.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    if let Some(manifest) = &args.batch {
        let started = Instant::now();
        let text = read_input(manifest)?;
        let base = manifest.parent().unwrap_or(Path::new("."));
        let mut jobs = Vec::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| UsageError(format!("{}:{}: {e}", manifest.display(), n + 1)))?;
            let get = |k: &str| v.get(k).and_then(|x| x.as_str()).map(|s| base.join(s));
            let (Some(file), Some(patch)) = (get("file"), get("patch")) else {
                return Err(UsageError(format!(
                    "{}:{}: needs \"file\" and \"patch\"",
                    manifest.display(),
                    n + 1
                ))
                .into());
            };
            jobs.push(Job {
                file,
                patch,
                out: get("out"),
            });
        }
        let mut results = Vec::with_capacity(jobs.len());
        let (mut applied, mut rejected) = (0usize, 0usize);
        for one in apply_all(&jobs) {
            let one = one?;
            if one.ok {
                applied += 1;
            } else {
                rejected += 1;
            }
            results.push(one.value);
        }
        let secs = started.elapsed().as_secs_f64();
        let code = results.iter().find_map(|r| {
            r.get("code")
                .and_then(|c| serde_json::from_value(c.clone()).ok())
        });
        let doc = json!({
            "total": applied + rejected, "applied": applied, "rejected": rejected,
            "seconds": secs, "patches_per_second": if secs > 0.0 { (applied + rejected) as f64 / secs } else { 0.0 },
            "results": results,
        });
        crate::json::print(&crate::json::document(rejected == 0, code, doc));
        return Ok(if rejected == 0 {
            Exit::Ok
        } else {
            Exit::RolledBack
        });
    }
    let (Some(file), Some(patch)) = (&args.file, &args.patch) else {
        return match (&args.file, &args.out) {
            (Some(patch), None) => multi::run(patch, global),
            _ => Err(UsageError("give FILE and PATCH, PATCH, or --batch MANIFEST".into()).into()),
        };
    };
    let one = apply_one(file, patch, args.out.as_deref())?;
    if global.json {
        let code = one
            .value
            .get("code")
            .and_then(|c| serde_json::from_value(c.clone()).ok());
        crate::json::print(&crate::json::document(one.ok, code, one.value.clone()));
    } else if one.ok {
        for h in one.value["hunks"].as_array().into_iter().flatten() {
            println!(
                "{}",
                crate::tr!(
                    "apply-patch-hunk",
                    index = h["index"].as_u64().unwrap_or(0) + 1,
                    tier = h["tier"].as_str().unwrap_or(""),
                    line = h["old_start"].to_string(),
                    header = h["header"].as_str().unwrap_or("")
                )
            );
        }
        println!(
            "{}",
            crate::tr!(
                "apply-patch-applied-to",
                path = one.value["out"].as_str().unwrap_or_default()
            )
        );
    } else {
        // The stable code in human output too (issue #17 item 4), as the multi-file form prints it.
        let code = one.value["code"]
            .as_str()
            .unwrap_or("ERR_PATCH_APPLY_FAILED");
        eprintln!(
            "papayu: {}: {code}: {}",
            crate::tr!("apply-patch-rejected"),
            one.value["error"].as_str().unwrap_or_default()
        );
    }
    Ok(if one.ok { Exit::Ok } else { Exit::RolledBack })
}
