//! `papayu validate <plan.json> [--mode plan|apply] [--policy FILE]`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use papayu_validate::{Context, Mode, Policy, RelPath, check_text};
use serde_json::json;

use crate::exit::{Exit, UsageError, read_input};
use crate::global::Global;

/// Validate a plan (a model answer) against every rule and list all problems.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan: a model answer (JSON, possibly in prose or a ```json fence); `-` for stdin.
    pub plan: PathBuf,
    /// Also apply the mode rules of PLAN or APPLY.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Policy file (default: PROJECT/.papa-yu/policy.json when it exists).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

/// `--mode` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ModeArg {
    /// A plan for review: no actions allowed.
    Plan,
    /// Changes to apply: actions, or a `NO_CHANGES:` summary.
    Apply,
}

/// Load the policy the user named, or the project's, or the defaults.
pub fn load_policy(explicit: Option<&Path>, project: Option<&Path>) -> Result<Policy> {
    let path = match (explicit, project) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(root)) => root.join(".papa-yu/policy.json"),
        (None, None) => PathBuf::from(".papa-yu/policy.json"),
    };
    let text = if explicit.is_some() {
        read_input(&path)?
    } else {
        // The project's own file may have come with a clone: never follow a symlink there, nor
        // wait on a FIFO.
        match papayu_patch::read_state_file(&path) {
            Ok(text) => text,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(Policy::default());
            }
            Err(e) => return Err(UsageError(e.to_string()).into()),
        }
    };
    Policy::from_json(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())).into())
}

/// Exit 0 when valid, 3 when rejected, 2 when the file cannot be read.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let version = global.protocol_version()?;
    let text = read_input(&args.plan)?;
    let policy = load_policy(args.policy.as_deref(), global.project.as_deref())?;
    // Existence matters only for the v2 UPDATE_FILE rule, and only when a project was named.
    let root = global.project.clone();
    let exists = move |p: &RelPath| root.as_ref().is_some_and(|r| r.join(p.as_str()).is_file());
    let mut ctx = Context::new(version);
    if global.project.is_some() {
        ctx = ctx.with_exists(&exists);
    }
    if let Some(mode) = args.mode {
        ctx = ctx.with_mode(match mode {
            ModeArg::Plan => Mode::Plan,
            ModeArg::Apply => Mode::Apply,
        });
    }
    let report = check_text(&text, &ctx, &policy);
    let violations = report.violations();
    let exit = if report.is_valid() {
        Exit::Ok
    } else {
        Exit::Rejected
    };
    if global.json {
        let body = json!({
            "file": args.plan.display().to_string(),
            "protocol": version.number(),
            "violation_count": violations.len(),
            "violations": violations,
        });
        let code = violations.first().map(|v| v.code);
        crate::json::print(&crate::json::document(report.is_valid(), code, body));
        return Ok(exit);
    }
    let name = args.plan.display().to_string();
    if violations.is_empty() {
        println!(
            "{}",
            crate::tr!("plan-valid", file = name, protocol = version.to_string())
        );
        return Ok(exit);
    }
    println!(
        "{}",
        crate::tr!(
            "plan-rejected",
            file = name,
            count = violations.len(),
            protocol = version.to_string()
        )
    );
    for v in violations {
        let location = match (v.action_index, v.path.as_deref().filter(|p| !p.is_empty())) {
            (Some(i), Some(p)) => crate::tr!("at-action-path", index = i, path = format!("{p:?}")),
            (Some(i), None) => crate::tr!("at-action", index = i),
            (None, _) => match v.pointer.as_deref() {
                Some("") | None => crate::tr!("at-plan"),
                Some(p) => p.to_owned(),
            },
        };
        println!(
            "  {:<28} {location}: {}",
            v.code.as_str(),
            violation_text(v.code, &v.message)
        );
    }
    Ok(exit)
}

/// A violation's message for people: the validator's own, and in Russian what its code means
/// first.
pub fn violation_text(code: papayu_protocol::ErrorCode, message: &str) -> String {
    crate::tr!(
        "violation",
        meaning = crate::i18n::meaning(code),
        detail = message.to_owned()
    )
}
