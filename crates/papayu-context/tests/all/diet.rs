//! The diet: truncation properties, drop order, floor, stats and the event.

use papayu_context::{
    AUTO_MIN_KEEP_CHARS, Block, BlockKind, ContextConfig, DietState, Origin, apply_diet,
    total_chars, truncate_middle,
};
use proptest::prelude::*;

use crate::common::{TempProject, hermetic_config};

fn block(kind: BlockKind, origin: Origin, name: &str, body: String) -> Block {
    let key = format!("{kind:?}:{name}");
    let (header, file) = match kind {
        BlockKind::File => (
            format!("FILE[{name}] (sha256={}):", "0".repeat(64)),
            Some(papayu_context::FileRef {
                path: name.to_owned(),
                sha256: "0".repeat(64),
            }),
        ),
        BlockKind::Search => (format!("SEARCH[{name}]:"), None),
        BlockKind::Logs => (format!("LOGS[{name}]:"), None),
        BlockKind::Env => ("ENV:".to_owned(), None),
        BlockKind::Map => ("PROJECT MAP:".to_owned(), None),
        BlockKind::Online => (format!("ONLINE[{name}]:"), None),
        BlockKind::Findings => ("FINDINGS:".to_owned(), None),
        BlockKind::Architecture => ("ARCHITECTURE:".to_owned(), None),
    };
    Block {
        kind,
        origin,
        key,
        header,
        body,
        file,
        diet: DietState::Kept,
        sources: Vec::new(),
    }
}

fn config(total: usize) -> ContextConfig {
    ContextConfig {
        max_total_chars: total,
        ..hermetic_config()
    }
}

#[test]
fn truncation_marker_and_split() {
    let text: String = (0..100).map(|i| format!("{i:03}\n")).collect(); // 400 chars
    let t = truncate_middle(&text, 100);
    assert_eq!(t.text.chars().count(), 100);
    let marker = format!("\n...[TRUNCATED {} chars]...\n", t.removed);
    let (head, tail) = t.text.split_once(&marker).unwrap();
    assert!(text.starts_with(head) && text.ends_with(tail));
    assert_eq!(head.chars().count() + tail.chars().count() + t.removed, 400);
    assert_eq!(
        (head.chars().count(), tail.chars().count()),
        (42, 29),
        "60/40"
    );
    assert_eq!(truncate_middle("short", 100).removed, 0);
    assert_eq!(
        truncate_middle("abcdef", 3).text,
        "abc",
        "too small for the marker: plain head"
    );
    insta::assert_snapshot!("truncated_40_lines", truncate_middle(&text[..160], 90).text);
}

proptest! {
    #[test]
    fn truncation_never_splits_a_char_and_never_exceeds_max(
        text in "(\\PC|\n|é|🦀|中){0,400}",
        max in 0usize..500,
    ) {
        let t = truncate_middle(&text, max);
        let n = text.chars().count();
        prop_assert_eq!(t.text.chars().count(), n.min(max));
        if n <= max {
            prop_assert_eq!(&t.text, &text);
            prop_assert_eq!(t.removed, 0);
        } else {
            // The result is a prefix, the marker, and a suffix of the input, all whole chars.
            let marker = format!("\n...[TRUNCATED {} chars]...\n", t.removed);
            if let Some((head, tail)) = t.text.split_once(&marker) {
                prop_assert!(text.starts_with(head));
                prop_assert!(text.ends_with(tail));
                prop_assert_eq!(head.chars().count() + tail.chars().count() + t.removed, n);
            } else {
                prop_assert!(text.starts_with(&t.text));
                prop_assert_eq!(t.text.chars().count(), max);
            }
        }
    }

    #[test]
    fn diet_never_exceeds_budget_except_the_requested_floor(
        sizes in proptest::collection::vec((0usize..4, 0usize..2, 0usize..30_000), 1..12),
        budget in 500usize..60_000,
    ) {
        let kinds = [BlockKind::File, BlockKind::Search, BlockKind::Logs, BlockKind::Env];
        let mut blocks: Vec<Block> = sizes
            .iter()
            .enumerate()
            .map(|(i, (k, o, len))| {
                let origin = if *o == 0 { Origin::Requested } else { Origin::Auto };
                block(kinds[*k], origin, &format!("b{i}"), "ü".repeat(*len))
            })
            .collect();
        let cfg = config(budget);
        let stats = apply_diet(&mut blocks, &cfg);
        prop_assert_eq!(stats.context_total_chars, total_chars(&blocks));
        // What may legitimately remain over budget: requested FILE blocks at their floor.
        let floor_total: usize = blocks
            .iter()
            .filter(|b| !b.is_dropped() && b.kind == BlockKind::File && b.origin == Origin::Requested)
            .map(|b| b.header.chars().count() + 3 + b.body.chars().count().min(cfg.requested_file_floor_chars))
            .sum();
        prop_assert!(
            stats.context_total_chars <= budget.max(floor_total),
            "total {} budget {} floor {}", stats.context_total_chars, budget, floor_total
        );
        for b in &blocks {
            if b.kind == BlockKind::File && b.origin == Origin::Requested {
                // Only the max_files rule may drop a requested file.
                prop_assert!(!b.is_dropped() || stats.context_files_count == cfg.max_files);
                let index: usize = b.key.rsplit(":b").next().unwrap().parse().unwrap();
                let original = sizes[index].2;
                prop_assert!(b.is_dropped() || b.body.chars().count() >= original.min(cfg.requested_file_floor_chars));
            }
            prop_assert!(b.body.chars().count() <= cfg.max_file_chars.max(cfg.max_log_chars));
        }
    }
}

#[test]
fn drop_order_is_search_logs_env_auto_then_requested() {
    let mk = || {
        vec![
            block(
                BlockKind::File,
                Origin::Requested,
                "req.rs",
                "r".repeat(10_000),
            ),
            block(
                BlockKind::Search,
                Origin::Requested,
                "q",
                "s".repeat(10_000),
            ),
            block(
                BlockKind::Logs,
                Origin::Requested,
                "check",
                "l".repeat(10_000),
            ),
            block(BlockKind::Env, Origin::Auto, "env", "e".repeat(10_000)),
            block(BlockKind::File, Origin::Auto, "auto.rs", "a".repeat(10_000)),
        ]
    };
    let state = |blocks: &[Block]| -> Vec<&'static str> {
        blocks
            .iter()
            .map(|b| match b.diet {
                DietState::Kept => "kept",
                DietState::Truncated { .. } => "cut",
                DietState::Dropped => "dropped",
            })
            .collect()
    };
    let cases: [(usize, [&str; 5]); 6] = [
        (60_000, ["kept", "kept", "kept", "kept", "kept"]),
        (45_000, ["kept", "dropped", "kept", "kept", "kept"]),
        (35_000, ["kept", "dropped", "dropped", "kept", "kept"]),
        (25_000, ["kept", "dropped", "dropped", "dropped", "kept"]),
        (15_000, ["kept", "dropped", "dropped", "dropped", "cut"]),
        (5_000, ["cut", "dropped", "dropped", "dropped", "dropped"]),
    ];
    for (budget, expected) in cases {
        let mut blocks = mk();
        let stats = apply_diet(&mut blocks, &config(budget));
        assert_eq!(state(&blocks), expected, "budget {budget}");
        assert!(
            stats.context_total_chars <= budget,
            "budget {budget}: {}",
            stats.context_total_chars
        );
    }
}

#[test]
fn requested_file_keeps_the_4000_char_floor_even_over_budget() {
    let mut blocks = vec![
        block(
            BlockKind::File,
            Origin::Requested,
            "a.rs",
            "x".repeat(15_000),
        ),
        block(
            BlockKind::File,
            Origin::Requested,
            "b.rs",
            "y".repeat(15_000),
        ),
    ];
    let stats = apply_diet(&mut blocks, &config(3_000));
    for b in &blocks {
        assert!(!b.is_dropped());
        assert_eq!(b.body.chars().count(), 4_000, "cut exactly to the floor");
        assert!(
            b.header.ends_with(&format!("(sha256={}):", "0".repeat(64))),
            "header never cut"
        );
    }
    assert!(stats.context_total_chars > 3_000);
    assert_eq!(stats.context_truncated_files_count, 2);
}

#[test]
fn auto_file_too_small_to_cut_is_dropped() {
    let mut blocks = vec![
        block(
            BlockKind::File,
            Origin::Requested,
            "a.rs",
            "x".repeat(5_000),
        ),
        block(BlockKind::File, Origin::Auto, "b.rs", "y".repeat(1_500)),
    ];
    apply_diet(&mut blocks, &config(5_000 + 60 + AUTO_MIN_KEEP_CHARS - 1));
    assert!(blocks[1].is_dropped());
    assert_eq!(blocks[0].diet, DietState::Kept);
}

#[test]
fn per_file_and_log_caps_and_max_files() {
    let mut blocks = vec![
        block(
            BlockKind::File,
            Origin::Requested,
            "a.rs",
            "x".repeat(25_000),
        ),
        block(
            BlockKind::Logs,
            Origin::Requested,
            "check",
            "l".repeat(13_000),
        ),
    ];
    for i in 0..9 {
        blocks.push(block(
            BlockKind::File,
            Origin::Auto,
            &format!("auto{i}.rs"),
            "z".repeat(10),
        ));
    }
    let (stats, events) =
        crate::cache::capture(|| apply_diet(&mut blocks, &ContextConfig::default()));
    assert_eq!(blocks[0].body.chars().count(), 20_000);
    assert_eq!(
        blocks[0].diet,
        DietState::Truncated {
            removed_chars: 5_030
        }
    );
    assert_eq!(blocks[1].body.chars().count(), 12_000);
    // 10 FILE blocks for 8 slots: the last two auto-gathered ones go.
    assert!(blocks[9].is_dropped() && blocks[10].is_dropped());
    assert!(!blocks[8].is_dropped());
    assert_eq!(stats.context_files_count, 8);
    assert_eq!(stats.context_files_dropped_count, 2);
    assert_eq!(stats.context_truncated_files_count, 1);
    assert_eq!(
        stats.context_logs_chars,
        "LOGS[check]:\n".chars().count() + 12_000
    );
    let applied: Vec<&String> = events
        .iter()
        .filter(|e| e.contains("CONTEXT_DIET_APPLIED"))
        .collect();
    assert_eq!(applied.len(), 1);
    assert!(
        applied[0].contains(&format!(
            "message=CONTEXT_DIET_APPLIED files=8 dropped=2 truncated=2 total_chars={}",
            stats.context_total_chars
        )),
        "{}",
        applied[0]
    );
    insta::assert_json_snapshot!("stats", stats);
}

#[test]
fn no_event_when_nothing_changes() {
    let mut blocks = vec![block(
        BlockKind::File,
        Origin::Requested,
        "a.rs",
        "x".into(),
    )];
    let (_, events) = crate::cache::capture(|| apply_diet(&mut blocks, &ContextConfig::default()));
    assert!(events.is_empty());
}

#[test]
fn manifests_are_capped_when_gathered() {
    let big: String = (0..2_000).map(|i| format!("dep{i} = \"1\"\n")).collect();
    let p = TempProject::new(&[("Cargo.toml", &big)]);
    let mut engine = p.engine();
    let blocks = engine.auto_gather("error[E0432]: unresolved import `foo`");
    let manifest = blocks
        .iter()
        .find(|b| b.header.starts_with("FILE[Cargo.toml]"))
        .unwrap();
    assert!(manifest.body.chars().count() <= 4_000);
    assert!(matches!(manifest.diet, DietState::Truncated { .. }));
    let ctx = engine.assemble(&[], Some("error[E0432]: unresolved import `foo`"));
    assert_eq!(ctx.stats.context_truncated_files_count, 1);
    assert!(ctx.text.contains("...[TRUNCATED"));
}
