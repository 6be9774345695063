//! The weekly parts of `papayu report` (seed 001): fallback reasons and stages, the paths whose
//! base hash the repair round injected, the graduation verdict with the numbers behind it, and
//! the model's proposals (`--proposals`, with a configured provider).

use std::fmt::Write as _;

use anyhow::Result;
use papayu_agent::report::{
    Graduation, ProposalsOutcome, Report, Verdict, request_weekly_proposals,
};
use papayu_app::provider;
use serde::Serialize;

use crate::cmd::session::{agent_config, local_inputs, runtime};
use crate::exit::UsageError;
use crate::global::Global;

/// The report as `--json` prints it: the metrics, and the proposals when asked for.
#[derive(Debug, Serialize)]
pub struct WeeklyDoc<'a> {
    /// Every metric and the graduation verdict.
    #[serde(flatten)]
    pub report: &'a Report,
    /// The model's proposals (`--proposals`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposals: Option<&'a ProposalsOutcome>,
}

/// Ask the configured provider for the weekly proposals. A provider must be named
/// (`PAPAYU_LLM_*`, `--provider`/`--model`, or a local model file): the implicit default model
/// is not started for a report.
pub fn proposals(report: &Report, global: &Global) -> Result<ProposalsOutcome> {
    let config = agent_config(global)?;
    if let provider::Choice::Local { implicit: true, .. } =
        provider::choose(&config, &local_inputs(global))
    {
        return Err(UsageError(format!(
            "--proposals needs a configured provider.\n{}",
            provider::CONFIGURE_HINT
        ))
        .into());
    }
    let provider = crate::cmd::session::provider(&config, global)?;
    Ok(runtime()?.block_on(request_weekly_proposals(provider.as_ref(), report))?)
}

fn counts(out: &mut String, title: &str, map: &std::collections::BTreeMap<String, usize>) {
    if map.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}:");
    let mut rows: Vec<(&String, &usize)> = map.iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    for (k, n) in rows {
        let _ = writeln!(out, "  {n:>5}  {k}");
    }
}

/// Fallback reasons and stages, and the top paths whose base hash repair injected.
pub fn render_weekly(r: &Report) -> String {
    let mut out = String::new();
    counts(
        &mut out,
        &crate::tr!("report-fallback-reasons"),
        &r.fallback_reasons,
    );
    counts(
        &mut out,
        &crate::tr!("report-fallback-stages"),
        &r.fallback_stages,
    );
    if !r.top_repair_injected_paths.is_empty() {
        let _ = writeln!(out, "{}", crate::tr!("report-top-paths"));
        for p in &r.top_repair_injected_paths {
            let _ = writeln!(out, "  {:>5}  {}", p.count, p.path);
        }
    }
    out.push_str(&render_graduation(&r.graduation));
    out
}

/// The verdict, then one row per criterion: met or not, what is required, what was measured.
pub fn render_graduation(g: &Graduation) -> String {
    let mut out = String::new();
    let verdict = match g.verdict {
        Verdict::Graduate => crate::tr!("report-graduate"),
        Verdict::KeepFallback => crate::tr!("report-keep-fallback"),
        Verdict::NotEnoughData => crate::tr!("report-no-verdict"),
    };
    let _ = writeln!(
        out,
        "{}",
        crate::tr!("report-graduation", window = g.window, verdict = verdict)
    );
    // A criterion the catalogue names reads in the user's language; a newer one as the library
    // says it.
    let required: Vec<String> = g
        .criteria
        .iter()
        .map(|c| {
            crate::i18n::maybe(&format!("criterion-{}", c.id)).unwrap_or(c.required.to_owned())
        })
        .collect();
    let width = required
        .iter()
        .map(|r| r.chars().count())
        .max()
        .unwrap_or(0);
    for (c, required) in g.criteria.iter().zip(&required) {
        let mark = if c.met {
            crate::tr!("report-criterion-ok")
        } else {
            crate::tr!("report-criterion-fail")
        };
        let _ = writeln!(out, "  {mark}  {required:<width$}  {}", c.actual);
    }
    out
}

/// The proposals, numbered, each with its kind, rationale and expected impact.
pub fn render_proposals(p: &ProposalsOutcome) -> String {
    let mut out = String::new();
    let repaired = if p.repaired {
        crate::tr!("report-after-repair")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{}",
        crate::tr!(
            "report-proposals-by",
            model = p.model.clone(),
            repaired = repaired
        )
    );
    let _ = writeln!(out, "  {}", p.proposals.summary);
    for (i, x) in p.proposals.proposals.iter().enumerate() {
        let _ = writeln!(out, "  {}. [{}] {}", i + 1, x.kind.as_str(), x.title);
        let _ = writeln!(
            out,
            "     {}",
            crate::tr!("report-why", text = x.rationale.clone())
        );
        if let Some(e) = &x.expected_impact {
            let _ = writeln!(
                out,
                "     {}",
                crate::tr!("report-expect", text = e.clone())
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use papayu_agent::report::compute;
    use papayu_protocol::{Proposal, ProposalKind, WeeklyProposals};

    use super::*;

    #[test]
    fn verdict_rows_show_the_numbers() {
        let r = compute(&[], None, 0);
        let text = render_weekly(&r);
        assert!(text.contains("NO VERDICT YET"), "{text}");
        assert!(
            text.contains("FAIL  a full window of 100 APPLY calls"),
            "{text}"
        );
        assert!(text.contains("0 APPLY calls"), "{text}");
        assert!(!text.contains("Fallback reasons"), "{text}");
        let doc = serde_json::to_value(WeeklyDoc {
            report: &r,
            proposals: None,
        })
        .unwrap();
        assert_eq!(doc["graduation"]["verdict"], "not_enough_data");
        assert!(doc.get("proposals").is_none());
    }

    /// Every criterion the library judges has both catalogues' words, the English ones the
    /// library's own.
    #[test]
    fn every_criterion_reads_in_both_languages() {
        use crate::i18n::{Lang, text_in};
        let r = compute(&[], None, 0);
        assert!(!r.graduation.criteria.is_empty());
        for c in &r.graduation.criteria {
            let key = format!("criterion-{}", c.id);
            assert_eq!(text_in(Lang::En, &key, &[]), c.required, "{key}");
            let ru = text_in(Lang::Ru, &key, &[]);
            assert!(ru != key && ru != c.required, "{key}: {ru}");
        }
    }

    #[test]
    fn proposals_are_numbered_with_kind_and_reason() {
        let p = ProposalsOutcome {
            proposals: WeeklyProposals {
                summary: "quiet week".into(),
                proposals: vec![Proposal {
                    kind: ProposalKind::LimitTuning,
                    title: "raise the file budget".into(),
                    rationale: "12 files dropped".into(),
                    expected_impact: Some("fewer context rounds".into()),
                }],
            },
            repaired: true,
            model: "m".into(),
        };
        let text = render_proposals(&p);
        assert!(
            text.contains("Proposals by m (after one repair):"),
            "{text}"
        );
        assert!(
            text.contains("1. [limit_tuning] raise the file budget"),
            "{text}"
        );
        assert!(text.contains("why: 12 files dropped"), "{text}");
        assert!(text.contains("expect: fewer context rounds"), "{text}");
    }
}
