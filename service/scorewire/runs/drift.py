"""Judge drift: a judge-backed check's mean over a fixed holdout, compared run to run.

A judge's provider can update the model behind a name, and a prompt or a judge setting
can change; what the check says about the same outputs then moves. The holdout of two
runs is the cases they share with the same output: the same sample id (as the run
comparison matches cases) and the same output text, so what moved is the judge, not the
model under test. Over it, each check that asked a judge is compared by its mean value
(scores that errored or were skipped in either run are left out: they are not verdicts),
and by the models the providers reported answering (the response's `model` field, which
a recorded score keeps: `scorewire.core.judged`).

`judge_drift` compares two runs' outcomes (`RunOutcomes`, as the baseline gate and the
viewer's compare page build them); `DriftWatch` compares each completed recorded run with
the previous complete run of the same name and tenant, for the server's metrics.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from scorewire.runs.compare import RunOutcomes
from scorewire.runs.run_model import (
    ChunkCodec,
    Outcome,
    RunInfo,
    RunQuery,
    RunStatus,
    RunStore,
    RunsUnavailable,
)

log = logging.getLogger("scorewire.runs")

MAX_DRIFT_CASES = 100_000
"""Most cases of a run `DriftWatch` reads to compare it (a larger run is not compared)."""

_VERDICTS = (Outcome.PASSED, Outcome.FAILED)


@dataclass(slots=True)
class CheckDrift:
    """One judge-backed check over the holdout of two runs."""

    check: str
    holdout: int
    """Cases in the holdout with a verdict of this check in both runs."""
    base_mean: float
    """Mean value over the holdout in the earlier run (0 when the holdout is empty)."""
    mean: float
    """Mean value over the holdout in the later run."""
    base_models: tuple[str, ...]
    """Models the providers reported in the earlier run."""
    models: tuple[str, ...]
    """Models the providers reported in the later run."""

    @property
    def delta(self) -> float:
        """How far the mean moved: later minus earlier (0 when the holdout is empty)."""
        return self.mean - self.base_mean

    @property
    def model_changed(self) -> bool:
        """True when both runs' providers reported models and they differ."""
        return bool(self.base_models and self.models) and set(self.base_models) != set(self.models)

    def exceeds(self, limit: float) -> bool:
        """Whether the mean moved by more than `limit`, or the reported model changed."""
        return abs(self.delta) > limit + 1e-12 or self.model_changed


def judge_drift(base: RunOutcomes, run: RunOutcomes) -> list[CheckDrift]:
    """Each check that asked a judge in both runs, compared over their holdout."""
    out = []
    for check in run.checks:
        if check not in run.judged or check not in base.judged:
            continue
        before_sum = now_sum = 0.0
        n = 0
        for key, now in run.cases.items():
            before = base.cases.get(key)
            if before is None or before.output != now.output:
                continue
            if now.outcomes.get(check) in _VERDICTS and before.outcomes.get(check) in _VERDICTS:
                n += 1
                before_sum += before.values[check]
                now_sum += now.values[check]
        out.append(
            CheckDrift(
                check,
                n,
                before_sum / n if n else 0.0,
                now_sum / n if n else 0.0,
                tuple(base.judged[check]),
                tuple(run.judged[check]),
            )
        )
    return out


class DriftWatch:
    """Compares each completed recorded run with the previous one of its name and tenant,
    and hands the drift to `publish(run_name, drifts)` (the server's metrics)."""

    def __init__(self, codec: ChunkCodec, publish: Callable[[str, list[CheckDrift]], None]) -> None:
        self._codec = codec
        self._publish = publish
        self._tasks: set[asyncio.Task[list[CheckDrift] | None]] = set()

    def finished(self, store: RunStore, run: RunInfo) -> None:
        """Compare `run`, just finished, in the background (its caller does not wait)."""
        if run.status is not RunStatus.COMPLETE or not run.name:
            return
        task = asyncio.get_running_loop().create_task(self.compare(store, run))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def compare(self, store: RunStore, run: RunInfo) -> list[CheckDrift] | None:
        """Compare `run` with the previous complete run of its name and tenant, publish and
        return the drift; None when there is none to compare with, or the store failed."""
        try:
            query = RunQuery(tenant=run.tenant, name=run.name, status=RunStatus.COMPLETE)
            earlier = [
                r
                for r in await store.list_runs(query, after=None, limit=8)
                if r.run_id != run.run_id and r.started_at <= run.started_at
            ]
            if not earlier or max(earlier[0].results, run.results) > MAX_DRIFT_CASES:
                return None
            base = await self._outcomes(store, earlier[0].run_id)
            now = await self._outcomes(store, run.run_id)
        except RunsUnavailable as err:
            log.warning("judge drift of run %s not compared: %s", run.run_id, err)
            return None
        drifts = judge_drift(base, now)
        self._publish(run.name, drifts)
        return drifts

    async def _outcomes(self, store: RunStore, run_id: str) -> RunOutcomes:
        from scorewire.runs import iter_results  # the package's reader, defined after this

        out = RunOutcomes()
        async for _, record in iter_results(store, self._codec, run_id):
            out.add_record(record)
        return out
