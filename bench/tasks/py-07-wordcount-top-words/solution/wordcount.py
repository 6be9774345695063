"""Count words in plain text."""

import re
from collections import Counter

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text):
    """Lowercase words of `text`, apostrophes inside words kept ("don't")."""
    return _WORD.findall(text.lower())


def word_counts(text):
    """A Counter of every word in `text`."""
    return Counter(words(text))


def line_stats(text):
    """(lines, words, characters) like `wc`."""
    return (len(text.splitlines()), len(words(text)), len(text))


def top_words(text, n):
    """The `n` most frequent words as (word, count) pairs, ties broken alphabetically."""
    ranked = sorted(word_counts(text).items(), key=lambda item: (-item[1], item[0]))
    return ranked[:n]
