"""`comparison.pairwise`: an LLM compares the output with a baseline output for the same sample.

Each judged order scores 1 when the candidate (the output being scored) is preferred,
0.5 for a tie and 0 when the baseline is; value is the mean over the judged orders and
the check passes at value ≥ 0.5 (at least as good as the baseline). With `both_orders`
(the default) the pair is judged twice, the candidate first and then second, which
cancels the judge's position bias.

With `samples: N` every sample judges every order (2N requests with `both_orders`); a
sample's value is the mean of its orders, the score's value aggregates the samples
(`aggregate`), and the spread says how far they agreed (see `scorewire.judge.sampling`).
With a panel of `judges` each judge does all of that, passes at 0.5 on its own, and the
judges combine by `panel` (see `scorewire.judge.panels`); a `cascade` asks its judges in
turn (`scorewire.judge.cascades`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field
from scorewire.core.charges import JUDGE_MODEL, JUDGE_TEXT
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Measurement, Output, Sample, Score
from scorewire.core.registry import ParamError, check_type
from scorewire.judge.answers import Answer, Question, note_ceiling
from scorewire.judge.checking import JudgeBackedCheck, output_text
from scorewire.judge.models import ModelRef, parse_model
from scorewire.judge.panels import PanelParams
from scorewire.judge.prompts import as_text, render_compare
from scorewire.judge.sampling import (
    Sampling,
    ask_all,
    closest,
    failed_answer,
    sampled_measurement,
    sampling_from,
)
from scorewire.judge.several import Several, judges_from
from scorewire.judge.verdict import PairVerdict, parse_winner

_TARGET_SPEC_UNSUPPORTED = (
    "a target spec as baseline needs targets, which this server does not support yet; "
    "give the baseline outputs as a map {sample_id: output text}"
)


class PairwiseParams(PanelParams):
    """Parameters of `comparison.pairwise`."""

    rubric: str = Field(min_length=1, description="What makes one response better.")
    baseline: dict[str, Any] | str = Field(
        description="Baseline outputs as {sample_id: output text} (target specs: not yet)."
    )
    model: str | None = Field(None, description="Judge as backend:model; default configured.")
    both_orders: bool = Field(True, description="Judge both orders to cancel position bias.")
    max_tokens: int = Field(1024, ge=1, le=32_768, description="Most tokens the judge may write.")


def _baseline_map(baseline: dict[str, Any] | str) -> dict[str, str]:
    if isinstance(baseline, str):
        raise ParamError("baseline", _TARGET_SPEC_UNSUPPORTED)
    if not baseline:
        raise ParamError("baseline", "is empty: give {sample_id: output text}")
    out: dict[str, str] = {}
    for sample_id, text in baseline.items():
        if not isinstance(text, str):
            raise ParamError(
                f"baseline.{sample_id}",
                "must be the baseline's output text for this sample ("
                + _TARGET_SPEC_UNSUPPORTED
                + ")",
            )
        out[sample_id] = text
    return out


def _order_value(verdict: PairVerdict, candidate_is: str) -> float:
    if verdict.winner == "tie":
        return 0.5
    return 1.0 if verdict.winner == candidate_is else 0.0


_WORDS = {1.0: "candidate preferred", 0.5: "tie", 0.0: "baseline preferred"}


class PairwiseComparison(JudgeBackedCheck):
    """The bound `comparison.pairwise` check."""

    def __init__(
        self,
        p: PairwiseParams,
        baseline: Mapping[str, str],
        model: ModelRef,
        sampling: Sampling,
        several: Several | None = None,
    ) -> None:
        super().__init__()
        self.sampling = sampling
        self.several = several
        self.rubric = p.rubric
        self.baseline = dict(baseline)
        self.model = model
        self.both_orders = p.both_orders
        self.max_tokens = p.max_tokens

    def _question(self, input_text: str, a: str, b: str) -> Question[PairVerdict]:
        prompt = render_compare(self.rubric, input_text, a, b, self.examples)
        return Question(prompt, parse_winner, self.model, self.max_tokens)

    async def score(self, judge: Any, sample: Sample, output: Output, ctx: CheckContext) -> Score:
        """Judge candidate vs baseline (and the reverse order); mean of 1 / 0.5 / 0."""
        base = self.baseline.get(sample.id)
        if base is None:
            return Score.fail_with_error(
                ErrorCode.MISSING_REFERENCE, f"no baseline output for sample {sample.id!r}"
            )
        candidate = output_text(output)
        input_text = as_text(sample.input)
        orders = [("A", self._question(input_text, candidate, base))]
        if self.both_orders:
            orders.append(("B", self._question(input_text, base, candidate)))
        if self.several is not None:
            case = (sample.id, candidate)
            return await self._several(judge, ctx, self.several, orders, case)
        if self.sampling.n > 1 or self.sampling.temperature is not None:
            return await self._sampled(judge, ctx, orders)
        answers: list[Answer[PairVerdict]] = await ask_all(judge, ctx, [q for _, q in orders])
        cost = sum(a.cost_usd for a in answers)
        unpriced = any(a.unpriced for a in answers)
        cached = all(a.cached for a in answers)
        failed = failed_answer(answers)
        if failed is not None:
            return failed
        values = []
        notes = []
        for (candidate_is, _), answer in zip(orders, answers, strict=True):
            assert answer.value is not None
            v = _order_value(answer.value, candidate_is)
            values.append(v)
            position = "first" if candidate_is == "A" else "second"
            notes.append(f"candidate {position}: {_WORDS[v]}")
        value = sum(values) / len(values)
        passed = value >= 0.5
        reasoning = answers[0].value.reasoning if answers[0].value is not None else ""
        reason = f"value {value:.3g} ({'; '.join(notes)})"
        if reasoning:
            reason += f": {reasoning}"
        score = Score(value, passed, reason, cost_usd=cost, cached=cached, unpriced=unpriced)
        return note_ceiling(score, answers)

    async def _sampled(
        self, judge: Any, ctx: CheckContext, orders: list[tuple[str, Question[PairVerdict]]]
    ) -> Score:
        """Every sample judges every order; a sample's value is the mean of its orders."""
        plan = [
            (sample, candidate_is, q)
            for candidate_is, question in orders
            for sample, q in enumerate(self.sampling.questions(question))
        ]
        answers: list[Answer[PairVerdict]] = await ask_all(judge, ctx, [q for *_, q in plan])
        failed = failed_answer(answers)
        if failed is not None:
            return failed
        per_sample: list[list[float]] = [[] for _ in range(self.sampling.n)]
        for (sample, candidate_is, _), answer in zip(plan, answers, strict=True):
            assert answer.value is not None
            per_sample[sample].append(_order_value(answer.value, candidate_is))
        values = [sum(v) / len(v) for v in per_sample]
        score = sampled_measurement(answers, values, self.sampling, stem="", tail="", bar=0.5)
        best = answers[closest(values, score.value)].value
        shown = ", ".join(f"{v:.3g}" for v in values)
        reason = (
            f"{self.sampling.aggregate} of {self.sampling.n} samples {score.value:.3g} ({shown})"
        )
        if best is not None and best.reasoning:
            reason += f": {best.reasoning}"
        sampled = Score(
            score.value,
            score.passed,
            reason,
            cost_usd=score.cost_usd,
            cached=score.cached,
            unpriced=score.unpriced,
            spread=score.spread,
        )
        return note_ceiling(sampled, answers)

    async def _several(
        self,
        judge: Any,
        ctx: CheckContext,
        several: Several,
        orders: list[tuple[str, Question[PairVerdict]]],
        case: tuple[str, str],
    ) -> Score:
        """Every judge asked judges every order of every sample; each judge's value is
        the aggregate of its samples' values (the mean of their orders)."""
        shape = [
            (sample, candidate_is)
            for candidate_is, _ in orders
            for sample in range(self.sampling.n)
        ]

        def questions(ref: ModelRef) -> list[Question[PairVerdict]]:
            return [
                q
                for _, question in orders
                for q in self.sampling.questions(dataclasses.replace(question, model=ref))
            ]

        def verdict(answers: Sequence[Answer[PairVerdict]]) -> Score:
            failed = failed_answer(answers)
            if failed is not None:
                return failed
            per_sample: list[list[float]] = [[] for _ in range(self.sampling.n)]
            for (sample, candidate_is), answer in zip(shape, answers, strict=True):
                assert answer.value is not None
                per_sample[sample].append(_order_value(answer.value, candidate_is))
            values = [sum(v) / len(v) for v in per_sample]
            score = sampled_measurement(answers, values, self.sampling, stem="", tail="", bar=0.5)
            best = answers[closest(values, score.value)].value
            shown = ", ".join(f"{v:.3g}" for v in values)
            n = self.sampling.n
            stem = f"value {score.value:.3g}"
            if n > 1:
                stem = f"{self.sampling.aggregate} of {n} samples {score.value:.3g} ({shown})"
            tail = f": {best.reasoning}" if best is not None and best.reasoning else ""
            return Measurement(score.value, stem, tail, passed=score.passed)

        return await several.ask(judge, ctx, questions, verdict, case)


@check_type(
    "comparison.pairwise",
    description="An LLM judges the output against a baseline output; passes when at least as good.",
    family="comparison",
    params=PairwiseParams,
    uses_judge=True,
    costs={"rubric": JUDGE_TEXT, "baseline": JUDGE_TEXT, "model": JUDGE_MODEL},
)
def build_pairwise(p: PairwiseParams) -> PairwiseComparison:
    """Bind `comparison.pairwise`.

    `baseline` is a `{sample_id: output text}` map. The catalog also allows a target
    spec (run a target to produce the baseline); targets come with a later issue, so a
    string or non-text value is rejected at load time with a message saying so. A
    sample missing from the map is a MISSING_REFERENCE error score. The sample's input,
    if any, is shown to the judge; the reason quotes the first order's reasoning.
    """
    if not p.rubric.strip():
        raise ParamError("rubric", "must not be blank")
    try:
        model = parse_model(p.model)
    except ValueError as err:
        raise ParamError("model", str(err)) from None
    # one order's values are 0, 0.5, 1; the mean of both orders steps by 0.25
    step = 0.25 if p.both_orders else 0.5
    several = judges_from(p, p.model, bar=0.5, step=step)
    return PairwiseComparison(p, _baseline_map(p.baseline), model, sampling_from(p), several)
