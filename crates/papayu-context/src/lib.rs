//! Context gathering for papayu (SPEC §6) — **not implemented yet**.
//!
//! This crate will fulfil the model's context requests (`read_file`, `search`, `logs`, `env`)
//! confined to the project, cache them within a plan cycle, fit them into a character budget
//! (the "diet"), auto-gather context from stack traces, and record which files' content was
//! actually sent. Until then it exposes nothing.
