import unittest

from csvreader import CsvError, column, parse_line, read_rows


class ParseLineTest(unittest.TestCase):
    def test_plain_fields(self):
        self.assertEqual(parse_line("a,b,,c"), ["a", "b", "", "c"])

    def test_other_delimiter(self):
        self.assertEqual(parse_line("a;b", delimiter=";"), ["a", "b"])

    def test_quoted_field_with_comma(self):
        self.assertEqual(parse_line('1,"Smith, John",42'), ["1", "Smith, John", "42"])

    def test_escaped_quote(self):
        self.assertEqual(parse_line('"say ""hi""",x'), ['say "hi"', "x"])

    def test_empty_quoted_field(self):
        self.assertEqual(parse_line('"",b'), ["", "b"])

    def test_unterminated_quote(self):
        with self.assertRaises(CsvError):
            parse_line('"open,b')


class ReadRowsTest(unittest.TestCase):
    TEXT = 'name,city\n"Doe, Jane",Berlin\n\nBob,"Paris"\n'

    def test_rows(self):
        self.assertEqual(
            list(read_rows(self.TEXT)),
            [{"name": "Doe, Jane", "city": "Berlin"}, {"name": "Bob", "city": "Paris"}],
        )

    def test_column(self):
        self.assertEqual(column(self.TEXT, "city"), ["Berlin", "Paris"])

    def test_wrong_field_count(self):
        with self.assertRaises(CsvError):
            list(read_rows("a,b\n1,2,3\n"))


if __name__ == "__main__":
    unittest.main()
