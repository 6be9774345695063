#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]
//! End-to-end tests of the `papayu` binary's main job against scripted models on 127.0.0.1:
//! real processes, real files compared as whole trees, exit codes, JSON output, traces, and
//! `papayu chat` through a pseudo-terminal.

mod batch;
mod chat;
mod commands;
mod flow;
mod machine;
mod observe;
mod support;
mod ui;
