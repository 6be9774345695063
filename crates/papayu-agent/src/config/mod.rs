//! [`AgentConfig`]: every SPEC §12 variable, parsed from a map the frontend reads once, checked the same way when a typed overlay (the UI's settings) replaces one.
//! May touch: only the map and values it is given (no environment, no files); it builds papayu-llm's and papayu-context's configurations.

mod checks;
mod env;
mod error;
mod overlay;
mod settings;
mod view;

pub use checks::parse_bool;
pub use env::ENV_VARIABLES;
pub use error::ConfigError;
pub use settings::{AgentConfig, LlmMode};
