//! Integration tests for papayu-protocol (one binary, modules per feature).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

mod agent_sync;
mod drift;
mod limits;
mod parse;
mod props;
mod render;
