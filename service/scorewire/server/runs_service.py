"""scorewire.v1.RunService: list, read, compare and delete recorded runs.

Tenants (bearer tokens on): a run belongs to the token that made it; a token sees only
its own runs, unless its role is `admin`. Another tenant's run is NOT_FOUND, exactly as
a run that does not exist, so that ids of other tenants' runs are not confirmed.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import grpc
from google.protobuf import timestamp_pb2
from scorewire.core.errors import FieldViolation
from scorewire.runs import (
    CaseChange,
    Comparison,
    Outcome,
    RunInfo,
    RunQuery,
    RunRecorder,
    RunStatus,
    RunsUnavailable,
    compare,
    iter_results,
)
from scorewire.runs.sql import from_micros, micros
from scorewire.scoring.recorded import CODEC
from scorewire.scoring.recording import run_outcomes
from scorewire.server.registration import add_service
from scorewire.server.run_parts import RunParts
from scorewire.server.run_records import summary_pb, visible_run, visible_tenant
from scorewire.server.security import principal
from scorewire.server.status import RequestRejected, guarded_unary, invalid_argument, unavailable
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import runs_pb2_grpc as rpb_grpc

Context = grpc.aio.ServicerContext[Any, Any]

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
DEFAULT_COMPARE_CASES = 1000
MAX_COMPARE_CASES = 10_000

_STATUS_TO_PB = {
    RunStatus.RUNNING: rpb.RUN_STATUS_RUNNING,
    RunStatus.COMPLETE: rpb.RUN_STATUS_COMPLETE,
    RunStatus.INCOMPLETE: rpb.RUN_STATUS_INCOMPLETE,
}
_STATUS_FROM_PB = {v: k for k, v in _STATUS_TO_PB.items()}
_OUTCOME_FROM_PB = {
    rpb.OUTCOME_PASSED: Outcome.PASSED,
    rpb.OUTCOME_FAILED: Outcome.FAILED,
    rpb.OUTCOME_ERRORED: Outcome.ERRORED,
    rpb.OUTCOME_SKIPPED: Outcome.SKIPPED,
}


def _timestamp(t: datetime) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(t)
    return ts


def run_to_pb(run: RunInfo) -> rpb.Run:
    """RunInfo -> Run message."""
    m = rpb.Run(
        run_id=run.run_id,
        name=run.name,
        source=run.source,
        caller=run.tenant,
        labels=run.labels,
        started_at=_timestamp(run.started_at),
        status=_STATUS_TO_PB[run.status],
        suite=run.suite,
        suite_sha256=run.suite_sha256,
        checks=run.checks,
        results=run.results,
    )
    if run.ended_at is not None:
        m.ended_at.CopyFrom(_timestamp(run.ended_at))
    if run.summary is not None:
        m.summary.CopyFrom(summary_pb(run.summary, run.run_id))
    return m


# ---- page tokens: opaque, tied to the listing's filters ---------------------------------------


def _digest(parts: Any) -> str:
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(str(p).encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def encode_token(position: list[Any], digest: str) -> str:
    """An opaque page token: where the next page starts, and whose listing it belongs to."""
    raw = json.dumps({"at": position, "q": digest}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_token(token: str, digest: str, shape: tuple[type, ...]) -> list[Any] | None:
    """The position of a page token; ValueError when it is not this listing's."""
    if not token:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        at, q = data["at"], data["q"]
    except (ValueError, TypeError, KeyError):
        raise ValueError("is not a page token of this service") from None
    if (
        not isinstance(at, list)
        or len(at) != len(shape)
        or not all(type(v) is t for v, t in zip(at, shape, strict=True))
    ):
        raise ValueError("is not a page token of this service")
    if q != digest:
        raise ValueError("belongs to a listing with other filters; start again without it")
    return at


def _page_size(value: int, out: list[FieldViolation]) -> int:
    if not 0 <= value <= MAX_PAGE_SIZE:
        out.append(FieldViolation("page_size", f"must be 0 to {MAX_PAGE_SIZE}"))
    return value or DEFAULT_PAGE_SIZE


def _run_id(value: str, field: str, out: list[FieldViolation]) -> None:
    if not value:
        out.append(FieldViolation(field, "is required"))


def _not_found(run_id: str) -> RequestRejected:
    return RequestRejected(grpc.StatusCode.NOT_FOUND, f"no run {run_id!r}")


class RunService(rpb_grpc.RunServiceServicer):
    """scorewire.v1.RunService on grpc.aio, over a run recorder's store."""

    def __init__(self, recorder: RunRecorder, parts: RunParts) -> None:
        self._recorder = recorder
        self._parts = parts

    async def _run(self, run_id: str, context: Context) -> RunInfo:
        run = await visible_run(self._recorder, run_id, principal(context))
        if run is None:
            raise _not_found(run_id)
        return run

    @guarded_unary
    async def ListRuns(
        self, request: rpb.ListRunsRequest, context: Context
    ) -> rpb.ListRunsResponse:
        """One page of runs, newest first."""
        violations: list[FieldViolation] = []
        size = _page_size(request.page_size, violations)
        query = _run_query(request, visible_tenant(principal(context)), violations)
        digest = _digest(query.digest_parts())
        after = None
        try:
            at = decode_token(request.page_token, digest, (int, str))
            if at is not None:
                start = from_micros(at[0])
                assert start is not None
                after = (start, at[1])
        except ValueError as err:
            violations.append(FieldViolation("page_token", str(err)))
        if violations:
            raise invalid_argument(violations)
        try:
            found = await self._recorder.store.list_runs(query, after=after, limit=size + 1)
        except RunsUnavailable as err:
            raise unavailable(err) from None
        page = found[:size]
        token = ""
        if len(found) > size:
            last = page[-1]
            token = encode_token([micros(last.started_at), last.run_id], digest)
        return rpb.ListRunsResponse(runs=[run_to_pb(r) for r in page], next_page_token=token)

    @guarded_unary
    async def GetRun(self, request: rpb.GetRunRequest, context: Context) -> rpb.GetRunResponse:
        """One run's metadata and summary."""
        violations: list[FieldViolation] = []
        _run_id(request.run_id, "run_id", violations)
        if violations:
            raise invalid_argument(violations)
        return rpb.GetRunResponse(run=run_to_pb(await self._run(request.run_id, context)))

    @guarded_unary
    async def ListRunResults(
        self, request: rpb.ListRunResultsRequest, context: Context
    ) -> rpb.ListRunResultsResponse:
        """One page of a run's case results, filtered by check and outcome."""
        violations: list[FieldViolation] = []
        _run_id(request.run_id, "run_id", violations)
        size = _page_size(request.page_size, violations)
        outcome = None
        if request.outcome != rpb.OUTCOME_UNSPECIFIED:
            outcome = _OUTCOME_FROM_PB.get(request.outcome)
            if outcome is None:
                violations.append(FieldViolation("outcome", "is not an Outcome value"))
        digest = _digest((request.run_id, request.check, request.outcome))
        after = (0, 0)
        try:
            at = decode_token(request.page_token, digest, (int, int))
            if at is not None:
                after = (at[0], at[1])
        except ValueError as err:
            violations.append(FieldViolation("page_token", str(err)))
        if violations:
            raise invalid_argument(violations)
        await self._run(request.run_id, context)
        out: list[rpb.RunCaseResult] = []
        token = ""
        last = after
        try:
            async for position, record in iter_results(
                self._recorder.store, CODEC, request.run_id,
                check=request.check, outcome=outcome, after=after,
            ):  # fmt: skip
                if len(out) == size:
                    token = encode_token(list(last), digest)
                    break
                case, result = record.raw
                out.append(rpb.RunCaseResult(case=case, result=result))
                last = position
        except RunsUnavailable as err:
            raise unavailable(err) from None
        return rpb.ListRunResultsResponse(results=out, next_page_token=token)

    @guarded_unary
    async def CompareRuns(
        self, request: rpb.CompareRunsRequest, context: Context
    ) -> rpb.CompareRunsResponse:
        """Per-check deltas and the changed cases of a run against a base run."""
        violations: list[FieldViolation] = []
        _run_id(request.base_run_id, "base_run_id", violations)
        _run_id(request.run_id, "run_id", violations)
        if not 0 <= request.max_cases <= MAX_COMPARE_CASES:
            violations.append(FieldViolation("max_cases", f"must be 0 to {MAX_COMPARE_CASES}"))
        if violations:
            raise invalid_argument(violations)
        limit = request.max_cases or DEFAULT_COMPARE_CASES
        await self._run(request.base_run_id, context)
        await self._run(request.run_id, context)
        base = await run_outcomes(self._recorder, request.base_run_id)
        now = await run_outcomes(self._recorder, request.run_id)
        return _comparison_pb(compare(base, now), limit)

    @guarded_unary
    async def DeleteRun(
        self, request: rpb.DeleteRunRequest, context: Context
    ) -> rpb.DeleteRunResponse:
        """Delete a finished run and its results."""
        violations: list[FieldViolation] = []
        _run_id(request.run_id, "run_id", violations)
        if violations:
            raise invalid_argument(violations)
        run = await self._run(request.run_id, context)
        if run.status == RunStatus.RUNNING:
            raise RequestRejected(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"run {run.run_id!r} is still running; delete it once it has ended",
            )
        try:
            deleted = await self._recorder.store.delete_run(run.run_id)
        except RunsUnavailable as err:
            raise unavailable(err) from None
        if not deleted:
            raise _not_found(request.run_id)
        return rpb.DeleteRunResponse()

    @guarded_unary
    async def OpenRun(self, request: rpb.OpenRunRequest, context: Context) -> rpb.OpenRunResponse:
        """Open a run its caller sends in parts (`server.run_parts`)."""
        return await self._parts.open(request, principal(context))

    @guarded_unary
    async def CloseRun(
        self, request: rpb.CloseRunRequest, context: Context
    ) -> rpb.CloseRunResponse:
        """End a run sent in parts: recorded with the caller's summary, counted once."""
        return await self._parts.close(request, principal(context))


def add_run_service(server: grpc.aio.Server, recorder: RunRecorder, parts: RunParts) -> str:
    """Register a RunService over the recorder's store on `server`, opening and closing
    the runs sent in parts with `parts` (the ScoringService's); returns its name."""
    service = RunService(recorder, parts)
    return add_service(server, service, rpb.DESCRIPTOR.services_by_name["RunService"])


def _run_query(
    request: rpb.ListRunsRequest, tenant: str | None, violations: list[FieldViolation]
) -> RunQuery:
    """The store query a ListRuns asks for (its problems added to `violations`)."""
    status = None
    if request.status != rpb.RUN_STATUS_UNSPECIFIED:
        status = _STATUS_FROM_PB.get(request.status)
        if status is None:
            violations.append(FieldViolation("status", "is not a RunStatus value"))
    for field in ("started_after", "started_before"):
        ts = getattr(request, field)
        if request.HasField(field) and not 0 <= ts.nanos < 1_000_000_000:
            violations.append(FieldViolation(field, "is not a valid timestamp"))
    return RunQuery(
        tenant=tenant,
        name=request.name,
        labels=dict(request.labels),
        started_after=(
            request.started_after.ToDatetime(tzinfo=UTC)
            if request.HasField("started_after")
            else None
        ),
        started_before=(
            request.started_before.ToDatetime(tzinfo=UTC)
            if request.HasField("started_before")
            else None
        ),
        status=status,
    )


def _comparison_pb(c: Comparison, limit: int) -> rpb.CompareRunsResponse:
    """A comparison of two runs as CompareRunsResponse, at most `limit` cases a list."""

    def changes(items: list[CaseChange]) -> list[rpb.CaseChange]:
        return [
            rpb.CaseChange(
                sample_id=x.key, checks=x.checks, base_output=x.base_output, output=x.output
            )
            for x in items[:limit]
        ]

    return rpb.CompareRunsResponse(
        checks=[
            rpb.CheckDelta(
                name=d.name,
                base_pass_rate=d.base.pass_rate,
                pass_rate=d.now.pass_rate,
                pass_rate_delta=d.now.pass_rate - d.base.pass_rate,
                base_mean_value=d.base.mean_value,
                mean_value=d.now.mean_value,
                mean_value_delta=d.now.mean_value - d.base.mean_value,
                in_both=d.in_both,
            )
            for d in c.checks
        ],
        regressed=changes(c.regressed),
        improved=changes(c.improved),
        output_changed=changes(c.output_changed),
        matched=c.matched,
        only_in_base=c.only_in_base,
        only_in_run=c.only_in_run,
        regressed_total=len(c.regressed),
        improved_total=len(c.improved),
        output_changed_total=len(c.output_changed),
    )
