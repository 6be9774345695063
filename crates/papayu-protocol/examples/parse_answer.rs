//! Parse a model answer (a file, or a built-in example) under a protocol version and print what
//! papayu understood, or the error with its stable code.
//!
//! `cargo run -p papayu-protocol --example parse_answer -- [FILE] [1|2|3]`
#![allow(clippy::print_stdout)]

use papayu_protocol::{ProtocolVersion, parse_response, schema_hash};

const EXAMPLE: &str = "Sure, here it is:\n```json\n{\"actions\":[{\"kind\":\"CREATE_FILE\",\"path\":\"docs/README.ru.md\",\"content\":\"# Привет\\n\"}],\"summary\":\"docs\"}\n```";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let text = match args.next() {
        Some(path) => fs_err::read_to_string(path)?,
        None => EXAMPLE.to_owned(),
    };
    let version = args
        .next()
        .and_then(|n| n.parse().ok())
        .and_then(ProtocolVersion::from_number)
        .unwrap_or_default();
    println!("protocol {version}, schema sha256 {}", schema_hash(version));
    match parse_response(&text, version) {
        Ok(response) => {
            for action in response.effective_actions() {
                println!("{:<14} {}", action.kind, action.path);
            }
            println!("summary: {}", response.summary.as_deref().unwrap_or("-"));
        }
        Err(e) => println!("rejected: {e}"),
    }
    Ok(())
}
