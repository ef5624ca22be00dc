"""Check and suite metrics: the server's `RunObserver`.

- `scorewire_checks_total{type,outcome}`: scores by check type and outcome (`pass`,
  `fail`, `error`);
- `scorewire_check_errors_total{type,code}`: error scores by type and error code
  (`JUDGE_ERROR`, `TIMEOUT`, ...; a code `ErrorCode` does not list counts as `OTHER`, so
  custom checks cannot grow the series without bound);
- `scorewire_check_duration_seconds{type}`: a histogram of how long checks took;
- `scorewire_suite_runs_total{gate}`: finished runs by gate outcome (`pass`, `fail`): a
  RunSuite call, or a run sent in parts (`scorewire run --server`), counted once by its
  CloseRun with the caller's verdict, its parts not at all (`server.run_parts`).
- `scorewire_generations_total{backend,outcome}` and
  `scorewire_generation_cost_usd_total{backend}`: outputs the server generated for
  checkllm suites (`generated`, `cached`, `error`) and what they cost, apart from judge
  spending.

The service calls `observe_results` once per batch of case results (up to 256 cases;
one for a unary Score). A prometheus-client `observe()` per score would take a lock and
walk the buckets each time; instead the batch's scores are added to plain per-type
totals under one lock (bisect picks the bucket), scoring workers send `tally` counts of
their chunks instead of scores, and a collector renders the totals at scrape time.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from scorewire.core.model import ErrorCode
from scorewire.engine.runner import CaseResult, PlanShape
from scorewire.engine.summary import Summary

CHECK_DURATION_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
)
"""Seconds: deterministic checks take microseconds, judge-backed ones seconds."""

OUTCOMES = ("pass", "fail", "error")

GENERATION_BACKENDS = frozenset({"openai", "anthropic", "gemini", "echo"})
"""`backend` label values of the generation metrics other than `other`."""

KNOWN_CODES = frozenset(
    value for name, value in vars(ErrorCode).items() if name.isupper() and isinstance(value, str)
)
"""The `code` label values other than `OTHER`."""


class _TypeTotals:
    """Running totals of one check type: outcome counts and duration histogram."""

    __slots__ = ("buckets", "codes", "errored", "failed", "millis", "passed")

    def __init__(self, n_buckets: int) -> None:
        self.passed = 0
        self.failed = 0
        self.errored = 0
        self.codes: dict[str, int] = {}
        """Error scores per error code (`OTHER` for codes ErrorCode does not list)."""
        self.millis = 0.0
        """Milliseconds of every check counted (exported in seconds)."""
        self.buckets = [0] * n_buckets  # per bucket, not cumulative; the last is +Inf


class Tally:
    """One batch's scores counted per check: what `RunMetrics` adds under its lock."""

    __slots__ = ("cases", "codes", "errored", "hist", "millis", "passed")

    def __init__(self, n: int, width: int) -> None:
        self.cases = 0
        self.passed = [0] * n
        self.errored = [0] * n
        self.millis = [0.0] * n
        self.hist = [0] * (n * width)
        """Per check, its `width` bucket counts in a row (not cumulative; the last +Inf)."""
        self.codes: list[tuple[int, str]] = []
        """(check index, code) of each error score; errors are rare."""


TallyCounts = tuple[int, list[int], list[int], list[float], list[int], list[tuple[int, str]]]
"""A batch's tally as the native kernel counts it: cases, passed, errored, millis, hist
and codes, each as `Tally` holds it."""


def tally_from_counts(counts: TallyCounts) -> Tally:
    """The Tally the native kernel counted (`tally` of the same results, score by score)."""
    cases, passed, errored, millis, hist, codes = counts
    out = Tally(0, 0)
    out.cases, out.passed, out.errored, out.millis, out.hist = cases, passed, errored, millis, hist
    out.codes = codes
    return out


def tally(n: int, results: Sequence[CaseResult], bounds_ms: Sequence[float]) -> Tally:
    """Count a batch of results of `n` checks; plain Python, no lock, no registry, so a
    scoring worker can count its chunk and send the counts instead of every score."""
    width = len(bounds_ms) + 1
    out = Tally(n, width)
    passed, errored, millis, hist, codes = out.passed, out.errored, out.millis, out.hist, out.codes
    for r in results:
        base = 0
        for i, s in enumerate(r.scores):
            if s.error is not None:
                errored[i] += 1
                code = s.error.code
                codes.append((i, code if code in KNOWN_CODES else "OTHER"))
            elif s.passed:
                passed[i] += 1
            ms = s.latency_ms
            millis[i] += ms
            hist[base + bisect_left(bounds_ms, ms)] += 1
            base += width
    out.cases = len(results)
    return out


class RunMetrics(Collector):
    """Counts scores per batch and suites per run; register it as the server's observer."""

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        buckets: Iterable[float] = CHECK_DURATION_BUCKETS,
    ) -> None:
        self._bounds = tuple(sorted(buckets))
        self._bounds_ms = [b * 1000.0 for b in self._bounds]
        self._lock = threading.Lock()
        self._totals: dict[str, _TypeTotals] = {}
        self.suite_runs = Counter(
            "scorewire_suite_runs",
            "Runs that finished (a RunSuite call, or a run sent in parts and closed), by "
            "gate outcome (pass, fail).",
            ("gate",),
            registry=registry,
        )
        for gate in ("pass", "fail"):
            self.suite_runs.labels(gate)
        self.generations = Counter(
            "scorewire_generations",
            "Outputs the server generated for checkllm suites, by provider backend and "
            "outcome (generated, cached, error).",
            ("backend", "outcome"),
            registry=registry,
        )
        self.generation_cost = Counter(
            "scorewire_generation_cost_usd",
            "US dollars the server spent generating outputs, by provider backend (judge "
            "spending is scorewire_judge_cost_usd).",
            ("backend",),
            registry=registry,
        )
        registry.register(self)

    # --- RunObserver ----------------------------------------------------------------------

    @property
    def bounds_ms(self) -> tuple[float, ...]:
        """The histogram's bucket bounds in milliseconds (what `tally` takes)."""
        return tuple(self._bounds_ms)

    def observe_results(self, plan: PlanShape, results: Sequence[CaseResult]) -> None:
        """Count the scores of a batch of finished cases (one lock for the batch).

        Scores go straight into the running totals: a unary Score calls this with one
        result, and building a `Tally` (and merging its bucket rows) for one case cost
        several times the counting itself."""
        checks = plan.checks
        if not checks or not results:
            return
        bounds = self._bounds_ms
        width = len(bounds) + 1
        with self._lock:
            totals = [self._type_totals(c.type, width) for c in checks]
            for r in results:
                for t, s in zip(totals, r.scores, strict=False):  # as `tally`, no length check
                    error = s.error
                    if error is not None:
                        t.errored += 1
                        code = error.code if error.code in KNOWN_CODES else "OTHER"
                        t.codes[code] = t.codes.get(code, 0) + 1
                    elif s.passed:
                        t.passed += 1
                    else:
                        t.failed += 1
                    ms = s.latency_ms
                    t.millis += ms
                    t.buckets[bisect_left(bounds, ms)] += 1

    def _type_totals(self, name: str, width: int) -> _TypeTotals:
        """The running totals of check type `name` (created at zero); under the lock."""
        t = self._totals.get(name)
        if t is None:
            t = self._totals[name] = _TypeTotals(width)
        return t

    def observe_tally(self, plan: PlanShape, counts: Tally) -> None:
        """Add a batch tallied by `tally` (in a scoring worker, say) under one lock."""
        n = len(plan.checks)
        if not n or not counts.cases:
            return
        width = len(self._bounds_ms) + 1
        with self._lock:
            for i, check in enumerate(plan.checks):
                t = self._type_totals(check.type, width)
                t.passed += counts.passed[i]
                t.errored += counts.errored[i]
                t.failed += counts.cases - counts.passed[i] - counts.errored[i]
                t.millis += counts.millis[i]
                buckets = t.buckets
                row = counts.hist[i * width : (i + 1) * width]
                # Only the buckets hit (compress skips the zeros in C): a unary Score's
                # tally has one hit bucket per check among ~15.
                for j in compress(range(width), row):
                    buckets[j] += row[j]
            for i, code in counts.codes:
                per_code = self._totals[plan.checks[i].type].codes
                per_code[code] = per_code.get(code, 0) + 1

    def observe_summary(self, summary: Summary) -> None:
        """Count a finished RunSuite by its gate outcome."""
        self.suite_runs.labels("pass" if summary.gate_passed else "fail").inc()

    def observe_generation(self, provider: str, outcome: str, cost_usd: float) -> None:
        """Count one output the server generated, by provider backend and outcome."""
        backend = provider.partition(":")[0]
        if backend not in GENERATION_BACKENDS:
            backend = "other"
        self.generations.labels(backend, outcome).inc()
        if cost_usd > 0:
            self.generation_cost.labels(backend).inc(cost_usd)

    # --- Collector ------------------------------------------------------------------------

    def describe(self) -> Iterator[Metric]:
        """The families this collector exports (without samples)."""
        yield CounterMetricFamily(
            "scorewire_checks", "Check scores by type and outcome.", labels=("type", "outcome")
        )
        yield CounterMetricFamily("scorewire_check_errors", _ERRORS_HELP, labels=("type", "code"))
        yield HistogramMetricFamily(
            "scorewire_check_duration_seconds", "How long checks took.", labels=("type",)
        )

    def collect(self) -> Iterator[Metric]:
        """The current totals as metric families (called by the /metrics handler)."""
        with self._lock:
            snapshot = [
                (
                    name,
                    t.passed,
                    t.failed,
                    t.errored,
                    t.millis / 1000.0,
                    list(t.buckets),
                    dict(t.codes),
                )
                for name, t in sorted(self._totals.items())
            ]
        checks = CounterMetricFamily(
            "scorewire_checks", "Check scores by type and outcome.", labels=("type", "outcome")
        )
        duration = HistogramMetricFamily(
            "scorewire_check_duration_seconds", "How long checks took.", labels=("type",)
        )
        errors = CounterMetricFamily(
            "scorewire_check_errors", _ERRORS_HELP, labels=("type", "code")
        )
        les = [_le(b) for b in self._bounds] + ["+Inf"]
        for name, passed, failed, errored, seconds, buckets, codes in snapshot:
            for outcome, value in zip(OUTCOMES, (passed, failed, errored), strict=True):
                checks.add_metric((name, outcome), value)
            for code, count in sorted(codes.items()):
                errors.add_metric((name, code), count)
            cumulative, running = [], 0
            for le, count in zip(les, buckets, strict=True):
                running += count
                cumulative.append((le, float(running)))
            duration.add_metric((name,), cumulative, seconds)
        yield checks
        yield errors
        yield duration


_ERRORS_HELP = "Check scores that are errors, by type and error code (OTHER: a custom code)."


def _le(bound: float) -> str:
    """A bucket bound as prometheus-client writes it (`0.005`, `1.0`, `120.0`)."""
    return repr(float(bound))
