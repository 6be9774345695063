//! One module per command: an `Args` struct and a `run` function.

pub mod apply;
pub mod apply_patch;
pub mod apply_plan;
pub mod ask;
pub mod chat;
pub mod context;
pub mod doctor;
pub mod history;
pub mod mcp;
pub mod memory;
pub mod model;
pub mod plan;
pub mod preview;
pub mod recover;
pub mod redo;
pub mod report;
pub mod run_goal;
pub mod sandbox_exec;
pub mod schema;
pub mod session;
pub mod trace;
pub mod ui;
pub mod undo;
pub mod validate;
