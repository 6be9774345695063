//! The file lines shown with a failed hunk: its stated window or the most similar lines.

use super::super::SimilarLine;
use super::matching::significant;

pub(super) fn window(file: &[&str], p: usize, len: usize) -> Vec<SimilarLine> {
    let end = p.saturating_add(len.clamp(1, 5)).min(file.len());
    (p.min(end)..end)
        .map(|i| SimilarLine {
            line: i + 1,
            text: file[i].to_owned(),
        })
        .collect()
}

/// The file window where most of the hunk's old lines match ignoring whitespace, or else the
/// lines most similar to its first significant old line.
pub(super) fn nearest(file: &[&str], old: &[&str]) -> Vec<SimilarLine> {
    if file.is_empty() {
        return Vec::new();
    }
    let budget = 4_000_000usize;
    if file.len().saturating_mul(old.len()) <= budget {
        let mut best = (0usize, 0usize);
        for p in 0..file.len() {
            let score = old
                .iter()
                .enumerate()
                .filter(|(i, o)| {
                    significant(o) && file.get(p + i).is_some_and(|f| f.trim() == o.trim())
                })
                .count();
            if score > best.1 {
                best = (p, score);
            }
        }
        if best.1 > 0 {
            return window(file, best.0, old.len());
        }
    }
    let Some(probe) = old.iter().find(|o| significant(o)).or(old.first()) else {
        return Vec::new();
    };
    let grams = bigrams(probe.trim());
    let mut scored: Vec<(usize, usize)> = file
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let g = bigrams(f.trim());
            (g.iter().filter(|b| grams.contains(b)).count(), i)
        })
        .filter(|(s, _)| *s > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, i)| SimilarLine {
            line: i + 1,
            text: file[i].to_owned(),
        })
        .collect()
}

fn bigrams(s: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = s.chars().take(200).collect();
    let mut v: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    v.sort_unstable();
    v.dedup();
    v
}
