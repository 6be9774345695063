//! `papayu`: plan, review, apply and undo LLM code changes safely.
//!
//! Glue only: parse arguments, set up tracing, call one library function per command, map
//! the outcome to an exit code (SPEC §11): 0 ok, 1 failure, 2 usage or I/O error,
//! 3 validation rejected, 4 apply rejected or rolled back.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cmd;
mod events;
mod exit;
mod global;
mod help;
mod i18n;
mod json;
mod layers;
mod term;
mod vcs;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use papayu_protocol::ErrorCode;

use crate::exit::Exit;
use crate::global::Global;

/// papayu — safe, transactional code changes proposed by a language model.
#[derive(Debug, Parser)]
#[command(name = "papayu", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(flatten)]
    term: term::TermArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ask the model for a plan for GOAL (nothing is written; the plan is saved).
    Plan(cmd::plan::Args),
    /// Apply the saved plan: preview, confirm, apply all-or-nothing.
    Apply(cmd::apply::Args),
    /// Solve GOAL: a change verified by the project's tests, or the project as it was.
    Run(cmd::run_goal::Args),
    /// A REPL: goal → plan → "ok" → preview → confirm → apply; /undo, /diff, /help.
    Chat(cmd::chat::Args),
    /// Inspect traces (.papa-yu/traces, written with PAPAYU_TRACE=1).
    Trace(cmd::trace::Args),
    /// Metrics from the traces: fallback and repair rates, error codes, context, cache.
    Report(cmd::report::Args),
    /// Show or change the engineering memory (preferences).
    Memory(cmd::memory::Args),
    /// The local provider's models: fetch the default one, list the cached ones.
    Model(cmd::model::Args),
    /// Show or change the configuration: each value with where it came from.
    Config(cmd::config::Args),
    /// Check the configuration and the providers (reachability, structured output, latency).
    Doctor(cmd::doctor::Args),
    /// Send one prompt; print the raw and the parsed answer.
    Ask(cmd::ask::Args),
    /// Print the context block papayu would send for requests or an error text.
    Context(cmd::context::Args),
    /// Validate a plan (a model answer) against every rule and list all problems.
    Validate(cmd::validate::Args),
    /// Print the JSON schema of a protocol version.
    Schema(cmd::schema::Args),
    /// Show what a plan would change (unified diffs, counts, errors), writing nothing.
    Preview(cmd::preview::Args),
    /// Apply a plan transactionally (validate, preview, confirm, write, check, commit).
    ApplyPlan(cmd::apply_plan::Args),
    /// Undo the last transaction.
    Undo(cmd::undo::Args),
    /// Redo the last undone transaction.
    Redo(cmd::redo::Args),
    /// List the undo and redo stacks.
    History(cmd::history::Args),
    /// Serve the web UI on 127.0.0.1 and open it in a browser.
    Ui(cmd::ui::Args),
    /// Roll back a transaction a crash left unfinished.
    Recover(cmd::recover::Args),
    /// Apply one unified diff to one file (or a JSONL batch), reporting the tier per hunk.
    ApplyPatch(cmd::apply_patch::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::Args),
    /// Research a question on the web (Tavily or SearXNG) and print the cited summary.
    Research(cmd::research::Args),
    /// Design and icon trends from curated design sites, as cards.
    Trends(cmd::trends::Args),
    /// List the project's static-analysis findings (Snyk Code, SARIF).
    Findings(cmd::findings::Args),
    /// Run the model's proposed commands: allow-listed, validated, confirmed, no shell.
    Commands(cmd::commands::Args),
    /// Describe the project: languages, size, manifests, tests, findings, hot spots.
    Analyze(cmd::analyze::Args),
    /// Solve the goals of a file, each as its own verified transaction.
    Batch(cmd::batch::Args),
    /// Serve the project to an MCP client (Claude Code, Codex, Cursor…) over stdio.
    Mcp(cmd::mcp::Args),
    /// Run a command confined (the launcher of check commands).
    #[command(hide = true)]
    SandboxExec(cmd::sandbox_exec::Args),
}

impl Command {
    /// Whether the command was asked for a `--json-stream` transcript.
    fn json_stream(&self) -> bool {
        match self {
            Command::Plan(args) => args.json_stream,
            Command::Apply(args) => args.json_stream,
            Command::Run(args) => args.json_stream,
            _ => false,
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let mut cli = match help::parse(&args, term::ColorWhen::from_args(&args)) {
        Ok(cli) => cli,
        Err(e) => return usage(&e, &args),
    };
    term::init(cli.term.color);
    i18n::init(language());
    if cli.command.json_stream() {
        // A stream is machine output: every `--json` path applies, its document becomes the
        // `result` event.
        cli.global.json = true;
        json::set_streaming();
    }
    global::init_tracing(&cli.global);
    // Journals are trusted only when sealed with this user's key (created on first use).
    papayu_patch::use_journal_key_file(
        cmd::session::config_dir()
            .join("papayu")
            .join("journal.key"),
    );
    let result = match &cli.command {
        Command::Plan(args) => cmd::plan::run(args, &cli.global),
        Command::Apply(args) => cmd::apply::run(args, &cli.global),
        Command::Run(args) => cmd::run_goal::run(args, &cli.global),
        Command::Chat(args) => cmd::chat::run(args, &cli.global),
        Command::Trace(args) => cmd::trace::run(args, &cli.global),
        Command::Report(args) => cmd::report::run(args, &cli.global),
        Command::Memory(args) => cmd::memory::run(args, &cli.global),
        Command::Model(args) => cmd::model::run(args, &cli.global),
        Command::Config(args) => cmd::config::run(args, &cli.global),
        Command::Doctor(args) => cmd::doctor::run(args, &cli.global),
        Command::Ask(args) => cmd::ask::run(args, &cli.global),
        Command::Context(args) => cmd::context::run(args, &cli.global),
        Command::Validate(args) => cmd::validate::run(args, &cli.global),
        Command::Schema(args) => cmd::schema::run(args, &cli.global),
        Command::Preview(args) => cmd::preview::run(args, &cli.global),
        Command::ApplyPlan(args) => cmd::apply_plan::run(args, &cli.global),
        Command::Undo(args) => cmd::undo::run(args, &cli.global),
        Command::Redo(args) => cmd::redo::run(args, &cli.global),
        Command::History(args) => cmd::history::run(args, &cli.global),
        Command::Mcp(args) => cmd::mcp::run(args, &cli.global),
        Command::Ui(args) => cmd::ui::run(args, &cli.global),
        Command::Recover(args) => cmd::recover::run(args, &cli.global),
        Command::ApplyPatch(args) => cmd::apply_patch::run(args, &cli.global),
        Command::Completions(args) => cmd::completions::run(args, &cli.global),
        Command::SandboxExec(args) => cmd::sandbox_exec::run(args, &cli.global),
        Command::Research(args) => cmd::research::run(args, &cli.global),
        Command::Trends(args) => cmd::trends::run(args, &cli.global),
        Command::Findings(args) => cmd::findings::run(args, &cli.global),
        Command::Commands(args) => cmd::commands::run(args, &cli.global),
        Command::Analyze(args) => cmd::analyze::run(args, &cli.global),
        Command::Batch(args) => cmd::batch::run(args, &cli.global),
    };
    exit::finish(result, cli.global.json.then_some(json::print as fn(&_)))
}

/// The language of the human output (`PAPAYU_LANG`, else the locale), read once here.
#[allow(
    clippy::disallowed_methods,
    reason = "frontends read the environment once (SPEC §12)"
)]
fn language() -> i18n::Lang {
    i18n::Lang::choose(|name| std::env::var(name).ok())
}

/// clap's answer to a command line it could not use (or to `--help`, `--version`): as clap
/// prints it, or under `--json`/`--json-stream` as the machine document with `ERR_USAGE`.
fn usage(e: &clap::Error, args: &[OsString]) -> ExitCode {
    if !e.use_stderr() {
        let _ = e.print();
        return Exit::Ok.into();
    }
    match json::requested_in(args) {
        Some(stream) => {
            if stream {
                json::set_streaming();
            }
            let message = e.render().to_string();
            let message = message.trim_end().trim_start_matches("error: ");
            let body = serde_json::json!({ "error": message });
            json::print(&json::document(false, Some(ErrorCode::Usage), body));
        }
        None => {
            let _ = e.print();
        }
    }
    Exit::Usage.into()
}
