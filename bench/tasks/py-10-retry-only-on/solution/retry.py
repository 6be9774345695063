"""Call a flaky function again with exponential backoff."""

import time


class RetryError(Exception):
    """Every attempt failed; `last` is the final exception."""

    def __init__(self, attempts, last):
        super().__init__(f"gave up after {attempts} attempts: {last!r}")
        self.attempts = attempts
        self.last = last


def backoff_delays(attempts, base=0.1, factor=2.0, max_delay=5.0):
    """The sleeps between `attempts` tries: base, base*factor, ... capped at max_delay."""
    return [min(base * factor**i, max_delay) for i in range(attempts - 1)]


def retry(
    fn, attempts=3, base=0.1, factor=2.0, max_delay=5.0, sleep=time.sleep, retry_on=(Exception,)
):
    """Call `fn()` up to `attempts` times, sleeping between failures; return its result.

    Only exceptions that are instances of `retry_on` are retried; others propagate at once.
    """
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    delays = backoff_delays(attempts, base, factor, max_delay)
    for attempt in range(attempts):
        try:
            return fn()
        except retry_on as exc:
            last = exc
            if attempt < len(delays):
                sleep(delays[attempt])
    raise RetryError(attempts, last)
