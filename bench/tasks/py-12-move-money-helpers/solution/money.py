"""Money amounts are integers in cents; these convert them to and from text."""

import re

_AMOUNT = re.compile(r"^(-)?(\d+)(?:\.(\d{1,2}))?$")


def parse_money(text):
    """'12.5' → 1250 cents; '-3' → -300. Thousands separators (',') are allowed."""
    match = _AMOUNT.match(text.strip().replace(",", ""))
    if not match:
        raise ValueError(f"not an amount: {text!r}")
    sign, whole, fraction = match.groups()
    cents = int(whole) * 100 + int((fraction or "0").ljust(2, "0"))
    return -cents if sign else cents


def format_money(cents, currency="EUR"):
    """1234567 → 'EUR 12,345.67'."""
    sign = "-" if cents < 0 else ""
    whole, fraction = divmod(abs(cents), 100)
    return f"{sign}{currency} {whole:,}.{fraction:02d}"
