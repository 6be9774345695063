import unittest
from datetime import date

import dates
from dates import format_date, parse_iso_date, week_start
from report import hours_by_week, render
from schedule import next_after, occurrences


class DatesTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_iso_date(" 2024-02-29 "), date(2024, 2, 29))
        with self.assertRaises(ValueError):
            parse_iso_date("29/02/2024")

    def test_old_name_is_gone(self):
        self.assertFalse(hasattr(dates, "parse_date"))

    def test_format(self):
        day = date(2024, 1, 5)
        self.assertEqual(format_date(day, "long"), "5 January 2024")
        self.assertEqual(format_date(day, "short"), "5 Jan")

    def test_week_start(self):
        self.assertEqual(week_start(date(2024, 1, 7)), date(2024, 1, 1))


class ReportTest(unittest.TestCase):
    def test_hours_by_week(self):
        records = [("2024-01-02", 3), ("2024-01-04", 4.5), ("2024-01-08", 2)]
        self.assertEqual(hours_by_week(records), {date(2024, 1, 1): 7.5, date(2024, 1, 8): 2})
        self.assertEqual(render(records), "week of 1 Jan: 7.5 h\nweek of 8 Jan: 2 h")


class ScheduleTest(unittest.TestCase):
    def test_occurrences(self):
        self.assertEqual(occurrences("2024-01-30", 2, 2), [date(2024, 1, 30), date(2024, 2, 1)])

    def test_next_after(self):
        self.assertEqual(next_after("2024-01-01", 7, "2024-01-08"), date(2024, 1, 15))
        self.assertEqual(next_after("2024-01-10", 7, "2024-01-01"), date(2024, 1, 10))


if __name__ == "__main__":
    unittest.main()
