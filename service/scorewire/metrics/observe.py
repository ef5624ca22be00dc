"""Online evaluation metrics: every decision the observation consumer takes, per rule.

- `scorewire_observe_queued_total{status}`: observations Observe answered (`queued`,
  `duplicate`);
- `scorewire_observe_observed_total{rule}`: observations a consumer weighed for the rule;
- `scorewire_observe_skipped_total{rule,reason}`: not scored, and why (`filter`: the
  metadata did not match; `rate`: the trace fell outside the sampling rate; `cost_cap`:
  sampled, but a cost cap of the rule or the tenant refused its judge calls);
- `scorewire_observe_sampled_total{rule}`: observations the rule sampled;
- `scorewire_observe_scored_total{rule,outcome}`: observations scored (`pass`, `fail`);
- `scorewire_observe_errors_total{rule}`: sampled observations whose scoring or recording
  failed, or that scored an error state (redelivered after the lease when not recorded);
- `scorewire_observe_cost_usd_total{rule}`: what the rule's scores cost (judge calls);
- `scorewire_observe_redelivered_total`: deliveries already processed, not scored again;
- `scorewire_observe_queue_depth`: observations queued or in flight (as the consumer last
  read it);
- `scorewire_observe_lag_seconds{rule}`: from an observation's `observed_at` to its score;
- `scorewire_observe_events_dropped_total`: scored observations whose OTLP evaluation
  events were dropped because the emitter was behind (`observe.evaluation_events`).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0)


class ObserveMetrics:
    """The online evaluation series of one registry (see the module)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.queued = Counter(
            "scorewire_observe_queued",
            "Observations Observe answered, by status (queued, duplicate).",
            ("status",),
            registry=registry,
        )
        self.observed = Counter(
            "scorewire_observe_observed",
            "Observations a consumer weighed for a rule.",
            ("rule",),
            registry=registry,
        )
        self.skipped = Counter(
            "scorewire_observe_skipped",
            "Observations a rule did not score, by reason (filter, rate, cost_cap).",
            ("rule", "reason"),
            registry=registry,
        )
        self.sampled = Counter(
            "scorewire_observe_sampled",
            "Observations a rule sampled for scoring.",
            ("rule",),
            registry=registry,
        )
        self.scored = Counter(
            "scorewire_observe_scored",
            "Observations a rule scored, by outcome (pass, fail).",
            ("rule", "outcome"),
            registry=registry,
        )
        self.errors = Counter(
            "scorewire_observe_errors",
            "Sampled observations whose scoring or recording failed, or that scored an error.",
            ("rule",),
            registry=registry,
        )
        self.cost = Counter(
            "scorewire_observe_cost_usd",
            "US dollars the rule's scores cost (judge calls; cached verdicts cost nothing).",
            ("rule",),
            registry=registry,
        )
        self.redelivered = Counter(
            "scorewire_observe_redelivered",
            "Deliveries of observations already processed: acknowledged, not scored again.",
            registry=registry,
        )
        self.depth = Gauge(
            "scorewire_observe_queue_depth",
            "Observations queued or in flight, as the consumer last read it.",
            registry=registry,
        )
        self.lag = Histogram(
            "scorewire_observe_lag_seconds",
            "Seconds from an observation's observed_at to its score, per rule.",
            ("rule",),
            buckets=LAG_BUCKETS,
            registry=registry,
        )
        self.events_dropped = Counter(
            "scorewire_observe_events_dropped",
            "Scored observations whose OTLP evaluation events were dropped (the emitter was "
            "behind).",
            registry=registry,
        )
