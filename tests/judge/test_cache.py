"""The verdict cache: free re-runs, free threshold changes, Redis shared and failing open."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from scorewire.core.context import CheckContext
from scorewire.core.model import Output, Sample
from scorewire.judge import JudgeService
from scorewire.judge.cache import VerdictCache
from scorewire.judge.cache_entry import NAMESPACE, CachedAnswer
from scorewire.judge.memory_store import MemoryStore
from scorewire.judge.redis_store import RedisStore
from scorewire.judge.stats import JudgeStats
from scorewire.settings import Settings

from tests.fakes.base import Reply
from tests.support.judge import OPENAI_KEY, compile_spec, judge_harness, level_reply
from tests.support.redis import RedisServer
from tests.support.wait import wait_until_async

ROOT = Path(__file__).resolve().parents[2]


def judge_check(**params: object):  # type: ignore[no-untyped-def]
    return compile_spec("judge", {"rubric": "Is it polite?", **params})


async def run_all(h, check, outputs: list[str]):  # type: ignore[no-untyped-def]
    return await asyncio.gather(
        *(h.run(check, Sample(str(i)), Output(t)) for i, t in enumerate(outputs))
    )


async def test_second_run_makes_no_calls_and_costs_nothing() -> None:
    async with judge_harness() as h:
        outputs = [f"answer {i}" for i in range(10)]
        first = await run_all(h, judge_check(), outputs)
        second = await run_all(h, judge_check(), outputs)
        assert h.openai.calls == 10
        assert sum(s.cost_usd for s in first) > 0 and not any(s.cached for s in first)
        assert all(s.cached and s.cost_usd == 0.0 and s.error is None for s in second)
        assert [s.value for s in second] == [s.value for s in first]
        assert h.service.stats.cache_hits == 10
        assert h.service.stats.saved_usd == pytest.approx(sum(s.cost_usd for s in first))


async def test_changing_threshold_or_pass_level_costs_nothing() -> None:
    # the cache holds the raw verdict (level 4 of 5), so new pass rules re-score it free
    async with judge_harness(openai_default=level_reply(4)) as h:
        base = await h.run(judge_check())
        strict = await h.run(judge_check(threshold=0.9))
        lenient = await h.run(judge_check(threshold=0.5))
        top_only = await h.run(judge_check(pass_level=5))
        assert h.openai.calls == 1
        assert base.passed and lenient.passed and not strict.passed and not top_only.passed
        assert all(s.cached and s.cost_usd == 0 for s in (strict, lenient, top_only))


async def test_a_different_model_or_max_tokens_is_a_different_verdict() -> None:
    async with judge_harness() as h:
        await h.run(judge_check())
        await h.run(judge_check(model="openai:gpt-4o"))
        await h.run(judge_check(max_tokens=64))
        assert h.openai.calls == 3


async def test_an_unparseable_cached_entry_is_a_miss() -> None:
    async with judge_harness() as h:
        await h.run(judge_check())
        store = h.service.cache._store
        for key in list(store._cache):
            await store.set(key, "garbage")
        score = await h.run(judge_check())
        assert score.error is None and not score.cached and h.openai.calls == 2


# --- the in-process store -------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_memory_entry_lives_exactly_its_ttl_and_its_miss_counts() -> None:
    clock = Clock()
    stats = JudgeStats()
    cache = VerdictCache(MemoryStore(clock), stats=stats, ttl_s=60, clock=clock)
    await cache.set("k", CachedAnswer("text", 1, 2, "t"))
    clock.now += 59.999
    assert await cache.get("k") == CachedAnswer("text", 1, 2, "t")
    clock.now += 0.001  # the ttl is up: gone, a miss like any other
    assert await cache.get("k") is None
    assert (stats.cache_hits, stats.cache_misses, stats.cache_bypasses) == (1, 1, 0)


async def test_a_memory_entry_without_ttl_never_expires() -> None:
    clock = Clock()
    for ttl in (None, 0):
        store = MemoryStore(clock)
        await store.set("k", "v", ttl)
        clock.now += 10**9
        assert await store.get("k") == "v"


async def test_a_memory_store_keeps_to_its_bound_and_evicts_the_least_recently_used() -> None:
    entry = MemoryStore._size("k0", "v" * 100)  # every key below is 2 characters long
    store = MemoryStore(max_bytes=3 * entry)
    for k in ("k0", "k1", "k2"):
        await store.set(k, "v" * 100)
    assert store.bytes == 3 * entry and store.evictions == 0
    assert await store.get("k0") == "v" * 100  # k0 read: k1 is now the oldest
    await store.set("k3", "v" * 100)
    assert store.evictions == 1 and await store.get("k1") is None
    assert [await store.get(k) for k in ("k0", "k2", "k3")] == ["v" * 100] * 3
    await store.set("k4", "v" * 250)  # larger: two entries go (k0 is the oldest now)
    assert store.evictions == 3 and store.bytes <= store.max_bytes
    assert await store.get("k0") is None and await store.get("k2") is None
    assert await store.get("k4") == "v" * 250


async def test_a_memory_store_rewrite_counts_once_and_an_oversized_value_is_not_kept() -> None:
    store = MemoryStore(max_bytes=1000)
    await store.set("k", "a" * 10)
    await store.set("k", "b" * 20)
    assert store.bytes == MemoryStore._size("k", "b" * 20) and await store.get("k") == "b" * 20
    await store.set("k", "c" * 1000)  # larger than the whole bound: dropped, nothing evicted
    assert await store.get("k") is None and store.bytes == 0 and store.evictions == 0
    nothing = MemoryStore(max_bytes=0)  # the setting's 0: keeps none
    await nothing.set("x", "y")
    assert await nothing.get("x") is None and nothing.bytes == 0


async def test_a_memory_store_evicts_from_the_owner_holding_the_most() -> None:
    entry = MemoryStore._size("k0", "v" * 100)
    store = MemoryStore(max_bytes=10 * entry)
    for i in range(3):
        await store.set(f"a{i}", "v" * 100, owner="a")
    for i in range(20):  # b floods: once it holds the most, it evicts its own oldest
        await store.set(f"b{chr(65 + i)}", "v" * 100, owner="b")
    assert store.held("a") == 3 * entry and store.held("b") == 7 * entry
    assert [await store.get(f"a{i}") for i in range(3)] == ["v" * 100] * 3
    assert store.evictions == 13 and store.bytes == 10 * entry
    # a writes while b holds more: b's least recently used goes, not a's own
    await store.set("a3", "v" * 100, owner="a")
    assert store.held("a") == 4 * entry and store.held("b") == 6 * entry
    await store.set("a4", "v" * 100, owner="a")
    assert store.held("a") == 5 * entry and store.held("b") == 5 * entry
    # at equal holdings the writer gives up its own least recently used first
    await store.get("a0")
    await store.set("a5", "v" * 100, owner="a")
    assert store.held("a") == 5 * entry and store.held("b") == 5 * entry
    assert await store.get("a1") is None and await store.get("a0") == "v" * 100


async def test_a_lone_owner_has_the_whole_bound_and_a_rewrite_changes_the_owner() -> None:
    entry = MemoryStore._size("k0", "v" * 100)
    store = MemoryStore(max_bytes=4 * entry)
    for i in range(4):
        await store.set(f"k{i}", "v" * 100, owner="a")
    assert store.held("a") == 4 * entry and store.evictions == 0
    await store.set("k0", "w" * 100, owner="b")  # another tenant paid for it again
    assert store.held("a") == 3 * entry and store.held("b") == entry
    assert await store.get("k0") == "w" * 100
    await store.set("k0", "x" * 100, owner="a")
    assert store.held("b") == 0 and store.held("a") == 4 * entry and len(store) == 4


async def test_the_memory_bound_is_the_cache_memory_bytes_setting() -> None:
    judge = JudgeService.from_settings(Settings(cache_memory_bytes=12345))
    try:
        assert judge.cache.store.max_bytes == 12345
    finally:
        await judge.aclose()


async def test_expired_memory_entries_nobody_reads_are_swept_as_the_store_grows() -> None:
    # no timer per entry: the sweep is what frees entries that are never read again
    clock = Clock()
    store = MemoryStore(clock)
    for i in range(1023):
        await store.set(f"old{i}", "v", 10)
    clock.now += 10
    await store.set("keep", "v", None)
    assert len(store._cache) == 1  # the 1,024th write swept the expired ones
    for i in range(1023):
        await store.set(f"new{i}", "v", 10)
    assert len(store._cache) == 1024  # swept again, nothing expired: next sweep at 2,048
    clock.now += 10
    await store.set("last", "v", 10)
    assert len(store._cache) == 1025  # expired but not swept yet; a read drops one
    assert await store.get("new0") is None and len(store._cache) == 1024
    assert await store.get("keep") == "v"


# --- Redis ----------------------------------------------------------------------------------


async def test_redis_cache_is_shared_by_independent_services(redis_server: RedisServer) -> None:
    async with judge_harness(cache_url=redis_server.url) as h:
        first = await h.run(judge_check())
        other = JudgeService.from_settings(
            Settings(
                openai_api_key=OPENAI_KEY,
                openai_base_url=h.openai.url,
                judge_model="openai:gpt-4o-mini",
                cache_url=redis_server.url,
            )
        )
        try:
            second = await h.run(judge_check(), ctx=CheckContext(judge=other))
        finally:
            await other.aclose()
        assert first.error is None and not first.cached
        assert second.error is None and second.cached and second.cost_usd == 0.0
        assert h.openai.calls == 1


async def test_redis_entries_expire_after_the_ttl_and_use_no_deprecated_command(
    redis_server: RedisServer,
) -> None:
    client = aioredis.from_url(redis_server.url)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            async with judge_harness(cache_url=redis_server.url, cache_ttl_s=60) as h:
                await h.run(judge_check())
        keys = await client.keys(NAMESPACE + "*")
        assert len(keys) == 1
        assert 0 < await client.pttl(keys[0]) <= 60_000
    finally:
        await client.aclose()


class RoundTrips:
    """The commands clients send Redis (commands run inside scripts left out), as seen by
    MONITOR, between `start` and `stop`."""

    def __init__(self, url: str) -> None:
        self._client = aioredis.from_url(url, decode_responses=True)
        self._seen: list[str] = []
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        started = asyncio.Event()

        async def watch() -> None:
            async with self._client.monitor() as m:
                started.set()
                while True:
                    info = await m.next_command()
                    if info["client_type"] != "lua":
                        self._seen.append(info["command"].split()[0].upper())

        self._task = asyncio.create_task(watch())
        await started.wait()
        await self._client.echo("start")
        await wait_until_async(lambda: "ECHO" in self._seen, "MONITOR to start")
        self._seen.clear()

    async def stop(self) -> list[str]:
        await self._client.echo("stop")
        await wait_until_async(lambda: "ECHO" in self._seen, "MONITOR to catch up")
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self._client.aclose()
        return self._seen[: self._seen.index("ECHO")]


async def test_a_miss_is_two_redis_round_trips_and_a_hit_one(redis_server: RedisServer) -> None:
    # cache read + lease in one script, verdict store + lease release in another
    client = aioredis.from_url(redis_server.url, decode_responses=True)
    try:
        async with judge_harness(cache_url=redis_server.url, cache_ttl_s=60) as h:
            await h.run(judge_check(), output=Output("warm-up"))  # loads the scripts
            trips = RoundTrips(redis_server.url)
            await trips.start()
            miss = await h.run(judge_check(), output=Output("new"))
            await wait_until_async(lambda: h.service.flying == 0, "the verdict stored")
            after_miss = await trips.stop()
            trips = RoundTrips(redis_server.url)
            await trips.start()
            hit = await h.run(judge_check(), output=Output("new"))
            after_hit = await trips.stop()
            stats = h.service.stats
        assert miss.error is None and not miss.cached and hit.cached and h.openai.calls == 2
        assert after_miss == ["EVALSHA", "EVALSHA"]
        assert after_hit == ["EVALSHA"]
        assert await client.keys("scorewire:lease:*") == []  # given back with the store
        keys = await client.keys(NAMESPACE + "*")
        ttls = [await client.pttl(k) for k in keys]
        assert len(keys) == 2 and all(0 < t <= 60_000 for t in ttls)
        assert (stats.cache_hits, stats.cache_misses, stats.lease_failures) == (1, 2, 0)
    finally:
        await client.aclose()


async def test_a_budget_redis_of_its_own_keeps_the_cache_and_leases_apart(
    redis_server: RedisServer,
) -> None:
    # budget_url set: leases live there, so cache and lease are separate round trips
    client = aioredis.from_url(redis_server.url, decode_responses=True)
    try:
        url = redis_server.url
        async with judge_harness(cache_url=url, budget_url=url) as h:
            await h.run(judge_check(), output=Output("warm-up"))
            trips = RoundTrips(url)
            await trips.start()
            score = await h.run(judge_check(), output=Output("new"))
            # The check has its verdict first; the store and the release follow it.
            await wait_until_async(lambda: h.service.flying == 0, "the verdict stored")
            commands = await trips.stop()
        assert score.error is None and h.openai.calls == 2
        assert commands == ["GET", "SET", "SET", "EVALSHA"]  # read, lease, store, release
        assert await client.keys("scorewire:lease:*") == []
    finally:
        await client.aclose()


async def test_an_unreadable_redis_entry_is_a_miss_that_still_takes_the_lease(
    redis_server: RedisServer,
) -> None:
    client = aioredis.from_url(redis_server.url, decode_responses=True)
    try:
        async with judge_harness(cache_url=redis_server.url) as h:
            await h.run(judge_check())
            [key] = await client.keys(NAMESPACE + "*")
            await client.set(key, "garbage")
            trips = RoundTrips(redis_server.url)
            await trips.start()
            score = await h.run(judge_check())
            await wait_until_async(lambda: h.service.flying == 0, "the verdict stored")
            commands = await trips.stop()
            stats = h.service.stats
        assert score.error is None and not score.cached and h.openai.calls == 2
        assert commands == ["EVALSHA", "SET", "EVALSHA"]  # read, lease apart, store+release
        assert CachedAnswer.loads(await client.get(key)) is not None
        assert await client.keys("scorewire:lease:*") == []
        assert stats.cache_misses == 2 and stats.lease_failures == 0
    finally:
        await client.aclose()


async def test_redis_stopped_mid_run_loses_no_score(redis_server: RedisServer) -> None:
    async with judge_harness(cache_url=redis_server.url, cache_backoff_s=0) as h:
        check = judge_check()
        before = await run_all(h, check, [f"a{i}" for i in range(10)])
        redis_server.stop()
        during = await run_all(h, check, [f"b{i}" for i in range(10)])
        assert all(s.error is None for s in before + during)
        assert h.service.stats.cache_bypasses >= 10
        assert h.openai.calls == 20
        redis_server.start()  # back, empty (no persistence): the cache works again
        again = await run_all(h, check, [f"b{i}" for i in range(10)])
        cached = await run_all(h, check, [f"b{i}" for i in range(10)])
        assert all(s.error is None for s in again) and h.openai.calls == 30
        assert all(s.cached for s in cached) and h.openai.calls == 30


async def test_redis_down_from_the_start_is_bypassed_with_backoff() -> None:
    # nothing listens on the port: scores still come, the cache is skipped and counted
    dead = RedisServer()  # never started
    async with judge_harness(cache_url=dead.url, cache_backoff_s=60) as h:
        scores = await run_all(h, judge_check(), [f"x{i}" for i in range(5)])
        assert all(s.error is None for s in scores)
        assert h.service.stats.cache_bypasses >= 5


@pytest.fixture
async def silent_redis() -> AsyncIterator[str]:
    """A TCP server that accepts connections and never answers (a hung Redis)."""
    held: list[asyncio.StreamWriter] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.read(-1)

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        for w in held:
            w.close()
        server.close()


async def test_a_hung_redis_times_out_quickly_and_is_bypassed(silent_redis: str) -> None:
    # Both Redis timeouts short, as in production: the client the cache shares with the
    # budgets has the longer one as its socket timeout, and loading the cache's scripts
    # (outside the 0.1 s per-operation timeout) waited out the harness's 10 s.
    async with judge_harness(
        cache_url=silent_redis, cache_timeout_s=0.1, budget_timeout_s=0.1
    ) as h:
        score = await h.run(judge_check())
        assert score.error is None and h.openai.calls == 1
        assert h.service.stats.cache_bypasses >= 1


def test_two_processes_sharing_redis_make_one_call(redis_server: RedisServer) -> None:
    async def scenario() -> tuple[list[dict[str, object]], int]:
        async with judge_harness() as h:
            env = {
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(ROOT / "service"), str(ROOT)]),
                "SCOREWIRE_OPENAI_API_KEY": OPENAI_KEY,
                "SCOREWIRE_OPENAI_BASE_URL": h.openai.url,
                "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
                "SCOREWIRE_CACHE_URL": redis_server.url,
            }
            results = []
            for _ in range(2):
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "tests.judge.judge_once", "Hello there",
                    cwd=ROOT, env=env, stdout=subprocess.PIPE,
                )  # fmt: skip
                out, _ = await proc.communicate()
                assert proc.returncode == 0
                results.append(json.loads(out.decode().strip().splitlines()[-1]))
            return results, h.openai.calls

    results, calls = asyncio.run(scenario())
    assert calls == 1
    assert results[0]["error"] is None and results[0]["cached"] is False
    assert results[1]["error"] is None and results[1]["cached"] is True
    assert results[1]["cost_usd"] == 0.0 and results[0]["value"] == results[1]["value"]


# --- Redis: each tenant within its bound ----------------------------------------------------


def _answer(tenant: str | None, text: str = "x" * 60) -> str:
    return CachedAnswer(text, 1, 1, tenant).dumps()


@pytest.fixture
async def text_redis(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    """A client of the test's Redis decoding replies as text, closed after the test."""
    client = aioredis.from_url(redis_server.url, decode_responses=True)
    yield client
    await client.aclose()


async def test_a_tenant_past_its_redis_bound_loses_its_own_oldest_verdicts(
    text_redis: aioredis.Redis,
) -> None:
    client = text_redis
    size = len(NAMESPACE + "a0") + len(_answer("a"))  # every entry here is this size
    store = RedisStore(client, owned=False, tenant_max_bytes=4 * size)
    for i in range(3):
        assert await store.set(f"{NAMESPACE}b{i}", _answer("b"), 60, "b") == 0
    evicted = [await store.set(f"{NAMESPACE}a{i}", _answer("a"), 60, "a") for i in range(10)]
    assert evicted == [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    # a holds its four most recent; b's three, stored first, are all still there
    held = [i for i in range(10) if await client.exists(f"{NAMESPACE}a{i}")]
    assert held == [6, 7, 8, 9]
    assert all([await client.exists(f"{NAMESPACE}b{i}") for i in range(3)])
    base = f"{NAMESPACE}tenant:a"
    assert int(await client.get(f"{base}:bytes")) == 4 * size
    assert await client.zcard(f"{base}:lru") == 4 and await client.hlen(f"{base}:sizes") == 4
    assert 0 < await client.pttl(f"{base}:lru") <= 60_000  # the books expire with them

    # a read is a use: the oldest, read, outlives the next one
    assert await store.get(f"{NAMESPACE}a6") is not None
    await store.set(f"{NAMESPACE}a10", _answer("a"), 60, "a")
    assert await client.exists(f"{NAMESPACE}a6") and not await client.exists(f"{NAMESPACE}a7")


async def test_a_verdict_another_tenant_rewrote_is_not_deleted_by_the_first(
    text_redis: aioredis.Redis,
) -> None:
    client = text_redis
    size = len(NAMESPACE + "k0") + len(_answer("a"))
    store = RedisStore(client, owned=False, tenant_max_bytes=2 * size)
    await store.set(f"{NAMESPACE}k0", _answer("a"), 60, "a")
    await store.set(f"{NAMESPACE}k0", _answer("b"), 60, "b")  # b paid for it again
    for i in range(1, 4):
        await store.set(f"{NAMESPACE}k{i}", _answer("a"), 60, "a")
    assert await client.get(f"{NAMESPACE}k0") == _answer("b")  # b's now: kept
    assert not await client.exists(f"{NAMESPACE}k1")  # a's own oldest went
    assert int(await client.get(f"{NAMESPACE}tenant:a:bytes")) == 2 * size


async def test_without_a_tenant_bound_or_a_tenant_redis_keeps_no_books(
    text_redis: aioredis.Redis,
) -> None:
    client = text_redis
    unbounded = RedisStore(client, owned=False)
    bounded = RedisStore(client, owned=False, tenant_max_bytes=1)
    for i in range(5):
        await unbounded.set(f"{NAMESPACE}u{i}", _answer("a"), None, "a")
        await bounded.set(f"{NAMESPACE}n{i}", _answer(None), None, None)
    assert len(await client.keys(NAMESPACE + "*")) == 10
    assert await client.keys(f"{NAMESPACE}tenant:*") == []
    assert await client.pttl(f"{NAMESPACE}u0") == -1  # no TTL asked: none set


async def test_one_store_takes_a_bounded_number_of_entries_off_a_tenants_books(
    text_redis: aioredis.Redis,
) -> None:
    # A tenant holds 40 verdicts; the operator lowers its bound to 2. One store does not
    # walk all 40 inside one script (which holds Redis for everyone): it takes 8 off, and
    # each later store 8 more, until the tenant is within its bound again.
    client = text_redis
    size = len(NAMESPACE + "a10") + len(_answer("a"))
    before = RedisStore(client, owned=False, tenant_max_bytes=100 * size)
    for i in range(10, 50):
        assert await before.set(f"{NAMESPACE}a{i}", _answer("a"), 60, "a") == 0
    lowered = RedisStore(client, owned=False, tenant_max_bytes=2 * size, evictions_per_store=8)
    evicted = [await lowered.set(f"{NAMESPACE}a{i}", _answer("a"), 60, "a") for i in range(50, 57)]
    # 41 held after the first store, 39 over: 8 a store (each store adds one), then the
    # last 4 over, then the usual one for one
    assert evicted == [8, 8, 8, 8, 8, 4, 1]
    held = [i for i in range(10, 57) if await client.exists(f"{NAMESPACE}a{i}")]
    assert held == [55, 56]  # the least recently used went first throughout
    base = f"{NAMESPACE}tenant:a"
    assert int(await client.get(f"{base}:bytes")) == 2 * size
    assert await client.zcard(f"{base}:lru") == 2 and await client.hlen(f"{base}:sizes") == 2


async def test_the_eviction_bound_is_a_setting_reaching_the_redis_store(
    redis_server: RedisServer,
) -> None:
    settings = Settings(
        cache_url=redis_server.url, cache_tenant_max_bytes=10, cache_tenant_evictions_per_store=3
    )
    service = JudgeService.from_settings(settings)
    try:
        store = service.cache._store
        assert isinstance(store, RedisStore)
        assert (store.tenant_max_bytes, store.evictions_per_store) == (10, 3)
    finally:
        await service.aclose()


async def test_a_check_has_its_verdict_before_the_store_and_a_repeat_joins_it(
    redis_server: RedisServer,
) -> None:
    # Redis holds writes (CLIENT PAUSE WRITE) while the call is upstream: the check is
    # answered anyway, before its verdict is stored, and the same question asked then
    # joins the flight instead of paying for a second call.
    client = aioredis.from_url(redis_server.url, decode_responses=True)
    try:
        async with judge_harness(cache_url=redis_server.url, cache_timeout_s=5) as h:
            await h.run(judge_check(), output=Output("warm-up"))  # loads the scripts
            h.openai.script(Reply(delay_s=0.2))
            first = asyncio.create_task(h.run(judge_check(), output=Output("asked twice")))
            await wait_until_async(lambda: h.openai.calls == 2, "the call upstream")
            await client.execute_command("CLIENT", "PAUSE", "3000", "WRITE")
            try:
                answered = await first
                stored = await client.keys(NAMESPACE + "*")
                again = await h.run(judge_check(), output=Output("asked twice"))
                still_storing = h.service.flying  # the repeat did not wait for the store
            finally:
                await client.execute_command("CLIENT", "UNPAUSE")
            await wait_until_async(lambda: h.service.flying == 0, "the verdict stored")
            assert answered.error is None and not answered.cached
            assert len(stored) == 1  # the warm-up's only: this verdict was not stored yet
            assert again.error is None and again.cached and h.openai.calls == 2
            assert still_storing == 1
            assert len(await client.keys(NAMESPACE + "*")) == 2
    finally:
        await client.aclose()
