//! papayu-patch integration tests: one binary, one module per feature.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]
#![allow(clippy::disallowed_methods, clippy::disallowed_types, missing_docs)]

mod checks;
mod common;
mod engine;
mod errors;
mod faults;
mod fixtures;
mod harm;
mod symlinks;
mod transaction;
mod undo;
