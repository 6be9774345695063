//! Shared helpers: run an answer through the rules and render violations compactly.

use papayu_protocol::ProtocolVersion;
use papayu_validate::{Context, Policy, Report, check_text};

/// `"<index>:<CODE>"` for each violation, `-` for plan-level ones.
pub fn short(report: &Report) -> Vec<String> {
    report
        .violations()
        .iter()
        .map(|v| match v.action_index {
            Some(i) => format!("{i}:{}", v.code),
            None => format!("-:{}", v.code),
        })
        .collect()
}

/// Validate `text` under `ctx` with the default policy and compare the short violation list.
#[track_caller]
pub fn check(text: &str, ctx: &Context<'_>, expect: &[&str]) {
    check_with(text, ctx, &Policy::default(), expect);
}

/// [`check`] with an explicit policy.
#[track_caller]
pub fn check_with(text: &str, ctx: &Context<'_>, policy: &Policy, expect: &[&str]) {
    let report = check_text(text, ctx, policy);
    assert_eq!(short(&report), expect, "input: {text}\nreport:\n{report}");
}

/// A v2 context with no mode and no oracles.
pub fn v2() -> Context<'static> {
    Context::new(ProtocolVersion::V2)
}

/// A v3 context with no mode and no oracles.
pub fn v3() -> Context<'static> {
    Context::new(ProtocolVersion::V3)
}

/// One action as a v2 answer.
pub fn one(action: serde_json::Value) -> String {
    serde_json::json!({ "actions": [action], "summary": "s" }).to_string()
}
