"""The RunService calls of the blocking and asyncio clients (mixins of `Client` and
`AsyncClient`): the recorded runs, and a run sent in parts.

A run sent in parts is one run however many RunSuite calls carry it: `open_run` opens
it, each call names it (`run_suite(..., part=(run_id, first_index))`, the index in the
whole run of the call's first case), and `close_run` ends it with the summary the caller
judged over every part. The server records the parts' results into the run and counts
the run once, when it is closed. A run whose caller stops sending parts lapses into
`incomplete` once its heartbeat stops (`SCOREWIRE_RUNS_HEARTBEAT_S`); closing it then is
a `ScorewireError` with FAILED_PRECONDITION naming the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import grpc
from scorewire.client import _runs
from scorewire.client.errors import ScorewireError
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

Metadata = Sequence[tuple[str, str | bytes]]


class _Default:
    """The type of `DEFAULT`: use the client's default deadline."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()
"""Pass as `timeout` to use the client's default deadline (the default of every call)."""


def open_run_request(
    run_name: str, labels: Mapping[str, str] | None, suite: str, checks: Iterable[str],
    record: bool | None,
) -> rpb.OpenRunRequest:  # fmt: skip
    """The OpenRunRequest of `open_run`."""
    req = rpb.OpenRunRequest(
        run_name=run_name, labels=dict(labels or {}), suite=suite, checks=list(checks)
    )
    if record is not None:
        req.record = record
    return req


def close_run_request(
    run_id: str,
    summary: pb.RunSummary | None,
    cases: Iterable[pb.Case],
    results: Iterable[pb.CaseResult],
) -> rpb.CloseRunRequest:
    """The CloseRunRequest of `close_run`: interrupted when there is no summary."""
    req = rpb.CloseRunRequest(
        run_id=run_id, interrupted=summary is None, cases=list(cases), results=list(results)
    )
    if summary is not None:
        req.summary.CopyFrom(summary)
        req.summary.ClearField("run_id")
    return req


class RunCalls:
    """The RunService calls of the blocking `Client`."""

    _runs: Any
    _call_args: Any

    def _run_call(self, method: str, req: Any, timeout: float | None, metadata: Any) -> Any:
        try:
            return getattr(self._runs, method)(req, **self._call_args(timeout, metadata))
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None

    def list_runs(
        self,
        *,
        name: str = "",
        labels: Mapping[str, str] | None = None,
        started_after: datetime | None = None,
        started_before: datetime | None = None,
        status: str | int | None = None,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> rpb.ListRunsResponse:
        """One page of recorded runs, newest first, filtered by name, labels, start time
        and status (`running`, `complete`, `incomplete`); pass its `next_page_token` on."""
        req = _runs.list_runs_request(
            name=name,
            labels=labels,
            started_after=started_after,
            started_before=started_before,
            status=status,
            page_size=page_size,
            page_token=page_token,
        )
        resp: rpb.ListRunsResponse = self._run_call("ListRuns", req, timeout, metadata)
        return resp

    def get_run(
        self,
        run_id: str,
        *,
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> rpb.Run:
        """A recorded run's metadata and summary; NOT_FOUND for an unknown id."""
        req = rpb.GetRunRequest(run_id=run_id)
        resp: rpb.GetRunResponse = self._run_call("GetRun", req, timeout, metadata)
        return resp.run

    def list_run_results(
        self,
        run_id: str,
        *,
        check: str = "",
        outcome: str | int | None = None,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> rpb.ListRunResultsResponse:
        """One page of a run's case results, filtered by check name and outcome
        (`passed`, `failed`, `errored`, `skipped`)."""
        req = _runs.list_results_request(
            run_id, check=check, outcome=outcome, page_size=page_size, page_token=page_token
        )
        resp: rpb.ListRunResultsResponse = self._run_call("ListRunResults", req, timeout, metadata)
        return resp

    def compare_runs(
        self,
        base_run_id: str,
        run_id: str,
        *,
        max_cases: int = 0,
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> rpb.CompareRunsResponse:
        """`run_id` against `base_run_id`: per-check deltas and the changed cases."""
        req = rpb.CompareRunsRequest(base_run_id=base_run_id, run_id=run_id, max_cases=max_cases)
        resp: rpb.CompareRunsResponse = self._run_call("CompareRuns", req, timeout, metadata)
        return resp

    def delete_run(
        self,
        run_id: str,
        *,
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> None:
        """Delete a finished run and its results."""
        self._run_call("DeleteRun", rpb.DeleteRunRequest(run_id=run_id), timeout, metadata)

    def open_run(
        self,
        *,
        run_name: str = "",
        labels: Mapping[str, str] | None = None,
        suite: str = "",
        checks: Iterable[str] = (),
        record: bool | None = None,
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> str:
        """Open a run to be sent in parts (see the module); returns its id, empty when the
        server does not record it (`record=False`, or its default is off), in which case
        the parts name the empty id and the run is still counted once, by `close_run`."""
        req = open_run_request(run_name, labels, suite, checks, record)
        resp: rpb.OpenRunResponse = self._run_call("OpenRun", req, timeout, metadata)
        return resp.run_id

    def close_run(
        self,
        run_id: str,
        summary: pb.RunSummary | None,
        *,
        cases: Iterable[pb.Case] = (),
        results: Iterable[pb.CaseResult] = (),
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> None:
        """End a run opened with `open_run`: complete with `summary` (judged over every
        part), or incomplete with None (the run was interrupted). `cases` and `results`
        (at the run's indexes) are cases of the run that no part sent. FAILED_PRECONDITION
        when the run has already ended: closed, or lapsed into incomplete."""
        req = close_run_request(run_id, summary, cases, results)
        self._run_call("CloseRun", req, timeout, metadata)


class AsyncRunCalls:
    """The RunService calls of the asyncio `AsyncClient` (the blocking ones, awaited)."""

    _runs: Any
    _call_args: Any

    async def _run_call(self, method: str, req: Any, deadline: float | None, metadata: Any) -> Any:
        try:
            return await getattr(self._runs, method)(req, **self._call_args(deadline, metadata))
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None

    async def list_runs(
        self,
        *,
        name: str = "",
        labels: Mapping[str, str] | None = None,
        started_after: datetime | None = None,
        started_before: datetime | None = None,
        status: str | int | None = None,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> rpb.ListRunsResponse:
        """One page of recorded runs, newest first, filtered by name, labels, start time
        and status (`running`, `complete`, `incomplete`); pass its `next_page_token` on."""
        req = _runs.list_runs_request(
            name=name,
            labels=labels,
            started_after=started_after,
            started_before=started_before,
            status=status,
            page_size=page_size,
            page_token=page_token,
        )
        resp: rpb.ListRunsResponse = await self._run_call("ListRuns", req, timeout, metadata)
        return resp

    async def get_run(
        self,
        run_id: str,
        *,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> rpb.Run:
        """A recorded run's metadata and summary; NOT_FOUND for an unknown id."""
        req = rpb.GetRunRequest(run_id=run_id)
        resp: rpb.GetRunResponse = await self._run_call("GetRun", req, timeout, metadata)
        return resp.run

    async def list_run_results(
        self,
        run_id: str,
        *,
        check: str = "",
        outcome: str | int | None = None,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> rpb.ListRunResultsResponse:
        """One page of a run's case results, filtered by check name and outcome
        (`passed`, `failed`, `errored`, `skipped`)."""
        req = _runs.list_results_request(
            run_id, check=check, outcome=outcome, page_size=page_size, page_token=page_token
        )
        resp: rpb.ListRunResultsResponse = await self._run_call(
            "ListRunResults", req, timeout, metadata
        )
        return resp

    async def compare_runs(
        self,
        base_run_id: str,
        run_id: str,
        *,
        max_cases: int = 0,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> rpb.CompareRunsResponse:
        """`run_id` against `base_run_id`: per-check deltas and the changed cases."""
        req = rpb.CompareRunsRequest(base_run_id=base_run_id, run_id=run_id, max_cases=max_cases)
        resp: rpb.CompareRunsResponse = await self._run_call("CompareRuns", req, timeout, metadata)
        return resp

    async def delete_run(
        self,
        run_id: str,
        *,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> None:
        """Delete a finished run and its results."""
        await self._run_call("DeleteRun", rpb.DeleteRunRequest(run_id=run_id), timeout, metadata)

    async def open_run(
        self,
        *,
        run_name: str = "",
        labels: Mapping[str, str] | None = None,
        suite: str = "",
        checks: Iterable[str] = (),
        record: bool | None = None,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> str:
        """`Client.open_run`: open a run to be sent in parts; its id (may be empty)."""
        req = open_run_request(run_name, labels, suite, checks, record)
        resp: rpb.OpenRunResponse = await self._run_call("OpenRun", req, timeout, metadata)
        return resp.run_id

    async def close_run(
        self,
        run_id: str,
        summary: pb.RunSummary | None,
        *,
        cases: Iterable[pb.Case] = (),
        results: Iterable[pb.CaseResult] = (),
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> None:
        """`Client.close_run`: end a run sent in parts (None: interrupted)."""
        req = close_run_request(run_id, summary, cases, results)
        await self._run_call("CloseRun", req, timeout, metadata)
