//! The model's weekly proposals (seed 001's weekly report; the original's
//! `llm_weekly_report_schema.json`): their wire type, their own JSON schema, and their parsing,
//! which extracts and schema-checks an answer exactly like a plan.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error_code::ErrorCode;
use crate::parse::{Violation, extract_json, strip_nulls};

/// File name of the weekly-report schema under `schemas/`.
pub const WEEKLY_SCHEMA_FILE: &str = "llm_weekly_report_schema.json";

/// Most proposals an answer may carry.
pub const MAX_PROPOSALS: u64 = 10;

/// What a proposal would change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalKind {
    /// A change to the system prompt or the repair instructions.
    PromptChange,
    /// A configuration change (`PAPAYU_*`, e.g. switching the fallback off).
    SettingChange,
    /// A golden trace worth recording.
    GoldenTraceAdd,
    /// A context or size limit to tune.
    LimitTuning,
    /// A validation or safety rule to add or tighten.
    SafetyRule,
    /// Anything else.
    Other,
}

impl ProposalKind {
    /// Every kind, in schema order.
    pub const ALL: [ProposalKind; 6] = [
        Self::PromptChange,
        Self::SettingChange,
        Self::GoldenTraceAdd,
        Self::LimitTuning,
        Self::SafetyRule,
        Self::Other,
    ];

    /// The wire name (`prompt_change`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PromptChange => "prompt_change",
            Self::SettingChange => "setting_change",
            Self::GoldenTraceAdd => "golden_trace_add",
            Self::LimitTuning => "limit_tuning",
            Self::SafetyRule => "safety_rule",
            Self::Other => "other",
        }
    }
}

/// One proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    /// What it would change.
    pub kind: ProposalKind,
    /// One line.
    pub title: String,
    /// Why, citing the report's numbers.
    pub rationale: String,
    /// What should improve, and how to see it in next week's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_impact: Option<String>,
}

/// The model's answer to the weekly-report request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeeklyProposals {
    /// The week in a few sentences.
    pub summary: String,
    /// At most [`MAX_PROPOSALS`], most important first.
    pub proposals: Vec<Proposal>,
}

/// The schema, built from the types above (`cargo xtask codegen` writes it to `schemas/`).
pub fn weekly_schema() -> Value {
    let kinds: Vec<&str> = ProposalKind::ALL.iter().map(|k| k.as_str()).collect();
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": format!("https://papayu.dev/schemas/{WEEKLY_SCHEMA_FILE}"),
        "title": "papayu weekly report: the model's proposals",
        "type": "object",
        "properties": {
            "summary": { "type": "string", "minLength": 1 },
            "proposals": {
                "type": "array",
                "maxItems": MAX_PROPOSALS,
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": { "type": "string", "enum": kinds },
                        "title": { "type": "string", "minLength": 1 },
                        "rationale": { "type": "string", "minLength": 1 },
                        "expected_impact": { "type": "string" },
                    },
                    "required": ["kind", "title", "rationale"],
                    "additionalProperties": false,
                },
            },
        },
        "required": ["summary", "proposals"],
        "additionalProperties": false,
    })
}

/// The exact text `cargo xtask codegen` writes (pretty JSON + final newline).
pub fn render_weekly_schema() -> String {
    let mut text = serde_json::to_string_pretty(&weekly_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// The committed schema text.
pub fn weekly_schema_text() -> &'static str {
    include_str!("../schemas/llm_weekly_report_schema.json")
}

fn validator() -> Result<&'static jsonschema::Validator, String> {
    static CACHE: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let schema: Value =
                serde_json::from_str(weekly_schema_text()).unwrap_or_else(|_| weekly_schema());
            jsonschema::draft7::new(&schema).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Extract the JSON from `text` (whole text, fence or first balanced value, as for plans) and
/// check it against the weekly schema, collecting every violation with its JSON pointer.
pub fn parse_weekly_proposals(text: &str) -> Result<WeeklyProposals, Vec<Violation>> {
    let mut value = extract_json(text).map_err(|e| vec![Violation::from(&e)])?;
    strip_nulls(&mut value);
    let v = validator().map_err(|e| vec![Violation::new(ErrorCode::SchemaValidation, e)])?;
    let violations: Vec<Violation> = v
        .iter_errors(&value)
        .map(|e| {
            Violation::new(ErrorCode::SchemaValidation, e.to_string())
                .with_pointer(e.instance_path().to_string())
        })
        .collect();
    if !violations.is_empty() {
        return Err(violations);
    }
    serde_json::from_value(value)
        .map_err(|e| vec![Violation::new(ErrorCode::SchemaValidation, e.to_string())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_schema_is_the_generated_one() {
        assert_eq!(
            weekly_schema_text(),
            render_weekly_schema(),
            "schemas/{WEEKLY_SCHEMA_FILE} drifted; run `cargo xtask codegen`"
        );
    }

    #[test]
    fn answers_are_checked_against_the_schema() {
        let ok = r#"Here: ```json
{"summary": "fallbacks fell", "proposals": [{"kind": "setting_change", "title": "drop v1",
 "rationale": "0 of 100 calls fell back", "expected_impact": null}]}
```"#;
        let p = parse_weekly_proposals(ok).unwrap();
        assert_eq!(p.proposals[0].kind, ProposalKind::SettingChange);
        assert_eq!(p.proposals[0].expected_impact, None);
        let bad = r#"{"summary": "", "proposals": [{"kind": "rewrite_everything", "title": "x"}], "extra": 1}"#;
        let v = parse_weekly_proposals(bad).unwrap_err();
        let pointers: Vec<_> = v.iter().filter_map(|v| v.pointer.as_deref()).collect();
        for p in ["", "/summary", "/proposals/0", "/proposals/0/kind"] {
            assert!(pointers.contains(&p), "{p} in {pointers:?}");
        }
        assert!(v.iter().all(|v| v.code == ErrorCode::SchemaValidation));
        let not_json = parse_weekly_proposals("no idea").unwrap_err();
        assert_eq!(not_json[0].code, ErrorCode::JsonParse);
    }
}
