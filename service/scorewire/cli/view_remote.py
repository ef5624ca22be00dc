"""`scorewire view --server`: a server's recorded runs, read through its RunService.

`RunServiceStore` reads a server's runs as the run store's read side (`get_run`,
`list_runs`, `chunks`), so the viewer shows them through the same source and the same
decoding as the runs of a store it opens itself (`scorewire.viewer.store`): one page of
ListRunResults is one chunk. The server decides what the token sees (a tenant's own
runs, every run for an admin). Read-only: writing raises RunsUnavailable.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import grpc
from scorewire.runs import Chunk, RunInfo, RunQuery, RunStatus, RunsUnavailable
from scorewire.scoring.recorded import cases_blob, summary_json
from scorewire.server.run_parts import summary_from_pb
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import runs_pb2_grpc as rpb_grpc
from scorewire.v1 import scoring_pb2 as pb

PAGE = 1000
"""Runs or results per RunService page (its most)."""

_STATUS = {
    rpb.RUN_STATUS_RUNNING: RunStatus.RUNNING,
    rpb.RUN_STATUS_COMPLETE: RunStatus.COMPLETE,
    rpb.RUN_STATUS_INCOMPLETE: RunStatus.INCOMPLETE,
}


def run_from_pb(m: rpb.Run) -> RunInfo:
    """A Run message as the store's RunInfo (its summary as the store keeps it)."""
    return RunInfo(
        run_id=m.run_id,
        name=m.name,
        source=m.source,
        tenant=m.caller,
        labels=dict(m.labels),
        started_at=m.started_at.ToDatetime(tzinfo=UTC),
        suite=m.suite,
        suite_sha256=m.suite_sha256,
        checks=list(m.checks),
        status=_STATUS.get(m.status, RunStatus.INCOMPLETE),
        ended_at=m.ended_at.ToDatetime(tzinfo=UTC) if m.HasField("ended_at") else None,
        results=m.results,
        summary=summary_json(summary_from_pb(m.summary)) if m.HasField("summary") else None,
    )


class RunServiceStore:
    """The read side of a run store, over a server's RunService (see the module)."""

    def __init__(self, channel: grpc.aio.Channel, metadata: Sequence[tuple[str, str]]) -> None:
        self._channel = channel
        self._stub = rpb_grpc.RunServiceStub(channel)
        self._metadata = tuple(metadata)
        self._list_tokens: dict[tuple[datetime, str], str] = {}
        """The page token after the run a listing page ended with (its cursor)."""
        self._result_tokens: dict[tuple[str, int], str] = {}
        """(run id, chunk number) -> the page token of the next page of results."""

    async def _call(self, method: Any, request: Any) -> Any:
        try:
            return await method(request, metadata=self._metadata, timeout=30)
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise RunsUnavailable(
                f"the server answered {err.code().name}: {err.details()}"
            ) from None

    async def get_run(self, run_id: str) -> RunInfo | None:
        """The run, or None when the server has none the token may see."""
        answer = await self._call(self._stub.GetRun, rpb.GetRunRequest(run_id=run_id))
        return None if answer is None else run_from_pb(answer.run)

    async def list_runs(
        self, query: RunQuery, *, after: tuple[datetime, str] | None, limit: int
    ) -> list[RunInfo]:
        """A page of runs, newest first (the cursor is the previous page's last run)."""
        token = "" if after is None else self._list_tokens.get(after, "")
        if after is not None and not token:
            return []
        answer = await self._call(
            self._stub.ListRuns,
            rpb.ListRunsRequest(name=query.name, page_size=min(limit, PAGE), page_token=token),
        )
        runs = [run_from_pb(r) for r in answer.runs] if answer is not None else []
        if runs and answer.next_page_token:
            self._list_tokens[(runs[-1].started_at, runs[-1].run_id)] = answer.next_page_token
        return runs

    async def chunks(self, run_id: str, *, after_seq: int, limit: int) -> list[tuple[int, Chunk]]:
        """The run's results after chunk `after_seq`, a page of ListRunResults a chunk."""
        out: list[tuple[int, Chunk]] = []
        seq = after_seq
        while len(out) < limit:
            token = self._result_tokens.get((run_id, seq), "") if seq else ""
            if seq and not token:
                break
            answer = await self._call(
                self._stub.ListRunResults,
                rpb.ListRunResultsRequest(run_id=run_id, page_size=PAGE, page_token=token),
            )
            if answer is None or not answer.results:
                break
            seq += 1
            results = pb.RunSuiteResponse(
                results=pb.CaseResultBatch(results=[r.result for r in answer.results])
            )
            blob = cases_blob([r.case.SerializeToString() for r in answer.results])
            out.append((seq, Chunk(run_id, blob, results.SerializeToString(), len(answer.results))))
            if not answer.next_page_token:
                break
            self._result_tokens[(run_id, seq)] = answer.next_page_token
        return out

    async def write(self, created: Any, chunks: Any, finished: Any) -> None:
        """Refused: the viewer only reads."""
        raise RunsUnavailable("a server's runs are read-only here")

    async def recorded(self, scope: str, keys: Any) -> set[str]:
        """Not served (the observation consumer's question, never the viewer's)."""
        raise RunsUnavailable("a server's runs are read-only here")

    async def forget_recorded(self, before: datetime) -> int:
        """Not served: read-only."""
        raise RunsUnavailable("a server's runs are read-only here")

    async def heartbeat(self, owner: str, now: datetime) -> None:
        """Refused: the viewer only reads."""
        raise RunsUnavailable("a server's runs are read-only here")

    async def mark_stale(self, seen_before: datetime) -> int:
        """Refused: the viewer only reads."""
        raise RunsUnavailable("a server's runs are read-only here")

    async def reopen(self, run_id: str) -> bool:
        """Refused: the viewer only reads."""
        raise RunsUnavailable("a server's runs are read-only here")

    async def enforce_retention(self, *, older_than: datetime | None, keep: int | None) -> int:
        """Refused: the viewer only reads."""
        raise RunsUnavailable("a server's runs are read-only here")

    async def delete_run(self, run_id: str) -> bool:
        """Refused: the viewer only reads."""
        raise RunsUnavailable("a server's runs are read-only here")

    async def close(self) -> None:
        """Close the channel."""
        await self._channel.close(None)
