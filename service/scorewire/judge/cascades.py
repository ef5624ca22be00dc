"""Judge cascades: a cheap judge first, a stronger one only where the cheap one is unsure.

    cascade: [openai:gpt-4o-mini, openai:gpt-4o]
    audit_share: 0.05        # also send 5% of the cases the cheap judge was sure of

Each judge of the cascade is asked as a single judge would be (`samples`, `aggregate`);
the next one is asked only when this one is unsure, or for an audit, and the last one
asked decides. A judge is unsure when

- its samples disagree: some pass and some fail at the check's bar, or
- its value sits at the pass boundary: it is the lowest passing or the highest failing
  level (within one level of the bar: level 4 or 3 when level 4 passes), where one level
  either way would change the verdict.

An audit sends a share of the cases (`audit_share`) on even when the judge is sure,
chosen by a hash of the sample id and the output text, so a rerun audits the same cases
(and finds their verdicts in the cache). The reason shows each judge asked, which one
decided and why (`openai:gpt-4o-mini level 4/5 pass, unsure: at the pass boundary;
openai:gpt-4o level 5/5 pass, decided`); the score's cost is the sum over the judges
asked, each reserving its own requests before its first call. The score's value and
spread are the deciding judge's.

A judge that fails makes the score its error (with the cost so far), unless
`on_judge_error: skip`, when the next judge is asked instead and the reason says so; the
last judge failing is always an error, and a budget refusal is never skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from scorewire.core.context import CheckContext
from scorewire.core.model import Measurement, Score
from scorewire.core.registry import ParamError
from scorewire.judge.answers import CEILING_NOTE, Answer, Question, note_ceiling
from scorewire.judge.models import ModelRef
from scorewire.judge.panels import SKIPPABLE, PanelParams, parse_judges
from scorewire.judge.sampling import EPSILON, ask_all

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class Cascade:
    """How one bound check asks its judges in turn."""

    judges: tuple[ModelRef, ...]
    """The judges, cheapest first."""
    bar: float
    """The value at which a judge passes (the check's threshold or pass level)."""
    step: float
    """One level of the check's values (1/(scale−1) for levels): the boundary's width."""
    audit_share: float = 0.0
    """Share of the cases sent on even when a judge is sure."""
    skip_errors: bool = False
    """Whether a judge that failed is passed over for the next one."""

    async def ask(
        self,
        judge: Any,
        ctx: CheckContext,
        questions: Callable[[ModelRef], list[Question[T]]],
        verdict: Callable[[Sequence[Answer[T]]], Score],
        case: tuple[str, str] = ("", ""),
    ) -> Score:
        """Ask the judges in turn until one decides (see the module docstring)."""
        audited = audit_picks(case, self.audit_share)
        asked: list[Answer[T]] = []
        notes: list[str] = []
        last = len(self.judges) - 1
        for i, ref in enumerate(self.judges):
            wanted = questions(ref)
            answers = await ask_all(judge, ctx, wanted)
            asked.extend(answers)
            if len(answers) != len(wanted):  # its reservation was refused: no call made
                return _failed(answers[0].error_score(), ref, notes, asked)
            score = verdict(answers)
            if score.error is not None:
                if i < last and self.skip_errors and score.error.code in SKIPPABLE:
                    notes.append(f"{ref} {score.error.code}, skipped: {_plain(score.reason)}")
                    continue
                return _failed(score, ref, notes, asked)
            word = "pass" if score.value >= self.bar - EPSILON else "fail"
            why = None if i == last else self.unsure(score)
            if why is None and i < last and audited:
                why = "audit"
            if why is None:
                notes.append(f"{ref} {_stem(score)} {word}, decided")
                return self._decided(score, notes, asked)
            notes.append(f"{ref} {_stem(score)} {word}, {why}")
        raise AssertionError("the last judge of a cascade always decides")  # pragma: no cover

    def unsure(self, score: Score) -> str | None:
        """Why one judge's verdict sends the case on (`unsure: ...`), or None when sure."""
        values = score.spread.values if score.spread is not None else (score.value,)
        verdicts = {v >= self.bar - EPSILON for v in values}
        if len(verdicts) > 1:
            return "unsure: its samples disagree"
        if self.bar - self.step - EPSILON < score.value < self.bar + self.step - EPSILON:
            return "unsure: at the pass boundary"
        return None

    def _decided(self, score: Score, notes: list[str], asked: Sequence[Answer[Any]]) -> Score:
        stem = f"cascade ({'; '.join(notes)})"
        tail = score.tail.replace(CEILING_NOTE, "") if isinstance(score, Measurement) else ""
        decided = Measurement(
            score.value,
            stem,
            tail,
            passed=score.value >= self.bar - EPSILON,
            reason=f"{stem} (passes at {self.bar:.3g}){tail}",
            cost_usd=math.fsum(a.cost_usd for a in asked),
            cached=all(a.cached for a in asked),
            unpriced=any(a.unpriced for a in asked),
            spread=score.spread,
        )
        return note_ceiling(decided, asked)


def audit_picks(case: tuple[str, str], share: float) -> bool:
    """Whether the case (sample id, output text) is among the `share` audited: a hash,
    so a rerun picks the same cases."""
    if share <= 0:
        return False
    digest = hashlib.sha256("\0".join(case).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") < share * 2**64


def cascade_from(p: PanelParams, bar: float, step: float) -> Cascade:
    """Bind the cascade parameters of a check that names `cascade`; a bad one is a
    ParamError."""
    refs = parse_judges(p.cascade or [], "cascade")
    if len(refs) < 2:
        raise ParamError("cascade", "needs at least two judges, cheapest first")
    share = p.audit_share or 0.0
    return Cascade(refs, bar, step, share, p.on_judge_error == "skip")


def _stem(score: Score) -> str:
    return score.stem if isinstance(score, Measurement) else f"value {score.value:.3g}"


def _plain(reason: str) -> str:
    return reason.replace(CEILING_NOTE, "")


def _failed(score: Score, ref: ModelRef, notes: list[str], asked: Sequence[Answer[Any]]) -> Score:
    """The error of the judge that failed, with what every judge asked cost."""
    before = f" (after {'; '.join(notes)})" if notes else ""
    code = score.error.code if score.error is not None else "JUDGE_ERROR"
    failed = Score.fail_with_error(
        code,
        f"judge {ref} failed: {_plain(score.reason)}{before}",
        cost_usd=math.fsum(a.cost_usd for a in asked),
    )
    failed.unpriced = any(a.unpriced for a in asked)
    return note_ceiling(failed, asked)
