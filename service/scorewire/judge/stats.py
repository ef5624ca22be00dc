"""Counters of what the judge did: calls, tokens, dollars, cache traffic, retries.

Plain attributes, readable at any time, plus listeners called on every change so a
metrics exporter can mirror them without this package knowing about it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)

Listener = Callable[[str, float, Mapping[str, str]], None]
"""`listener(name, amount, labels)`: `name` is a `JudgeStats` attribute, `amount` the
increment (negative for the `in_flight` gauge going down), `labels` e.g. backend/model."""


class JudgeStats:
    """Running totals of one `JudgeService`. Counters only grow except `in_flight`."""

    calls: int
    """Judge HTTP attempts made, retries included (whatever their outcome)."""
    call_failures: int
    """Judge calls that ended in an error after retries."""
    retries: int
    """Retries after a 429, a 5xx, a timeout or a dropped connection."""
    input_tokens: int
    """Prompt tokens reported by the backends."""
    output_tokens: int
    """Completion tokens reported by the backends."""
    answered_calls: int
    """Judge calls that got an answer after retries (a verdict or not)."""
    cost_usd: float
    """Dollars charged for calls of priced models: their cost, or their ceiling when the
    upstream reported no usage or usage that cannot be true (what the budgets charged)."""
    unpriced_calls: int
    """Calls whose cost is unknown: the model has no price."""
    ceiling_charges: int
    """Calls charged their ceiling (in `cost_usd`) because the upstream reported no usage
    or usage that cannot be true: their cost is an upper bound."""
    cache_hits: int
    """Verdicts served from the cache."""
    cache_misses: int
    """Cache lookups that found nothing."""
    cache_refreshes: int
    """Cache lookups that found a verdict given before the request began, which asked
    the judges again (`CheckContext.fresh_since`): not read, the judge is asked."""
    cache_bypasses: int
    """Cache operations skipped or failed because the cache store (Redis) was unavailable."""
    cache_evictions: int
    """Entries an in-process (`memory://`) cache dropped to stay within its bound."""
    saved_usd: float
    """What cache hits and shared in-flight calls would have cost (priced models only)."""
    shared_calls: int
    """Checks that joined an identical call already in flight instead of making one."""
    invalid_verdicts: int
    """Answers that could not be parsed as a verdict (their cost still counts)."""
    budget_refusals: int
    """Judge calls refused because a budget was exhausted."""
    budget_unavailable: int
    """Shared-budget reservations that Redis did not answer (refused, or failed open)."""
    budget_settle_failures: int
    """Shared-budget settles Redis did not accept (the hold lapses, the cost uncounted)."""
    lease_waits: int
    """Calls that found another replica's single-flight lease and waited for its verdict."""
    remote_shared_calls: int
    """Waits that ended with the verdict another replica fetched (no call made here)."""
    lease_timeouts: int
    """Waits that gave up after single_flight_wait_s and called anyway."""
    lease_failures: int
    """Lease operations Redis did not answer (the call went ahead without single flight)."""
    in_flight: int
    """Judge HTTP requests under way right now (a gauge)."""

    _NAMES = (
        "calls",
        "call_failures",
        "retries",
        "input_tokens",
        "output_tokens",
        "answered_calls",
        "cost_usd",
        "unpriced_calls",
        "ceiling_charges",
        "cache_hits",
        "cache_misses",
        "cache_refreshes",
        "cache_bypasses",
        "cache_evictions",
        "saved_usd",
        "shared_calls",
        "invalid_verdicts",
        "budget_refusals",
        "budget_unavailable",
        "budget_settle_failures",
        "lease_waits",
        "remote_shared_calls",
        "lease_timeouts",
        "lease_failures",
        "in_flight",
    )

    def __init__(self) -> None:
        for name in self._NAMES:
            setattr(self, name, 0)
        self.cost_usd = 0.0
        self.saved_usd = 0.0
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        """Call `listener(name, amount, labels)` on every change from now on."""
        self._listeners.append(listener)

    def add(self, name: str, amount: float = 1, /, **labels: str) -> None:
        """Add `amount` to counter `name` and tell the listeners."""
        setattr(self, name, getattr(self, name) + amount)
        for listener in self._listeners:
            try:
                listener(name, amount, labels)
            except Exception:  # a broken exporter must not break scoring
                log.exception("judge stats listener failed")

    def snapshot(self) -> dict[str, float]:
        """Every counter by name (for logs, tests and summaries)."""
        return {name: getattr(self, name) for name in self._NAMES}
