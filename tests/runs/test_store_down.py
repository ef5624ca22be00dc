"""A run database that stops answering: recording calls fail with UNAVAILABLE, never with
results sent but not stored; calls that do not record go on; reads say UNAVAILABLE.

Its own module, so that stopping PostgreSQL stops only this module's cluster.
"""

from __future__ import annotations

import grpc
import pytest
from scorewire.runs.postgres import PostgresRunStore
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

from tests.runs.conftest import CHECKS, case, start_run_server


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
