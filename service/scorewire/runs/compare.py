"""Comparing two runs, and the baseline gate built on it.

Cases are matched by sample id (a case without one by `#` and its index; a sample id
seen twice counts once, its first case). Checks are matched by name. A case regressed
when a check that passed in the base run fails or errors now; it improved when a check
that failed or errored in the base passes now. A skipped score (its `when:` not met) is
neither: it was not applied. Per-check pass rates are over applied scores, as in the
run summary (skipped ones are not counted, errors count as not passed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from scorewire.core.model import Score
from scorewire.runs.run_model import CaseRecord, Outcome

BAD = (Outcome.FAILED, Outcome.ERRORED)
REASON_CASES = 20
"""Regressed cases named in a gate reason; the rest are counted."""


def score_outcome(s: Score) -> Outcome:
    """The outcome of an engine score."""
    if s.skipped:
        return Outcome.SKIPPED
    if s.error is not None:
        return Outcome.ERRORED
    return Outcome.PASSED if s.passed else Outcome.FAILED


@dataclass(slots=True)
class CheckStats:
    """One check's applied scores over a run."""

    passed: int = 0
    applied: int = 0
    value_sum: float = 0.0

    @property
    def pass_rate(self) -> float:
        """passed / applied; 0 when nothing was applied."""
        return self.passed / self.applied if self.applied else 0.0

    @property
    def mean_value(self) -> float:
        """Mean value of the applied scores (errors as 0)."""
        return self.value_sum / self.applied if self.applied else 0.0


@dataclass(slots=True)
class CaseOutcomes:
    """One case's outcome per check name, its output text, and its value per check."""

    outcomes: dict[str, Outcome]
    output: str
    values: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class RunOutcomes:
    """What a comparison needs of a run: outcomes per case and stats per check."""

    checks: list[str] = field(default_factory=list)
    cases: dict[str, CaseOutcomes] = field(default_factory=dict)
    stats: dict[str, CheckStats] = field(default_factory=dict)
    judged: dict[str, dict[str, None]] = field(default_factory=dict)
    """Per judge-backed check, the models its judges' providers reported (in the order
    first seen; a check that asked a judge whose provider said none maps to nothing)."""

    def add(
        self,
        key: str,
        names: Sequence[str],
        outcomes: Sequence[Outcome],
        values: Sequence[float],
        output: str = "",
        reported: Sequence[Sequence[str] | None] = (),
    ) -> None:
        """Count one case; `reported` holds, per score, the models its judges' providers
        reported (None for a score that asked no judge), when known."""
        for name, models in zip(names, reported, strict=False):
            if models is not None:
                self.judged.setdefault(name, {}).update(dict.fromkeys(models))
        for name, o, v in zip(names, outcomes, values, strict=True):
            st = self.stats.get(name)
            if st is None:
                st = self.stats[name] = CheckStats()
                self.checks.append(name)
            if o is not Outcome.SKIPPED:
                st.applied += 1
                st.value_sum += v
                if o is Outcome.PASSED:
                    st.passed += 1
        if key not in self.cases:
            self.cases[key] = CaseOutcomes(
                dict(zip(names, outcomes, strict=True)),
                output,
                dict(zip(names, values, strict=True)),
            )

    def add_scores(
        self, key: str, names: Sequence[str], scores: Sequence[Score], output: str = ""
    ) -> None:
        """Count one case of engine scores."""
        self.add(
            key,
            names,
            [score_outcome(s) for s in scores],
            [s.value for s in scores],
            output,
            [s.judge.reported if s.judge is not None else None for s in scores],
        )

    @classmethod
    def of_records(cls, records: Iterable[CaseRecord]) -> RunOutcomes:
        """The outcomes of recorded cases."""
        out = cls()
        for r in records:
            out.add_record(r)
        return out

    def add_record(self, r: CaseRecord) -> None:
        """Count one recorded case."""
        self.add(
            r.key,
            [s.name for s in r.scores],
            [s.outcome for s in r.scores],
            [s.value for s in r.scores],
            r.output,
            [s.reported_models if s.judges else None for s in r.scores],
        )


@dataclass(slots=True)
class CheckDelta:
    """One check in both runs."""

    name: str
    base: CheckStats
    now: CheckStats
    in_both: bool


@dataclass(slots=True)
class CaseChange:
    """A matched case that changed: which checks, and both outputs."""

    key: str
    checks: list[str]
    base_output: str
    output: str


@dataclass(slots=True)
class Comparison:
    """Two runs compared."""

    checks: list[CheckDelta]
    regressed: list[CaseChange]
    improved: list[CaseChange]
    output_changed: list[CaseChange]
    matched: int
    only_in_base: int
    only_in_run: int


def compare(base: RunOutcomes, run: RunOutcomes) -> Comparison:
    """Compare `run` with `base`."""
    names = [*run.checks, *(n for n in base.checks if n not in run.stats)]
    deltas = [
        CheckDelta(
            n,
            base.stats.get(n, CheckStats()),
            run.stats.get(n, CheckStats()),
            n in base.stats and n in run.stats,
        )
        for n in names
    ]
    regressed, improved, changed = [], [], []
    matched = 0
    for key, now in run.cases.items():
        before = base.cases.get(key)
        if before is None:
            continue
        matched += 1
        worse = [n for n, o in now.outcomes.items() if o in BAD and before.outcomes.get(n) == "P"]
        better = [n for n, o in now.outcomes.items() if o == "P" and before.outcomes.get(n) in BAD]
        if worse:
            regressed.append(CaseChange(key, worse, before.output, now.output))
        if better:
            improved.append(CaseChange(key, better, before.output, now.output))
        if before.output != now.output:
            changed.append(CaseChange(key, [], before.output, now.output))
    return Comparison(
        deltas,
        regressed,
        improved,
        changed,
        matched,
        len(base.cases) - matched,
        len(run.cases) - matched,
    )


def baseline_reasons(comparison: Comparison, max_regression: float, baseline: str) -> list[str]:
    """Why a run fails its gate against `baseline` (a run id or file): empty when it does not.

    Regressed cases are named (the first REASON_CASES of them, with their checks); a
    check whose pass rate dropped by more than `max_regression` is named with both rates.
    """
    reasons = []
    if comparison.regressed:
        shown = ", ".join(
            f"{c.key} ({', '.join(c.checks)})" for c in comparison.regressed[:REASON_CASES]
        )
        more = len(comparison.regressed) - REASON_CASES
        tail = f" and {more} more" if more > 0 else ""
        n = len(comparison.regressed)
        reasons.append(
            f"{n} case{'s' if n != 1 else ''} passed in baseline {baseline} and "
            f"{'fail' if n != 1 else 'fails'} now: "
            f"{shown}{tail}"
        )
    for d in comparison.checks:
        if not d.in_both:
            continue
        drop = d.base.pass_rate - d.now.pass_rate
        if drop > max_regression + 1e-12:
            reasons.append(
                f"check {d.name}: pass rate {d.now.pass_rate:.4g} dropped from "
                f"{d.base.pass_rate:.4g} in baseline {baseline}, more than "
                f"max_regression {max_regression:g}"
            )
    return reasons
