import importlib.util
import unittest

from account import Account, InsufficientFunds
from money import format_money, parse_money
from statement import statement


class MoneyTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_money("12.5"), 1250)
        self.assertEqual(parse_money("-3"), -300)
        self.assertEqual(parse_money("1,000.05"), 100005)
        with self.assertRaises(ValueError):
            parse_money("12.345")

    def test_format(self):
        self.assertEqual(format_money(1234567), "EUR 12,345.67")
        self.assertEqual(format_money(-5, "USD"), "-USD 0.05")


    def test_utils_module_is_gone(self):
        self.assertIsNone(importlib.util.find_spec("utils"))


class AccountTest(unittest.TestCase):
    def test_deposit_withdraw(self):
        account = Account("Ada")
        account.deposit("100")
        account.withdraw("30.25", "groceries")
        self.assertEqual(account.balance, 6975)

    def test_overdraft_limit(self):
        account = Account("Ada", overdraft=1000)
        account.withdraw("10")
        with self.assertRaises(InsufficientFunds):
            account.withdraw("0.01")

    def test_statement(self):
        account = Account("Ada")
        account.deposit("50", "salary")
        account.withdraw("20")
        text = statement(account)
        self.assertTrue(text.endswith("EUR 30.00"))
        self.assertIn("salary", text)


if __name__ == "__main__":
    unittest.main()
