"""The observation queue on each engine: the embedded SQLite file, a real Redis and a real
PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from scorewire.judge.redis_url import parse_redis_url, redis_client
from scorewire.observe.postgres_queue import PostgresQueue
from scorewire.observe.queue import ObservationQueue, SqliteQueue
from scorewire.observe.redis_queue import RedisQueue

from tests.support.postgres import pg_cluster, pg_url
from tests.support.redis import redis_server

__all__ = ["pg_cluster", "pg_url", "redis_server"]

QueueOpener = Callable[..., Awaitable[ObservationQueue]]


@dataclass(frozen=True)
class QueueEngine:
    """Where one test's queues are: a SQLite file in the test's directory, or a URL."""

    name: str
    """`sqlite`, `redis` or `postgres`."""
    url: str
    """The Redis or PostgreSQL URL (empty for SQLite)."""
    path: Path
    """The SQLite file (`observe.db` in the test's directory, the server's name for it)."""

    def env(self) -> dict[str, str]:
        """What a `scorewire serve` whose state directory is the test's needs to use it."""
        return {"SCOREWIRE_OBSERVE_QUEUE_URL": self.url} if self.url else {}

    def open(
        self,
        *,
        max_depth: int = 100,
        max_per_tenant: int | None = None,
        lease_s: float = 300.0,
        dedupe_s: float = 900.0,
    ) -> ObservationQueue:
        """A queue on this engine (not started)."""
        bounds = {
            "max_depth": max_depth,
            "max_per_tenant": max_per_tenant,
            "lease_s": lease_s,
            "dedupe_s": dedupe_s,
        }
        if self.name == "redis":
            client = redis_client(
                parse_redis_url(self.url),
                tls_ca=None,
                timeout_s=5.0,
                pool_size=4,
                decode_responses=False,
            )
            return RedisQueue(client, self.url, **bounds)
        if self.name == "postgres":
            return PostgresQueue(self.url, timeout_s=5.0, **bounds)
        return SqliteQueue(self.path, **bounds)


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def queue_engine(request, tmp_path: Path) -> QueueEngine:
    """This test's engine: each test using it runs once per engine."""
    url = ""
    if request.param == "redis":
        url = request.getfixturevalue("redis_server").url
    elif request.param == "postgres":
        url = request.getfixturevalue("pg_url")
    return QueueEngine(request.param, url, tmp_path / "observe.db")


@pytest.fixture
async def open_queue(queue_engine: QueueEngine) -> AsyncIterator[QueueOpener]:
    """Opens (and starts) a queue of this test's engine, every one of a test on the same
    file, Redis or database; each one is closed at the end."""
    opened: list[ObservationQueue] = []

    async def opener(**bounds: float | None) -> ObservationQueue:
        queue = queue_engine.open(**bounds)
        await queue.start()
        opened.append(queue)
        return queue

    yield opener
    for queue in opened:
        await queue.close()
