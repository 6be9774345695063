//! The diet (SPEC §6.3): fit the blocks into a character budget.
//!
//! 1. Per-block caps: a LOGS body over `max_log_chars`, any other body over `max_file_chars`,
//!    keeps its head 60 % and tail 40 % around a `...[TRUNCATED N chars]...` line.
//! 2. At most `max_files` FILE blocks with content: auto-gathered ones go first (latest first),
//!    then requested ones (latest first).
//! 3. Over `max_total_chars`: drop search blocks, then online research, then logs, then env,
//!    then the map, the architecture summary and findings, then auto-gathered FILE
//!    blocks (the last one that overflows is cut to fit when at least
//!    [`AUTO_MIN_KEEP_CHARS`] of it would remain), and cut requested FILE blocks last, never
//!    below `requested_file_floor_chars` — the one case where the result may exceed the budget.
//!
//! Headers are never cut: a FILE header's sha256 always covers the whole file. Every count is
//! in characters (Unicode scalar values), never bytes, and every cut lands on a character
//! boundary.

use serde::Serialize;

use crate::ContextConfig;
use crate::block::{Block, BlockKind, DietState, Origin, SEPARATOR};

/// An auto-gathered FILE block is cut to fit rather than dropped only if at least this much of
/// its body would remain.
pub const AUTO_MIN_KEEP_CHARS: usize = 1_000;

/// What the diet did, recorded in traces as `context_stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ContextStats {
    /// FILE blocks with content that were sent.
    pub context_files_count: usize,
    /// FILE blocks with content that were dropped.
    pub context_files_dropped_count: usize,
    /// Characters of the rendered context.
    pub context_total_chars: usize,
    /// Characters of the LOGS blocks sent.
    pub context_logs_chars: usize,
    /// FILE blocks sent with their middle cut out.
    pub context_truncated_files_count: usize,
}

/// A string cut by [`truncate_middle`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// The result, at most `max_chars` characters.
    pub text: String,
    /// Characters of the input that are not in the result (0: unchanged).
    pub removed: usize,
}

fn marker(removed: usize) -> String {
    format!("...[TRUNCATED {removed} chars]...")
}

/// Cut `text` to at most `max_chars` characters, keeping the head (60 %) and the tail (40 %)
/// around the marker line `...[TRUNCATED N chars]...` (N = characters removed). Cuts fall on
/// character boundaries, never inside a UTF-8 sequence, and the result has exactly
/// `max_chars` characters when `text` is longer. If `max_chars` cannot even hold the marker,
/// the result is the first `max_chars` characters.
///
/// ```
/// use papayu_context::truncate_middle;
/// let t = truncate_middle(&"é".repeat(100), 60);
/// assert_eq!(t.text.chars().count(), 60);
/// assert!(t.text.contains("\n...[TRUNCATED 68 chars]...\n"));
/// ```
pub fn truncate_middle(text: &str, max_chars: usize) -> Truncated {
    let n = text.chars().count();
    if n <= max_chars {
        return Truncated {
            text: text.to_owned(),
            removed: 0,
        };
    }
    // The marker's length depends on N, which depends on the marker's length: start from the
    // upper bound (digits of n) and shrink until stable. N only falls, so this terminates.
    let mut overhead = marker(n).chars().count() + 2;
    if max_chars < overhead {
        let end = text
            .char_indices()
            .nth(max_chars)
            .map_or(text.len(), |(i, _)| i);
        return Truncated {
            text: text[..end].to_owned(),
            removed: n - max_chars,
        };
    }
    let mut removed = n - (max_chars - overhead);
    loop {
        let next = marker(removed).chars().count() + 2;
        if next == overhead {
            break;
        }
        overhead = next;
        removed = n - (max_chars - overhead);
    }
    let avail = max_chars - overhead;
    let head_chars = avail * 6 / 10;
    let tail_chars = avail - head_chars;
    let head_end = text
        .char_indices()
        .nth(head_chars)
        .map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(n - tail_chars)
        .map_or(text.len(), |(i, _)| i);
    let mut out = String::with_capacity(head_end + (text.len() - tail_start) + overhead);
    out.push_str(&text[..head_end]);
    out.push('\n');
    out.push_str(&marker(removed));
    out.push('\n');
    out.push_str(&text[tail_start..]);
    Truncated { text: out, removed }
}

struct Work {
    original: String,
    original_chars: usize,
    pre_removed: usize,
}

fn set_body(block: &mut Block, work: &Work, max_chars: usize) {
    let t = truncate_middle(&work.original, max_chars);
    let removed = work.pre_removed + t.removed;
    block.diet = if removed == 0 {
        DietState::Kept
    } else {
        DietState::Truncated {
            removed_chars: removed,
        }
    };
    block.body = t.text;
}

/// Rendered size of the kept blocks, separators included.
pub fn total_chars(blocks: &[Block]) -> usize {
    let kept: Vec<usize> = blocks
        .iter()
        .filter(|b| !b.is_dropped())
        .map(Block::rendered_chars)
        .collect();
    kept.iter().sum::<usize>() + SEPARATOR.len() * kept.len().saturating_sub(1)
}

/// Apply the diet in place (see the module docs) and return the statistics. Blocks already cut
/// (e.g. capped manifests) keep their state unless cut further.
pub fn apply_diet(blocks: &mut [Block], config: &ContextConfig) -> ContextStats {
    let work: Vec<Work> = blocks
        .iter()
        .map(|b| Work {
            original: b.body.clone(),
            original_chars: b.body.chars().count(),
            pre_removed: match b.diet {
                DietState::Truncated { removed_chars } => removed_chars,
                _ => 0,
            },
        })
        .collect();

    // 1. Per-block caps.
    for (b, w) in blocks.iter_mut().zip(&work) {
        let cap = if b.kind == BlockKind::Logs {
            config.max_log_chars
        } else {
            config.max_file_chars
        };
        if w.original_chars > cap {
            set_body(b, w, cap);
        }
    }

    // 2. At most `max_files` FILE blocks with content.
    let file_order = |blocks: &[Block], origin: Origin| -> Vec<usize> {
        (0..blocks.len())
            .rev()
            .filter(|&i| blocks[i].carries_file() && blocks[i].origin == origin)
            .collect()
    };
    let mut files = blocks
        .iter()
        .filter(|b| b.carries_file() && !b.is_dropped())
        .count();
    for i in file_order(blocks, Origin::Auto)
        .into_iter()
        .chain(file_order(blocks, Origin::Requested))
    {
        if files <= config.max_files {
            break;
        }
        blocks[i].diet = DietState::Dropped;
        files -= 1;
    }

    // 3. Total budget, in drop order.
    let mut order: Vec<usize> = Vec::new();
    for kind in [
        BlockKind::Search,
        BlockKind::Online,
        BlockKind::Logs,
        BlockKind::Env,
        BlockKind::Map,
        BlockKind::Architecture,
        BlockKind::Findings,
    ] {
        order.extend((0..blocks.len()).rev().filter(|&i| blocks[i].kind == kind));
    }
    order.extend(
        (0..blocks.len())
            .rev()
            .filter(|&i| blocks[i].kind == BlockKind::File && blocks[i].origin == Origin::Auto),
    );
    order.extend(
        (0..blocks.len()).rev().filter(|&i| {
            blocks[i].kind == BlockKind::File && blocks[i].origin == Origin::Requested
        }),
    );
    let mut total = total_chars(blocks);
    for i in order {
        if total <= config.max_total_chars {
            break;
        }
        if blocks[i].is_dropped() {
            continue;
        }
        let excess = total - config.max_total_chars;
        let body_chars = blocks[i].body.chars().count();
        let is_file = blocks[i].kind == BlockKind::File;
        match (is_file, blocks[i].origin) {
            (true, Origin::Requested) => {
                if !blocks[i].carries_file() {
                    continue; // a one-line note: dropping it would hide why a file is absent
                }
                let target = body_chars
                    .saturating_sub(excess)
                    .max(config.requested_file_floor_chars);
                if target < body_chars {
                    set_body(&mut blocks[i], &work[i], target);
                }
            }
            (true, Origin::Auto) if body_chars.saturating_sub(excess) >= AUTO_MIN_KEEP_CHARS => {
                set_body(&mut blocks[i], &work[i], body_chars - excess);
            }
            _ => blocks[i].diet = DietState::Dropped,
        }
        total = total_chars(blocks);
    }

    let stats = ContextStats {
        context_files_count: blocks
            .iter()
            .filter(|b| b.carries_file() && !b.is_dropped())
            .count(),
        context_files_dropped_count: blocks
            .iter()
            .filter(|b| b.carries_file() && b.is_dropped())
            .count(),
        context_total_chars: total_chars(blocks),
        context_logs_chars: blocks
            .iter()
            .filter(|b| b.kind == BlockKind::Logs && !b.is_dropped())
            .map(Block::rendered_chars)
            .sum(),
        context_truncated_files_count: blocks
            .iter()
            .filter(|b| b.carries_file() && matches!(b.diet, DietState::Truncated { .. }))
            .count(),
    };
    let dropped = blocks.iter().filter(|b| b.is_dropped()).count();
    let truncated = blocks
        .iter()
        .filter(|b| matches!(b.diet, DietState::Truncated { .. }))
        .count();
    if dropped > 0 || truncated > 0 {
        tracing::info!(
            event = "CONTEXT_DIET_APPLIED",
            files = stats.context_files_count,
            dropped,
            truncated,
            total_chars = stats.context_total_chars,
            "CONTEXT_DIET_APPLIED files={} dropped={dropped} truncated={truncated} total_chars={}",
            stats.context_files_count,
            stats.context_total_chars
        );
    }
    stats
}
