//! The one integration-test binary of papayu-context.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns panic on setup failure by design

mod api;
mod auto;
mod base;
mod cache;
mod common;
mod diet;
mod logs_env;
mod protect;
mod read;
mod search;
mod tools;
