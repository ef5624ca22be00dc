"""What every judge-backed check shares: the examples hook and the judge lookup.

A check factory returns an instance of a `JudgeBackedCheck` subclass. The engine hands
it the spec's positive/negative examples once, at load time (`bind_examples`), and they
go into the judge prompt. Each factory call builds a fresh instance, so binding never
leaks between specs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, cast

from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Measurement, Output, Sample, Score
from scorewire.core.registry import ThresholdRule
from scorewire.judge.answers import NO_JUDGE, Answer, Question, note_ceiling
from scorewire.judge.prompts import ExampleLike, as_text
from scorewire.judge.sampling import (
    Sampling,
    ask_all,
    closest,
    failed_answer,
    sampled_measurement,
)
from scorewire.judge.several import Several
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
        return note_ceiling(answer.error_score(), (answer,))
    value = (verdict.level - 1) / (scale - 1)
    stem = f"level {verdict.level}/{scale}"
    tail = f": {verdict.reasoning}" if verdict.reasoning else ""
    passed = pass_level is not None and verdict.level >= pass_level
    own = f"{stem} (passes at {pass_level}){tail}" if pass_level is not None else ""
    score = Measurement(
        value,
        stem,
        tail,
        passed=passed,
        reason=own,
        cost_usd=answer.cost_usd,
        cached=answer.cached,
        unpriced=answer.unpriced,
    )
    return note_ceiling(score, (answer,))


async def ask_levels(
    judge: Any,
    ctx: CheckContext,
    question: Question[LevelVerdict],
    sampling: Sampling,
    scale: int,
    *,
    pass_level: int | None = None,
    several: Several | None = None,
    case: tuple[str, str] = ("", ""),
) -> Score:
    """Ask a level question as `sampling` says and score the answers (`level_score`
    for one sample, `sampled_level_score` for several); with `several` judges (a panel
    or a cascade), ask each of them so (`scorewire.judge.panels`, `.cascades`). `case`
    is the sample id and output text, which pick a cascade's audits."""
    if several is not None:
        return await several.ask(
            judge,
            ctx,
            lambda ref: sampling.questions(dataclasses.replace(question, model=ref)),
            _judge_levels(scale, sampling, pass_level),
            case,
        )
    if sampling.n == 1 and sampling.temperature is None:
        answer: Answer[LevelVerdict] = await judge.ask(ctx, question)
        return level_score(answer, scale, pass_level=pass_level)
    answers = await ask_all(judge, ctx, sampling.questions(question))
    if len(answers) == 1:
        return level_score(answers[0], scale, pass_level=pass_level)
    return sampled_level_score(answers, scale, sampling, pass_level=pass_level)


def _judge_levels(
    scale: int, sampling: Sampling, pass_level: int | None
) -> Callable[[Sequence[Answer[LevelVerdict]]], Score]:
    """How one judge of a panel or cascade is scored from its samples' answers."""

    def verdict(answers: Sequence[Answer[LevelVerdict]]) -> Score:
        if len(answers) == 1:
            return level_score(answers[0], scale, pass_level=pass_level)
        return sampled_level_score(answers, scale, sampling, pass_level=pass_level)

    return verdict


def level_bar(scale: int, level: int) -> float:
    """The value of `level` on a 1..scale scale (the bar a pass level sets)."""
    return (level - 1) / (scale - 1)


def sampled_level_score(
    answers: Sequence[Answer[LevelVerdict]],
    scale: int,
    sampling: Sampling,
    *,
    pass_level: int | None = None,
) -> Score:
    """The Measurement of several level samples: the aggregate value, the levels in the
    reason, the reasoning of the sample closest to the aggregate, and the spread."""
    failed = failed_answer(answers)
    if failed is not None:
        return failed
    verdicts = [cast(LevelVerdict, a.value) for a in answers]
    values = [(v.level - 1) / (scale - 1) for v in verdicts]
    bar = None if pass_level is None else (pass_level - 1) / (scale - 1)
    levels = ", ".join(str(v.level) for v in verdicts)
    n = len(verdicts)
    stem_tmpl = f"{sampling.aggregate} of {n} samples {{value:.3g}} (levels {levels} of {scale})"
    # The stem needs the value, known only once aggregated: build, then fill in.
    score = sampled_measurement(answers, values, sampling, stem="", tail="", bar=bar)
    best = verdicts[closest(values, score.value)]
    score.stem = stem_tmpl.format(value=score.value)
    score.tail = f": {best.reasoning}" if best.reasoning else ""
    own = f" (passes at level {pass_level})" if pass_level is not None else ""
    score.reason = f"{score.stem}{own}{score.tail}"
    return note_ceiling(score, answers)


def _level_phrase(value: float, passed: bool, threshold: float) -> str:
    return f" (value {value:.3g} {'≥' if passed else '<'} threshold {threshold:g})"


def level_threshold(default: float | None) -> ThresholdRule:
    """The threshold rule of a judge-graded family: value ≥ threshold, with slack so that
    level 4 of 5 (0.75) passes a threshold of 0.75."""
    return ThresholdRule(default, _level_phrase, slack=_EPSILON)
