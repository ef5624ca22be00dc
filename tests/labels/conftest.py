"""Label tests: a real server with the LabelService, a real PostgreSQL, a real terminal."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import grpc
import pytest
from scorewire.labels.label_model import Label, LabelStore, output_hash
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2_grpc, scoring_pb2_grpc

from tests.support.postgres import PostgresCluster, pg_cluster, pg_url

T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)


def label(
    sample_id: str = "s1",
    text: str = "Paris",
    passed: bool = True,
    labeller: str = "ana",
    *,
    check: str = "default",
    at: int = 0,
    note: str = "",
) -> Label:
    """A label of `text` for `sample_id`, made `at` seconds after T0."""
    return Label(
        sample_id=sample_id,
        output_hash=output_hash(text),
        passed=passed,
        labeller=labeller,
        created_at=T0.replace(second=at % 60, minute=at // 60),
        check=check,
        note=note,
    )


# ---- a real server ---------------------------------------------------------------------------


@dataclass
class LabelServer:
    """A scorewire server with a label store, and stubs of both services."""

    channel: grpc.aio.Channel
    scoring: scoring_pb2_grpc.ScoringServiceStub
    labels: labels_pb2_grpc.LabelServiceStub
    address: str
    stop: Callable[[], Awaitable[None]]


async def start_label_server(
    store: LabelStore, *, credentials: grpc.ChannelCredentials | None = None, **overrides: object
) -> LabelServer:
    """The server of `create_server(settings, labels=store)` on a free port.

    `overrides` are settings (auth tokens, TLS files); with `credentials` the channel
    speaks TLS to `localhost` (the test certificate's name).
    """
    settings = Settings(host="127.0.0.1", port=0, metrics_enabled=False, **overrides)
    running, port = await create_server(settings, labels=store)
    if credentials is None:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    else:
        channel = grpc.aio.secure_channel(f"localhost:{port}", credentials)
    return LabelServer(
        channel,
        scoring_pb2_grpc.ScoringServiceStub(channel),
        labels_pb2_grpc.LabelServiceStub(channel),
        f"127.0.0.1:{port}",
        lambda: running.stop(0),
    )


@pytest.fixture
async def sqlite_store(tmp_path) -> AsyncIterator[SqliteLabelStore]:
    store = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def label_server(sqlite_store) -> AsyncIterator[LabelServer]:
    srv = await start_label_server(sqlite_store)
    try:
        yield srv
    finally:
        await srv.channel.close()
        await srv.stop()


# ---- a real PostgreSQL (the cluster lives in tests/support/postgres.py) --------------------

__all__ = ["PostgresCluster", "pg_cluster", "pg_url"]
