"""Render items as text lines."""

_MARK = {True: "[x]", False: "[ ]"}


def render(items, today=None):
    lines = []
    for item in items:
        due = f" (due {item.due.isoformat()})" if item.due else ""
        late = " LATE" if today and item.is_overdue(today) else ""
        lines.append(f"{_MARK[item.done]} #{item.id} {item.title}{due}{late}")
    return "\n".join(lines)
