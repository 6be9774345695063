import unittest

from slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_simple_title(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_accents_are_dropped(self):
        self.assertEqual(slugify("Crème brûlée"), "creme-brulee")

    def test_repeated_dashes_collapse(self):
        self.assertEqual(slugify("rock -- paper -- scissors"), "rock-paper-scissors")
        self.assertEqual(slugify("a---b"), "a-b")

    def test_length_limit(self):
        self.assertEqual(slugify("one two three", max_length=7), "one-two")


if __name__ == "__main__":
    unittest.main()
