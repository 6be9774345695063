import unittest

from wordcount import line_stats, top_words, word_counts, words

TEXT = """The cat sat on the mat.
The dog didn't sit; the dog ran.
A cat, a dog, a mat!"""


class WordsTest(unittest.TestCase):
    def test_words_are_lowercased_and_keep_apostrophes(self):
        self.assertEqual(words("Don't STOP"), ["don't", "stop"])

    def test_counts(self):
        counts = word_counts(TEXT)
        self.assertEqual(counts["the"], 4)
        self.assertEqual(counts["dog"], 3)

    def test_line_stats(self):
        self.assertEqual(line_stats("a b\nc\n"), (2, 3, 6))


class TopWordsTest(unittest.TestCase):
    def test_most_frequent_first(self):
        self.assertEqual(top_words(TEXT, 2), [("the", 4), ("a", 3)])

    def test_ties_are_alphabetical(self):
        self.assertEqual(top_words(TEXT, 4), [("the", 4), ("a", 3), ("dog", 3), ("cat", 2)])

    def test_n_larger_than_vocabulary(self):
        self.assertEqual(top_words("one two two", 10), [("two", 2), ("one", 1)])

    def test_empty_text(self):
        self.assertEqual(top_words("", 3), [])


if __name__ == "__main__":
    unittest.main()
