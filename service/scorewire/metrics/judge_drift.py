"""Judge drift metrics: how far each judge-backed check moved since the previous run.

When a recorded run completes, the server compares it with the previous complete run of
the same name and tenant over their holdout (the cases both scored with the same output;
`scorewire.runs.drift`):

- `scorewire_judge_drift{run_name,check}`: the check's mean value over the holdout in the
  latest run minus the previous one's;
- `scorewire_judge_drift_holdout{run_name,check}`: cases in that holdout;
- `scorewire_judge_model_changed{run_name,check}`: 1 when the providers reported another
  model than in the previous run (the response's `model`), else 0;
- `scorewire_judge_drift_limit`: SCOREWIRE_JUDGE_WATCH__DRIFT_LIMIT, which the
  ScorewireJudgeDrift alert compares every drift with.

Run names and checks come from requests, so the series are bounded: beyond `MAX_SERIES`
pairs the one updated longest ago is dropped.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from scorewire.runs import CheckDrift

MAX_SERIES = 256
"""Most (run name, check) series kept."""
DEFAULT_LIMIT = 0.1
"""The limit before settings set it (SCOREWIRE_JUDGE_WATCH__DRIFT_LIMIT's default)."""


class DriftMetrics(Collector):
    """Holds the latest drift per (run name, check) and renders it at scrape time."""

    def __init__(self, registry: CollectorRegistry, *, limit: float = DEFAULT_LIMIT) -> None:
        self.limit = limit
        """How far a mean may move before it is drift (exported for the alert)."""
        self._lock = threading.Lock()
        self._latest: OrderedDict[tuple[str, str], tuple[float, int, bool]] = OrderedDict()
        registry.register(self)

    def observe_drift(self, run_name: str, drifts: list[CheckDrift]) -> None:
        """Record the drift of each judge-backed check of the latest run named `run_name`."""
        with self._lock:
            for d in drifts:
                key = (run_name, d.check)
                self._latest[key] = (d.delta, d.holdout, d.model_changed)
                self._latest.move_to_end(key)
            while len(self._latest) > MAX_SERIES:
                self._latest.popitem(last=False)

    def describe(self) -> Iterator[Metric]:
        """The families, without samples (so registration needs no scrape)."""
        yield from self._families({})

    def collect(self) -> Iterator[Metric]:
        """The latest values."""
        with self._lock:
            latest = dict(self._latest)
        yield from self._families(latest)

    def _families(self, latest: dict[tuple[str, str], tuple[float, int, bool]]) -> Iterator[Metric]:
        labels = ("run_name", "check")
        drift = GaugeMetricFamily(
            "scorewire_judge_drift",
            "Mean value of a judge-backed check over the holdout in the latest recorded run "
            "of a name minus the previous run's.",
            labels=labels,
        )
        holdout = GaugeMetricFamily(
            "scorewire_judge_drift_holdout",
            "Cases both runs scored with the same output (the holdout the drift is over).",
            labels=labels,
        )
        changed = GaugeMetricFamily(
            "scorewire_judge_model_changed",
            "1 when the judge's provider reported another model than in the previous run.",
            labels=labels,
        )
        for (run_name, check), (delta, n, model_changed) in latest.items():
            drift.add_metric([run_name, check], delta)
            holdout.add_metric([run_name, check], n)
            changed.add_metric([run_name, check], 1.0 if model_changed else 0.0)
        limit = GaugeMetricFamily(
            "scorewire_judge_drift_limit",
            "How far a judge check's mean may move between runs "
            "(SCOREWIRE_JUDGE_WATCH__DRIFT_LIMIT).",
            value=self.limit,
        )
        yield drift
        yield holdout
        yield changed
        yield limit
