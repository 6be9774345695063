"""Invoice data: customers, lines and the invoice itself."""

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class Customer:
    name: str
    country: str
    discount_percent: Decimal = Decimal("0")


@dataclass(frozen=True)
class Line:
    description: str
    quantity: int
    unit_price: Decimal

    @property
    def amount(self):
        return self.unit_price * self.quantity


@dataclass
class Invoice:
    number: str
    customer: Customer
    lines: list = field(default_factory=list)

    def add(self, description, quantity, unit_price):
        self.lines.append(Line(description, quantity, Decimal(unit_price)))
        return self
