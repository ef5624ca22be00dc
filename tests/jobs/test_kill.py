"""A server SIGKILLed mid-job: another on the same stores resumes it from its last
checkpoint and every case is recorded exactly once.

A real `scorewire serve` process takes a job of slow cases (`test.slow`, which appends
each case's sample id to a marks file as it starts), and is killed once it has recorded
a few chunks. A second server on the same state directory resumes the job once the dead
one's 2-second lease has lapsed: its run holds every case once, and only the chunk in
flight at the kill was started twice. Both with the embedded stores (SQLite files) and
with PostgreSQL (`SCOREWIRE_DATABASE_URL`), as replicas share them.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path

import grpc
import pytest
from scorewire.v1 import jobs_pb2 as jpb
from scorewire.v1 import jobs_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.jobs.servers import case, job_server, requests, sample_ids, watch_to_end
from tests.server.custom_checks import marks
from tests.support.servers import serve_process

COUNT = 60
CHUNK = 5


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    """Empty: the stores are SQLite files in the state directory; else PostgreSQL."""
    return "" if request.param == "sqlite" else str(request.getfixturevalue("pg_url"))


async def test_a_killed_server_s_job_is_resumed_and_every_case_recorded_once(
    tmp_path: Path, database_url: str
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    started = tmp_path / "marks"
    env = {
        "SCOREWIRE_DATABASE_URL": database_url,
        "SCOREWIRE_STATE_DIR": str(state),
        "SCOREWIRE_JOBS_CHUNK_CASES": str(CHUNK),
        "SCOREWIRE_JOBS_POLL_S": "0.05",
        "SCOREWIRE_JOBS_LEASE_S": "2",  # renewed every 0.7 s; lapses 2 s after the kill
    }
    proc, address = serve_process(env, "--imports", "tests.server.custom_checks")
    cases = [case(i, "Paris", sleep=0.1, mark=str(started)) for i in range(COUNT)]
    config = jpb.JobConfig(checks=[pb.CheckSpec(name="slow", type="test.slow")])
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = jobs_pb2_grpc.JobServiceStub(channel)
            job = (await stub.CreateJob(requests(config, cases))).job
            async for m in stub.WatchJob(jpb.WatchJobRequest(job_id=job.job_id)):
                if m.job.cases_done >= 3 * CHUNK:
                    break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    before = len(marks(started))
    assert before < COUNT  # killed mid-job
    async with job_server(
        state,
        database_url=database_url,
        jobs_chunk_cases=CHUNK,
        jobs_lease_s=0.5,
        imports=["tests.server.custom_checks"],
    ) as srv:
        end = (await watch_to_end(srv.jobs, job.job_id))[-1]
        assert end.state == jpb.JOB_STATE_SUCCEEDED and end.cases_done == COUNT
        ids = await sample_ids(srv.runs, end.run_id)
    recorded = Counter(ids)
    assert set(recorded) == {f"s{i}" for i in range(COUNT)}  # none lost
    assert [i for i, n in recorded.items() if n > 1] == []  # none recorded twice
    assert end.summary.cases == COUNT and end.aggregations[0].count == COUNT
    # Scored again: at most the chunk in flight when the server died.
    twice = [i for i, n in Counter(marks(started)).items() if n > 1]
    assert len(twice) <= CHUNK, twice
