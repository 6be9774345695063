"""VAT rates by country."""

from decimal import Decimal

VAT_RATES = {
    "DE": Decimal("0.19"),
    "FR": Decimal("0.20"),
    "NL": Decimal("0.21"),
    "US": Decimal("0"),
}


def vat_rate(country):
    """Return the VAT rate for a two-letter country code."""
    try:
        return VAT_RATES[country.upper()]
    except KeyError:
        raise ValueError(f"no VAT rate for {country!r}") from None
