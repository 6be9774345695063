import unittest

from ini import IniError, parse

SAMPLE = """
; service configuration
[DEFAULT]
host = localhost
timeout = 30

[server]
port = 8080 ; the http port
debug: yes   # only on staging
name = "api ; v2"
url = http://${host}:${port}/

[client]
retries = 3
servers = alpha,
    beta,
    gamma
base = ${server:url}
"""


class ParseTest(unittest.TestCase):
    def setUp(self):
        self.doc = parse(SAMPLE)

    def test_sections(self):
        self.assertEqual(self.doc.sections(), ["server", "client"])

    def test_inline_semicolon_comment_is_dropped(self):
        self.assertEqual(self.doc["server"]["port"], "8080")
        self.assertEqual(self.doc["server"].getint("port"), 8080)

    def test_inline_hash_comment_is_dropped(self):
        self.assertTrue(self.doc["server"].getbool("debug"))

    def test_quoted_value_keeps_semicolon(self):
        self.assertEqual(self.doc["server"]["name"], "api ; v2")

    def test_defaults_are_inherited(self):
        self.assertEqual(self.doc["client"].getint("timeout"), 30)
        self.assertIn("host", self.doc["client"].keys())

    def test_interpolation(self):
        self.assertEqual(self.doc["server"]["url"], "http://localhost:8080/")
        self.assertEqual(self.doc["client"]["base"], "http://localhost:8080/")

    def test_continuation_lines(self):
        self.assertEqual(self.doc["client"].getlist("servers"), ["alpha", "beta", "gamma"])

    def test_fallbacks(self):
        self.assertEqual(self.doc["client"].getint("missing", fallback=7), 7)
        with self.assertRaises(IniError):
            self.doc["client"].get("missing")


class ErrorTest(unittest.TestCase):
    def test_line_number_in_syntax_error(self):
        with self.assertRaises(IniError) as caught:
            parse("[a]\nx = 1\nnot a pair\n")
        self.assertEqual(caught.exception.line, 3)

    def test_duplicate_section(self):
        with self.assertRaises(IniError):
            parse("[a]\n[a]\n")


class DumpTest(unittest.TestCase):
    def test_round_trip(self):
        doc = parse("[a]\nx = 1 ; one\n")
        doc["a"].set("y", 2)
        self.assertEqual(parse(doc.dump())["a"].getint("y"), 2)
        self.assertEqual(doc.dump(), "[a]\nx = 1\ny = 2\n")


if __name__ == "__main__":
    unittest.main()
