import unittest

from retry import RetryError, backoff_delays, retry


class Flaky:
    """Raise the given exceptions in order, then return 'ok'."""

    def __init__(self, *errors):
        self.errors = list(errors)
        self.calls = 0

    def __call__(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class BackoffTest(unittest.TestCase):
    def test_delays(self):
        self.assertEqual(backoff_delays(4, base=1, factor=3, max_delay=5), [1, 3, 5])


class RetryTest(unittest.TestCase):
    def setUp(self):
        self.slept = []

    def test_succeeds_after_failures(self):
        fn = Flaky(OSError("a"), OSError("b"))
        self.assertEqual(retry(fn, attempts=3, sleep=self.slept.append), "ok")
        self.assertEqual(fn.calls, 3)
        self.assertEqual(self.slept, [0.1, 0.2])

    def test_gives_up(self):
        fn = Flaky(*[TimeoutError("t")] * 5)
        with self.assertRaises(RetryError) as caught:
            retry(fn, attempts=2, sleep=self.slept.append)
        self.assertEqual(caught.exception.attempts, 2)
        self.assertEqual(fn.calls, 2)

    def test_retry_on_filters_exceptions(self):
        fn = Flaky(ConnectionError("reset"), KeyError("bug"))
        with self.assertRaises(KeyError):
            retry(fn, attempts=5, sleep=self.slept.append, retry_on=(ConnectionError,))
        self.assertEqual(fn.calls, 2)
        self.assertEqual(self.slept, [0.1])

    def test_retry_on_matches_subclasses(self):
        fn = Flaky(ConnectionResetError("reset"))
        self.assertEqual(retry(fn, sleep=self.slept.append, retry_on=(OSError,)), "ok")


if __name__ == "__main__":
    unittest.main()
