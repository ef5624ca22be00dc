"""Judge metrics, mirrored from the judge's counters (`scorewire.judge.JudgeStats`).

The judge package knows nothing about Prometheus: its `JudgeStats` calls listeners with
`(name, amount, labels)` on every change, and `JudgeMetrics.watch(judge)` subscribes one
that feeds these series:

- `scorewire_judge_requests_total{backend,model,outcome}`: judge calls after retries, by
  outcome `ok` (a verdict), `invalid_verdict` (an answer that was not one) or `error`
  (failed after retries);
- `scorewire_judge_retries_total{backend,model}`, `scorewire_judge_requests_in_flight{backend}`;
- `scorewire_judge_tokens_total{model,direction}` (direction `input` or `output`);
- `scorewire_judge_cost_usd_total{model}` (what the budgets were charged: a call's cost,
  or its ceiling when the upstream reported no usage),
  `scorewire_judge_ceiling_charged_requests_total{model}` (those calls charged their
  ceiling, whose cost is an upper bound) and `scorewire_judge_unpriced_requests_total{model}`
  (calls to models without a price, so the cost leaves them out);
- `scorewire_judge_cache_lookups_total{result}` (`hit`, `miss`, `refresh`: a verdict
  older than a request that asked the judges again, `bypass`: the cache store was
  unavailable), `scorewire_judge_cache_evictions_total` (entries an in-process cache
  dropped to stay within `cache_memory_bytes`, or a Redis one within
  `cache_tenant_max_bytes`) and `scorewire_judge_saved_usd_total`
  (what cache hits and shared in-flight calls would have cost);
- `scorewire_judge_shared_requests_total`, `scorewire_judge_budget_refusals_total`;
- `scorewire_judge_shared_state_events_total{event}`: shared budgets and single flight
  in Redis (`budget_unavailable`, `settle_failed`, `lease_wait`, `remote_verdict`,
  `lease_timeout`, `lease_failed`);
- `scorewire_judge_budget_limit_usd` and `scorewire_judge_budget_remaining_usd`: the
  server-wide budget of the current period, when one is configured.

Dollars are US dollars (the unit every cost in scorewire is in, hence `_usd`).

A request's check parameters can name any model, so the `model` label is capped: past
`MAX_MODELS` distinct names, further ones are counted under `model="other"` rather than
growing the series without bound.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

REQUEST_OUTCOMES = ("ok", "invalid_verdict", "error")
MAX_MODELS = 64
"""Distinct `model` label values kept before further models count as `other`."""
CACHE_RESULTS = ("hit", "miss", "refresh", "bypass")


SHARED_EVENTS = {
    "budget_unavailable": "budget_unavailable",
    "budget_settle_failures": "settle_failed",
    "lease_waits": "lease_wait",
    "remote_shared_calls": "remote_verdict",
    "lease_timeouts": "lease_timeout",
    "lease_failures": "lease_failed",
}
"""`JudgeStats` counters of shared state -> the `event` label they are exported under."""


class StatsSource(Protocol):
    """What `watch` needs of the judge's counters (`scorewire.judge.JudgeStats`)."""

    def subscribe(self, listener: Callable[[str, float, Mapping[str, str]], None]) -> None:
        """Call `listener(name, amount, labels)` on every change."""


class _Requests:
    """Per (backend, model): calls answered, answers that were no verdict, failures."""

    __slots__ = ("answered", "failed", "invalid")

    def __init__(self) -> None:
        self.answered = 0
        self.invalid = 0
        self.failed = 0


class JudgeMetrics(Collector):
    """Prometheus series fed by the judge's stats listener; see the module docstring."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.tokens = Counter(
            "scorewire_judge_tokens",
            "Tokens the judge backends reported, by model and direction (input, output).",
            ("model", "direction"),
            registry=registry,
        )
        self.cost = Counter(
            "scorewire_judge_cost_usd",
            "US dollars charged for judge calls of priced models: the cost of the tokens "
            "reported, or the call's ceiling when the upstream reported no usage.",
            ("model",),
            registry=registry,
        )
        self.ceiling = Counter(
            "scorewire_judge_ceiling_charged_requests",
            "Judge calls charged their ceiling (in the cost) because the upstream reported no "
            "usage or usage that cannot be true: their cost is an upper bound.",
            ("model",),
            registry=registry,
        )
        self.unpriced = Counter(
            "scorewire_judge_unpriced_requests",
            "Judge calls to models without a known price, whose cost the cost leaves out.",
            ("model",),
            registry=registry,
        )
        self.retries = Counter(
            "scorewire_judge_retries",
            "Judge call retries after a 429, a 5xx, a timeout or a dropped connection.",
            ("backend", "model"),
            registry=registry,
        )
        self.in_flight = Gauge(
            "scorewire_judge_requests_in_flight",
            "Judge HTTP requests under way.",
            ("backend",),
            registry=registry,
        )
        self.cache = Counter(
            "scorewire_judge_cache_lookups",
            "Verdict cache lookups by result (hit, miss, refresh: a verdict older than a request "
            "that asked the judges again, bypass: the store was unavailable).",
            ("result",),
            registry=registry,
        )
        for result in CACHE_RESULTS:
            self.cache.labels(result)
        self.evictions = Counter(
            "scorewire_judge_cache_evictions",
            "Verdicts an in-process cache dropped to stay within cache_memory_bytes, or a Redis "
            "cache to keep a tenant within cache_tenant_max_bytes.",
            registry=registry,
        )
        self.saved = Counter(
            "scorewire_judge_saved_usd",
            "US dollars that cache hits and shared in-flight calls would have cost.",
            registry=registry,
        )
        self.shared = Counter(
            "scorewire_judge_shared_requests",
            "Checks that joined an identical judge call already in flight.",
            registry=registry,
        )
        self.refusals = Counter(
            "scorewire_judge_budget_refusals",
            "Judge calls refused because a budget was spent.",
            registry=registry,
        )
        self.shared_state = Counter(
            "scorewire_judge_shared_state_events",
            "Events of shared budgets and single flight in Redis: budget_unavailable (a "
            "reservation Redis did not answer), settle_failed, lease_wait, remote_verdict "
            "(a wait that ended with another replica's verdict), lease_timeout, lease_failed.",
            ("event",),
            registry=registry,
        )
        for event in SHARED_EVENTS.values():
            self.shared_state.labels(event)
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str], _Requests] = {}
        self._budget: Any = None
        self._models: set[str] = set()
        self._handlers: dict[str, Callable[[float, Mapping[str, str]], None]] = {
            "input_tokens": lambda n, lb: self.tokens.labels(self._model(lb), "input").inc(n),
            "output_tokens": lambda n, lb: self.tokens.labels(self._model(lb), "output").inc(n),
            "answered_calls": lambda n, lb: self._count(lb, "answered", n),
            "cost_usd": lambda n, lb: self.cost.labels(self._model(lb)).inc(n),
            "ceiling_charges": lambda n, lb: self.ceiling.labels(self._model(lb)).inc(n),
            "unpriced_calls": lambda n, lb: self.unpriced.labels(self._model(lb)).inc(n),
            "invalid_verdicts": lambda n, lb: self._count(lb, "invalid", n),
            "call_failures": lambda n, lb: self._count(lb, "failed", n),
            "retries": lambda n, lb: self.retries.labels(_backend(lb), self._model(lb)).inc(n),
            "in_flight": lambda n, lb: self.in_flight.labels(_backend(lb)).inc(n),
            "cache_hits": lambda n, lb: self.cache.labels("hit").inc(n),
            "cache_misses": lambda n, lb: self.cache.labels("miss").inc(n),
            "cache_refreshes": lambda n, lb: self.cache.labels("refresh").inc(n),
            "cache_bypasses": lambda n, lb: self.cache.labels("bypass").inc(n),
            "cache_evictions": lambda n, lb: self.evictions.inc(n),
            "saved_usd": lambda n, lb: self.saved.inc(n),
            "shared_calls": lambda n, lb: self.shared.inc(n),
            "budget_refusals": lambda n, lb: self.refusals.inc(n),
        }
        for stat, event in SHARED_EVENTS.items():
            self._handlers[stat] = self._shared_event(event)
        registry.register(self)

    def _shared_event(self, event: str) -> Callable[[float, Mapping[str, str]], None]:
        child = self.shared_state.labels(event)
        return lambda n, lb: child.inc(n)

    def watch(self, judge: Any) -> None:
        """Mirror `judge.stats` from now on, and export `judge.server_budget` if it has one.

        `judge` is a `scorewire.judge.JudgeService` (anything with a `stats` that has
        `subscribe`); None or an object without stats is ignored.
        """
        stats: StatsSource | None = getattr(judge, "stats", None)
        if stats is None or not hasattr(stats, "subscribe"):
            return
        stats.subscribe(self.on_change)
        self._budget = getattr(judge, "server_budget", None)

    def on_change(self, name: str, amount: float, labels: Mapping[str, str]) -> None:
        """The `JudgeStats` listener: route one change to its series (unknown names are
        ignored, so the judge can add counters before they are exported)."""
        handler = self._handlers.get(name)
        if handler is not None:
            handler(amount, labels)

    def _count(self, labels: Mapping[str, str], field: str, amount: float) -> None:
        key = (_backend(labels), self._model(labels))
        with self._lock:
            totals = self._requests.get(key)
            if totals is None:
                totals = self._requests[key] = _Requests()
            setattr(totals, field, getattr(totals, field) + int(amount))

    def _model(self, labels: Mapping[str, str]) -> str:
        model = labels.get("model") or "unknown"
        if model in self._models:
            return model
        if len(self._models) >= MAX_MODELS:
            return "other"
        self._models.add(model)
        return model

    # --- Collector ------------------------------------------------------------------------

    def describe(self) -> Iterator[Metric]:
        """The families this collector exports (without samples)."""
        yield from self._families()

    def _families(self) -> tuple[CounterMetricFamily, GaugeMetricFamily, GaugeMetricFamily]:
        return (
            CounterMetricFamily(
                "scorewire_judge_requests",
                "Judge calls after retries, by backend, model and outcome "
                "(ok, invalid_verdict, error).",
                labels=("backend", "model", "outcome"),
            ),
            GaugeMetricFamily(
                "scorewire_judge_budget_limit_usd",
                "The server-wide judge budget per period, in US dollars.",
            ),
            GaugeMetricFamily(
                "scorewire_judge_budget_remaining_usd",
                "US dollars left in the server-wide judge budget of the current period.",
            ),
        )

    def collect(self) -> Iterator[Metric]:
        """Requests by outcome and the budget gauges, computed at scrape time."""
        requests, limit, remaining = self._families()
        with self._lock:
            rows = [(k, t.answered, t.invalid, t.failed) for k, t in self._requests.items()]
        for (backend, model), answered, invalid, failed in sorted(rows):
            counts = (answered - invalid, invalid, failed)
            for outcome, value in zip(REQUEST_OUTCOMES, counts, strict=True):
                requests.add_metric((backend, model, outcome), value)
        yield requests
        budget = self._budget
        if budget is not None and getattr(budget, "limit_usd", None) is not None:
            left = _remaining(budget)
            limit.add_metric((), float(budget.limit_usd))
            remaining.add_metric((), left)
            yield limit
            yield remaining


def _remaining(budget: Any) -> float:
    """Dollars left in the budget's current period (never below zero)."""
    remaining_usd = getattr(budget, "remaining_usd", None)
    if callable(remaining_usd):
        return max(0.0, float(remaining_usd()))
    return max(0.0, float(budget.limit_usd) - float(budget.spent_usd))


def _backend(labels: Mapping[str, str]) -> str:
    return labels.get("backend") or "unknown"
