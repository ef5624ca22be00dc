"""What every judge-backed check shares: the examples hook and the judge lookup.

A check factory returns an instance of a `JudgeBackedCheck` subclass. The engine hands
it the spec's positive/negative examples once, at load time (`bind_examples`), and they
go into the judge prompt. Each factory call builds a fresh instance, so binding never
leaks between specs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Measurement, Output, Sample, Score
from scorewire.core.registry import ThresholdRule
from scorewire.judge.answers import NO_JUDGE, Answer
from scorewire.judge.prompts import ExampleLike, as_text
from scorewire.judge.verdict import LevelVerdict

_EPSILON = 1e-9
"""Slack when comparing a level's value with a threshold (0.75 must pass 0.75)."""


class JudgeBackedCheck:
    """An async scoring function that asks `ctx.judge`; subclasses implement `score`."""

    def __init__(self) -> None:
        self.examples: tuple[ExampleLike, ...] = ()
        """Positive/negative examples for the prompt (bound at load time)."""

    def bind_examples(self, examples: Sequence[ExampleLike]) -> None:
        """Receive the spec's examples (called once by the engine after the factory)."""
        self.examples = tuple(examples)

    async def __call__(self, sample: Sample, output: Output, ctx: CheckContext) -> Score:
        """Score one output; without a judge on the context, a JUDGE_ERROR score."""
        if ctx.judge is None:
            return Score.fail_with_error(ErrorCode.JUDGE_ERROR, NO_JUDGE)
        return await self.score(ctx.judge, sample, output, ctx)

    async def score(self, judge: Any, sample: Sample, output: Output, ctx: CheckContext) -> Score:
        """Ask the judge and turn its answer into a Score."""
        raise NotImplementedError


def output_text(output: Output) -> str:
    """What the judge reads as the output: its text, else its JSON value."""
    if output.text or output.value is None:
        return output.text
    return as_text(output.value)


def level_score(
    answer: Answer[LevelVerdict], scale: int, *, pass_level: int | None = None
) -> Score:
    """The Measurement of a level verdict, value (level-1)/(scale-1), or a failed
    answer's error score.

    The engine passes it at the spec's threshold (`level_threshold`); without one in
    force it passes at `pass_level`, and with neither it fails.
    """
    verdict = answer.value
    if verdict is None:
        return answer.error_score()
    value = (verdict.level - 1) / (scale - 1)
    stem = f"level {verdict.level}/{scale}"
    tail = f": {verdict.reasoning}" if verdict.reasoning else ""
    passed = pass_level is not None and verdict.level >= pass_level
    own = f"{stem} (passes at {pass_level}){tail}" if pass_level is not None else ""
    return Measurement(
        value,
        stem,
        tail,
        passed=passed,
        reason=own,
        cost_usd=answer.cost_usd,
        cached=answer.cached,
        unpriced=answer.unpriced,
    )


def _level_phrase(value: float, passed: bool, threshold: float) -> str:
    return f" (value {value:.3g} {'≥' if passed else '<'} threshold {threshold:g})"


def level_threshold(default: float | None) -> ThresholdRule:
    """The threshold rule of a judge-graded family: value ≥ threshold, with slack so that
    level 4 of 5 (0.75) passes a threshold of 0.75."""
    return ThresholdRule(default, _level_phrase, slack=_EPSILON)
