//! `papayu apply-plan <plan.json> [--yes] [--check CMD]... [--no-check]`, and the helpers the
//! other transaction commands share (loading a plan, printing a preview, reporting an error).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use papayu_patch::{ApplyOptions, Checks, Preview, Project};
use papayu_validate::{Context, RelPath, ValidatedPlan, check_text};
use serde_json::json;

use crate::exit::{Coded, ConfirmationRequired, Exit, read_input, with_code};
use crate::global::Global;

/// Apply a plan (a model answer) transactionally: validate, preview, confirm, apply, check.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan: a model answer (JSON, possibly in prose or a ```json fence); `-` for stdin.
    pub plan: PathBuf,
    /// Apply without asking for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// A check command to run before committing (repeatable; default: detected from the project).
    #[arg(long = "check", value_name = "CMD")]
    pub check: Vec<String>,
    /// Run no check commands.
    #[arg(long, conflicts_with = "check")]
    pub no_check: bool,
    /// Timeout of each check command, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub check_timeout: u64,
}

/// Outcome of loading a plan file: either the validated plan or the exit to take.
pub enum Loaded {
    /// Ready for the engine.
    Plan(ValidatedPlan),
    /// Rejected by validation (already reported).
    Rejected(Exit),
}

/// The project root (`--project`, else discovered), opened (which runs recovery).
pub fn open_project(global: &Global) -> Result<Project> {
    opened(global, |root| Project::open(root))
}

/// The project root for a read-only command: without a `.papa-yu/` nothing is created.
pub fn inspect_project(global: &Global) -> Result<Project> {
    opened(global, |root| Project::inspect(root))
}

fn opened(
    global: &Global,
    open: fn(&Path) -> Result<Project, papayu_patch::OpenError>,
) -> Result<Project> {
    let root = global.project_root()?;
    open(&root).map_err(|e| {
        anyhow::Error::new(e).context(format!("cannot open project {}", root.display()))
    })
}

/// Parse and validate a plan file with the effective protocol version; report a rejection.
pub fn load_plan(path: &Path, global: &Global) -> Result<Loaded> {
    let version = global.protocol_version()?;
    let text = read_input(path)?;
    let root = global.project_root()?;
    let policy = crate::cmd::validate::load_policy(None, Some(&root))?;
    let exists = |p: &RelPath| root.join(p.as_str()).is_file();
    let ctx = Context::new(version).with_exists(&exists);
    let report = check_text(&text, &ctx, &policy);
    match report.into_plan() {
        Ok(plan) => Ok(Loaded::Plan(plan)),
        Err(rejected) => {
            let violations = rejected.violations();
            if global.json {
                let code = violations
                    .first()
                    .map_or(papayu_protocol::ErrorCode::SchemaValidation, |v| v.code);
                let body = json!({"stage": "validate", "protocol": version.number(), "violations": violations});
                crate::json::print_failure(code, "rejected by validation", &body)?;
            } else {
                eprintln!(
                    "{}",
                    crate::tr!(
                        "plan-rejected-by-validation",
                        file = path.display().to_string(),
                        protocol = version.to_string()
                    )
                );
                for v in violations {
                    let at = v
                        .action_index
                        .map(|i| format!("{} ", crate::tr!("at-action", index = i)))
                        .unwrap_or_default();
                    eprintln!(
                        "  {:<28} {at}{}",
                        v.code.as_str(),
                        crate::cmd::validate::violation_text(v.code, &v.message)
                    );
                }
            }
            Ok(Loaded::Rejected(Exit::Rejected))
        }
    }
}

/// Report an engine error (JSON or text, with its code) and return its exit code.
pub fn report_error(e: &impl Coded, global: &Global) -> Result<Exit> {
    if global.json {
        crate::json::print_failure(e.code(), &e.to_string(), &serde_json::Value::Null)?;
    } else {
        anstream::eprintln!("papayu: {}", with_code(e.code(), &e.to_string()));
    }
    Ok(Exit::from(e.code()))
}

/// Print a preview for people (coloured as `--color` says).
pub fn print_preview(preview: &Preview) {
    for f in &preview.files {
        let what = if f.noop {
            crate::tr!("preview-no-change")
        } else {
            String::new()
        };
        let sizes = match (f.old_bytes, f.new_bytes) {
            (Some(a), Some(b)) => crate::tr!("preview-bytes-changed", old = a, new = b),
            (None, Some(b)) => crate::tr!("preview-bytes-new", new = b),
            (Some(a), None) => crate::tr!("preview-bytes-removed", old = a),
            (None, None) if f.removed_files > 0 => {
                crate::tr!("preview-files", count = f.removed_files)
            }
            _ => String::new(),
        };
        println!("{} {}{sizes}{what}", f.kind, f.path);
        for h in &f.hunks {
            println!(
                "{}",
                crate::tr!(
                    "preview-hunk",
                    index = h.index + 1,
                    header = h.header.clone(),
                    tier = h.tier.to_string(),
                    line = h.old_start
                )
            );
        }
        if let Some(e) = &f.error {
            anstream::println!(
                "  {} {}",
                crate::term::style::paint(crate::term::style::BAD, &crate::tr!("preview-blocked")),
                with_code(e.code, &e.message)
            );
        }
        if !f.diff.is_empty() {
            anstream::print!("{}", crate::term::style::diff(&f.diff));
        }
    }
    let s = &preview.summary;
    println!(
        "{}",
        crate::tr!(
            "preview-summary",
            create = s.create,
            update = s.update,
            patch = s.patch,
            edit = s.edit,
            delete = s.delete,
            mkdir = s.mkdir,
            rmdir = s.rmdir,
            blocked = s.blocked
        )
    );
}

fn confirm(deletes: bool) -> Result<bool> {
    crate::cmd::session::confirm(&if deletes {
        crate::tr!("confirm-apply-with-deletions")
    } else {
        crate::tr!("confirm-apply")
    })
}

#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
fn normalize_eol_from_env() -> bool {
    std::env::var("PAPAYU_NORMALIZE_EOL").is_ok_and(|v| v.trim().eq_ignore_ascii_case("lf"))
}

/// Exit 0 applied, 3 rejected by validation, 4 rejected by the engine or rolled back.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let project = open_project(global)?;
    let plan = match load_plan(&args.plan, global)? {
        Loaded::Plan(p) => p,
        Loaded::Rejected(exit) => return Ok(exit),
    };
    let normalize = normalize_eol_from_env();
    let preview = match project
        .transaction(&plan)
        .options(ApplyOptions::default().normalize_eol_lf(normalize))
        .preview()
    {
        Ok(p) => p,
        Err(e) => return report_error(&e, global),
    };
    if !global.json {
        print_preview(&preview);
    }
    if !args.yes && global.json {
        return Err(ConfirmationRequired(crate::tr!("needs-yes-apply")).into());
    }
    let paths: Vec<String> = preview.files.iter().map(|f| f.path.clone()).collect();
    crate::vcs::warn_uncommitted(global, &paths);
    if !args.yes {
        let deletes = preview.summary.delete + preview.summary.rmdir > 0;
        if !confirm(deletes)? {
            anstream::eprintln!(
                "papayu: {}",
                with_code(
                    papayu_protocol::ErrorCode::Cancelled,
                    &crate::tr!("cancelled-nothing-changed")
                )
            );
            return Ok(Exit::Failure);
        }
    }
    let checks = if args.no_check {
        Checks::None
    } else if args.check.is_empty() {
        Checks::Detect
    } else {
        Checks::Commands(args.check.clone())
    };
    let options = ApplyOptions::default()
        .normalize_eol_lf(normalize)
        .checks(checks)
        .check_timeout(Duration::from_secs(args.check_timeout));
    match project.transaction(&plan).options(options).apply() {
        Ok(report) => {
            if global.json {
                crate::json::print_ok(&json!({"report": report}))?;
            } else {
                let colour = crate::term::stdout_colored();
                for c in &report.checks {
                    anstream::println!(
                        "{}",
                        crate::term::progress::check_line(
                            colour,
                            &c.command,
                            c.success,
                            &c.status.to_string(),
                            c.duration_ms
                        )
                    );
                }
                println!(
                    "{}",
                    crate::tr!("applied-plan-tx", tx = report.tx_id.to_string())
                );
            }
            if let Some(said) = crate::vcs::commit_applied(
                global,
                &crate::cmd::apply::touched(&report),
                &plan_summary(&args.plan, plan.version()),
                &report.tx_id,
            ) {
                eprintln!("papayu: {said}");
            }
            Ok(Exit::Ok)
        }
        Err(e) => report_error(&e, global),
    }
}

/// The plan file's `summary` (the commit message of `--commit`), else its name.
fn plan_summary(path: &Path, version: papayu_protocol::ProtocolVersion) -> String {
    fs_err::read_to_string(path)
        .ok()
        .and_then(|text| papayu_protocol::parse_response(&text, version).ok())
        .and_then(|r| r.summary)
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| format!("papayu: apply {}", path.display()))
}
