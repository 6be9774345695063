//! memory_patch, traces (redaction, raw output, config snapshot) and the report.

use std::time::Duration;

use papayu_agent::report::{compute, report};
use papayu_agent::{Mode, no_progress};
use papayu_memory::RejectReason;
use papayu_protocol::ErrorCode;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn memory_patch_accepted_when_asked() {
    let project = Project::new(&[]);
    let model = Model::start(&[json!({"actions": [], "summary": "noted",
        "memory_patch": {"user.preferred_style": "brief", "user.ask_budget": 300, "user.colour": "green"}})])
    .await;
    let mut agent = project.agent(&model, &[]);
    let plan = agent
        .plan("Remember: keep answers brief", &no_progress)
        .await
        .unwrap();
    let m = plan.memory.unwrap();
    assert_eq!(m.applied.len(), 1);
    assert_eq!(m.applied[0].key, "user.preferred_style");
    assert_eq!(m.rejected.len(), 2);
    assert!(
        m.rejected
            .iter()
            .any(|r| matches!(r.reason, RejectReason::OutOfRange { .. }))
    );
    assert!(agent.memory().block().contains("brief"));
    let reloaded = papayu_memory::Memory::load(project.config_dir(), project.root()).unwrap();
    assert!(reloaded.block().contains("brief"));
}

#[tokio::test]
async fn memory_patch_rejected_when_not_asked() {
    let project = Project::new(&[]);
    let model = Model::start(&[json!({"actions": [], "summary": "plan",
        "memory_patch": {"user.output_format": "apply"}})])
    .await;
    let mut agent = project.agent(&model, &[]);
    let plan = agent.plan("add a flag", &no_progress).await.unwrap();
    let m = plan.memory.unwrap();
    assert!(m.applied.is_empty());
    assert!(matches!(m.rejected[0].reason, RejectReason::NotRequested));
    assert_eq!(m.code(), Some(ErrorCode::MemoryPatchRejected));
    assert_eq!(agent.resolve("add a flag").unwrap().mode, Mode::Plan);
}

#[tokio::test]
async fn traces_are_written_redacted_with_effective_config() {
    let project = Project::new(&[]);
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let model =
        Model::start(&[json!({"actions": [], "summary": format!("token {secret} seen")})]).await;
    let mut agent = project.agent(
        &model,
        &[
            ("PAPAYU_TRACE", "1"),
            ("PAPAYU_TRACE_RAW", "1"),
            (
                "PAPAYU_LLM_API_KEY",
                "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
            ),
        ],
    );
    let plan = agent
        .plan(&format!("use key {secret}"), &no_progress)
        .await
        .unwrap();
    let file = plan.trace_file.unwrap();
    assert!(file.ends_with(format!("{}.json", plan.trace_id)));
    assert_eq!(
        uuid::Uuid::parse_str(&plan.trace_id)
            .unwrap()
            .get_version_num(),
        7
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(secret), "{text}");
    assert!(!text.contains("sk-proj-abc"), "{text}");
    assert!(text.contains("[REDACTED:github_token]"), "{text}");
    let t: serde_json::Value = serde_json::from_str(&text).unwrap();
    for field in [
        "event",
        "mode",
        "schema_version",
        "schema_hash",
        "provider",
        "model",
        "input_chars",
        "token_budget",
        "validated_json",
        "context_stats",
        "cache_stats",
        "protocol_attempts",
        "protocol_fallback_attempted",
        "protocol_repair_attempt",
        "config_snapshot",
    ] {
        assert!(t.get(field).is_some(), "missing {field}");
    }
    assert_eq!(t["event"], "LLM_PLAN_OK");
    assert_eq!(t["config_snapshot"]["trace_raw"], true);
    assert_eq!(t["config_snapshot"]["api_key_set"], true);
    assert_eq!(t["config_snapshot"]["protocol_version"], 2);
    assert!(
        t["attempts"][0]["raw"]
            .as_str()
            .unwrap()
            .contains("[REDACTED")
    );
    assert_eq!(t["model"], "scripted");
    assert!(t["input_chars"].as_u64().unwrap() > 100);
    // No leftover temporary files: the write is atomic.
    let names: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert_eq!(
        papayu_agent::trace::list_traces(project.root())
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        papayu_agent::trace::show_trace(project.root(), &plan.trace_id[..20])
            .unwrap()
            .trace_id,
        plan.trace_id
    );
}

#[tokio::test]
async fn raw_output_is_omitted_by_default_and_no_trace_when_off() {
    let project = Project::new(&[]);
    let model = Model::start(&[plan_answer("p1"), plan_answer("p2")]).await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    agent.plan("x", &no_progress).await.unwrap();
    let t = &project.traces()[0];
    assert!(t.attempts[0].raw.is_none());
    assert!(t.fixture.is_empty());
    let mut agent = project.agent(&model, &[]);
    let plan = agent.plan("y", &no_progress).await.unwrap();
    assert!(plan.trace_file.is_none());
    assert_eq!(project.traces().len(), 1);
}

pub(crate) fn trace(
    mode: &str,
    fallback: Option<ErrorCode>,
    repair: Option<bool>,
    chars: usize,
    hits: u64,
    misses: u64,
    age_ms: u64,
) -> papayu_agent::trace::TraceRecord {
    let mut t: papayu_agent::trace::TraceRecord = serde_json::from_value(json!({
        "trace_id": "t", "created_unix_ms": 1_000_000_000u64 - age_ms, "event": "LLM_PLAN_OK", "mode": mode,
        "llm_mode": "chat", "goal": "", "schema_version": 2, "schema_hash": "", "provider": "p", "model": "m",
        "input_chars": 0, "token_budget": 0, "strict_json": false, "context_stats": {"context_files_count": 0,
        "context_files_dropped_count": 0, "context_total_chars": chars, "context_logs_chars": 0,
        "context_truncated_files_count": 0}, "cache_stats": {"hits": hits, "misses": misses, "hit_rate": 0.0, "by_type": {}},
        "context_rounds": 0, "protocol_default": 2, "protocol_attempts": [2], "protocol_fallback_attempted": fallback.is_some(),
        "protocol_fallback_reason": fallback, "protocol_repair_attempt": u8::from(repair.is_some()), "repair_success": repair,
        "attempts": [], "sent_files": {}, "config_snapshot": {}
    })).unwrap();
    if mode == "APPLY" {
        t.apply = Some(papayu_agent::trace::ApplyRecord {
            outcome: "applied".into(),
            tx_id: None,
            error_code: None,
            selected: vec![],
            files_after: Default::default(),
        });
    }
    t
}

#[test]
fn report_figures() {
    let mut traces = vec![
        trace("PLAN", None, None, 100, 1, 1, 0),
        trace("APPLY", None, Some(true), 200, 2, 0, 0),
        trace(
            "APPLY",
            Some(ErrorCode::PatchApplyFailed),
            Some(false),
            300,
            0,
            2,
            0,
        ),
        trace("APPLY", Some(ErrorCode::NonUtf8File), None, 400, 0, 0, 0),
        trace("APPLY", None, None, 1000, 3, 1, 0),
        trace("APPLY", None, None, 5000, 0, 0, 10 * 86_400_000),
    ];
    traces[4].error_code = Some(ErrorCode::CheckFailed);
    traces[4].attempts.push(serde_json::from_value(json!({"kind": "initial", "protocol": 2, "input_chars": 1, "output_chars": 1,
        "violations": [{"code": "ERR_INVALID_PATH", "message": "m"}, {"code": "ERR_INVALID_PATH", "message": "m"}]})).unwrap());
    let r = compute(
        &traces,
        Some(Duration::from_secs(7 * 86_400)),
        1_000_000_000,
    );
    assert_eq!(r.trace_count, 5);
    assert_eq!((r.plan_count, r.apply_count, r.applied_count), (1, 4, 4));
    assert_eq!(r.fallback_count, 2);
    assert_eq!(r.fallback_rate, Some(0.5));
    assert_eq!(r.fallback_rate_excluding_non_utf8, Some(1.0 / 3.0));
    assert_eq!(r.fallback_reasons["ERR_PATCH_APPLY_FAILED"], 1);
    assert_eq!(r.fallback_reasons["ERR_NON_UTF8_FILE"], 1);
    assert_eq!(
        (
            r.repair_count,
            r.repair_success_count,
            r.repair_success_rate
        ),
        (2, 1, Some(0.5))
    );
    assert_eq!(r.error_codes["ERR_CHECK_FAILED"], 1);
    assert_eq!(r.violation_codes["ERR_INVALID_PATH"], 2);
    assert_eq!(r.context_avg_chars, Some(400.0));
    assert_eq!(r.context_p95_chars, Some(1000));
    assert_eq!(r.cache_hit_rate, Some(0.6));
    let all = compute(&traces, None, 1_000_000_000);
    assert_eq!(
        (all.trace_count, all.apply_count, all.context_p95_chars),
        (6, 5, Some(5000))
    );
    let empty = compute(&[], None, 0);
    assert_eq!(
        (
            empty.fallback_rate,
            empty.context_avg_chars,
            empty.cache_hit_rate
        ),
        (None, None, None)
    );
    serde_json::to_string(&r).unwrap();
}

#[tokio::test]
async fn report_reads_the_trace_files() {
    let project = Project::new(&[]);
    let model = Model::start(&[json!("no json"), plan_answer("p")]).await;
    let mut agent = project.agent(&model, &[("PAPAYU_TRACE", "1")]);
    agent.plan("x", &no_progress).await.unwrap();
    std::fs::write(project.root().join(".papa-yu/traces/broken.json"), "{").unwrap();
    let r = report(project.root(), None, u64::MAX).unwrap();
    assert_eq!(
        (r.trace_count, r.unreadable_traces, r.plan_count),
        (1, 1, 1)
    );
    assert_eq!(r.repair_success_rate, Some(1.0));
    assert_eq!(r.violation_codes["ERR_JSON_PARSE"], 1);
}

#[test]
fn timeline_buckets_per_utc_day() {
    // 1_000_000_000 ms = 1970-01-12T13:46:40Z; 10 days earlier = 1970-01-02.
    let mut traces = vec![
        trace(
            "APPLY",
            Some(ErrorCode::PatchApplyFailed),
            Some(true),
            1,
            0,
            0,
            0,
        ),
        trace("APPLY", None, None, 1, 0, 0, 0),
        trace("PLAN", None, Some(false), 1, 0, 0, 10 * 86_400_000),
    ];
    traces[1].error_code = Some(ErrorCode::CheckFailed);
    let days = papayu_agent::report::timeline(&traces, None, 1_000_000_000);
    assert_eq!(days.len(), 2);
    assert_eq!(days[0].day, "1970-01-02");
    assert_eq!((days[0].calls, days[0].fallback_rate), (1, None));
    assert_eq!(days[0].repair_success_rate, Some(0.0));
    assert_eq!(days[1].day, "1970-01-12");
    assert_eq!(days[1].calls, 2);
    assert_eq!(days[1].fallback_rate, Some(0.5));
    assert_eq!(days[1].repair_success_rate, Some(1.0));
    assert_eq!(days[1].error_codes["ERR_CHECK_FAILED"], 1);
    let recent =
        papayu_agent::report::timeline(&traces, Some(Duration::from_secs(86_400)), 1_000_000_000);
    assert_eq!(recent.len(), 1);
}

/// Run one shell pipeline of seed 001's weekly report in `dir` with the real grep/sort/uniq.
fn pipeline(dir: &camino::Utf8Path, script: &str) -> String {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn seed_pipelines_count_compact_trace_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = camino::Utf8Path::from_path(dir.path()).unwrap();
    let mut set = [
        trace("PLAN", None, None, 1, 0, 0, 0),
        trace("APPLY", None, None, 1, 0, 0, 0),
        trace(
            "APPLY",
            Some(ErrorCode::PatchApplyFailed),
            Some(false),
            1,
            0,
            0,
            0,
        ),
        trace(
            "APPLY",
            Some(ErrorCode::PatchApplyFailed),
            Some(false),
            1,
            0,
            0,
            0,
        ),
        trace("APPLY", Some(ErrorCode::NonUtf8File), None, 1, 0, 0, 0),
        trace("APPLY", None, Some(true), 1, 0, 0, 0),
    ];
    set[3].repair_injected_paths = vec!["src/a.py".into()];
    set[5].repair_injected_paths = vec!["src/a.py".into()];
    set[5].goal = "multi\nline goal with \"quotes\"".into();
    set[1].event = "LLM_PLAN_ERR".into();
    for (i, t) in set.iter_mut().enumerate() {
        t.trace_id = format!("0190c3a2-7b1e-7c4d-9f00-00000000000{i}");
        papayu_agent::trace::write_trace(root, t).unwrap();
    }
    let traces = root.join(papayu_agent::trace::TRACES_DIR);
    let text = std::fs::read_to_string(traces.join(format!("{}.json", set[5].trace_id))).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let n = |script: &str| pipeline(&traces, script).trim().to_owned();
    assert_eq!(
        n(r#"grep -l '"event":"LLM_PLAN_OK"' *.json 2>/dev/null | wc -l"#),
        "5"
    );
    assert_eq!(
        n(r#"grep '"protocol_fallback_attempted":true' *.json 2>/dev/null | wc -l"#),
        "3"
    );
    let reasons = pipeline(
        &traces,
        r#"grep -oh '"protocol_fallback_reason":"[^"]*"' *.json 2>/dev/null | sort | uniq -c"#,
    );
    let reasons: Vec<String> = reasons
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        reasons,
        [
            r#"1 "protocol_fallback_reason":"ERR_NON_UTF8_FILE""#,
            r#"2 "protocol_fallback_reason":"ERR_PATCH_APPLY_FAILED""#
        ]
    );
    let top = pipeline(
        &traces,
        r#"grep -oh '"repair_injected_paths":\[[^]]*\]' *.json 2>/dev/null | sort | uniq -c | sort -rn | head -20"#,
    );
    let top: Vec<String> = top
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        top,
        [
            r#"4 "repair_injected_paths":[]"#,
            r#"2 "repair_injected_paths":["src/a.py"]"#
        ]
    );
    // The seed's jq line reads whole documents, so it works either way; it is checked where
    // jq is installed (it is not part of POSIX, unlike grep, sort, uniq and wc).
    if std::process::Command::new("jq")
        .arg("--version")
        .output()
        .is_ok()
    {
        assert_eq!(
            n(
                r#"jq -s '[.[] | select(.event=="LLM_PLAN_OK" and .protocol_repair_attempt==0)] | length' *.json"#
            ),
            "2"
        );
    }
    let shown = papayu_agent::trace::show_trace(root, &set[5].trace_id).unwrap();
    assert_eq!(shown.goal, set[5].goal);
}
