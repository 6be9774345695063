"""Weekly hours report from 'date,hours' records."""

from collections import defaultdict

from dates import format_date, parse_date, week_start


def hours_by_week(records):
    totals = defaultdict(float)
    for day_text, hours in records:
        totals[week_start(parse_date(day_text))] += hours
    return dict(sorted(totals.items()))


def render(records):
    return "\n".join(
        f"week of {format_date(week, 'short')}: {hours:g} h"
        for week, hours in hours_by_week(records).items()
    )
