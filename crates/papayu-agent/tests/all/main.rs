#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    missing_docs
)]
//! papayu-agent integration tests: one binary, modules per feature.

mod config;
mod fallback;
mod flow;
mod golden;
mod observe;
mod prompts;
mod secrets;
mod solve;
mod support;
mod weekly;
