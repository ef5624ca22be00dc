"""Judge panels: several judges grade one output and their verdicts combine into one score.

A judge-backed check may name a panel instead of one `model`:

    judges: [openai:gpt-4o-mini, anthropic:claude-haiku-4-5, openai:gpt-4o]
    panel: majority          # majority | mean | all | any | weighted
    weights: [1, 2, 1]       # panel: weighted only, one positive weight per judge
    on_judge_error: error    # or skip: proceed without a judge that failed

Each judge is asked `samples` times and its samples aggregate first (`aggregate`, see
`scorewire.judge.sampling`) into that judge's value; the judge passes when its value
reaches the check's bar (its threshold, else its pass level). The judges then combine by
`panel` into the score's value, chosen so that the score passes exactly when value ≥ the
bar, whatever applies the bar (the check itself, or the engine's threshold):

- `mean`: the mean of the judges' values; `weighted`: their weighted mean;
- `all`: the lowest value (every judge must pass); `any`: the highest (one suffices);
- `majority`: the highest value that a strict majority of the judges reach, so the score
  passes when more than half of the judges pass (a tie fails: a split panel never rounds
  up into a pass).

The reason lists each judge's verdict (`openai:gpt-4o-mini level 5/5 pass;
anthropic:claude-haiku-4-5 level 2/5 fail`) and the score's `spread` is taken across the
judges (one value per judge; agreement: the share of judges whose own verdict is the
panel's).

Cost and cache: every request of every judge is its own cached verdict (the key holds the
model), so a rerun makes no call, and a one-sample panel shares its verdicts with checks
that name the same judge as `model`. Before the first call the check reserves the ceiling
of every uncached request of every judge, all or none (`JudgeService.prepay`), so a
budget that cannot pay for the whole panel refuses before paying for part of it. The
score's cost is the sum over the judges.

Errors: a judge whose request fails makes the score that judge's error, with the cost of
every request and the judge named: an error is never a pass. With `on_judge_error: skip`
a judge that failed (JUDGE_ERROR or INVALID_VERDICT) is left out instead, the rest decide
and the reason says who was left out; a budget refusal is never skipped, and a panel
left with no judge is an error. Refused at load: an empty panel, a judge that does not
parse (`checks[0].params.judges[1]`), a judge named twice, `judges` together with
`model` or `cascade`, `panel` or `weights` without `judges`, and weights of the wrong
length or not positive (`scorewire.judge.several`). A judge the server cannot call (no
credentials, or no price under a budget), or one that routes to the same model as
another judge of the panel under another name, is refused by the preflight at its own
field (`scorewire.suites.preflight`).

A cascade (`cascade: [cheap, strong]`) asks its judges in turn instead of all at once:
`scorewire.judge.cascades`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Measurement, Score, Spread
from scorewire.core.registry import ParamError
from scorewire.judge.answers import CEILING_NOTE, Answer, Question, note_ceiling
from scorewire.judge.models import ModelRef, parse_model
from scorewire.judge.sampling import EPSILON, SamplingParams, ask_all

T = TypeVar("T")

MAX_JUDGES = 8
"""Most judges one panel may name."""
MAX_STAGES = 4
"""Most judges one cascade may name."""
PANELS = ("majority", "mean", "all", "any", "weighted")
"""How the judges' values combine into the score's value."""
SKIPPABLE = frozenset({ErrorCode.JUDGE_ERROR, "INVALID_VERDICT"})
"""Failures `on_judge_error: skip` leaves out (a budget refusal always stops the score)."""

PanelRule = Literal["majority", "mean", "all", "any", "weighted"]
JudgeName = Annotated[str, Field(max_length=200)]


class PanelParams(SamplingParams):
    """The several-judges parameters every judge-backed check takes beside the sampling
    ones: a panel (`judges`, here) or a cascade (`cascade`, `scorewire.judge.cascades`),
    bound by `scorewire.judge.several.judges_from`."""

    judges: list[JudgeName] | None = Field(
        None,
        max_length=MAX_JUDGES,
        description="A panel of judges as backend:model, each asked `samples` times "
        "(instead of `model`); combined by `panel`.",
    )
    panel: PanelRule | None = Field(
        None,
        description="How the judges combine (default majority): majority (more than half "
        "pass), mean, all (every judge passes), any (one suffices), weighted (mean by "
        "`weights`).",
    )
    weights: list[float] | None = Field(
        None,
        max_length=MAX_JUDGES,
        description="One positive weight per judge, for panel: weighted.",
    )
    on_judge_error: Literal["error", "skip"] = Field(
        "error",
        description="A panel or cascade judge that fails: error (the score is an error) "
        "or skip (left out, named in the reason).",
    )
    cascade: list[JudgeName] | None = Field(
        None,
        max_length=MAX_STAGES,
        description="Judges asked in turn, cheapest first: the next is asked only when "
        "one is unsure (its samples disagree, or its value is next to the pass bar) or "
        "for an audit (instead of `model` or `judges`).",
    )
    audit_share: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Share of cases (0..1, default 0) a cascade also sends to its next "
        "judge when sure, picked by a hash of sample id and output (reruns pick the same).",
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Panel:
    """How one bound check asks its judges and combines their verdicts."""

    judges: tuple[ModelRef, ...]
    """The judges, as written, in order."""
    rule: PanelRule
    """How their values combine."""
    weights: tuple[float, ...]
    """One weight per judge (all 1 unless `rule` is weighted)."""
    bar: float
    """The value at which one judge (and the panel) passes: the check's threshold or
    pass level, the same bar the engine applies."""
    skip_errors: bool = False
    """Whether a judge that failed is left out instead of failing the score."""

    async def ask(
        self,
        judge: Any,
        ctx: CheckContext,
        questions: Callable[[ModelRef], list[Question[T]]],
        verdict: Callable[[Sequence[Answer[T]]], Score],
        case: tuple[str, str] = ("", ""),
    ) -> Score:
        """`ask_panel` (`case`, the sample id and output, is a cascade's concern)."""
        return await ask_panel(judge, ctx, self, questions, verdict)


def parse_judges(names: Sequence[str], key: str) -> tuple[ModelRef, ...]:
    """The judges of a panel or cascade parameter (`key`), as a ParamError at the judge
    (`judges[1]`) when one is blank, does not parse, or repeats another."""
    if not names:
        raise ParamError(key, "must name at least one judge (backend:model)")
    refs: list[ModelRef] = []
    for i, name in enumerate(names):
        where = f"{key}[{i}]"
        if not name.strip():
            raise ParamError(where, "must name a judge (backend:model)")
        try:
            ref = parse_model(name)
        except ValueError as err:
            raise ParamError(where, str(err)) from None
        if ref in refs:
            raise ParamError(where, f"repeats {key}[{refs.index(ref)}] ({ref})")
        refs.append(ref)
    return tuple(refs)


def panel_from(p: PanelParams, bar: float) -> Panel:
    """Bind the panel parameters of a check that names `judges`; a bad one is a
    ParamError (`scorewire.judge.several.judges_from` checks what goes with what)."""
    refs = parse_judges(p.judges or [], "judges")
    rule: PanelRule = p.panel or "majority"
    return Panel(refs, rule, _weights(p, rule), bar, p.on_judge_error == "skip")


def _weights(p: PanelParams, rule: PanelRule) -> tuple[float, ...]:
    n = len(p.judges or ())
    if rule != "weighted":
        if p.weights is not None:
            raise ParamError("weights", "applies to panel: weighted only")
        return (1.0,) * n
    if p.weights is None:
        raise ParamError("weights", f"panel: weighted needs one weight per judge ({n})")
    if len(p.weights) != n:
        raise ParamError(
            "weights", f"has {len(p.weights)} weights for {n} judges: give one per judge"
        )
    for i, w in enumerate(p.weights):
        if not (math.isfinite(w) and w > 0):
            raise ParamError(f"weights[{i}]", "must be a positive number")
    return tuple(p.weights)


def combine(values: Sequence[float], weights: Sequence[float], rule: str) -> float:
    """The panel's value from the judges' values (see the module docstring)."""
    if rule == "all":
        return min(values)
    if rule == "any":
        return max(values)
    if rule == "majority":
        # the (⌊n/2⌋+1)-th highest: reached by a strict majority, and by no more
        return sorted(values, reverse=True)[len(values) // 2]
    # scaled by the largest weight first, so that neither huge weights overflow nor tiny
    # ones vanish into subnormal products
    top = max(weights)
    scaled = [w / top for w in weights]
    return math.fsum(v * w for v, w in zip(values, scaled, strict=True)) / math.fsum(scaled)


async def ask_panel(
    judge: Any,
    ctx: CheckContext,
    panel: Panel,
    questions: Callable[[ModelRef], list[Question[T]]],
    verdict: Callable[[Sequence[Answer[T]]], Score],
) -> Score:
    """Ask every judge its `questions` (all reserved first), score each judge's answers
    with `verdict`, and combine the judges into one score."""
    plan = [questions(ref) for ref in panel.judges]
    flat = [q for qs in plan for q in qs]
    answers = await ask_all(judge, ctx, flat)
    if len(answers) != len(flat):  # the reservation was refused: no call was made
        return note_ceiling(answers[0].error_score(), answers)
    per_judge: list[Sequence[Answer[T]]] = []
    start = 0
    for qs in plan:
        per_judge.append(answers[start : start + len(qs)])
        start += len(qs)
    verdicts = [verdict(a) for a in per_judge]
    return _combined(panel, verdicts, answers)


def _calls(spread: Spread | None) -> int:
    """The judge answers behind one judge's verdict: its samples (1 unsampled)."""
    return 1 if spread is None else spread.calls


def _summary(score: Score) -> tuple[str, str]:
    """(what the judge measured, its reasoning) of one judge's successful score (the
    ceiling's note is the panel's, said once)."""
    if isinstance(score, Measurement):
        return score.stem, score.tail.replace(CEILING_NOTE, "")
    return f"value {score.value:.3g}", ""


def _combined(panel: Panel, verdicts: Sequence[Score], answers: Sequence[Answer[Any]]) -> Score:
    names = [str(ref) for ref in panel.judges]
    cost = math.fsum(a.cost_usd for a in answers)
    unpriced = any(a.unpriced for a in answers)
    kept: list[int] = []
    left_out: list[str] = []
    for i, v in enumerate(verdicts):
        if v.error is None:
            kept.append(i)
            continue
        if not (panel.skip_errors and v.error.code in SKIPPABLE):
            message = f"judge {names[i]} failed: {_plain(v.reason)}"
            return _error(v.error.code, message, cost, unpriced, answers)
        left_out.append(f"{names[i]} ({v.error.code}: {_plain(v.reason)})")
    if not kept:
        return _error(
            ErrorCode.JUDGE_ERROR,
            f"every judge of the panel failed: {'; '.join(left_out)}",
            cost,
            unpriced,
            answers,
        )
    values = [verdicts[i].value for i in kept]
    value = combine(values, [panel.weights[i] for i in kept], panel.rule)
    bar = panel.bar
    passed = value >= bar - EPSILON
    parts = []
    for i in kept:
        what, _ = _summary(verdicts[i])
        word = "pass" if verdicts[i].value >= bar - EPSILON else "fail"
        parts.append(f"{names[i]} {what} {word}")
    if left_out:
        parts.append(f"left out {'; '.join(left_out)}")
    stem = f"panel {panel.rule} {value:.3g} of {len(kept)} judges ({'; '.join(parts)})"
    # the reasoning of the judge whose value is closest to the panel's
    closest = min(kept, key=lambda i: abs(verdicts[i].value - value))
    tail = _summary(verdicts[closest])[1]
    calls = sum(_calls(verdicts[i].spread) for i in kept)
    spread = Spread(tuple(values), 0.0, calls=calls).judged(lambda v: v >= bar - EPSILON, passed)
    score = Measurement(
        value,
        stem,
        tail,
        passed=passed,
        reason=f"{stem} (passes at {bar:.3g}){tail}",
        cost_usd=cost,
        cached=all(a.cached for a in answers),
        unpriced=unpriced,
        spread=spread,
    )
    return note_ceiling(score, answers)


def _plain(reason: str) -> str:
    return reason.replace(CEILING_NOTE, "")


def _error(
    code: str, message: str, cost: float, unpriced: bool, answers: Sequence[Answer[Any]]
) -> Score:
    """The panel's error score: every request's cost, never cached, never a pass."""
    score = Score.fail_with_error(code, message, cost_usd=cost)
    score.unpriced = unpriced
    return note_ceiling(score, answers)
