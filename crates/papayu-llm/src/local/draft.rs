//! Prompt-lookup drafting: proposes the tokens an answer is likely to copy from its prompt.
//!
//! A whole-file answer is mostly the file papayu sent, with a line or two changed. When the
//! answer's last few tokens also occur in the prompt (as the prompt has them, or JSON-escaped as
//! they appear inside the answer's strings), the tokens that follow them there are proposed; the
//! generation loop decodes them in one batch with the token it sampled and keeps each one only
//! when the sampler, run on that position's own logits, picks it (see `session.rs`). A draft is
//! therefore never part of an answer the sampler would not have produced; it only saves the
//! one-token-at-a-time decode of text the model copies.

use std::collections::HashMap;

use llama_cpp_2::token::LlamaToken;

/// Tokens of the answer matched against the prompt before anything is proposed.
const NGRAM: usize = 3;

/// Where the answer's recent tokens occur in the prompt, and what follows them there.
pub(super) struct Drafter {
    /// The sources, one after the other.
    source: Vec<LlamaToken>,
    /// Where each source ends in `source` (a proposal never runs across one).
    ends: Vec<usize>,
    /// For each run of [`NGRAM`] tokens, the positions in `source` right after its occurrences,
    /// in increasing order.
    after: HashMap<[i32; NGRAM], Vec<usize>>,
    /// Where the last proposal ended: when the answer took all of it, the copy goes on there.
    cursor: Option<usize>,
}

impl Drafter {
    /// A drafter over `sources` (the prompt's tokens, the same text JSON-escaped, …).
    pub(super) fn new(sources: &[&[LlamaToken]]) -> Self {
        let mut source = Vec::with_capacity(sources.iter().map(|s| s.len()).sum());
        let mut ends = Vec::with_capacity(sources.len());
        let mut after: HashMap<[i32; NGRAM], Vec<usize>> = HashMap::new();
        for part in sources {
            let base = source.len();
            source.extend_from_slice(part);
            for (i, w) in part.windows(NGRAM).enumerate() {
                let key = std::array::from_fn(|k| w[k].0);
                after.entry(key).or_default().push(base + i + NGRAM);
            }
            ends.push(source.len());
        }
        Self {
            source,
            ends,
            after,
            cursor: None,
        }
    }

    /// Up to `max` tokens that follow, in a source, the last [`NGRAM`] tokens of `answer`:
    /// where the previous proposal ended if the answer is still copying from there, else after
    /// their last occurrence. Empty when they occur nowhere.
    pub(super) fn propose(&mut self, answer: &[LlamaToken], max: usize) -> &[LlamaToken] {
        if max == 0 || answer.len() < NGRAM {
            return &[];
        }
        let tail = &answer[answer.len() - NGRAM..];
        let key: [i32; NGRAM] = std::array::from_fn(|k| tail[k].0);
        let Some(positions) = self.after.get(&key) else {
            self.cursor = None;
            return &[];
        };
        let start = match self.cursor {
            Some(c) if positions.binary_search(&c).is_ok() => c,
            _ => match positions.last() {
                Some(p) => *p,
                None => return &[],
            },
        };
        let boundary = self
            .ends
            .iter()
            .copied()
            .find(|&e| e >= start)
            .unwrap_or(self.source.len());
        let end = start.saturating_add(max).min(boundary);
        self.cursor = Some(end);
        &self.source[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(ids: &[i32]) -> Vec<LlamaToken> {
        ids.iter().copied().map(LlamaToken::new).collect()
    }

    #[test]
    fn proposes_what_follows_the_answers_last_tokens_in_the_prompt() {
        let prompt = tokens(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let mut d = Drafter::new(&[&prompt]);
        assert_eq!(d.propose(&tokens(&[9, 2, 3, 4]), 3), tokens(&[5, 6, 7]));
        // The copy goes on where the proposal ended, up to the end of the source.
        assert_eq!(d.propose(&tokens(&[9, 2, 3, 4, 5, 6, 7]), 5), tokens(&[8]));
        // Nothing matches, too short an answer, nothing wanted.
        assert!(d.propose(&tokens(&[7, 7, 7]), 4).is_empty());
        assert!(d.propose(&tokens(&[2, 3]), 4).is_empty());
        assert!(d.propose(&tokens(&[1, 2, 3]), 0).is_empty());
    }

    #[test]
    fn the_continued_copy_wins_over_a_later_occurrence_and_sources_stay_apart() {
        // `1 2 3` occurs twice in the first source; the second source starts after `1 2 3`.
        let first = tokens(&[1, 2, 3, 10, 11, 1, 2, 3, 20, 21]);
        let second = tokens(&[30, 1, 2, 3]);
        let mut d = Drafter::new(&[&first, &second]);
        // Without a copy under way: the last occurrence, which ends its source (nothing after).
        assert!(d.propose(&tokens(&[1, 2, 3]), 4).is_empty());
        // Copying the first stretch: `0 1 2 3 10 11`, then `1 2 3` again continues at 20.
        assert_eq!(d.propose(&tokens(&[0, 3, 10, 11]), 2), tokens(&[1, 2]));
        assert_eq!(d.propose(&tokens(&[11, 1, 2]), 2), tokens(&[3, 20]));
        let mut d = Drafter::new(&[&first, &second]);
        assert_eq!(d.propose(&tokens(&[3, 10, 11]), 3), tokens(&[1, 2, 3]));
        assert_eq!(d.propose(&tokens(&[1, 2, 3]), 3), tokens(&[20, 21]));
    }
}
