"""Which queue and which rules the settings name, and what happens when Redis is down."""

from __future__ import annotations

import contextlib
from pathlib import Path

import grpc
import pytest
from scorewire.core.errors import SpecError
from scorewire.observe.opening import open_queue, rules_from_settings
from scorewire.observe.queue import QueueUnavailable, SqliteQueue
from scorewire.observe.redis_queue import RedisQueue
from scorewire.settings import Settings
from scorewire.v1 import observe_pb2 as opb

from tests.observe.servers import observation, observe_server
from tests.support.redis import RedisServer


def test_with_nothing_external_the_queue_is_a_file_in_the_state_directory(tmp_path: Path) -> None:
    # make serve keeps working: no URL, no Redis cache -> observe.db under state_dir
    queue = open_queue(Settings(state_dir=str(tmp_path)))
    assert isinstance(queue, SqliteQueue) and queue.path == tmp_path / "observe.db"


def test_only_the_queue_url_puts_the_queue_in_redis(tmp_path: Path) -> None:
    # a cache's Redis may evict (compose runs allkeys-lru): never the queue's by default;
    # the queue URL's description carries no credentials
    cached = open_queue(Settings(state_dir=str(tmp_path), cache_url="redis://127.0.0.1:1/2"))
    assert isinstance(cached, SqliteQueue)
    queue = open_queue(
        Settings(cache_url="redis://127.0.0.1:1/2", observe_queue_url="redis://u:pw@h:2/3")
    )
    assert isinstance(queue, RedisQueue)
    assert queue.description == "redis:redis://h:2/3"


def test_the_rules_file_is_read_from_the_state_directory(tmp_path: Path) -> None:
    # a relative path is under state_dir; a bad rule is a SpecError naming its field
    (tmp_path / "rules.yaml").write_text("rules:\n  - {name: a, checks: [{type: nope}]}\n")
    with pytest.raises(SpecError) as err:
        rules_from_settings(Settings(state_dir=str(tmp_path), observe_rules_file="rules.yaml"))
    assert [v.field for v in err.value.violations] == ["rules[0].checks[0].type"]
    assert rules_from_settings(Settings(state_dir=str(tmp_path))) == []


async def test_observe_is_unavailable_while_redis_is_down_never_internal(
    redis_server: RedisServer,
) -> None:
    # the caller learns it must retry; once Redis is back the same batch is queued
    queue = open_queue(Settings(observe_queue_url=redis_server.url))
    request = opb.ObserveRequest(observations=[observation("Paris")])
    async with observe_server(queue, consume=False) as srv:
        redis_server.stop()
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.observe.Observe(request)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "redis://127.0.0.1" in err.value.details()
        redis_server.start()
        answer = await srv.observe.Observe(request)
    assert answer.acks[0].status == opb.OBSERVATION_STATUS_QUEUED


async def test_a_redis_that_lost_the_group_gets_it_back(redis_server: RedisServer) -> None:
    # a Redis restarted without persistence: the consumer group is created again
    queue = open_queue(Settings(observe_queue_url=redis_server.url))
    await queue.start()
    try:
        redis_server.stop()
        redis_server.start()
        with contextlib.suppress(QueueUnavailable):
            await queue.depth()  # the pool's connection to the Redis that stopped fails once
        assert await queue.put([("a", b"1")]) == [True]
        with pytest.raises(QueueUnavailable):
            await queue.take(10)  # NOGROUP, once
        assert [d.id for d in await queue.take(10)] == ["a"]
    finally:
        await queue.close()


def test_the_lease_is_the_setting_on_every_engine(tmp_path: Path) -> None:
    # how long a dead consumer's batch stays hidden is observe_lease_s, whichever engine
    s = {"state_dir": str(tmp_path), "observe_lease_s": 120.0}
    assert open_queue(Settings(**s))._lease_s == 120.0  # type: ignore[attr-defined,arg-type]
    redis = open_queue(Settings(**s, observe_queue_url="redis://127.0.0.1:1/3"))  # type: ignore[arg-type]
    assert redis._lease_ms == 120_000  # type: ignore[attr-defined]
    pg = open_queue(Settings(**s, observe_queue_url="postgresql://u@127.0.0.1:1/db"))  # type: ignore[arg-type]
    assert pg._lease_s == 120.0  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="observe_lease_s"):
        Settings(observe_lease_s=30)  # under the longest settle delay
