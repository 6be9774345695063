//! Ask an OpenAI-compatible server for a plan in strict mode and print what papayu made of it.
//!
//! ```sh
//! cargo run -p papayu-llm --example ask -- http://127.0.0.1:8080/v1 my-model "Create hello.txt"
//! ```
//!
//! The URL, model and prompt come from the command line: the library itself never reads the
//! environment.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use papayu_llm::{AskOptions, HttpProvider, ProviderConfig, ProviderKind, ask};
use papayu_protocol::ProtocolVersion;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| ProviderKind::OpenAiCompatible.default_url().to_owned());
    let model = args.next().unwrap_or_else(|| "local".to_owned());
    let prompt = args
        .next()
        .unwrap_or_else(|| "Create hello.txt containing a greeting.".to_owned());
    let config =
        ProviderConfig::new(ProviderKind::OpenAiCompatible, url, model).with_max_tokens(512);
    let provider = match HttpProvider::new(config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{}: {e}", e.code());
            std::process::exit(2);
        }
    };
    let options = AskOptions {
        protocol: ProtocolVersion::V2,
        ..AskOptions::default()
    };
    match ask(&provider, &prompt, options).await {
        Ok(outcome) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&outcome).unwrap_or_default()
            );
        }
        Err(e) => {
            eprintln!("{}: {e}", e.code());
            std::process::exit(1);
        }
    }
}
