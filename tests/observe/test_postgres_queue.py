"""The PostgreSQL queue beyond the promises every queue keeps (`test_queue.py`): how the
settings choose it, a database that crashes, stops or hangs.

Its own module, so that stopping PostgreSQL stops only this module's cluster.
"""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from scorewire.core.errors import StartupError
from scorewire.observe.opening import open_queue
from scorewire.observe.postgres_queue import PostgresQueue
from scorewire.observe.queue import SqliteQueue
from scorewire.settings import Settings
from scorewire.v1 import observe_pb2 as opb

from tests.observe.servers import observation, observe_server
from tests.support.postgres import PostgresCluster
from tests.support.wait import wait_until_async


def test_a_postgresql_queue_url_puts_the_queue_in_postgresql(tmp_path: Path) -> None:
    # the scheme picks the engine; the description carries no credentials
    for url in ("postgresql://u:pw@db:5433/obs", "postgres://u:pw@db:5433/obs"):
        queue = open_queue(Settings(observe_queue_url=url))
        assert isinstance(queue, PostgresQueue)
        assert queue.description.endswith("://db:5433/obs") and "pw" not in queue.description


def test_the_database_url_alone_keeps_the_queue_in_its_file(tmp_path: Path) -> None:
    # an upgrade that set database_url for the stores must not strand observe.db's queue
    settings = Settings(state_dir=str(tmp_path), database_url="postgresql://u:pw@db/x")
    assert isinstance(open_queue(settings), SqliteQueue)


def test_a_queue_url_of_another_engine_stops_the_server_naming_the_setting() -> None:
    # start-up fails with the setting and the schemes it takes, not later at a call
    with pytest.raises(StartupError, match="SCOREWIRE_OBSERVE_QUEUE_URL must start with"):
        open_queue(Settings(observe_queue_url="mysql://db/x"))


async def test_an_acknowledged_batch_survives_the_database_crashing(
    pg_cluster: PostgresCluster, pg_url: str
) -> None:
    # acknowledged means committed: an immediate stop (no checkpoint) replays it from the WAL
    queue = PostgresQueue(pg_url, max_depth=100, timeout_s=5.0)
    try:
        assert await queue.put([("a", b"1"), ("b", b"2")], ["t1", "t2"]) == [True, True]
    finally:
        await queue.close()
    pg_cluster.stop("immediate")
    pg_cluster.start()
    again = PostgresQueue(pg_url, max_depth=100, timeout_s=5.0)
    try:
        await again.start()
        assert await again.depth() == 2
        taken = [(d.id, d.payload, d.tenant) for d in await again.take(10)]
        assert taken == [("a", b"1", "t1"), ("b", b"2", "t2")]
    finally:
        await again.close()


async def test_observe_is_unavailable_while_postgresql_is_down_never_internal(
    pg_cluster: PostgresCluster, pg_url: str
) -> None:
    # the caller learns it must retry, the database named without credentials; once the
    # database is back the same batch is queued, without restarting the server
    queue = PostgresQueue(pg_url, max_depth=100, timeout_s=2.0)
    request = opb.ObserveRequest(observations=[observation("Paris", oid="p1")])
    async with observe_server(queue, consume=False) as srv:
        pg_cluster.stop("immediate")
        try:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await srv.observe.Observe(request)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "postgresql://127.0.0.1:" in (err.value.details() or "")
        finally:
            pg_cluster.start()

        async def queued() -> bool:
            try:
                answer = await srv.observe.Observe(request)
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.UNAVAILABLE, err
                return False
            return answer.acks[0].status == opb.OBSERVATION_STATUS_QUEUED

        await wait_until_async(queued, "the batch queued once PostgreSQL is back", timeout_s=15)


async def test_a_hung_database_answers_unavailable_within_the_store_timeout(
    pg_cluster: PostgresCluster, pg_url: str
) -> None:
    # frozen (connections open, nothing answers): the caller waits store_timeout_s, not
    # for the kernel to give up on the connection
    queue = PostgresQueue(pg_url, max_depth=100, timeout_s=1.0)
    request = opb.ObserveRequest(observations=[observation("Paris", oid="p1")])
    async with observe_server(queue, consume=False) as srv:
        await srv.observe.Observe(request)  # the pool holds a connection
        with pg_cluster.frozen():
            started = time.monotonic()
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await srv.observe.Observe(request, timeout=30)
            took = time.monotonic() - started
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "did not answer within 1 s" in (err.value.details() or "")
        assert took < 5.0, took
