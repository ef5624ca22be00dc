"""Repeated sampling: ask the judge N times for one score and aggregate the verdicts.

A judge-backed check with `samples: N` asks its question N times, each at the sampling
temperature and each with its own sample index, so each is its own cached verdict:
rerunning costs nothing and raising N later pays only for the new samples (sample 0
keeps the key of an unsampled request). Before the first call the check reserves the
ceiling of every uncached sample from its budgets, all or none (`JudgeService.prepay`),
so a budget that cannot pay for N refuses before paying for some.

The score's value is the aggregate of the samples' values (`mean`, `median`, or
`majority`: the most common value, a tie going to the lower one so that a split vote
never rounds up into a pass); its `spread` says how far the samples agreed (standard
deviation of the values, and the share of samples whose own verdict is the
aggregate's). A judge error in any sample makes the whole score that error, with the
cost of every sample: an error is never a pass.

Temperature: N samples at temperature 0 would ask for the same verdict N times, so with
N > 1 the default is `DEFAULT_SAMPLE_TEMPERATURE` (0.7), and `temperature: 0` with N > 1 is
a load error. One sample keeps the service's configured temperature
(SCOREWIRE_JUDGE_TEMPERATURE, default 0) unless `temperature` says otherwise. The
Anthropic backend sends no temperature (its current API rejects one), so there every
sample is drawn at the provider's own default.

Several judges: a check may name a panel (`judges`), each judge sampled as above and
its samples aggregated before the judges combine (`scorewire.judge.panels`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from pydantic import Field
from scorewire.core.context import CheckContext
from scorewire.core.model import Measurement, Score, Spread
from scorewire.core.registry import ParamError, Params
from scorewire.judge.answers import Answer, Question, note_ceiling

T = TypeVar("T")

MAX_SAMPLES = 16
"""Most samples one check may ask for (SCOREWIRE_MAX_JUDGE_SAMPLES may lower it)."""
DEFAULT_SAMPLE_TEMPERATURE = 0.7
"""Temperature of each sample when `samples` > 1 and no `temperature` is given."""
AGGREGATES = ("mean", "median", "majority")
"""How samples combine into the score's value."""
EPSILON = 1e-9
"""Slack when comparing a value with a level's value (0.75 must pass 0.75)."""

Aggregate = Literal["mean", "median", "majority"]


class SamplingParams(Params):
    """The repeated-sampling parameters every judge-backed check takes."""

    samples: int = Field(
        1,
        ge=1,
        le=MAX_SAMPLES,
        description="Times the judge is asked (1..16); the value aggregates the samples.",
    )
    aggregate: Aggregate = Field(
        "mean",
        description="How samples combine: mean, median, or majority (most common level; "
        "a tie goes to the lower).",
    )
    temperature: float | None = Field(
        None,
        ge=0.0,
        le=2.0,
        description="Judge sampling temperature; default 0.7 when samples > 1, else the "
        "server's (0 unless configured). Not sent to Anthropic.",
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Sampling:
    """How one bound check samples the judge."""

    n: int = 1
    aggregate: Aggregate = "mean"
    temperature: float | None = None
    """The temperature of every sample; None for the service's configured one."""

    def questions(self, question: Question[T]) -> list[Question[T]]:
        """The N requests of one judgement (sample 0 first)."""
        return [
            dataclasses.replace(question, temperature=self.temperature, sample=i)
            for i in range(self.n)
        ]


SINGLE = Sampling()
"""One sample at the service's temperature: what every check did before sampling."""


def sampling_from(p: SamplingParams) -> Sampling:
    """Bind the sampling parameters; temperature 0 with several samples is a ParamError."""
    temperature = p.temperature
    if p.samples > 1:
        if temperature == 0:
            raise ParamError(
                "temperature",
                f"samples: {p.samples} at temperature 0 would ask for the same verdict "
                f"{p.samples} times; leave temperature unset (default "
                f"{DEFAULT_SAMPLE_TEMPERATURE:g}) or set one above 0",
            )
        if temperature is None:
            temperature = DEFAULT_SAMPLE_TEMPERATURE
    return Sampling(p.samples, p.aggregate, temperature)


async def ask_all(
    judge: Any, ctx: CheckContext, questions: Sequence[Question[T]]
) -> list[Answer[T]]:
    """Ask every question at once, the budget reserved for all of them first.

    A refusal of the reservation is returned as the only answer (its error fails the
    score before any call is made).
    """
    prepay = getattr(judge, "prepay", None) if len(questions) > 1 else None
    if prepay is None:
        return list(await asyncio.gather(*(judge.ask(ctx, q) for q in questions)))
    holds = await prepay(ctx, questions)
    if isinstance(holds, Answer):
        return [holds]
    try:
        return list(
            await asyncio.gather(
                *(judge.ask(ctx, q, held=h) for q, h in zip(questions, holds, strict=True))
            )
        )
    finally:
        judge.release(holds)


def aggregate(values: Sequence[float], how: str) -> float:
    """Combine sample values: their mean, median, or most common value (ties: lowest)."""
    if how == "median":
        return float(statistics.median(values))
    if how == "majority":
        counts = Counter(values)
        top = max(counts.values())
        return min(v for v, c in counts.items() if c == top)
    return math.fsum(values) / len(values)


def failed_answer(answers: Sequence[Answer[Any]]) -> Score | None:
    """The error score when any sample failed (with every sample's cost), else None."""
    failed = next((a for a in answers if a.value is None), None)
    if failed is None:
        return None
    score = failed.error_score()
    score.cost_usd = math.fsum(a.cost_usd for a in answers)
    score.unpriced = any(a.unpriced for a in answers)
    score.cached = False
    if len(answers) > 1:
        score.reason = f"{score.reason} (in one of {len(answers)} judge requests)"
        if score.error is not None:
            score.error.message = score.reason
    return note_ceiling(score, answers)


def spread_of(values: Sequence[float], passes: Callable[[float], bool], passed: bool) -> Spread:
    """The spread of sample values judged by one pass rule against the aggregate verdict."""
    return Spread(tuple(values), 0.0).judged(passes, passed)


def sampled_measurement(
    answers: Sequence[Answer[Any]],
    values: Sequence[float],
    sampling: Sampling,
    *,
    stem: str,
    tail: str,
    bar: float | None,
) -> Measurement:
    """The Measurement of several successful samples: aggregate value and spread.

    `bar` is the check's own pass rule (value ≥ bar) when no threshold is in force;
    the engine's threshold, when one is, decides instead and recomputes the agreement.
    """
    value = aggregate(values, sampling.aggregate)
    passed = bar is not None and value >= bar - EPSILON
    rule = bar if bar is not None else math.inf
    spread = spread_of(values, lambda v: v >= rule - EPSILON, passed)
    return Measurement(
        value,
        stem,
        tail,
        passed=passed,
        reason="",
        cost_usd=math.fsum(a.cost_usd for a in answers),
        cached=all(a.cached for a in answers),
        unpriced=any(a.unpriced for a in answers),
        spread=spread,
    )


def closest(values: Sequence[float], value: float) -> int:
    """The index of the first sample whose value is closest to the aggregate."""
    return min(range(len(values)), key=lambda i: abs(values[i] - value))
