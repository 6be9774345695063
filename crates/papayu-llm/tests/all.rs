//! The one hermetic integration-test binary of papayu-llm (HTTP through wiremock or a tiny
//! hand-rolled server, all on 127.0.0.1).

// Helpers outside `#[test]` functions may panic: a broken fixture should fail loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "all/answer_cap.rs"]
mod answer_cap;
#[path = "all/common.rs"]
mod common;
#[path = "all/conformance.rs"]
mod conformance;
#[path = "all/doctor.rs"]
mod doctor;
#[path = "all/fallback.rs"]
mod fallback;
#[path = "all/fanout.rs"]
mod fanout;
#[cfg(feature = "local")]
#[path = "support/llama_server.rs"]
mod llama_server;
#[cfg(feature = "local")]
#[path = "all/local.rs"]
mod local;
#[path = "all/model_fetch.rs"]
mod model_fetch;
#[path = "all/plan.rs"]
mod plan;
#[path = "all/progress.rs"]
mod progress;
#[path = "all/redaction.rs"]
mod redaction;
#[path = "all/secret_corpus.rs"]
mod secret_corpus;
#[path = "all/streaming.rs"]
mod streaming;
#[path = "all/transport.rs"]
mod transport;
