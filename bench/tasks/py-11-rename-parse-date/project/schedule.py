"""Recurring events."""

from datetime import timedelta

from dates import parse_date


def occurrences(start_text, every_days, count):
    """`count` dates starting at `start_text`, `every_days` apart."""
    if every_days < 1:
        raise ValueError("every_days must be positive")
    start = parse_date(start_text)
    return [start + timedelta(days=every_days * i) for i in range(count)]


def next_after(start_text, every_days, after_text):
    """The first occurrence strictly after `after_text`."""
    start, after = parse_date(start_text), parse_date(after_text)
    if after < start:
        return start
    periods = (after - start).days // every_days + 1
    return start + timedelta(days=every_days * periods)
