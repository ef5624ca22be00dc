"""The observation queue on each engine: the embedded SQLite file and a real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from scorewire.judge.redis_url import parse_redis_url, redis_client
from scorewire.observe.queue import ObservationQueue, SqliteQueue
from scorewire.observe.redis_queue import RedisQueue

from tests.support.redis import redis_server

__all__ = ["redis_server"]

QueueOpener = Callable[..., Awaitable[ObservationQueue]]


@pytest.fixture(params=["sqlite", "redis"])
async def open_queue(request, tmp_path) -> AsyncIterator[QueueOpener]:
    """Opens (and starts) a queue of this test's engine; each one is closed at the end."""
    opened: list[ObservationQueue] = []
    url = request.getfixturevalue("redis_server").url if request.param == "redis" else ""

    async def opener(
        *,
        max_depth: int = 100,
        max_per_tenant: int | None = None,
        lease_s: float = 300.0,
        dedupe_s: float = 900.0,
    ) -> ObservationQueue:
        queue: ObservationQueue
        if url:
            client = redis_client(
                parse_redis_url(url),
                tls_ca=None,
                timeout_s=5.0,
                pool_size=4,
                decode_responses=False,
            )
            queue = RedisQueue(
                client,
                url,
                max_depth=max_depth,
                max_per_tenant=max_per_tenant,
                lease_s=lease_s,
                dedupe_s=dedupe_s,
            )
        else:
            queue = SqliteQueue(
                tmp_path / "observe.db",
                max_depth=max_depth,
                max_per_tenant=max_per_tenant,
                lease_s=lease_s,
                dedupe_s=dedupe_s,
            )
        await queue.start()
        opened.append(queue)
        return queue

    yield opener
    for queue in opened:
        await queue.close()
