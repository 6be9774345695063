"""A bank account that keeps a ledger of signed amounts in cents."""

from utils import format_money, parse_money


class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, owner, currency="EUR", overdraft=0):
        self.owner = owner
        self.currency = currency
        self.overdraft = overdraft
        self.ledger = []

    @property
    def balance(self):
        return sum(amount for amount, _ in self.ledger)

    def deposit(self, text, memo=""):
        amount = parse_money(text)
        if amount <= 0:
            raise ValueError("deposits must be positive")
        self.ledger.append((amount, memo))

    def withdraw(self, text, memo=""):
        amount = parse_money(text)
        if amount <= 0:
            raise ValueError("withdrawals must be positive")
        if self.balance - amount < -self.overdraft:
            raise InsufficientFunds(f"balance is {format_money(self.balance, self.currency)}")
        self.ledger.append((-amount, memo))
