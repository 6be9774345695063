//! The one integration-test binary of papayu-validate (one binary keeps link time down).

mod aliases;
mod common;
mod diff;
mod paths;
mod policy;
mod props;
mod rules;
mod snapshots;
