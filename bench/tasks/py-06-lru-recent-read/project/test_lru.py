import unittest

from lru import LRUCache


class LRUCacheTest(unittest.TestCase):
    def test_evicts_least_recently_added(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("c", 3)
        self.assertNotIn("a", cache)
        self.assertEqual(cache.keys(), ["b", "c"])

    def test_read_makes_key_recent(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        self.assertEqual(cache.get("a"), 1)
        cache.put("c", 3)
        self.assertIn("a", cache)
        self.assertNotIn("b", cache)

    def test_update_makes_key_recent(self):
        cache = LRUCache(2)
        cache.put("a", 1)
        cache.put("b", 2)
        cache.put("a", 10)
        cache.put("c", 3)
        self.assertEqual(cache.get("a"), 10)
        self.assertEqual(len(cache), 2)

    def test_statistics(self):
        cache = LRUCache(1)
        cache.put("a", 1)
        cache.get("a")
        self.assertIsNone(cache.get("zzz"))
        self.assertEqual((cache.hits, cache.misses), (1, 1))

    def test_capacity_must_be_positive(self):
        with self.assertRaises(ValueError):
            LRUCache(0)


if __name__ == "__main__":
    unittest.main()
