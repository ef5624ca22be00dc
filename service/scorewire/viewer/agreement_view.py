"""The agreement page and the reviewer queue of a run: its judge-backed checks against
the human labels of its outputs, and the outputs still waiting for a person.

The figures are `scorewire.labels.figures`' (`pair_up`, `agreement`), the code the
Agreement RPC computes with: a pair is a judge score and the labels of its sample id and
exact output text. Checks are grouped by check and judge configuration, which a recorded
score names itself (its `judge` record: `backend:model`, several for a panel or cascade).

The queue holds the run's outputs without a label, those where the judge was least sure
first: its samples or panel disagreeing (a spread's agreement below 1), then values
nearest the middle of the scale.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scorewire.core.model import Score, ScoreError
from scorewire.labels.figures import Agreement, JudgedOutput, NoPairs, agreement, pair_up
from scorewire.labels.label_model import Label, output_hash
from scorewire.viewer.view_model import CaseResult, ScoreResult

LabelsOf = Callable[[Sequence[tuple[str, str]]], dict[tuple[str, str], list[Label]]]
"""(sample id, output hash) keys -> the counting labels of those that have any."""


@dataclass(frozen=True, slots=True)
class CheckAgreement:
    """One judge-backed check of a run, with one judge configuration, against people."""

    check: str
    judge: str
    """The judges (`backend:model`, comma-separated for a panel or a cascade)."""
    figures: Agreement | None
    """None when no output of it has a label (`why` says so)."""
    why: str = ""


def _judged(s: ScoreResult) -> bool:
    return bool(s.judges)


def _score(s: ScoreResult) -> Score:
    error = ScoreError(*s.error) if s.error is not None else None
    return Score(s.value or 0.0, s.passed, s.reason, error=error, skipped=s.skipped)


def _keys(cases: Sequence[CaseResult]) -> list[tuple[str, str]]:
    return [
        (c.sample_id, output_hash(c.output))
        for c in cases
        if c.output is not None and c.sample_id and any(_judged(s) for s in c.scores)
    ]


def run_agreement(cases: Sequence[CaseResult], labels_of: LabelsOf) -> list[CheckAgreement]:
    """Each (check, judge configuration) of the run's judge-backed scores against the
    labels of its outputs."""
    labels = labels_of(_keys(cases))
    groups: dict[tuple[str, str], list[JudgedOutput]] = {}
    for c in cases:
        if c.output is None:
            continue
        for s in c.scores:
            if _judged(s) and not s.skipped:
                key = (s.name, ", ".join(s.judges))
                groups.setdefault(key, []).append(JudgedOutput(c.sample_id, c.output, _score(s)))
    out = []
    for (check, judge), judged in groups.items():
        paired = pair_up(judged, lambda sid, digest: labels.get((sid, digest), []))
        try:
            out.append(CheckAgreement(check, judge, agreement(paired)))
        except NoPairs as err:
            out.append(CheckAgreement(check, judge, None, str(err)))
    return out


def case_reviews(cases: Sequence[CaseResult], labels_of: LabelsOf) -> dict[int, list[Label]]:
    """The counting labels of each shown case's exact output, by case index (cases
    without any are left out): the run page shows them under the case."""
    keys = {
        c.index: (c.sample_id, output_hash(c.output))
        for c in cases
        if c.output is not None and c.sample_id
    }
    found = labels_of(list(keys.values()))
    return {i: found[key] for i, key in keys.items() if key in found}


def _unsure(c: CaseResult) -> tuple[float, float]:
    """How sure the judges were of a case: (lowest spread agreement, distance of the
    values from the middle); smaller is less sure."""
    judged = [s for s in c.scores if _judged(s) and s.error is None and not s.skipped]
    spread = min((s.spread.agreement for s in judged if s.spread is not None), default=1.0)
    middle = min((abs((s.value or 0.0) - 0.5) for s in judged), default=0.5)
    return spread, middle


def review_queue(cases: Sequence[CaseResult], labels_of: LabelsOf) -> list[CaseResult]:
    """The run's judged outputs without a label, the least sure first."""
    labelled = labels_of(_keys(cases))
    waiting = [
        c
        for c in cases
        if c.output is not None
        and any(_judged(s) for s in c.scores)
        and (c.sample_id, output_hash(c.output)) not in labelled
    ]
    return sorted(waiting, key=_unsure)
