//! papayu's transactional apply engine (SPEC §5) — **not implemented yet**.
//!
//! This crate will apply validated plans all-or-nothing with a crash-safe journal, run the
//! PATCH/EDIT/REPLACE_RANGE engines, preview changes, run checks and provide undo/redo.
//! Until then it exposes nothing.
