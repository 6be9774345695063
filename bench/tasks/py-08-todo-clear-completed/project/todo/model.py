"""Todo items."""

from dataclasses import dataclass, field
from datetime import date
from enum import IntEnum


class Priority(IntEnum):
    LOW = 1
    NORMAL = 2
    HIGH = 3


@dataclass
class Item:
    id: int
    title: str
    priority: Priority = Priority.NORMAL
    due: date | None = None
    done: bool = False
    tags: set = field(default_factory=set)

    def is_overdue(self, today):
        return not self.done and self.due is not None and self.due < today
