"""An in-memory todo store with stable ids."""

from todo.model import Item, Priority


class TodoStore:
    def __init__(self):
        self._items = {}
        self._next_id = 1

    def __len__(self):
        return len(self._items)

    def add(self, title, priority=Priority.NORMAL, due=None, tags=()):
        item = Item(self._next_id, title.strip(), priority, due, tags=set(tags))
        if not item.title:
            raise ValueError("a todo needs a title")
        self._items[item.id] = item
        self._next_id += 1
        return item

    def get(self, item_id):
        try:
            return self._items[item_id]
        except KeyError:
            raise KeyError(f"no todo with id {item_id}") from None

    def complete(self, item_id):
        self.get(item_id).done = True

    def remove(self, item_id):
        self.get(item_id)
        del self._items[item_id]

    def clear_completed(self):
        """Remove every done item; return how many were removed."""
        done = [item_id for item_id, item in self._items.items() if item.done]
        for item_id in done:
            del self._items[item_id]
        return len(done)

    def pending(self):
        """Open items, highest priority first, then by due date (undated last)."""
        open_items = [item for item in self._items.values() if not item.done]
        return sorted(open_items, key=lambda i: (-i.priority, i.due is None, i.due or 0, i.id))

    def tagged(self, tag):
        return [item for item in self._items.values() if tag in item.tags]

    def items(self):
        return list(self._items.values())
