import unittest

from roman import from_roman, to_roman


class ToRomanTest(unittest.TestCase):
    def test_examples(self):
        self.assertEqual(to_roman(14), "XIV")
        self.assertEqual(to_roman(1994), "MCMXCIV")
        self.assertEqual(to_roman(3999), "MMMCMXCIX")

    def test_out_of_range(self):
        with self.assertRaises(ValueError):
            to_roman(0)


class FromRomanTest(unittest.TestCase):
    def test_additive(self):
        self.assertEqual(from_roman("VIII"), 8)
        self.assertEqual(from_roman("MMXXIII"), 2023)

    def test_subtractive(self):
        self.assertEqual(from_roman("XIV"), 14)
        self.assertEqual(from_roman("MCMXCIV"), 1994)

    def test_lowercase(self):
        self.assertEqual(from_roman("xl"), 40)

    def test_round_trip(self):
        for n in range(1, 4000):
            self.assertEqual(from_roman(to_roman(n)), n)

    def test_rejects_garbage(self):
        with self.assertRaises(ValueError):
            from_roman("XIZ")


if __name__ == "__main__":
    unittest.main()
