//! Word statistics for plain text.

use std::collections::HashMap;

/// Words are runs of letters, digits and apostrophes; everything else separates them.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
}

/// How often each word occurs, ignoring case (keys are lowercase).
pub fn word_frequencies(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for word in words(text) {
        *counts.entry(word.to_owned()).or_insert(0) += 1;
    }
    counts
}

/// The `n` most frequent words, most frequent first, ties in alphabetical order.
pub fn most_common(text: &str, n: usize) -> Vec<(String, usize)> {
    let mut pairs: Vec<(String, usize)> = word_frequencies(text).into_iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    pairs.truncate(n);
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "The cat and the hat. THE END, isn't it? 'Quoted' words, the cat.";

    #[test]
    fn splits_on_punctuation_and_keeps_apostrophes() {
        let all: Vec<&str> = words("isn't it? 'Quoted'").collect();
        assert_eq!(all, ["isn't", "it", "Quoted"]);
    }

    #[test]
    fn counts_ignore_case() {
        let counts = word_frequencies(TEXT);
        assert_eq!(counts.get("the"), Some(&4));
        assert_eq!(counts.get("The"), None);
        assert_eq!(counts.get("quoted"), Some(&1));
    }

    #[test]
    fn most_common_with_ties() {
        assert_eq!(
            most_common(TEXT, 3),
            vec![
                ("the".to_owned(), 4),
                ("cat".to_owned(), 2),
                ("and".to_owned(), 1)
            ]
        );
    }

    #[test]
    fn empty_text() {
        assert!(word_frequencies(" ... ").is_empty());
    }
}
