"""Totals of a run and the gate verdict.

Definitions (the catalog names the gate fields; their arithmetic is chosen here):
- a case passes when every one of its checks passed (a check skipped by its `when:`
  condition passes, seed 003's truth table);
- a skipped score is counted as `skipped`, not as `passed`: per-check pass rates, the
  mean score and the error rate are over the scores that were applied, so a check that
  rarely applies does not look better than it is;
- pass_rate = passed cases / cases;
- mean_score = mean of every applied score's value, errors counting as 0;
- error_rate = errored scores / applied scores (errors count toward max_error_rate,
  which defaults to 0, so a single error fails a gate unless the suite allows it);
- cost = dollars over every score (a skipped check's condition may have cost some).
A run with no cases passes no `min_*` gate: there is nothing to have passed.

The default gate is one rule per suite format, the same over gRPC, in the CLI and in
process: an evalstone suite (and a RunSuite given checks) passes unless a score errored
(`max_error_rate: 0`, seed 000); a checkllm file passes only when every test passed
(`min_pass_rate: 1`, as a test runner's exit code does; `suites.checkllm_suite.DEFAULT_GATE`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import Field, ValidationError
from scorewire.core.errors import SpecError, pydantic_violations
from scorewire.core.model import Score
from scorewire.core.registry import Params
from scorewire.engine.runner import CaseResult


class Gate(Params):
    """Thresholds a run must meet to pass; unset thresholds are not checked."""

    min_pass_rate: float | None = Field(None, ge=0.0, le=1.0)
    """Lowest acceptable fraction of cases whose every check passed."""
    min_mean_score: float | None = Field(None, ge=0.0, le=1.0)
    """Lowest acceptable mean score value."""
    max_error_rate: float = Field(0.0, ge=0.0, le=1.0)
    """Highest acceptable fraction of scores that errored (default 0)."""
    max_cost: float | None = Field(None, ge=0.0)
    """Most dollars the run may have cost."""
    baseline: str | None = Field(None, min_length=1, max_length=1024)
    """A recorded run (id, or name meaning its newest complete run) or a results file to
    compare with: the gate fails when a case that passed a check there fails or errors
    it now. Judged by whoever holds the baseline (the server, the CLI), not by `finish`."""
    max_regression: float = Field(0.0, ge=0.0, le=1.0)
    """Largest acceptable drop of a check's pass rate against `baseline` (default 0)."""


def parse_gate(raw: object, path: str, *, rename: dict[str, str] | None = None) -> Gate:
    """A gate from a mapping; SpecError with every problem at a path below `path`."""
    try:
        return Gate.model_validate(raw if raw is not None else {})
    except ValidationError as err:
        raise SpecError(pydantic_violations(err, path, rename=rename)) from None


@dataclass(slots=True)
class CheckTotals:
    """Counts for one check across the run."""

    name: str
    type: str
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    value_sum: float = 0.0
    cost_usd: float = 0.0
    cached: int = 0
    unpriced: int = 0

    def count(self, s: Score) -> None:
        """Add one score."""
        self.cost_usd += s.cost_usd
        if s.skipped:
            self.skipped += 1
            return
        if s.error is not None:
            self.errored += 1
        elif s.passed:
            self.passed += 1
        else:
            self.failed += 1
        self.value_sum += s.value
        if s.cached:
            self.cached += 1
        if s.unpriced:
            self.unpriced += 1

    def add(self, other: CheckTotals) -> None:
        """Add the counts of the same check counted elsewhere (a worker's chunk)."""
        self.passed += other.passed
        self.failed += other.failed
        self.errored += other.errored
        self.skipped += other.skipped
        self.value_sum += other.value_sum
        self.cost_usd += other.cost_usd
        self.cached += other.cached
        self.unpriced += other.unpriced

    @property
    def total(self) -> int:
        """Scores applied (skipped ones are not)."""
        return self.passed + self.failed + self.errored

    @property
    def mean_value(self) -> float:
        """Mean score value, errors as 0; 0 when nothing was scored."""
        return self.value_sum / self.total if self.total else 0.0


@dataclass(slots=True)
class Summary:
    """The end of a run: totals per check and overall, and the gate verdict."""

    cases: int
    cases_passed: int
    checks: list[CheckTotals]
    passed: int
    failed: int
    errored: int
    skipped: int
    mean_score: float
    error_rate: float
    pass_rate: float
    cost_usd: float
    unpriced: bool
    gate_passed: bool
    gate_reasons: list[str] = field(default_factory=list)
    value_sum: float = 0.0
    """Sum of the applied scores' values (errors as 0): mean_score's numerator."""
    gate: Gate | None = None
    """The gate the verdict was judged against."""


ScoreCounts = tuple[int, int, list[tuple[int, int, int, int, float, float, int, int]]]
"""What the native kernel counts of a batch for its summary (`SummaryBuilder.add_counts`)."""


class SummaryBuilder:
    """Accumulates case results into a Summary; cheap enough to call per result."""

    def __init__(self, names: Iterable[str], types: Iterable[str]) -> None:
        self._totals = [CheckTotals(n, t) for n, t in zip(names, types, strict=True)]
        self.cases = 0
        self.cases_passed = 0

    def add(self, result: CaseResult) -> None:
        """Count one case's scores."""
        self.cases += 1
        if result.passed:
            self.cases_passed += 1
        for t, s in zip(self._totals, result.scores, strict=True):
            t.count(s)

    def add_counts(self, counts: ScoreCounts) -> None:
        """Add what the native kernel counted (`engine.native`): the cases, the cases
        passed, and per check (passed, failed, errored, skipped, value sum, cost, cached,
        unpriced), summed score by score in case order as `add` sums them."""
        cases, cases_passed, per_check = counts
        self.cases += cases
        self.cases_passed += cases_passed
        for t, c in zip(self._totals, per_check, strict=True):
            t.passed += c[0]
            t.failed += c[1]
            t.errored += c[2]
            t.skipped += c[3]
            t.value_sum += c[4]
            t.cost_usd += c[5]
            t.cached += c[6]
            t.unpriced += c[7]

    def merge(self, other: SummaryBuilder) -> None:
        """Add the counts of another builder over the same checks (a worker's chunk)."""
        self.cases += other.cases
        self.cases_passed += other.cases_passed
        for t, o in zip(self._totals, other._totals, strict=True):
            t.add(o)

    def finish(self, gate: Gate | None = None) -> Summary:
        """The summary so far, judged against `gate` (the default gate when None)."""
        gate = gate or Gate()
        passed = sum(t.passed for t in self._totals)
        failed = sum(t.failed for t in self._totals)
        errored = sum(t.errored for t in self._totals)
        skipped = sum(t.skipped for t in self._totals)
        scores = passed + failed + errored
        value_sum = sum(t.value_sum for t in self._totals)
        cost = sum(t.cost_usd for t in self._totals)
        mean = value_sum / scores if scores else 0.0
        error_rate = errored / scores if scores else 0.0
        pass_rate = self.cases_passed / self.cases if self.cases else 0.0
        reasons = _gate_reasons(gate, self.cases, pass_rate, mean, error_rate, cost)
        return Summary(
            cases=self.cases,
            cases_passed=self.cases_passed,
            checks=list(self._totals),
            passed=passed,
            failed=failed,
            errored=errored,
            skipped=skipped,
            mean_score=mean,
            error_rate=error_rate,
            pass_rate=pass_rate,
            cost_usd=cost,
            unpriced=any(t.unpriced for t in self._totals),
            gate_passed=not reasons,
            gate_reasons=reasons,
            value_sum=value_sum,
            gate=gate,
        )


def _gate_reasons(
    gate: Gate, cases: int, pass_rate: float, mean: float, error_rate: float, cost: float
) -> list[str]:
    reasons = []
    if gate.min_pass_rate is not None and (cases == 0 or pass_rate < gate.min_pass_rate):
        reasons.append(f"pass rate {pass_rate:.4g} is below min_pass_rate {gate.min_pass_rate:g}")
    if gate.min_mean_score is not None and (cases == 0 or mean < gate.min_mean_score):
        reasons.append(f"mean score {mean:.4g} is below min_mean_score {gate.min_mean_score:g}")
    if error_rate > gate.max_error_rate:
        reasons.append(
            f"error rate {error_rate:.4g} is above max_error_rate {gate.max_error_rate:g}"
        )
    if gate.max_cost is not None and cost > gate.max_cost:
        reasons.append(f"cost ${cost:.4f} is above max_cost ${gate.max_cost:g}")
    return reasons
