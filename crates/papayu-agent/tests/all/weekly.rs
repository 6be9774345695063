//! The weekly report: seed 001's graduation verdict on synthetic trace sets on both sides of
//! every threshold, the top repair-injected paths, and the model's proposals.

use papayu_agent::report::{Graduation, Verdict, compute, graduation, request_weekly_proposals};
use papayu_agent::trace::TraceRecord;
use papayu_protocol::ErrorCode;
use serde_json::json;

use crate::observe::trace;
use crate::support::*;

/// `n` clean APPLY calls (protocol v2, no fallback, no repair), one millisecond apart.
fn applies(n: usize) -> Vec<TraceRecord> {
    (0..n)
        .map(|i| {
            let mut t = trace("APPLY", None, None, 1, 0, 0, 0);
            t.created_unix_ms = 1_000 + i as u64;
            t.trace_id = format!("t{i:04}");
            t
        })
        .collect()
}

fn with_violation(t: &mut TraceRecord, code: ErrorCode) {
    t.attempts.push(
        serde_json::from_value(json!({"kind": "initial", "protocol": 2, "input_chars": 1,
            "output_chars": 1, "violations": [{"code": code, "message": "m"}]}))
        .unwrap(),
    );
}

fn fall_back(t: &mut TraceRecord, code: ErrorCode) {
    t.protocol_fallback_attempted = true;
    t.protocol_fallback_reason = Some(code);
    t.protocol_attempts = vec![2, 1];
}

fn met(g: &Graduation, id: &str) -> bool {
    g.criteria.iter().find(|c| c.id == id).unwrap().met
}

#[test]
fn a_clean_full_window_graduates_and_a_short_one_has_no_verdict() {
    let g = graduation(&applies(100));
    assert_eq!(g.verdict, Verdict::Graduate, "{g:#?}");
    assert!(g.criteria.iter().all(|c| c.met));
    let g = graduation(&applies(99));
    assert_eq!(g.verdict, Verdict::NotEnoughData);
    assert!(!met(&g, "apply_calls"));
    assert_eq!(g.apply_calls, 99);
    // PLAN calls and calls that started on v1 (which cannot fall back) do not count.
    let mut set = applies(99);
    set.push(trace("PLAN", None, None, 1, 0, 0, 0));
    let mut v1 = trace("APPLY", None, None, 1, 0, 0, 0);
    v1.protocol_default = 1;
    set.push(v1);
    assert_eq!(graduation(&set).verdict, Verdict::NotEnoughData);
}

#[test]
fn fallback_rate_threshold_is_strictly_under_one_percent_without_non_utf8() {
    let mut set = applies(100);
    fall_back(&mut set[50], ErrorCode::EditAnchorNotFound);
    let g = graduation(&set);
    assert_eq!(g.fallback_rate_excluding_non_utf8, Some(0.01));
    assert!(!met(&g, "fallback_rate_excluding_non_utf8"));
    assert_eq!(g.verdict, Verdict::KeepFallback);
    // ERR_NON_UTF8_FILE is a limit of the data: it leaves numerator and denominator.
    let mut set = applies(100);
    fall_back(&mut set[50], ErrorCode::NonUtf8File);
    let g = graduation(&set);
    assert_eq!(g.fallback_rate_excluding_non_utf8, Some(0.0));
    assert_eq!((g.fallback_count, g.non_utf8_fallbacks), (1, 1));
    assert_eq!(g.verdict, Verdict::Graduate);
    // Only the newest 100 APPLY calls count: an older fallback has left the window.
    let mut set = applies(101);
    fall_back(&mut set[0], ErrorCode::EditAnchorNotFound);
    let g = graduation(&set);
    assert_eq!((g.apply_calls, g.fallback_count), (100, 0));
    assert_eq!(g.verdict, Verdict::Graduate);
}

#[test]
fn patch_apply_failed_rate_and_repair_over_fallback() {
    // Once in 100 calls is 1%, not under it, even when repair cured it.
    let mut set = applies(100);
    with_violation(&mut set[10], ErrorCode::PatchApplyFailed);
    set[10].protocol_repair_attempt = 1;
    set[10].repair_success = Some(true);
    let g = graduation(&set);
    assert_eq!(
        (g.patch_apply_failed, g.patch_apply_failed_repaired),
        (1, 1)
    );
    assert!(!met(&g, "patch_apply_failed_rate"));
    assert!(met(&g, "patch_apply_failed_repair_over_fallback"));
    assert_eq!(g.verdict, Verdict::KeepFallback);
    // Repair must cure it more often than fallback: 2 against 1 holds, 1 against 1 does not.
    let cured = |set: &mut [TraceRecord], i: usize| {
        with_violation(&mut set[i], ErrorCode::PatchApplyFailed);
        set[i].protocol_repair_attempt = 1;
        set[i].repair_success = Some(true);
    };
    let mut set = applies(100);
    cured(&mut set, 1);
    cured(&mut set, 2);
    with_violation(&mut set[3], ErrorCode::PatchApplyFailed);
    fall_back(&mut set[3], ErrorCode::PatchApplyFailed);
    let g = graduation(&set);
    assert_eq!(
        (
            g.patch_apply_failed_repaired,
            g.patch_apply_failed_fallbacks
        ),
        (2, 1)
    );
    assert!(met(&g, "patch_apply_failed_repair_over_fallback"));
    let mut set = applies(100);
    cured(&mut set, 1);
    fall_back(&mut set[3], ErrorCode::PatchApplyFailed);
    let g = graduation(&set);
    assert!(!met(&g, "patch_apply_failed_repair_over_fallback"));
    assert_eq!(g.patch_apply_failed, 2);
}

#[test]
fn update_existing_forbidden_must_not_cause_fallbacks() {
    // Rejected once and repaired: no fallback, the criterion holds.
    let mut set = applies(100);
    with_violation(&mut set[5], ErrorCode::V2UpdateExistingForbidden);
    set[5].repair_success = Some(true);
    let g = graduation(&set);
    assert!(met(&g, "update_existing_forbidden"));
    assert_eq!(g.verdict, Verdict::Graduate);
    let mut set = applies(200);
    fall_back(&mut set[150], ErrorCode::V2UpdateExistingForbidden);
    let g = graduation(&set);
    assert_eq!(g.update_existing_forbidden_fallbacks, 1);
    assert!(!met(&g, "update_existing_forbidden"));
    assert_eq!(g.verdict, Verdict::KeepFallback);
}

#[test]
fn report_lists_top_injected_paths_and_fallback_stages() {
    let mut set = applies(3);
    set[0].repair_injected_paths = vec!["src/a.rs".into(), "src/b.rs".into()];
    set[1].repair_injected_paths = vec!["src/b.rs".into()];
    set[2].repair_injected_paths = vec!["src/b.rs".into(), "src/c.rs".into()];
    fall_back(&mut set[2], ErrorCode::PatchApplyFailed);
    set[2].protocol_fallback_stage = Some(papayu_agent::Stage::Preview);
    let r = compute(&set, None, 0);
    let top: Vec<(&str, usize)> = r
        .top_repair_injected_paths
        .iter()
        .map(|p| (p.path.as_str(), p.count))
        .collect();
    assert_eq!(top, [("src/b.rs", 3), ("src/a.rs", 1), ("src/c.rs", 1)]);
    assert_eq!(r.fallback_stages["preview"], 1);
    assert_eq!(r.graduation.verdict, Verdict::NotEnoughData);
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["graduation"]["verdict"], "not_enough_data");
    assert_eq!(j["top_repair_injected_paths"][0]["path"], "src/b.rs");
}

#[tokio::test]
async fn proposals_are_schema_checked_and_repaired_once() {
    let report = compute(&applies(100), None, 0);
    let good = json!({"summary": "v2 is ready", "proposals": [{"kind": "setting_change",
        "title": "Switch the v1 fallback off", "rationale": "0 of 100 APPLY calls fell back"}]});
    let model = Model::start(&[
        json!({"summary": "x", "proposals": [{"kind": "nonsense"}]}),
        good,
    ])
    .await;
    let out = request_weekly_proposals(model.provider().as_ref(), &report)
        .await
        .unwrap();
    assert!(out.repaired);
    assert_eq!(out.proposals.proposals.len(), 1);
    assert_eq!(out.model, "scripted");
    let requests = model.requests().await;
    assert_eq!(requests.len(), 2);
    let first = messages(&requests[0]);
    assert!(
        first[0].1.contains("llm_weekly_report_schema.json"),
        "{}",
        first[0].1
    );
    assert!(
        first[1].1.contains("\"verdict\":\"graduate\""),
        "{}",
        first[1].1
    );
    let repair = messages(&requests[1]);
    assert!(
        repair.last().unwrap().1.contains("/proposals/0"),
        "{repair:?}"
    );

    let bad = json!({"summary": "x", "proposals": "none"});
    let model = Model::start(&[bad.clone(), bad]).await;
    let err = request_weekly_proposals(model.provider().as_ref(), &report)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::SchemaValidation, "{err}");
}
