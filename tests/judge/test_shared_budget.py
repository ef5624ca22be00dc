"""Shared budgets in a real Redis, in process: the ledger's rules one by one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from scorewire.judge import BudgetUnavailable
from scorewire.judge.redis_url import parse_redis_url, redis_client
from scorewire.judge.shared import Ledger, SharedBudget
from scorewire.judge.stats import JudgeStats

from tests.support.redis import RedisServer, redis_server  # noqa: F401 - fixture


@pytest.fixture
async def ledger(redis_server: RedisServer) -> AsyncIterator[Ledger]:  # noqa: F811
    target = parse_redis_url(redis_server.url)
    client = redis_client(target, tls_ca=None, timeout_s=0.5, pool_size=8)
    led = Ledger(client, stats=JudgeStats(), description=target.describe(), poll_s=0.01)
    yield led
    await led.aclose()


def _pair(ledger: Ledger, limit: float, **kw: float) -> tuple[SharedBudget, SharedBudget]:
    """The same budget as two processes see it."""
    return SharedBudget(ledger, "t", limit, **kw), SharedBudget(ledger, "t", limit, **kw)


async def _settled(ledger: Ledger) -> None:
    await asyncio.gather(*ledger._tasks)


async def test_two_holders_of_one_budget_never_hold_more_than_the_limit(ledger: Ledger) -> None:
    # Three ceilings of $0.4 against $1: two start, the third waits for a settle.
    a, b = _pair(ledger, 1.0)
    r1, r2 = await a.reserve(0.4), await b.reserve(0.4)
    assert r1 is not None and r2 is not None
    third = asyncio.create_task(a.reserve(0.4))
    await asyncio.sleep(0.1)
    assert not third.done()  # fits only once a hold settles
    b.settle(r2, 0.1)
    r3 = await asyncio.wait_for(third, 5)
    assert r3 is not None


async def test_a_waiter_tries_again_as_soon_as_a_hold_of_its_process_settles(
    ledger: Ledger,
) -> None:
    # With polls 30 s apart, the waiting reservation is held once its own process's hold
    # leaves Redis, not at the next poll (it used to sleep the poll out, up to 0.5 s a
    # turn with the default poll, while the ceiling it waited for was already free).
    ledger.poll_s = 30.0
    a = SharedBudget(ledger, "w", 1.0)
    first = await a.reserve(0.8)
    assert first is not None
    waiting = asyncio.create_task(a.reserve(0.5))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    a.settle(first, 0.1)
    assert await asyncio.wait_for(waiting, 10) is not None


async def test_waiters_of_one_process_are_served_in_order(ledger: Ledger) -> None:
    # A small ceiling that would fit at once queues behind a large one that came first
    # (it used to overtake it); each is held as soon as a settle frees enough.
    ledger.poll_s = 30.0
    a = SharedBudget(ledger, "o", 1.0)
    first = await a.reserve(0.6)
    assert first is not None
    large = asyncio.create_task(a.reserve(0.9))
    await asyncio.sleep(0.1)
    small = asyncio.create_task(a.reserve(0.3))
    await asyncio.sleep(0.1)
    assert not large.done() and not small.done()
    a.settle(first, 0.05)
    held = await asyncio.wait_for(large, 10)
    assert held is not None and not small.done()
    a.settle(held, 0.05)
    assert await asyncio.wait_for(small, 10) is not None


async def test_a_waiter_refused_meanwhile_lets_the_next_try(ledger: Ledger) -> None:
    # The first waiter no longer fits once the call in flight spends most of the budget:
    # refused, and the next waiter of the process is held right after.
    ledger.poll_s = 30.0
    a = SharedBudget(ledger, "r", 1.0)
    first = await a.reserve(0.5)
    assert first is not None
    large = asyncio.create_task(a.reserve(0.6))
    await asyncio.sleep(0.1)
    small = asyncio.create_task(a.reserve(0.3))
    await asyncio.sleep(0.1)
    a.settle(first, 0.5)
    assert await asyncio.wait_for(large, 10) is None
    assert await asyncio.wait_for(small, 10) is not None


async def test_a_ceiling_that_does_not_fit_beside_the_spent_is_refused(ledger: Ledger) -> None:
    a, b = _pair(ledger, 1.0)
    r = await a.reserve(0.5)
    assert r is not None
    a.settle(r, 0.7)
    await _settled(ledger)
    assert await b.reserve(0.4) is None  # 0.7 + 0.4 > 1 on the other "process"
    assert b.remaining_usd() == pytest.approx(0.3)


async def test_a_hold_of_a_dead_process_lapses(ledger: Ledger) -> None:
    # A holder that never settles keeps its money only until the hold expires.
    ledger.hold_ttl_s = 0.2
    a, b = _pair(ledger, 1.0)
    assert await a.reserve(0.9) is not None  # never settled: the process "died"
    r = await asyncio.wait_for(b.reserve(0.5), 5)
    assert r is not None


async def test_periods_start_afresh_on_the_epoch_grid(ledger: Ledger) -> None:
    now = [1000.0]
    a = SharedBudget(ledger, "p", 1.0, period_s=60, clock=lambda: now[0])
    r = await a.reserve(0.9)
    assert r is not None
    a.settle(r, 0.9)
    await _settled(ledger)
    assert await a.reserve(0.5) is None
    now[0] = 1020.0  # the next window (1020 // 60 = 17, was 16)
    assert await a.reserve(0.5) is not None


async def test_redis_down_raises_unless_failing_open(redis_server: RedisServer) -> None:  # noqa: F811
    target = parse_redis_url(redis_server.url)
    client = redis_client(target, tls_ca=None, timeout_s=0.3, pool_size=4)
    led = Ledger(client, stats=JudgeStats(), description="x", timeout_s=0.3)
    redis_server.stop()
    try:
        with pytest.raises(BudgetUnavailable):
            await SharedBudget(led, "d", 1.0).reserve(0.1)
        assert led.stats.budget_unavailable == 1
        led.fail_open = True
        held = SharedBudget(led, "d", 0.15)
        r = await held.reserve(0.1)
        assert r is not None and r.shared_id is None  # held in this process
        held.settle(r, 0.1)
        assert await held.reserve(0.1) is None  # ... and still limited there
    finally:
        await led.aclose()


async def test_holds_a_frozen_redis_makes_late_are_taken_back(
    redis_server: RedisServer,  # noqa: F811
) -> None:
    # Reserves sent to a frozen Redis time out, then run when it resumes: their holds
    # (three of four tenths) are nobody's. Before, they held the money for the hold TTL
    # (900 s) and a reserve after the outage waited on them; they are taken back once
    # Redis answers.
    target = parse_redis_url(redis_server.url)
    client = redis_client(target, tls_ca=None, timeout_s=0.3, pool_size=4)
    led = Ledger(client, stats=JudgeStats(), description="x", timeout_s=0.3, poll_s=0.01)
    budget = SharedBudget(led, "late", 0.4)
    try:
        warm = await asyncio.gather(*(budget.reserve(0.0) for _ in range(3)))  # 3 connections
        for r in warm:
            budget.settle(r, 0.0)
        await _settled(led)
        with redis_server.frozen():
            for failed in await asyncio.gather(
                *(budget.reserve(0.1) for _ in range(3)), return_exceptions=True
            ):
                assert isinstance(failed, BudgetUnavailable)
        held = await asyncio.wait_for(budget.reserve(0.4), 10)  # all of it: no hold is left
        assert held is not None
    finally:
        await led.aclose()


@pytest.mark.parametrize(
    ("url", "user", "password", "tls", "db"),
    [
        ("redis://app:pw@h:6380/2", "app", "pw", False, 2),
        ("redis://:pw@h", None, "pw", False, 0),
        ("rediss://u%40x:p%3A@h/1", "u@x", "p:", True, 1),
    ],
)
def test_redis_urls_keep_the_acl_user(
    url: str, user: str | None, password: str, tls: bool, db: int
) -> None:
    target = parse_redis_url(url)
    assert (target.username, target.password, target.tls, target.db) == (user, password, tls, db)
    assert password not in target.describe()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+sentinel://h:26379/mymaster", "Sentinel and Cluster URLs are not supported"),
        ("http://h", "must start with redis:// or rediss://"),
        ("redis://h/zero", "must be a number"),
    ],
)
def test_unsupported_redis_urls_are_refused_saying_why(url: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_redis_url(url)
