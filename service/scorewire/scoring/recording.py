"""Recording a scored call in the run store, and judging a run against a baseline run.

The domain side of recorded runs, for every entry point that records (RunSuite,
ScoreStream, runs sent in parts, online evaluation): a store that fails raises
`RunsUnavailable` and a baseline that cannot be found `SpecError` naming
`gate.baseline`; the server turns them into UNAVAILABLE and INVALID_ARGUMENT.

A chunk's `cases` are the serialized cases as sent (`cases_blob`), and its `results` a
serialized `RunSuiteResponse` with the results as sent; the i-th case belongs to the
i-th result.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any

from scorewire.core.errors import FieldViolation, SpecError
from scorewire.engine.summary import Summary
from scorewire.runs import (
    Chunk,
    Outcome,
    RunInfo,
    RunOutcomes,
    RunQuery,
    RunRecorder,
    RunStatus,
    baseline_reasons,
    compare,
    iter_results,
    new_run_id,
    utc_now,
)
from scorewire.scoring.recorded import CODEC, summary_json
from scorewire.v1 import scoring_pb2 as pb


async def run_outcomes(recorder: RunRecorder, run_id: str) -> RunOutcomes:
    """Every recorded case of the run, as a comparison reads them."""
    out = RunOutcomes()
    async for _, r in iter_results(recorder.store, CODEC, run_id):
        out.add(
            r.key,
            [s.name for s in r.scores],
            [s.outcome for s in r.scores],
            [s.value for s in r.scores],
            r.output,
        )
    return out


async def resolve_baseline(
    recorder: RunRecorder | None, ref: str, tenant: str | None
) -> tuple[str, RunOutcomes]:
    """The baseline run's id and outcomes, by id or by the newest complete run of that name
    that `tenant` sees (None: every tenant's); SpecError naming `gate.baseline` if none."""
    if recorder is None:
        raise SpecError(
            [FieldViolation("gate.baseline", "this server keeps no run store to compare with")]
        )
    run = await find_run(recorder, ref, tenant)
    if run is None:
        query = RunQuery(tenant=tenant, name=ref, status=RunStatus.COMPLETE)
        found = await recorder.store.list_runs(query, after=None, limit=1)
        run = found[0] if found else None
    if run is None:
        raise SpecError(
            [
                FieldViolation(
                    "gate.baseline",
                    f"no recorded run has the id or name {ref!r} (record one with record: true)",
                )
            ]
        )
    return run.run_id, await run_outcomes(recorder, run.run_id)


async def find_run(recorder: RunRecorder, run_id: str, tenant: str | None) -> RunInfo | None:
    """The run, when it exists and belongs to `tenant` (None: any tenant)."""
    run = await recorder.store.get_run(run_id)
    if run is None or (tenant is not None and run.tenant != tenant):
        return None
    return run


class Recording:
    """One call being recorded: begin, append chunks (stored before they are sent), end."""

    def __init__(self, recorder: RunRecorder, run: RunInfo) -> None:
        self._recorder = recorder
        self.run = run
        self._finished = False
        self.count = 0

    @classmethod
    async def begin(
        cls,
        recorder: RunRecorder,
        *,
        name: str,
        source: str,
        tenant: str,
        labels: dict[str, str],
        suite: str,
        checks: Sequence[str],
    ) -> Recording:
        """Create the run in the store (RunsUnavailable when the store fails)."""
        run = RunInfo(
            run_id=new_run_id(),
            name=name,
            source=source,
            tenant=tenant,
            labels=labels,
            started_at=utc_now(),
            suite=suite,
            suite_sha256=hashlib.sha256(suite.encode("utf-8", "surrogatepass")).hexdigest(),
            checks=list(checks),
        )
        await recorder.begin(run)
        return cls(recorder, run)

    def submit(self, cases: bytes, results: bytes, count: int) -> asyncio.Future[None]:
        """Start storing one chunk; the future is done after its commit (then send it).

        Chunks submitted one after another are stored in that order."""
        task = asyncio.ensure_future(self.append(cases, results, count))
        _BACKGROUND.add(task)
        task.add_done_callback(_done)  # a failure not awaited (the call failed) is logged away
        return task

    async def append(self, cases: bytes, results: bytes, count: int) -> None:
        """Store one chunk; returns after its commit."""
        await self._recorder.append(Chunk(self.run.run_id, cases, results, count))
        self.count += count

    async def complete(self, summary: Summary | None) -> None:
        """Record the end: complete with its summary (or, with None, a complete stream)."""
        self.run.status = RunStatus.COMPLETE
        self.run.ended_at = utc_now()
        self.run.summary = None if summary is None else summary_json(summary)
        await self._recorder.finish(self.run)  # if it fails, abandon() marks it incomplete
        self._finished = True

    def abandon(self) -> None:
        """Mark the run incomplete (the call failed or was cancelled), in the background."""
        if self._finished:
            return
        self._finished = True
        self.run.status = RunStatus.INCOMPLETE
        self.run.ended_at = utc_now()
        task = asyncio.ensure_future(self._recorder.finish(self.run))
        _BACKGROUND.add(task)
        task.add_done_callback(_done)


_BACKGROUND: set[asyncio.Future[None]] = set()


def _done(task: asyncio.Future[None]) -> None:
    _BACKGROUND.discard(task)
    if not task.cancelled():
        task.exception()  # a store that failed: the heartbeat check marks the run later


# ---- the baseline gate ---------------------------------------------------------------------


class BaselineGate:
    """The current run's outcomes, judged against a baseline's at the end."""

    def __init__(self, run_id: str, base: RunOutcomes, max_regression: float) -> None:
        self.run_id = run_id
        self.base = base
        self.max_regression = max_regression
        self.now = RunOutcomes()

    def add(self, names: Sequence[str], results: Sequence[Any]) -> None:
        """Count finished engine results."""
        for r in results:
            self.now.add_scores(r.sample_id or f"#{r.index}", names, r.scores)

    def add_message(self, names: Sequence[str], message: bytes) -> None:
        """Count the results of a serialized RunSuiteResponse (a scoring worker's chunk)."""
        for r in pb.RunSuiteResponse.FromString(message).results.results:
            outcomes = [
                Outcome.SKIPPED
                if s.skipped
                else Outcome.ERRORED
                if s.error.code or s.error.message
                else Outcome.PASSED
                if s.passed
                else Outcome.FAILED
                for s in r.scores
            ]
            self.now.add(r.sample_id or f"#{r.index}", names, outcomes, [s.value for s in r.scores])

    def judge(self, summary: Summary) -> None:
        """Fail the summary's gate on regressions, with the reasons."""
        reasons = baseline_reasons(compare(self.base, self.now), self.max_regression, self.run_id)
        if reasons:
            summary.gate_passed = False
            summary.gate_reasons.extend(reasons)
