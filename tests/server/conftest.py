"""A real scorewire server on an ephemeral port, called through the generated stubs."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
import pytest
from scorewire.server.app import Running, create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2_grpc

import tests.server.custom_checks  # noqa: F401 - registers test.slow and test.echo_len


@dataclass
class Server:
    running: Running
    channel: grpc.aio.Channel
    stub: scoring_pb2_grpc.ScoringServiceStub
    address: str


SLOW_MOMENT_TIMEOUTS = {"cache_timeout_s": 10.0, "budget_timeout_s": 10.0}
"""Redis timeouts for tests: a slow moment on a busy machine (two test workers on two
cores) must not bypass the cache or refuse a reservation; the defaults (0.25 s, 0.5 s) are
for production, and the tests about timeouts set their own."""


async def start_server(**overrides: object) -> Server:
    settings = Settings(
        host="127.0.0.1", port=0, metrics_enabled=False, **{**SLOW_MOMENT_TIMEOUTS, **overrides}
    )
    running, port = await create_server(settings)
    address = f"127.0.0.1:{port}"
    channel = grpc.aio.insecure_channel(address)
    return Server(running, channel, scoring_pb2_grpc.ScoringServiceStub(channel), address)


@asynccontextmanager
async def serving(**overrides: object) -> AsyncIterator[Server]:
    """`start_server(**overrides)`, stopped (channel closed first) when the block ends."""
    srv = await start_server(**overrides)
    try:
        yield srv
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    async with serving() as srv:
        yield srv
