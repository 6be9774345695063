"""Plain-text rendering of an invoice."""

from pricing import compute_totals


def render(invoice):
    """Return the invoice as aligned plain text."""
    rows = [f"Invoice {invoice.number} for {invoice.customer.name}", ""]
    for line in invoice.lines:
        rows.append(f"{line.description:<30}{line.quantity:>4} x {line.unit_price:>8}  {line.amount:>10}")
    totals = compute_totals(invoice)
    rows.append("")
    rows.append(f"{'Subtotal':<46}{totals.subtotal:>10}")
    if totals.discount:
        rows.append(f"{'Discount':<46}{-totals.discount:>10}")
    rows.append(f"{'VAT':<46}{totals.vat:>10}")
    rows.append(f"{'Total':<46}{totals.total:>10}")
    return "\n".join(rows)
