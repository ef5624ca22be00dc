"""What the scoring RPCs tell the metrics (`metrics.runs.RunMetrics` listens)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from scorewire.engine.runner import CaseResult, PlanShape
from scorewire.engine.summary import Summary
from scorewire.metrics.runs import Tally


class RunObserver(Protocol):
    """Receives results for metrics; called once per batch, not per check, to stay cheap."""

    def observe_results(self, plan: PlanShape, results: Sequence[CaseResult]) -> None:
        """Count the scores of finished cases."""

    @property
    def bounds_ms(self) -> tuple[float, ...]:
        """The latency histogram's bounds (ms), for a worker to tally a chunk into."""

    def observe_tally(self, plan: PlanShape, counts: Tally) -> None:
        """Add the counts of a chunk a scoring worker tallied."""

    def observe_summary(self, summary: Summary) -> None:
        """Count a finished run (a RunSuite, or a run sent in parts) and its gate outcome."""

    def observe_generation(self, provider: str, outcome: str, cost_usd: float) -> None:
        """Count one output the server generated (`generated`, `cached` or `error`)."""
