//! papayu-app against real temp projects and a scripted model.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    missing_docs
)]

mod connection;
mod errors;
mod flow;
#[cfg(feature = "http")]
mod http;
mod integrations;
mod session;
mod settings;
mod support;
