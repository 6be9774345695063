//! Integration tests for papayu-protocol (one binary, modules per feature).

mod drift;
mod parse;
mod props;
mod render;
