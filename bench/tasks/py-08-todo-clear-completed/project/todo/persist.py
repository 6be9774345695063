"""JSON (de)serialisation of a store."""

import json
from datetime import date

from todo.model import Priority
from todo.store import TodoStore


def dumps(store):
    return json.dumps(
        [
            {
                "title": item.title,
                "priority": item.priority.name.lower(),
                "due": item.due.isoformat() if item.due else None,
                "done": item.done,
                "tags": sorted(item.tags),
            }
            for item in store.items()
        ],
        indent=2,
    )


def loads(text):
    store = TodoStore()
    for record in json.loads(text):
        due = date.fromisoformat(record["due"]) if record["due"] else None
        item = store.add(record["title"], Priority[record["priority"].upper()], due, record["tags"])
        item.done = record["done"]
    return store
