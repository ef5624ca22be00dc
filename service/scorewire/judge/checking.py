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
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.judge.answers import NO_JUDGE
from scorewire.judge.prompts import ExampleLike, as_text


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
