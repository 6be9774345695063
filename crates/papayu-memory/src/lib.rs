//! papayu engineering memory (SPEC §8) — **not implemented yet**.
//!
//! This crate will hold the typed, validated user preferences
//! (`<config dir>/papayu/preferences.json`) and project preferences (`.papa-yu/project.json`),
//! the memory block appended to the system prompt, and the whitelisted, type-checked
//! `memory_patch` that reports applied and rejected keys. Until then it exposes nothing.
