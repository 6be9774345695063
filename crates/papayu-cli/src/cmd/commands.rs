//! `papayu commands [LINE]… [--yes --allow-commands]`: run the commands the model proposed (the
//! saved plan's `commands_to_run`, else agent-sync's `proposed_commands`, or the lines given),
//! each only when the allow-list and its argument rules accept it, each confirmed — `--yes`
//! alone does not cover them — in the project root, with a timeout, without a shell.

use anyhow::Result;
use camino::Utf8PathBuf;
use papayu_integrations::automation::{self, CheckedCommand};
use papayu_integrations::{AutomationError, sync};

use crate::cmd::research::{fail, integrations_config};
use crate::cmd::session::{confirm, print_json};
use crate::exit::{Exit, UsageError};
use crate::global::Global;

/// Run proposed commands (allow-listed, validated, confirmed).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Command lines to run instead of the proposed ones.
    pub lines: Vec<String>,
    /// Do not ask (only together with --allow-commands).
    #[arg(long)]
    pub yes: bool,
    /// Let --yes cover commands.
    #[arg(long)]
    pub allow_commands: bool,
    /// Only list what would run and what is refused.
    #[arg(long)]
    pub dry_run: bool,
}

fn proposed(root: &Utf8PathBuf) -> Vec<String> {
    papayu_agent::load_saved_plan(root)
        .ok()
        .flatten()
        .map(|p| p.response.commands_to_run)
        .filter(|c| !c.is_empty())
        .or_else(|| sync::read(root).map(|d| d.proposed_commands))
        .unwrap_or_default()
}

/// Exit 0 when every accepted command ran and succeeded; 1 when one failed or was refused;
/// 2 when automation is off.
pub fn run(args: &Args, global: &Global) -> Result<Exit> {
    let config = integrations_config()?;
    if !config.automation.enabled {
        let e = AutomationError::Disabled;
        return fail(e.code(), &e.to_string(), global);
    }
    if global.json && !(args.dry_run || args.yes && args.allow_commands) {
        return Err(UsageError(
            "--json cannot ask: add --yes --allow-commands, or --dry-run".into(),
        )
        .into());
    }
    let root = Utf8PathBuf::from_path_buf(global.project_root()?)
        .map_err(|p| UsageError(format!("project {} is not UTF-8", p.display())))?;
    let lines = if args.lines.is_empty() {
        proposed(&root)
    } else {
        args.lines.clone()
    };
    let mut report = Vec::new();
    let mut ok = true;
    for line in &lines {
        let checked: Result<CheckedCommand, AutomationError> = automation::split_line(line)
            .and_then(|words| automation::check(&words, &config.automation.allow, &root));
        let command = match checked {
            Ok(c) => c,
            Err(e) => {
                ok = false;
                if !global.json {
                    eprintln!("{}", crate::tr!("commands-refused", error = e.to_string()));
                }
                report.push(
                    serde_json::json!({"line": line, "refused": e.to_string(), "code": e.code()}),
                );
                continue;
            }
        };
        let shown = command.display();
        let go = !args.dry_run
            && if args.yes && args.allow_commands {
                true
            } else {
                confirm(&crate::tr!(
                    "confirm-run-command",
                    command = shown.to_string(),
                    root = root.to_string()
                ))?
            };
        if !go {
            report.push(serde_json::json!({"line": line, "command": shown, "ran": false}));
            continue;
        }
        match automation::run(&command, &root, config.automation.timeout) {
            Ok(done) => {
                ok &= done.success();
                if !global.json {
                    print!("{}", done.stdout);
                    eprint!("{}", done.stderr);
                    let how = match (done.timed_out, done.exit_code) {
                        (true, _) => crate::tr!("commands-timed-out"),
                        (false, Some(c)) => crate::tr!("commands-exit", code = c),
                        (false, None) => crate::tr!("commands-killed"),
                    };
                    println!("$ {shown}: {how}");
                }
                report.push(serde_json::json!({"line": line, "command": shown, "ran": true, "result": done}));
            }
            Err(e) => {
                ok = false;
                if !global.json {
                    eprintln!("{e}");
                }
                report.push(
                    serde_json::json!({"line": line, "command": shown, "error": e.to_string()}),
                );
            }
        }
    }
    if global.json {
        print_json(&serde_json::json!({"commands": report, "all_ok": ok}))?;
    } else if lines.is_empty() {
        println!("{}", crate::tr!("commands-none"));
    }
    Ok(if ok { Exit::Ok } else { Exit::Failure })
}
