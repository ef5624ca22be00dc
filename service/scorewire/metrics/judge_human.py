"""Judge–human agreement metrics: the latest kappa of each judge check, and the floor.

- `scorewire_judge_agreement_kappa{check,judge_model}`: Cohen's kappa of the latest
  Agreement (or Calibrate, at the check's own verdicts) run for this check name and judge
  configuration (`backend:model`, `panel(majority: a, b, c)` or `cascade(a → b)`); NaN
  when that kappa was undefined (one verdict for every pair);
- `scorewire_judge_agreement_pairs{check,judge_model}`: how many labelled pairs it used;
- `scorewire_judge_agreement_kappa_floor`: SCOREWIRE_AGREEMENT_KAPPA_FLOOR, which the
  ScorewireJudgeAgreementLow alert compares every kappa with.

Check names come from requests, so the series are bounded: beyond `MAX_SERIES` check and
model pairs the one updated longest ago is dropped.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

MAX_SERIES = 256
"""Most (check, judge model) series kept."""
DEFAULT_FLOOR = 0.6
"""The floor before settings set it (SCOREWIRE_AGREEMENT_KAPPA_FLOOR's default)."""


class AgreementMetrics(Collector):
    """Holds the latest agreement per (check, judge model) and renders it at scrape time."""

    def __init__(self, registry: CollectorRegistry, *, floor: float = DEFAULT_FLOOR) -> None:
        self.floor = floor
        """The lowest acceptable kappa (exported for the alert)."""
        self._lock = threading.Lock()
        self._latest: OrderedDict[tuple[str, str], tuple[float, int]] = OrderedDict()
        registry.register(self)

    def observe_agreement(
        self, check: str, judge_model: str, kappa: float | None, pairs: int
    ) -> None:
        """Record the latest agreement of one check with one judge model."""
        key = (check, judge_model)
        with self._lock:
            self._latest[key] = (math.nan if kappa is None else kappa, pairs)
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

    def _families(self, latest: dict[tuple[str, str], tuple[float, int]]) -> Iterator[Metric]:
        labels = ("check", "judge_model")
        kappa = GaugeMetricFamily(
            "scorewire_judge_agreement_kappa",
            "Cohen's kappa of the latest agreement of a judge check with human labels "
            "(NaN when undefined).",
            labels=labels,
        )
        pairs = GaugeMetricFamily(
            "scorewire_judge_agreement_pairs",
            "Labelled pairs the latest agreement of a judge check was computed on.",
            labels=labels,
        )
        for (check, model), (k, n) in latest.items():
            kappa.add_metric([check, model], k)
            pairs.add_metric([check, model], n)
        floor = GaugeMetricFamily(
            "scorewire_judge_agreement_kappa_floor",
            "The lowest acceptable judge-human kappa (SCOREWIRE_AGREEMENT_KAPPA_FLOOR).",
            value=self.floor,
        )
        yield kappa
        yield pairs
        yield floor
