"""Runs sent in parts: RunService.OpenRun, the RunSuite calls that name it
(`RunSuiteRequest.part`), and RunService.CloseRun.

A caller that splits one run into several RunSuite calls (`scorewire run --server`: one
call per checkllm test, and batches of at most 2,000 cases) opens the run, sends every
call as a part of it, and closes it with the summary it judged over every part. The run
is recorded as one run (each part's results appended to it, their indexes made the
run's) and counted once in `scorewire_suite_runs_total`, with the caller's gate verdict;
a part is neither recorded nor counted as a run of its own.

A recorded run sent in parts is owned by itself (`RunRecorder.open`): the parts may
reach any replica, and each beats the run's heartbeat while it is scored, so the run is
marked incomplete like a dead server's once its caller stops sending parts.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import grpc
from scorewire.core.errors import FieldViolation
from scorewire.engine.summary import CheckTotals, Summary
from scorewire.runs import RunInfo, RunRecorder, RunStatus, RunsUnavailable, new_run_id, utc_now
from scorewire.runs.recorder import KeepAlive
from scorewire.scoring.recorded import cases_blob
from scorewire.scoring.recording import Recording
from scorewire.server.call_context import RUN_ID_METADATA
from scorewire.server.observer import RunObserver
from scorewire.server.run_records import check_run_fields, visible_run
from scorewire.server.security import Principal
from scorewire.server.status import (
    RequestRejected,
    invalid_argument,
    resource_exhausted,
    unavailable,
)
from scorewire.settings import Settings
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

OPENED = "OpenRun"
"""The `source` of a run sent in parts."""
INDEX_LIMIT = 2**31 - 1
"""The largest case index a result holds (int32)."""


def shift_indexes(message: bytes, by: int) -> bytes:
    """A serialized RunSuiteResponse of results with `by` added to every result's index."""
    m = pb.RunSuiteResponse.FromString(message)
    for r in m.results.results:
        r.index += by
    return m.SerializeToString()


class PartRecording(Recording):
    """One part's results stored into its run: indexes made the run's, the run's heartbeat
    beaten while the call runs; the call's end does not end the run (CloseRun does)."""

    def __init__(self, recorder: RunRecorder, run: RunInfo, first_index: int) -> None:
        super().__init__(recorder, run)
        self._first_index = first_index
        self._alive: KeepAlive = recorder.keep_alive(run.owner)

    def submit(self, cases: bytes, results: bytes, count: int) -> Any:
        """Store one chunk, its results' indexes shifted by the part's first index."""
        if self._first_index:
            results = shift_indexes(results, self._first_index)
        return super().submit(cases, results, count)

    async def complete(self, summary: Summary | None) -> None:
        """The part is done; the run goes on."""
        self._alive.stop()

    def abandon(self) -> None:
        """The part failed or was cancelled; the run goes on until CloseRun (or until its
        heartbeat stops)."""
        self._alive.stop()


def summary_from_pb(m: pb.RunSummary) -> Summary:
    """A caller's RunSummary as the engine's Summary (what is stored and counted)."""
    checks = []
    for c in m.checks:
        t = CheckTotals(c.name, c.type, c.passed, c.failed, c.errored, c.skipped)
        t.value_sum = c.value_sum or c.mean_value * t.total
        t.cost_usd, t.cached = c.cost_usd, c.cached
        checks.append(t)
    return Summary(
        cases=m.cases,
        cases_passed=m.cases_passed,
        checks=checks,
        passed=m.passed,
        failed=m.failed,
        errored=m.errored,
        skipped=m.skipped,
        mean_score=m.mean_score,
        error_rate=m.error_rate,
        pass_rate=m.pass_rate,
        cost_usd=m.cost_usd,
        unpriced=m.unpriced,
        gate_passed=m.gate_passed,
        gate_reasons=list(m.gate_reasons),
        value_sum=m.value_sum,
    )


def summary_problems(m: pb.RunSummary, base: str, name_chars: int) -> list[FieldViolation]:
    """What is wrong with a caller's summary: negative counts, costs that are negative or
    not finite, rates outside 0..1, check names over the name limit."""
    out: list[FieldViolation] = []

    def counts(msg: Any, where: str, names: Sequence[str]) -> None:
        for n in names:
            if getattr(msg, n) < 0:
                out.append(FieldViolation(f"{where}.{n}", "must be 0 or more"))

    def amounts(msg: Any, where: str, names: Sequence[str], most: float) -> None:
        for n in names:
            v = getattr(msg, n)
            if not math.isfinite(v) or v < 0 or v > most:
                limit = "between 0 and 1" if most == 1.0 else "a finite amount, 0 or more"
                out.append(FieldViolation(f"{where}.{n}", f"must be {limit}"))

    counts(m, base, ("cases", "cases_passed", "passed", "failed", "errored", "skipped"))
    amounts(m, base, ("pass_rate", "mean_score", "error_rate"), 1.0)
    amounts(m, base, ("cost_usd", "value_sum"), math.inf)
    for i, c in enumerate(m.checks):
        where = f"{base}.checks[{i}]"
        counts(c, where, ("passed", "failed", "errored", "skipped", "cached"))
        amounts(c, where, ("mean_value",), 1.0)
        amounts(c, where, ("cost_usd", "value_sum"), math.inf)
        if len(c.name) > name_chars:
            out.append(FieldViolation(f"{where}.name", f"longer than {name_chars} characters"))
    return out


class RunParts:
    """OpenRun, the parts' recording, and CloseRun."""

    def __init__(
        self, settings: Settings, runs: RunRecorder | None, observer: RunObserver | None
    ) -> None:
        self._settings = settings
        self._runs = runs
        self._observer = observer

    async def open(self, request: rpb.OpenRunRequest, who: Principal | None) -> rpb.OpenRunResponse:
        """Create the run when it is recorded; its id (empty when it is not)."""
        record = request.record if request.HasField("record") else self._settings.runs_record
        if not record:
            return rpb.OpenRunResponse()
        if self._runs is None:
            raise unavailable()
        labels = check_run_fields(request.run_name, dict(request.labels), self._settings, "")
        self._check_suite(request.suite, request.checks)
        run = RunInfo(
            run_id=new_run_id(),
            name=request.run_name or "unnamed",
            source=OPENED,
            tenant=who.name if who is not None else "",
            labels=labels,
            started_at=utc_now(),
            suite=request.suite,
            suite_sha256=hashlib.sha256(request.suite.encode("utf-8", "surrogatepass")).hexdigest(),
            checks=list(request.checks),
        )
        try:
            await self._runs.open(run)
        except RunsUnavailable as err:
            raise unavailable(err) from None
        return rpb.OpenRunResponse(run_id=run.run_id)

    def _check_suite(self, suite: str, checks: Sequence[str]) -> None:
        most = self._settings.max_suite_bytes
        if len(suite.encode("utf-8", "surrogatepass")) > most:
            raise resource_exhausted("suite", f"the suite is over max_suite_bytes ({most} bytes)")
        if sum(len(c) for c in checks) > most:
            raise resource_exhausted("checks", f"the names are over max_suite_bytes ({most})")
        violations = []
        if "\x00" in suite:
            violations.append(FieldViolation("suite", "must not contain NUL characters"))
        chars = self._settings.max_check_name_chars
        for i, name in enumerate(checks):
            if len(name) > chars or "\x00" in name:
                violations.append(
                    FieldViolation(f"checks[{i}]", f"at most {chars} characters, no NUL characters")
                )
        if violations:
            raise invalid_argument(violations)

    async def _open_run(self, run_id: str, field: str, who: Principal | None) -> RunInfo:
        """The running run `run_id` opened with OpenRun, as `who` may see it."""
        if self._runs is None:
            raise unavailable()
        run = await visible_run(self._runs, run_id, who)
        if run is None:
            raise RequestRejected(
                grpc.StatusCode.NOT_FOUND,
                f"{field}: no run {run_id!r}",
                [FieldViolation(field, "no such run")],
            )
        if run.source != OPENED:
            raise RequestRejected(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"{field}: run {run_id!r} was not opened with OpenRun: its own call ends it",
            )
        if run.status != RunStatus.RUNNING:
            raise RequestRejected(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"{field}: run {run_id!r} has ended ({run.status.value}); open another",
            )
        return run

    async def join(
        self, request: pb.RunSuiteRequest, who: Principal | None, context: Any
    ) -> PartRecording | None:
        """A part's recording into its run (None for a run that is not recorded);
        INVALID_ARGUMENT for the fields a part leaves to OpenRun."""
        violations = []
        leave = "set in OpenRun for a run sent in parts: leave it unset here"
        if request.HasField("record"):
            violations.append(FieldViolation("record", leave))
        if request.run_name:
            violations.append(FieldViolation("run_name", leave))
        if request.labels:
            violations.append(FieldViolation("labels", leave))
        first = request.part.first_index
        if first < 0 or first > INDEX_LIMIT - self._settings.max_cases_per_request:
            violations.append(
                FieldViolation(
                    "part.first_index", "must be 0 or more, below 2^31 less the case limit"
                )
            )
        if violations:
            raise invalid_argument(violations)
        if not request.part.run_id:
            return None
        run = await self._open_run(request.part.run_id, "part.run_id", who)
        assert self._runs is not None
        await context.send_initial_metadata(((RUN_ID_METADATA, run.run_id),))
        return PartRecording(self._runs, run, first)

    async def close(
        self, request: rpb.CloseRunRequest, who: Principal | None
    ) -> rpb.CloseRunResponse:
        """End the run (recorded: with the caller's cases and summary) and count it once."""
        summary = self._checked_summary(request)
        if len(request.cases) > self._settings.max_cases_per_request:
            raise resource_exhausted(
                "cases",
                f"{len(request.cases)} cases exceed max_cases_per_request "
                f"({self._settings.max_cases_per_request})",
            )
        violations = [
            FieldViolation(f"results[{i}].index", "must be 0 or more")
            for i, r in enumerate(request.results)
            if r.index < 0
        ]
        if len(request.cases) != len(request.results):
            violations.append(
                FieldViolation(
                    "results", f"{len(request.results)} results for {len(request.cases)} cases"
                )
            )
        if violations:
            raise invalid_argument(violations)
        if request.run_id:
            run = await self._open_run(request.run_id, "run_id", who)
            await self._finish(run, request, summary)
        if self._observer is not None and summary is not None:
            self._observer.observe_summary(summary)
        return rpb.CloseRunResponse()

    def _checked_summary(self, request: rpb.CloseRunRequest) -> Summary | None:
        if request.interrupted:
            return None
        if not request.HasField("summary"):
            raise invalid_argument(
                [FieldViolation("summary", "is required unless the run was interrupted")]
            )
        problems = summary_problems(request.summary, "summary", self._settings.max_check_name_chars)
        if problems:
            raise invalid_argument(problems)
        return summary_from_pb(request.summary)

    async def _finish(
        self, run: RunInfo, request: rpb.CloseRunRequest, summary: Summary | None
    ) -> None:
        assert self._runs is not None
        recording = Recording(self._runs, run)
        if request.cases:
            results = pb.RunSuiteResponse(results=pb.CaseResultBatch(results=request.results))
            await recording.append(
                cases_blob([c.SerializeToString() for c in request.cases]),
                results.SerializeToString(),
                len(request.cases),
            )
        if summary is None:
            run.status = RunStatus.INCOMPLETE
            run.ended_at = utc_now()
            try:
                await self._runs.finish(run)
            except RunsUnavailable as err:
                raise unavailable(err) from None
        else:
            await recording.complete(summary)
