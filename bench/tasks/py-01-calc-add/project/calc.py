"""A tiny calculator used by papayu's examples and end-to-end tests."""


def add(a, b):
    """Return the sum of a and b."""
    return a - b


def mean(values):
    """Return the arithmetic mean of a non-empty list."""
    return sum(values) / len(values)
