//! `papayu`: plan, review, apply and undo LLM code changes safely.
//!
//! Glue only: parse arguments, set up tracing, call one library function per command, map
//! the outcome to an exit code (SPEC §11): 0 ok, 1 failure, 2 usage or I/O error,
//! 3 validation rejected, 4 apply rejected or rolled back.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cmd;
mod exit;
mod global;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::exit::Exit;
use crate::global::Global;

/// papayu — safe, transactional code changes proposed by a language model.
#[derive(Debug, Parser)]
#[command(name = "papayu", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    global: Global,
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
    /// Interactive: plan → "ok" → preview → confirm → apply; undo.
    Chat(cmd::chat::Args),
    /// Inspect traces (.papa-yu/traces, written with PAPAYU_TRACE=1).
    Trace(cmd::trace::Args),
    /// Metrics from the traces: fallback and repair rates, error codes, context, cache.
    Report(cmd::report::Args),
    /// Show or change the engineering memory (preferences).
    Memory(cmd::memory::Args),
    /// The local provider's models: fetch the default one, list the cached ones.
    Model(cmd::model::Args),
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
    /// Serve the project to an MCP client (Claude Code, Codex, Cursor…) over stdio.
    Mcp(cmd::mcp::Args),
    /// Run a command confined (the launcher of check commands).
    #[command(hide = true)]
    SandboxExec(cmd::sandbox_exec::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
            let _ = e.print();
            return code.into();
        }
    };
    global::init_tracing(&cli.global);
    let result = match &cli.command {
        Command::Plan(args) => cmd::plan::run(args, &cli.global),
        Command::Apply(args) => cmd::apply::run(args, &cli.global),
        Command::Run(args) => cmd::run_goal::run(args, &cli.global),
        Command::Chat(args) => cmd::chat::run(args, &cli.global),
        Command::Trace(args) => cmd::trace::run(args, &cli.global),
        Command::Report(args) => cmd::report::run(args, &cli.global),
        Command::Memory(args) => cmd::memory::run(args, &cli.global),
        Command::Model(args) => cmd::model::run(args, &cli.global),
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
        Command::SandboxExec(args) => cmd::sandbox_exec::run(args, &cli.global),
    };
    exit::finish(result, cli.global.json)
}
