"""A small todo list: items, an in-memory store, JSON persistence and a text view."""

from todo.model import Item, Priority
from todo.store import TodoStore

__all__ = ["Item", "Priority", "TodoStore"]
