//! The papayu plan→apply loop (SPEC §9, §10) — **not implemented yet**.
//!
//! This crate will compose the other libraries: mode resolution, prompt assembly, context
//! rounds, one repair, the v3→v2→v1 protocol fallback, saved plans, traces, golden-trace replay
//! and report metrics. Until then it exposes nothing.
