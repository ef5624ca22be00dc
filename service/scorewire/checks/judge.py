"""The `judge` check: an LLM grades the output against a rubric on a 1..scale scale.

value = (level − 1) / (scale − 1). It passes at `pass_level` (default: the
second-highest level; on a 1–2 scale the top level) or, when `threshold` is given
instead, when value ≥ threshold. The judge's raw verdict is cached, so changing
pass_level or threshold re-scores for free.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from scorewire.core.charges import JUDGE_MODEL, JUDGE_TEXT
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import ParamError, check_type
from scorewire.judge.answers import Question
from scorewire.judge.checking import (
    JudgeBackedCheck,
    ask_levels,
    level_bar,
    level_threshold,
    output_text,
)
from scorewire.judge.models import ModelRef, parse_model
from scorewire.judge.panels import PanelParams
from scorewire.judge.prompts import as_text, render_grade
from scorewire.judge.sampling import Sampling, sampling_from
from scorewire.judge.several import Several, judges_from
from scorewire.judge.verdict import parse_level

DEFAULT_SCALE = 5
"""Levels of a `judge` check that names no `scale`."""


class JudgeParams(PanelParams):
    """Parameters of `judge`."""

    rubric: str = Field(min_length=1, description="What a good output does, in plain words.")
    scale: int = Field(DEFAULT_SCALE, ge=2, le=100, description="Levels run from 1 to scale.")
    pass_level: int | None = Field(
        None,
        ge=1,
        description="Lowest passing level; default the second-highest (the top on 1–2).",
    )
    threshold: float | None = Field(
        None, ge=0.0, le=1.0, description="Pass when value ≥ threshold (instead of pass_level)."
    )
    model: str | None = Field(
        None, description="Judge as backend:model (openai:gpt-4o-mini); default configured."
    )
    include_reference: bool = Field(
        False, description="Show the sample's expected value to the judge as a reference."
    )
    max_tokens: int = Field(1024, ge=1, le=32_768, description="Most tokens the judge may write.")


def default_pass_level(scale: int) -> int:
    """The second-highest level, or the top level on a 1–2 scale."""
    return scale if scale <= 2 else scale - 1


def parse_model_param(model: str | None) -> ModelRef:
    """Parse a check's `model:` parameter, as a load error when it is unusable."""
    try:
        return parse_model(model)
    except ValueError as err:
        raise ParamError("model", str(err)) from None


class RubricGrade(JudgeBackedCheck):
    """The bound `judge` check."""

    def __init__(
        self, p: JudgeParams, model: ModelRef, sampling: Sampling, several: Several | None = None
    ) -> None:
        super().__init__()
        self.sampling = sampling
        self.several = several
        self.rubric = p.rubric
        self.scale = p.scale
        self.pass_level = default_pass_level(p.scale) if p.pass_level is None else p.pass_level
        self.include_reference = p.include_reference
        self.model = model
        self.max_tokens = p.max_tokens
        scale = p.scale
        self._parse = lambda text: parse_level(text, scale)

    async def score(self, judge: Any, sample: Sample, output: Output, ctx: CheckContext) -> Score:
        """Grade the output: the level is the value; it passes at `pass_level` unless the
        spec's `threshold` (applied by the engine) decides instead."""
        sections: list[tuple[str, str]] = []
        if sample.input is not None:
            sections.append(("input", as_text(sample.input)))
        if self.include_reference:
            if sample.expected is None:
                return Score.fail_with_error(
                    ErrorCode.MISSING_REFERENCE,
                    "include_reference is set but the sample has no expected value",
                )
            sections.append(("reference", as_text(sample.expected)))
        sections.append(("output", output_text(output)))
        prompt = render_grade(self.rubric, self.scale, sections, self.examples)
        question = Question(prompt, self._parse, self.model, self.max_tokens)
        return await ask_levels(
            judge,
            ctx,
            question,
            self.sampling,
            self.scale,
            pass_level=self.pass_level,
            several=self.several,
            case=(sample.id, output_text(output)),
        )


@check_type(
    "judge",
    description="An LLM grades the output against a rubric on a 1..scale scale.",
    family="judge",
    params=JudgeParams,
    uses_judge=True,
    threshold=level_threshold(None),
    costs={"rubric": JUDGE_TEXT, "model": JUDGE_MODEL},
)
def build_judge(p: JudgeParams) -> RubricGrade:
    """Bind a `judge` check.

    Choices where the catalog is silent: the sample's input (if any) is shown to the
    judge; `include_reference` with no expected value is a MISSING_REFERENCE error; an
    output with no text is shown as its JSON value; the threshold compares with ≥.
    """
    if not p.rubric.strip():
        raise ParamError("rubric", "must not be blank")
    if p.pass_level is not None and p.threshold is not None:
        raise ParamError("threshold", "give pass_level or threshold, not both")
    if p.pass_level is not None and p.pass_level > p.scale:
        raise ParamError("pass_level", f"must be a level of the scale, 1..{p.scale}")
    pass_level = default_pass_level(p.scale) if p.pass_level is None else p.pass_level
    bar = p.threshold if p.threshold is not None else level_bar(p.scale, pass_level)
    several = judges_from(p, p.model, bar=bar, step=level_bar(p.scale, 2))
    return RubricGrade(p, parse_model_param(p.model), sampling_from(p), several)
