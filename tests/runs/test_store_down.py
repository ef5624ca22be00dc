"""A run database that stops answering (stopped, or frozen): recording calls fail with
UNAVAILABLE, never with results sent but not stored; calls that do not record go on;
reads say UNAVAILABLE; all of it within the store's deadline, and it recovers by itself.

Its own module, so that stopping PostgreSQL stops only this module's cluster.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from scorewire.runs import RunRecorder, RunsUnavailable, open_run_store
from scorewire.runs.postgres import PostgresRunStore
from scorewire.settings import Settings
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

from tests.runs.conftest import CHECKS, case, start_run_server
from tests.runs.test_store import chunk, run
from tests.support.postgres import PostgresCluster
from tests.support.wait import wait_until_async


async def test_recording_fails_unavailable_while_the_database_is_down(pg_cluster, pg_url) -> None:
    srv = await start_run_server(await PostgresRunStore.open(pg_url))
    try:
        pg_cluster.stop("immediate")
        req = pb.RunSuiteRequest(checks=CHECKS, cases=[case("a", "Paris")], record=True)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for ev in srv.scoring.RunSuite(req):
                assert ev.WhichOneof("event") != "results", "a result was sent unstored"
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "run store" in (err.value.details() or "")
        req.record = False
        events = [ev async for ev in srv.scoring.RunSuite(req)]
        assert events[-1].summary.cases == 1
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.runs.ListRuns(rpb.ListRunsRequest())
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        pg_cluster.start()
        req.record = True
        events = [ev async for ev in srv.scoring.RunSuite(req)]
        assert events[-1].summary.run_id
    finally:
        await srv.stop()


async def _all_results(srv, run_id: str) -> list[rpb.RunCaseResult]:
    out, token = [], ""
    while True:
        page = await srv.runs.ListRunResults(
            rpb.ListRunResultsRequest(run_id=run_id, page_size=1000, page_token=token), timeout=30
        )
        out.extend(page.results)
        token = page.next_page_token
        if not token:
            return out


async def _unavailable(call) -> tuple[grpc.aio.AioRpcError, float]:
    """The error `call()` ends with, and how long it took to come."""
    started = time.monotonic()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call()
    return err.value, time.monotonic() - started


async def test_a_frozen_database_fails_calls_within_the_deadline_and_recovers(
    pg_cluster: PostgresCluster, pg_url
) -> None:
    # PostgreSQL frozen (SIGSTOP): its connections stay open and nothing answers, so
    # only the server's own deadline (1 s here) ends a call. Recording calls and reads
    # are UNAVAILABLE naming the store well within ten times that, nothing is sent
    # unstored, and once PostgreSQL runs again the very next recording call succeeds;
    # the run recorded before the freeze reads back whole. (Before: 21 s, and 10 s.)
    settings = Settings(runs_url=pg_url, store_timeout_s=1.0)
    srv = await start_run_server(await open_run_store(settings), store_timeout_s=1.0)
    cases = [case(f"c{i}", "Paris" if i % 3 else "Lyon") for i in range(600)]  # 3 chunks
    req = pb.RunSuiteRequest(checks=CHECKS, cases=cases, record=True)

    async def record() -> str:
        events = [ev async for ev in srv.scoring.RunSuite(req, timeout=30)]
        return events[-1].summary.run_id

    async def record_while_frozen() -> None:
        async for ev in srv.scoring.RunSuite(req, timeout=30):
            assert ev.WhichOneof("event") != "results", "a result was sent unstored"

    try:
        before = await record()
        with pg_cluster.frozen():
            recording = await _unavailable(record_while_frozen)
            reading = await _unavailable(
                lambda: srv.runs.GetRun(rpb.GetRunRequest(run_id=before), timeout=30)
            )
        for err, elapsed in (recording, reading):
            assert err.code() == grpc.StatusCode.UNAVAILABLE
            assert "run store (PostgreSQL) did not answer within 1 s" in (err.details() or "")
            assert elapsed < 10.0
        after = await record()  # the first call after PostgreSQL is back
        for run_id in (before, after):
            run = (await srv.runs.GetRun(rpb.GetRunRequest(run_id=run_id), timeout=30)).run
            assert (run.status, run.results) == (rpb.RUN_STATUS_COMPLETE, 600)
            got = await _all_results(srv, run_id)
            assert [r.case.sample.id for r in got] == [c.sample.id for c in cases]
    finally:
        await srv.stop()


class _CountedStore(PostgresRunStore):
    """The PostgreSQL store, counting the writes the recorder tries."""

    writes = 0

    async def write(self, created, chunks, finished) -> None:  # type: ignore[no-untyped-def]
        self.writes += 1
        await super().write(created, chunks, finished)


async def test_writes_queued_behind_a_failed_one_fail_with_it(pg_cluster, pg_url) -> None:
    # A chunk queued while the write before it waited on a frozen database fails when
    # that write does, instead of trying again for a second deadline: its caller hears
    # within one deadline that the store is down.
    store = await _CountedStore.open(pg_url, timeout_s=1.0)
    recorder = RunRecorder(store, queue_chunks=4, heartbeat_s=60)
    await recorder.start()
    r = run()
    await recorder.begin(r)
    try:
        with pg_cluster.frozen():
            writes = store.writes
            first = asyncio.create_task(recorder.append(chunk(r.run_id, 0, ["Paris"])))
            await wait_until_async(lambda: store.writes == writes + 1, "the first write")
            second = asyncio.create_task(recorder.append(chunk(r.run_id, 1, ["Paris"])))
            await wait_until_async(lambda: recorder._queue.qsize() == 1, "the second queued")
            failed = await asyncio.gather(first, second, return_exceptions=True)
        assert [type(f) for f in failed] == [RunsUnavailable, RunsUnavailable]
        assert store.writes == writes + 1  # the second chunk had no write of its own
        await recorder.append(chunk(r.run_id, 2, ["Paris"]))  # and the store is back
    finally:
        await recorder.close()
