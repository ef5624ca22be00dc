"""What judge-backed checks ask the judge service, and what they get back."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from scorewire.core.model import Measurement, Score
from scorewire.judge.models import AUTO, ModelRef
from scorewire.judge.prompts import Prompt

T = TypeVar("T")

NO_JUDGE = "no judge is configured"
"""Reason of the JUDGE_ERROR score of a judge-backed check run without a judge."""

BUDGET_EXHAUSTED = "budget exhausted"
"""Reason of the BUDGET_EXHAUSTED score once the run's budget is spent."""

CEILING_NOTE = " (cost is the call's ceiling, an upper bound: the judge reported no token usage)"
"""Said after the reason of a score whose cost includes a call charged its ceiling."""


@dataclass(frozen=True, slots=True)
class Question(Generic[T]):
    """One judge request: the prompt, how to read the answer, the model and its limit."""

    prompt: Prompt
    """The rendered prompt (its text is part of the cache key)."""
    parse: Callable[[str], T]
    """Reads the raw answer; raises `VerdictError` when it is not a valid verdict."""
    model: ModelRef = AUTO
    """Which judge; AUTO for the configured default."""
    max_tokens: int = 1024
    """Most completion tokens (part of the cache key)."""
    temperature: float | None = None
    """Sampling temperature of this request; None for the service's configured one
    (part of the cache key either way)."""
    sample: int = 0
    """Which sample of a repeatedly sampled check this is (0-based). Each sample is its
    own cached verdict; sample 0's key is the key of an unsampled request."""


class Answer(Generic[T]):
    """The judge's parsed verdict, or why there is none, with what it cost."""

    __slots__ = (
        "cached",
        "ceiling_cost",
        "cost_usd",
        "error_code",
        "error_message",
        "reported_model",
        "unpriced",
        "value",
    )

    def __init__(
        self,
        value: T | None,
        *,
        error_code: str | None = None,
        error_message: str = "",
        cost_usd: float = 0.0,
        cached: bool = False,
        unpriced: bool = False,
        ceiling_cost: bool = False,
    ) -> None:
        self.value = value
        """The parsed verdict; None exactly when `error_code` is set."""
        self.error_code = error_code
        """An `ErrorCode` (JUDGE_ERROR, INVALID_VERDICT, BUDGET_EXHAUSTED) or None."""
        self.error_message = error_message
        """Why there is no verdict, for people (never contains credentials)."""
        self.cost_usd = cost_usd
        """Dollars this request spent (0 when served from the cache or a shared call)."""
        self.cached = cached
        """True when the verdict came from the cache or an identical call in flight, and
        this caller's tenant paid for it (or tenants trust each other)."""
        self.unpriced = unpriced
        """True when a call was made to a model without a known price (its cost unknown)."""
        self.ceiling_cost = ceiling_cost
        """True when `cost_usd` is the call's ceiling, what the budgets were charged: the
        upstream reported no token usage, so the real cost is at most that."""
        self.reported_model = ""
        """The model the provider reported answering (empty when unknown)."""

    def error_score(self) -> Score:
        """The error Score for a failed answer, keeping its cost and unpriced flag (the
        ceiling's note is the caller's: `note_ceiling`)."""
        score = Score.fail_with_error(
            self.error_code or "JUDGE_ERROR", self.error_message, cost_usd=self.cost_usd
        )
        score.unpriced = self.unpriced
        score.cached = self.cached
        return score

    def score(self, value: float, passed: bool, reason: str) -> Score:
        """A Score for a successful answer, carrying its cost and cache flags."""
        score = Score(
            value,
            passed,
            reason,
            cost_usd=self.cost_usd,
            cached=self.cached,
            unpriced=self.unpriced,
        )
        return note_ceiling(score, (self,))

    def __repr__(self) -> str:
        if self.error_code is not None:
            return f"Answer(error={self.error_code}: {self.error_message!r})"
        return f"Answer({self.value!r}, cost_usd={self.cost_usd:.6f}, cached={self.cached})"


def note_ceiling(score: Score, answers: Iterable[Answer[Any]]) -> Score:
    """`score`, its reason followed by `CEILING_NOTE` when any of `answers` was charged its
    ceiling (a Measurement's tail too, which the engine keeps when it words a threshold)."""
    if not any(a.ceiling_cost for a in answers):
        return score
    score.reason += CEILING_NOTE
    if isinstance(score, Measurement):
        score.tail += CEILING_NOTE
    if score.error is not None:
        score.error.message = score.reason
    return score
