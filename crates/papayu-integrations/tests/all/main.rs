//! papayu-integrations' tests: every service is a wiremock stub on 127.0.0.1 speaking the
//! real service's documented shapes; nothing here touches the network beyond it.

mod architecture;
mod automation;
mod config;
mod findings;
mod research;
mod support;
mod sync;
