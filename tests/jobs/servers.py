"""A real server with evaluation jobs on, called through the generated stubs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from scorewire.jobs import open_job_store
from scorewire.runs import open_run_store
from scorewire.server.app import Running, create_server
from scorewire.settings import Settings
from scorewire.v1 import jobs_pb2 as jpb
from scorewire.v1 import jobs_pb2_grpc, runs_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb


@dataclass
class JobServer:
    running: Running
    channel: grpc.aio.Channel
    jobs: jobs_pb2_grpc.JobServiceStub
    runs: runs_pb2_grpc.RunServiceStub
    address: str


@asynccontextmanager
async def job_server(
    state: Path, *, database_url: str = "", judge: Any = None, **settings: Any
) -> AsyncIterator[JobServer]:
    """A server on a free port with its job and run stores in `state` (SQLite), or in
    the PostgreSQL database at `database_url`, opened as `scorewire serve` opens them."""
    base: dict[str, Any] = {"jobs_poll_s": 0.05, "jobs_chunk_cases": 4}
    s = Settings(
        host="127.0.0.1", port=0, metrics_enabled=False, state_dir=str(state),
        database_url=database_url or None, **{**base, **settings},
    )  # fmt: skip
    runs = await open_run_store(s)
    jobs = await open_job_store(s)
    judge = judge(s) if callable(judge) else judge  # a factory taking the settings
    running, port = await create_server(s, runs=runs, jobs=jobs, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield JobServer(
            running,
            channel,
            jobs_pb2_grpc.JobServiceStub(channel),
            runs_pb2_grpc.RunServiceStub(channel),
            f"127.0.0.1:{port}",
        )
    finally:
        await channel.close()
        await running.stop(0)


def case(i: int, text: str, **metadata: Any) -> pb.Case:
    """Case `i` with output `text`."""
    c = pb.Case()
    c.sample.id = f"s{i}"
    c.sample.input.string_value = "capital of France?"
    for k, v in metadata.items():
        c.sample.metadata[k] = v
    c.output.text = text
    return c


def requests(
    config: jpb.JobConfig, cases: Sequence[pb.Case], per_message: int = 3
) -> Iterator[jpb.CreateJobRequest]:
    """A CreateJob stream: the config (its count set), then the cases a few at a time."""
    if not config.case_count:
        config.case_count = len(cases)
    yield jpb.CreateJobRequest(config=config)
    for i in range(0, len(cases), per_message):
        yield jpb.CreateJobRequest(cases=jpb.JobCases(cases=cases[i : i + per_message]))


async def watch_to_end(
    stub: jobs_pb2_grpc.JobServiceStub, job_id: str, metadata: Any = None
) -> list[jpb.Job]:
    """Every job update WatchJob sends, until the job ends."""
    request = jpb.WatchJobRequest(job_id=job_id)
    return [m.job async for m in stub.WatchJob(request, metadata=metadata)]


async def sample_ids(
    runs: runs_pb2_grpc.RunServiceStub, run_id: str, metadata: Any = None
) -> list[str]:
    """The sample ids of every result the run holds, in recorded order."""
    from scorewire.v1 import runs_pb2 as rpb

    ids: list[str] = []
    token = ""
    while True:
        page = await runs.ListRunResults(
            rpb.ListRunResultsRequest(run_id=run_id, page_size=500, page_token=token),
            metadata=metadata,
        )
        ids.extend(r.result.sample_id for r in page.results)
        token = page.next_page_token
        if not token:
            return ids


def texts(items: Iterable[str]) -> list[pb.Case]:
    """Cases of these outputs, numbered."""
    return [case(i, t) for i, t in enumerate(items)]
