import unittest
from decimal import Decimal

from models import Customer, Invoice
from pricing import compute_totals
from render import render
from tax import vat_rate


def sample(discount="0", country="DE"):
    customer = Customer("Acme GmbH", country, Decimal(discount))
    return Invoice("2024-001", customer).add("Consulting", 10, "120.00").add("Travel", 1, "80.00")


class TaxTest(unittest.TestCase):
    def test_known_and_unknown_country(self):
        self.assertEqual(vat_rate("fr"), Decimal("0.20"))
        with self.assertRaises(ValueError):
            vat_rate("XX")


class TotalsTest(unittest.TestCase):
    def test_without_discount(self):
        totals = compute_totals(sample())
        self.assertEqual(totals.subtotal, Decimal("1280.00"))
        self.assertEqual(totals.vat, Decimal("243.20"))
        self.assertEqual(totals.total, Decimal("1523.20"))

    def test_discount_lowers_vat_and_total(self):
        totals = compute_totals(sample(discount="10"))
        self.assertEqual(totals.discount, Decimal("128.00"))
        self.assertEqual(totals.vat, Decimal("218.88"))
        self.assertEqual(totals.total, Decimal("1370.88"))

    def test_no_vat_country(self):
        totals = compute_totals(sample(discount="5", country="US"))
        self.assertEqual(totals.total, Decimal("1216.00"))


class RenderTest(unittest.TestCase):
    def test_render_shows_discount_line(self):
        text = render(sample(discount="10"))
        self.assertIn("Discount", text)
        self.assertTrue(text.endswith("1370.88"))


if __name__ == "__main__":
    unittest.main()
