"""A server killed with SIGKILL mid-run: the run is incomplete and holds every result it sent.

The server is a real `scorewire serve` process with its run store in its state directory
(SQLite) or in a real PostgreSQL (`SCOREWIRE_RUNS_URL`). The client reads results until
it holds some, the server is killed, and a new server on the same store marks the run
incomplete once the dead one's heartbeat is stale; every result the client received is
stored, and the store reads back whole (no torn chunk).
"""

from __future__ import annotations

import os
import signal

import grpc
import pytest
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import runs_pb2_grpc as rpb_grpc
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc as pb_grpc

from tests.support.servers import serve_process, stop_process
from tests.support.wait import wait_until_async

CASES = 400


def slow_suite() -> pb.RunSuiteRequest:
    req = pb.RunSuiteRequest(checks=[pb.CheckSpec(type="test.slow")], record=True, run_name="crash")
    for i in range(CASES):
        c = req.cases.add()
        c.sample.id = f"s{i}"
        c.sample.metadata["sleep"] = 0.05
        c.output.text = f"output {i}"
    return req


@pytest.fixture(params=["sqlite", "postgres"])
def store_env(request, tmp_path) -> dict[str, str]:
    env = {"SCOREWIRE_STATE_DIR": str(tmp_path / "state"), "SCOREWIRE_RUNS_HEARTBEAT_S": "0.2"}
    if request.param == "postgres":
        env["SCOREWIRE_RUNS_URL"] = request.getfixturevalue("pg_url")
    return env


async def test_a_sigkilled_server_leaves_an_incomplete_run_with_every_sent_result(
    store_env: dict[str, str],
) -> None:
    proc, address = serve_process(store_env, "--imports", "tests.server.custom_checks")
    received: list[pb.CaseResult] = []
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            call = pb_grpc.ScoringServiceStub(channel).RunSuite(slow_suite())
            run_id = dict(await call.initial_metadata())["scorewire-run-id"]
            async for ev in call:
                received.extend(ev.results.results)
                if len(received) >= 20:
                    os.kill(proc.pid, signal.SIGKILL)
                    break
    finally:
        proc.kill()
        proc.wait(10)
    assert 20 <= len(received) < CASES
    again, address = serve_process(store_env, "--imports", "tests.server.custom_checks")
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            runs = rpb_grpc.RunServiceStub(channel)

            async def incomplete() -> rpb.Run | None:
                run = (await runs.GetRun(rpb.GetRunRequest(run_id=run_id))).run
                return run if run.status == rpb.RUN_STATUS_INCOMPLETE else None

            run = await wait_until_async(incomplete, "the dead server's run is incomplete")
            assert not run.HasField("summary")
            stored: dict[str, bytes] = {}
            token = ""
            while True:
                page = await runs.ListRunResults(
                    rpb.ListRunResultsRequest(run_id=run_id, page_size=100, page_token=token)
                )
                stored.update(
                    (r.result.sample_id, r.result.SerializeToString()) for r in page.results
                )
                token = page.next_page_token
                if not token:
                    break
            assert run.results == len(stored)
            for r in received:
                assert stored.get(r.sample_id) == r.SerializeToString(), r.sample_id
    finally:
        stop_process(again)
