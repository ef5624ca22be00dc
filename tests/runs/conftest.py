"""Run store tests: a real server recording runs into SQLite or a real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import grpc
import pytest
from scorewire.runs import RunStore
from scorewire.runs.postgres import PostgresRunStore
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.app import Running, create_server
from scorewire.settings import Settings
from scorewire.v1 import runs_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.support.postgres import pg_cluster, pg_url

__all__ = ["pg_cluster", "pg_url"]

CHECKS = [
    pb.CheckSpec(name="has_paris", type="contains", params={"needles": ["Paris"]}),
    pb.CheckSpec(name="short", type="length", params={"max_chars": 20}),
]


def case(sample_id: str, text: str, question: str = "capital of France?") -> pb.Case:
    """A case whose input is `question` and whose output is `text`."""
    c = pb.Case(sample=pb.Sample(id=sample_id), output=pb.Output(text=text))
    c.sample.input.string_value = question
    return c


@dataclass
class RunServer:
    """A server with a run store, and stubs of the scoring and run services."""

    running: Running
    channel: grpc.aio.Channel
    scoring: scoring_pb2_grpc.ScoringServiceStub
    runs: runs_pb2_grpc.RunServiceStub
    address: str

    async def stop(self) -> None:
        await self.channel.close()
        await self.running.stop(0)


async def start_run_server(
    store: RunStore, *, credentials: grpc.ChannelCredentials | None = None, **overrides: object
) -> RunServer:
    """`create_server(settings, runs=store)` on a free port (the server owns the store)."""
    settings = Settings(host="127.0.0.1", port=0, metrics_enabled=False, **overrides)
    running, port = await create_server(settings, runs=store)
    if credentials is None:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    else:
        channel = grpc.aio.secure_channel(f"localhost:{port}", credentials)
    return RunServer(
        running,
        channel,
        scoring_pb2_grpc.ScoringServiceStub(channel),
        runs_pb2_grpc.RunServiceStub(channel),
        f"127.0.0.1:{port}",
    )


StoreOpener = Callable[[], Awaitable[RunStore]]


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request, tmp_path) -> StoreOpener:
    """Opens the run store of this test (again, after a restart): SQLite or PostgreSQL."""
    if request.param == "sqlite":
        path = str(tmp_path / "runs.db")

        async def sqlite() -> RunStore:
            return await SqliteRunStore.open(path)

        return sqlite
    url = request.getfixturevalue("pg_url")

    async def postgres() -> RunStore:
        return await PostgresRunStore.open(url)

    return postgres


@pytest.fixture
async def run_server(open_store) -> AsyncIterator[RunServer]:
    srv = await start_run_server(await open_store())
    try:
        yield srv
    finally:
        await srv.stop()
