//! `papayu apply [--yes]`: ask for the changes of the saved plan, preview, confirm, apply.

use anyhow::Result;
use papayu_agent::{Agent, ApplyPreview};

use crate::cmd::apply_plan::print_preview;
use crate::cmd::plan::titled_lists;
use crate::cmd::session::{
    ProgressLine, confirm, open_agent, print_json, report_agent_error, runtime,
};
use crate::exit::{ConfirmationRequired, Exit};
use crate::global::Global;

/// Apply the saved plan (from `papayu plan`): preview, confirm, apply all-or-nothing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Apply without asking (deletions included).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Apply only these action indices (comma-separated, as shown in the preview).
    #[arg(long, value_delimiter = ',', value_name = "N,N")]
    pub only: Option<Vec<usize>>,
    /// Write the progress as JSON Lines events on stdout (`stage`, `tokens`, `preview`,
    /// `check`), ending with a `result` event holding the `--json` document.
    #[arg(long)]
    pub json_stream: bool,
}

/// Print the preview, confirm (unless `yes`), apply. Shared by `apply`, `run` and `chat`.
pub fn confirm_and_apply(
    agent: &Agent,
    preview: &ApplyPreview,
    yes: bool,
    only: Option<&[usize]>,
    global: &Global,
    progress: &ProgressLine,
) -> Result<Exit> {
    if crate::json::streaming() {
        crate::events::emit(&crate::events::Event::Preview(&serde_json::to_value(
            preview,
        )?));
    } else if !global.json {
        if let Some(f) = &preview.fallback {
            println!(
                "{}",
                crate::tr!(
                    "fallback-line",
                    from = f.from,
                    to = f.to,
                    reason = f.reason.to_string(),
                    stage = f.stage.to_string()
                )
            );
        }
        if let Some(s) = &preview.summary {
            println!("{s}");
        }
        for a in &preview.actions {
            println!("  [{}] {} {}", a.index, a.kind, a.path);
        }
        print_preview(&preview.preview);
        print!(
            "{}",
            titled_lists(&[
                (&crate::tr!("list-verification"), &preview.verification),
                (&crate::tr!("list-commands"), &preview.commands_to_run),
                (&crate::tr!("list-rollback"), &preview.rollback),
            ])
        );
    }
    if preview.no_changes {
        if global.json {
            print_json(preview)?;
        } else {
            println!("{}", crate::tr!("nothing-to-change"));
        }
        return Ok(Exit::Ok);
    }
    if preview.preview.summary.blocked > 0 {
        let code = preview
            .preview
            .files
            .iter()
            .find_map(|f| f.error.as_ref().map(|e| e.code))
            .unwrap_or(papayu_protocol::ErrorCode::PatchApplyFailed);
        // The machine document keeps its English message; people read theirs.
        let message = format!(
            "{} action(s) are blocked; nothing was written",
            preview.preview.summary.blocked
        );
        let said = crate::tr!("actions-blocked", count = preview.preview.summary.blocked);
        if global.json {
            crate::json::print_failure(code, &message, preview)?;
        } else {
            anstream::eprintln!("papayu: {}", crate::exit::with_code(code, &said));
        }
        return Ok(Exit::from(code));
    }
    let has_deletes = !preview.deletes.is_empty();
    if !yes && global.json {
        return Err(ConfirmationRequired(crate::tr!("needs-yes")).into());
    }
    let paths: Vec<String> = preview.actions.iter().map(|a| a.path.clone()).collect();
    crate::vcs::warn_uncommitted(global, &paths);
    if !yes {
        let question = if has_deletes {
            crate::tr!("confirm-apply-deleting", paths = preview.deletes.join(", "))
        } else {
            crate::tr!("confirm-apply")
        };
        if !confirm(&question)? {
            if preview.from_saved_plan() {
                eprintln!("papayu: {}", crate::tr!("not-applied-saved"));
            } else {
                eprintln!("papayu: {}", crate::tr!("not-applied"));
            }
            return Ok(Exit::Failure);
        }
    }
    match agent.apply(preview, only, yes || has_deletes, &|p| progress.show(p)) {
        Ok(outcome) => {
            progress.done();
            if global.json {
                print_json(&outcome)?;
            } else if let Some(report) = &outcome.report {
                println!(
                    "{}",
                    crate::tr!("applied-tx", tx = report.tx_id.to_string())
                );
            } else {
                println!("{}", crate::tr!("applied"));
            }
            if let Some(report) = &outcome.report {
                let summary = preview.summary.as_deref().unwrap_or(&preview.goal);
                if let Some(said) =
                    crate::vcs::commit_applied(global, &touched(report), summary, &report.tx_id)
                {
                    eprintln!("papayu: {said}");
                }
            }
            Ok(Exit::Ok)
        }
        Err(e) => {
            progress.done();
            report_agent_error(&e, global)
        }
    }
}

/// Apply the saved plan.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let mut agent = open_agent(global)?;
    let progress = ProgressLine::new(global);
    let preview = runtime()?.block_on(agent.prepare_apply(None, &|p| progress.show(p)));
    progress.done();
    match preview {
        Ok(preview) => confirm_and_apply(
            &agent,
            &preview,
            args.yes,
            args.only.as_deref(),
            global,
            &progress,
        ),
        Err(e) => report_agent_error(&e, global),
    }
}

/// The paths a transaction touched.
pub fn touched(report: &papayu_patch::ApplyReport) -> Vec<String> {
    report.files.iter().map(|f| f.path.clone()).collect()
}
