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
    /// Validate a plan (a model answer) against every rule and list all problems.
    Validate(cmd::validate::Args),
    /// Print the JSON schema of a protocol version.
    Schema(cmd::schema::Args),
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
        Command::Validate(args) => cmd::validate::run(args, &cli.global),
        Command::Schema(args) => cmd::schema::run(args, &cli.global),
    };
    exit::finish(result, &cli.global)
}
