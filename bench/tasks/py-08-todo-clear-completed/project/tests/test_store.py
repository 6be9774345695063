import unittest
from datetime import date

from todo import Priority, TodoStore
from todo.persist import dumps, loads
from todo.view import render


def filled():
    store = TodoStore()
    store.add("write report", Priority.HIGH, date(2024, 5, 3))
    store.add("buy milk", tags=["home"])
    store.add("call bank", Priority.HIGH, date(2024, 5, 1))
    store.add("water plants", Priority.LOW, tags=["home"])
    return store


class StoreTest(unittest.TestCase):
    def test_pending_order(self):
        titles = [item.title for item in filled().pending()]
        self.assertEqual(titles, ["call bank", "write report", "buy milk", "water plants"])

    def test_empty_title_rejected(self):
        with self.assertRaises(ValueError):
            TodoStore().add("   ")

    def test_tagged(self):
        self.assertEqual(len(filled().tagged("home")), 2)

    def test_ids_stay_stable_after_remove(self):
        store = filled()
        store.remove(2)
        self.assertEqual(store.add("new").id, 5)


class ClearCompletedTest(unittest.TestCase):
    def test_removes_done_items_and_counts_them(self):
        store = filled()
        store.complete(1)
        store.complete(4)
        self.assertEqual(store.clear_completed(), 2)
        self.assertEqual([item.id for item in store.items()], [2, 3])

    def test_nothing_done(self):
        store = filled()
        self.assertEqual(store.clear_completed(), 0)
        self.assertEqual(len(store), 4)


class PersistTest(unittest.TestCase):
    def test_round_trip(self):
        store = filled()
        store.complete(3)
        again = loads(dumps(store))
        self.assertEqual(dumps(again), dumps(store))


class ViewTest(unittest.TestCase):
    def test_late_marker(self):
        store = filled()
        store.complete(3)
        text = render(store.items(), today=date(2024, 5, 2))
        self.assertIn("[ ] #1 write report (due 2024-05-03)\n", text)
        self.assertIn("[x] #3 call bank (due 2024-05-01)\n", text)
        self.assertNotIn("LATE", text)
        self.assertIn("LATE", render(store.items(), today=date(2024, 5, 4)))


if __name__ == "__main__":
    unittest.main()
