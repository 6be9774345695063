"""Compute invoice totals."""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from tax import vat_rate

CENT = Decimal("0.01")


@dataclass(frozen=True)
class Totals:
    subtotal: Decimal
    discount: Decimal
    vat: Decimal
    total: Decimal


def _money(value):
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def compute_totals(invoice):
    """Subtotal of the lines, the customer's discount, VAT on the discounted amount, and total."""
    subtotal = sum((line.amount for line in invoice.lines), Decimal("0"))
    discount = _money(subtotal * invoice.customer.discount_percent / 100)
    taxable = subtotal - discount
    vat = _money(taxable * vat_rate(invoice.customer.country))
    return Totals(
        subtotal=_money(subtotal),
        discount=discount,
        vat=vat,
        total=_money(taxable + vat),
    )
