"""Date helpers shared by the report and the scheduler."""

from datetime import date, timedelta


def parse_date(text):
    """Parse 'YYYY-MM-DD' into a date, with a readable error."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"expected a date like 2024-01-31, got {text!r}") from None


def format_date(day, style="iso"):
    """'iso' → 2024-01-31, 'long' → 31 January 2024, 'short' → 31 Jan."""
    if style == "iso":
        return day.isoformat()
    if style == "long":
        return f"{day.day} {day.strftime('%B')} {day.year}"
    if style == "short":
        return f"{day.day} {day.strftime('%b')}"
    raise ValueError(f"unknown style {style!r}")


def week_start(day):
    """The Monday of the week holding `day`."""
    return day - timedelta(days=day.weekday())
