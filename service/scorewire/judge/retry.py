"""When to retry a judge call and how long to wait first."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, overridden upwards by the server's Retry-After."""

    max_retries: int = 4
    """Retries after the first attempt."""
    base_s: float = 0.5
    """Backoff before the first retry (before jitter); doubles per retry."""
    max_s: float = 30.0
    """Longest wait before a retry; a server asking for longer makes the call give up."""
    rand: Callable[[], float] = field(default=random.random, compare=False)
    """Source of jitter in [0, 1) (tests pin it)."""

    def backoff(self, attempt: int) -> float:
        """Seconds before retry number `attempt + 1`: half to all of base * 2**attempt."""
        ceiling = min(self.max_s, self.base_s * float(2**attempt))
        return ceiling * (0.5 + 0.5 * self.rand())

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """The wait before the next attempt.

        A Retry-After is honoured: never retry sooner than the server asked, plus up to
        10 % jitter so that many clients told the same thing do not return in step.
        """
        if retry_after is not None:
            return retry_after * (1.0 + 0.1 * self.rand())
        return self.backoff(attempt)
