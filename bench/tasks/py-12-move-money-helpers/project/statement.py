"""Printable account statements."""

from utils import format_money


def statement(account):
    lines = [f"Statement for {account.owner}"]
    running = 0
    for amount, memo in account.ledger:
        running += amount
        lines.append(
            f"{memo or '-':<20}{format_money(amount, account.currency):>16}"
            f"{format_money(running, account.currency):>16}"
        )
    lines.append(f"{'Balance':<20}{'':>16}{format_money(account.balance, account.currency):>16}")
    return "\n".join(lines)
