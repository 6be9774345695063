#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod error;
mod options;
mod resources;
mod served;
mod server;
mod tools;

pub use error::{OpenError, ServeError};
pub use options::{AgentSetup, McpOptions, ProviderFactory, ProviderUnavailable};
pub use server::PapayuMcp;
pub use tools::McpTool;

/// The rmcp types a caller of [`PapayuMcp::call`] meets.
pub use rmcp::ErrorData;
pub use rmcp::model::{CallToolResult, JsonObject};
