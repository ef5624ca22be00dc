"""What the viewer shows: runs, their cases and scores, comparisons, as plain dataclasses.

Sources (`scorewire.viewer.source`) build these from results files today and from the
run store later; the pages (`scorewire.viewer.render`) read nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from scorewire.runs import CheckDrift

Outcome = Literal["passed", "failed", "errored", "skipped"]
"""What happened to one score, or to one case as a whole."""

OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "errored", "skipped")
"""Every outcome, in the order filters list them."""


class RunNotFound(KeyError):
    """No run has this id (the served viewer answers 404)."""


class SourceUnavailable(Exception):
    """The runs could not be read now, e.g. the run store did not answer in time (the
    served viewer answers 503 with the message)."""


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run as the runs list shows it."""

    id: str
    """The run's id: unique within its source, safe to put in a URL path."""
    name: str
    """The suite's name (or the file's, when the suite has none)."""
    started_at: datetime | None
    """When the run started (UTC), or when its file was written; None when unknown."""
    suite_format: str
    """`checkllm` or `evalstone` (empty when unknown)."""
    cases: int
    """Cases that finished."""
    pass_rate: float
    """Share of cases whose every score passed, 0-1."""
    error_rate: float
    """Share of scores that errored, 0-1."""
    cost_usd: float
    """Judge and generation dollars."""
    gate_passed: bool
    """The gate's verdict."""
    labels: dict[str, str] = field(default_factory=dict)
    """Labels the caller gave the run (`git_sha`, `model`, ...)."""
    interrupted: bool = False
    """The run stopped before every planned case finished."""
    tenant: str = ""
    """The tenant that recorded the run (the run store's; empty for results files)."""


@dataclass(frozen=True, slots=True)
class CheckStats:
    """One check's totals over a run."""

    name: str
    """The check's name (one row per assertion)."""
    type: str
    """The check's type."""
    passed: int
    """Scores that passed."""
    failed: int
    """Scores that ran and failed."""
    errored: int
    """Scores that could not be computed."""
    skipped: int
    """Scores whose `when:` condition was not met."""
    mean_value: float
    """Mean score value, 0-1."""
    cost_usd: float = 0.0
    """Judge dollars this check spent."""
    cached: int = 0
    """Verdicts that came from the cache."""
    test: str = ""
    """checkllm: the test whose assertion this is, `<index> <description>` as the CLI's
    table names it (`run_views.assertion_stats`); empty for a check of the whole run."""

    @property
    def total(self) -> int:
        """Scores counted in the pass rate (skipped ones are not)."""
        return self.passed + self.failed + self.errored

    @property
    def pass_rate(self) -> float:
        """Share of counted scores that passed, 0-1 (0 when none counted)."""
        return self.passed / self.total if self.total else 0.0


@dataclass(frozen=True, slots=True)
class RunDetail:
    """A run's summary: what the run page shows above its cases."""

    info: RunInfo
    """The run as the list shows it."""
    checks: list[CheckStats]
    """Per-check totals, in the suite's order."""
    gate_reasons: list[str]
    """Why the gate failed (empty when it passed)."""
    cases_passed: int = 0
    """Cases whose every score passed."""
    planned_cases: int = 0
    """Cases the run meant to score."""
    judge_cost_usd: float = 0.0
    """Dollars spent on judge calls."""
    generation_cost_usd: float = 0.0
    """Dollars spent producing outputs."""
    saved_usd: float = 0.0
    """Dollars the verdict and generation caches saved."""
    cached_scores: int = 0
    """Verdicts that came from the cache."""
    cached_generations: int = 0
    """Outputs shared with an identical earlier call."""
    budget_usd: float | None = None
    """The run's budget, when it had one."""
    unpriced: bool = False
    """Some calls had no price: the cost is incomplete."""
    description: str = ""
    """The suite's description."""


@dataclass(frozen=True, slots=True)
class Spread:
    """How a judge asked several times agreed with itself."""

    samples: int
    """How many times the judge was asked."""
    agreement: float
    """Share of samples agreeing with the verdict, 0-1."""
    values: tuple[float, ...] = ()
    """Each sample's value, 0-1."""


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """One check's verdict on one case."""

    name: str
    """The check's name."""
    type: str
    """The check's type."""
    value: float | None
    """The score, 0-1 (None when it could not be computed)."""
    passed: bool
    """Whether the check passed."""
    reason: str
    """Why, in the check's words."""
    skipped: bool = False
    """The check's `when:` condition was not met."""
    cached: bool = False
    """The verdict came from the cache."""
    cost_usd: float = 0.0
    """Judge dollars."""
    error: tuple[str, str] | None = None
    """(code, message) when the check could not score."""
    latency_ms: float = 0.0
    """Time spent scoring, in milliseconds (a judge's call, mostly)."""
    spread: Spread | None = None
    """A repeatedly sampled judge's (or a panel's) spread, from a results file or a
    recorded run; None for one answer."""
    judges: tuple[str, ...] = ()
    """The judges the check asked (`backend:model`); empty for a check that asked none."""
    reported_models: tuple[str, ...] = ()
    """The models the judges' providers reported answering."""
    prompt_version: str = ""
    """The version of the judge prompts the verdict was asked with."""

    @property
    def outcome(self) -> Outcome:
        """errored, skipped, passed or failed: an error is never a pass."""
        if self.error is not None:
            return "errored"
        if self.skipped:
            return "skipped"
        return "passed" if self.passed else "failed"


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case of a run: what went in, what came out, and every score."""

    index: int
    """Position in the run."""
    sample_id: str
    """The case's id (checkllm: `t<test>/p<prompt>/<provider>`)."""
    input: Any
    """The case's input (checkllm: the test's vars)."""
    expected: Any
    """The reference answer, when there is one."""
    output: str | None
    """The output scored; None when none could be produced."""
    passed: bool
    """Whether every score passed."""
    scores: list[ScoreResult]
    """Every check's verdict, in the suite's order."""
    description: str = ""
    """The test's description."""
    provider: str = ""
    """The provider that produced the output (checkllm)."""
    prompt: str | None = None
    """The rendered prompt sent to the provider (checkllm)."""
    generation_error: tuple[str, str] | None = None
    """(code, message) when the output could not be produced."""
    cost_usd: float = 0.0
    """Dollars the case cost: producing its output and its judges."""
    latency_ms: float | None = None
    """Time taken to produce the output, in milliseconds (None when unknown)."""
    test: int | None = None
    """The index of the checkllm test the case belongs to (None for other suites)."""
    prompt_index: int | None = None
    """The index of the checkllm prompt that produced the output (None for other suites)."""

    @property
    def outcome(self) -> Outcome:
        """The case as a whole: errored if anything errored, else failed, skipped, passed."""
        outcomes = {s.outcome for s in self.scores}
        if self.generation_error is not None or "errored" in outcomes:
            return "errored"
        if "failed" in outcomes or not self.passed:
            return "failed"
        if outcomes == {"skipped"}:
            return "skipped"
        return "passed"

    def has(self, check: str | None, outcome: Outcome | None) -> bool:
        """Whether this case matches a filter: a score of `check` (any, when None) whose
        outcome is `outcome` (any, when None); with no check, the case's own outcome."""
        if check is None:
            return outcome is None or self.outcome == outcome
        return any(
            s.name == check and (outcome is None or s.outcome == outcome) for s in self.scores
        )


@dataclass(frozen=True, slots=True)
class CheckDelta:
    """How one check moved between two runs."""

    name: str
    """The check's name."""
    base_pass_rate: float | None
    """Its pass rate in the base run (None when the base run has no such check)."""
    pass_rate: float | None
    """Its pass rate in the compared run (None when it has no such check)."""
    base_mean: float | None
    """Its mean value in the base run."""
    mean: float | None
    """Its mean value in the compared run."""

    @property
    def delta(self) -> float | None:
        """Pass-rate change (compared minus base), when both runs have the check."""
        if self.base_pass_rate is None or self.pass_rate is None:
            return None
        return self.pass_rate - self.base_pass_rate

    @property
    def mean_delta(self) -> float | None:
        """Mean-value change, when both runs have the check."""
        if self.base_mean is None or self.mean is None:
            return None
        return self.mean - self.base_mean


ChangeKind = Literal["regressed", "improved", "changed", "added", "removed"]
"""How a case differs between two runs, in the order the compare page lists them."""


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One case matched by sample id across two runs, and how it changed."""

    kind: ChangeKind
    """regressed (passed, now fails or errors), improved, changed (same outcome, other
    output), added (only in the compared run) or removed (only in the base run)."""
    key: str
    """The sample id (with `#n` for the n-th repeat of an id)."""
    base: CaseResult | None
    """The case in the base run."""
    case: CaseResult | None
    """The case in the compared run."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two runs side by side."""

    base: RunDetail
    """The run compared against (yesterday's, the baseline)."""
    run: RunDetail
    """The run being judged."""
    checks: list[CheckDelta]
    """Per-check pass-rate and mean deltas, worst drop first."""
    changes: list[CaseChange]
    """Every case that differs, regressions first."""
    unchanged: int = 0
    """Cases matched in both runs with the same outcome and output."""
    drift: list[CheckDrift] = field(default_factory=list)
    """Each judge-backed check over the two runs' holdout (`scorewire.runs.drift`)."""
    drift_limit: float = 0.1
    """How far a holdout mean may move before the page flags it (the server's
    SCOREWIRE_JUDGE_WATCH__DRIFT_LIMIT when served)."""

    def drifted(self, d: CheckDrift) -> bool:
        """Whether a check's judge moved past the limit or reported another model."""
        return d.exceeds(self.drift_limit)

    def of(self, kind: ChangeKind) -> list[CaseChange]:
        """The changes of one kind."""
        return [c for c in self.changes if c.kind == kind]
