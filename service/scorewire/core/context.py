"""What a check may use besides the sample and output: deadline, judge, labels, budget.

One context is made per run (or per request) and shared by every check in it, so it
must hold nothing sample-specific.
"""

from __future__ import annotations

import time
from typing import Any

DEADLINE_SLACK_S = 0.005
"""Seconds of a call's deadline under which its answer counts as late
(`CheckContext.past_deadline`)."""


class CheckContext:
    """Run-wide services and limits handed to every check.

    Deterministic checks ignore it; judge-backed checks reach the judge through it;
    the runner reads `deadline` to bound every check.
    """

    __slots__ = ("budget", "deadline", "extras", "fresh_since", "judge", "labels", "tenant")

    deadline: float | None
    """`time.monotonic()` value after which no check may still run, or None."""
    judge: Any
    """The judge service (`scorewire.judge`), or None when no judge is configured."""
    labels: Any
    """The human-label store, or None."""
    budget: Any
    """The run's judge budget, or None for no limit."""
    extras: dict[str, Any]
    """Anything else a server-side custom check needs, keyed by the embedding app."""
    tenant: str | None
    """Who is asking (the authenticated token's name), or None in-process / without auth.

    The judge's verdict cache records who paid for each verdict and does not tell one
    tenant that another already had the same text judged (unless tenants trust each other).
    """
    fresh_since: float | None
    """Ask the judges again: verdicts the judges gave before this time (seconds since
    the epoch, usually when the request began) are not read from the verdict cache, the
    judge is called instead (within the budgets) and its verdict stored; None reads
    every cached verdict."""

    def __init__(
        self,
        *,
        deadline: float | None = None,
        judge: Any = None,
        labels: Any = None,
        budget: Any = None,
        extras: dict[str, Any] | None = None,
        tenant: str | None = None,
        fresh_since: float | None = None,
    ) -> None:
        self.deadline = deadline
        self.fresh_since = fresh_since
        self.judge = judge
        self.labels = labels
        self.budget = budget
        self.extras = extras if extras is not None else {}
        self.tenant = tenant

    def remaining(self) -> float | None:
        """Seconds left before the deadline (may be negative), or None without one."""
        if self.deadline is None:
            return None
        return self.deadline - time.monotonic()

    def past_deadline(self) -> bool:
        """Whether a call's answer would now reach its caller at or after the deadline:
        less than DEADLINE_SLACK_S is left. Score, RunSuite and a checkllm run then end
        DEADLINE_EXCEEDED rather than answering OK: their checks were cut by the deadline
        (each check's timer fires at it, a hair early or late), and an answer sent so
        late reaches the caller after its deadline, which it reports, while the server
        would have counted an OK."""
        left = self.remaining()
        return left is not None and left <= DEADLINE_SLACK_S


EMPTY_CONTEXT = CheckContext()
"""A context with no judge, no labels, no budget and no deadline."""


class Extraction:
    """What an extractor produced: the text the check runs on, or an error."""

    __slots__ = ("cached", "cost_usd", "error_message", "text")

    def __init__(
        self,
        text: str,
        *,
        cost_usd: float = 0.0,
        cached: bool = False,
        error_message: str | None = None,
    ) -> None:
        self.text = text
        self.cost_usd = cost_usd
        self.cached = cached
        self.error_message = error_message
