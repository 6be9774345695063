//! Serve a project over stdio: `cargo run -p papayu-mcp --example serve_stdio -- <project>`,
//! then point an MCP client at the command (the real frontend is `papayu mcp`).
#![allow(clippy::print_stderr)]

use papayu_mcp::{McpOptions, PapayuMcp};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    let server = PapayuMcp::new(McpOptions::new(root))?;
    eprintln!("serving {} over stdio", server.root());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(server.serve_stdio())?;
    Ok(())
}
