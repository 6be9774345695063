//! LLM providers for papayu (SPEC §7) — **not implemented yet**.
//!
//! This crate will hold the `Provider` trait and the OpenAI, OpenAI-compatible, Ollama and
//! Anthropic providers, strict JSON with capability fallback, retries, timeouts, streaming,
//! multi-provider fan-out and secret redaction. Until then it exposes nothing.
