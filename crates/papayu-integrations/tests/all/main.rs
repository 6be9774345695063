//! papayu-integrations' tests: every service is a wiremock stub on 127.0.0.1 speaking the
//! real service's documented shapes; nothing here touches the network beyond it.
#![allow(
    clippy::expect_used,
    reason = "test helpers panic on a broken fixture, like the tests that call them"
)]

mod analyze;
mod architecture;
mod automation;
mod config;
mod findings;
mod research;
mod support;
mod sync;
