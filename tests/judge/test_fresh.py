"""Asking the judges again: a request with `fresh_since` reads no verdict older than it.

Checks run through the engine against the OpenAI stand-in (the real SDK), with the
verdict cache on. The server's option (`judge_cache: JUDGE_CACHE_REFRESH`) is tested
through a real server in tests/server/test_fresh_judges.py; these pin the rules the
judge service keeps whatever asks.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.judge import Budget, JudgeService
from scorewire.judge.cache_entry import CachedAnswer
from scorewire.settings import Settings

from tests.fakes.base import Reply
from tests.support.judge import OPENAI_KEY, Harness, compile_spec, judge_harness, level_reply
from tests.support.redis import RedisServer

COST = (100 * 0.15 + 20 * 0.60) / 1e6  # the stand-in's default usage at gpt-4o-mini's price


def check(**params: object):  # type: ignore[no-untyped-def]
    return compile_spec("judge", {"rubric": "Is it polite?", **params})


def fresh(h: Harness, **kw: object):  # type: ignore[no-untyped-def]
    """A context of a request that began now and asked the judges again."""
    ctx = h.ctx(**kw)  # type: ignore[arg-type]
    ctx.fresh_since = time.time()
    return ctx


async def test_an_older_cached_verdict_is_not_read_and_the_fresh_one_replaces_it() -> None:
    async with judge_harness(openai_default=level_reply(5)) as h:
        first = await h.run(check())
        h.openai.default = level_reply(1)  # the judge changed its mind
        cached = await h.run(check())
        again = await h.run(check(), ctx=fresh(h))
        later = await h.run(check())  # a normal request reads what the fresh call left
        stats = h.service.stats
    assert (first.value, cached.value, cached.cached) == (1.0, 1.0, True)
    assert (again.value, again.cached, again.cost_usd) == (0.0, False, pytest.approx(COST))
    assert (later.value, later.cached) == (0.0, True)
    assert h.openai.calls == 2
    assert (stats.cache_refreshes, stats.cache_hits) == (1, 2)


async def test_a_question_asked_twice_in_one_fresh_request_is_asked_once() -> None:
    # Verdicts given since the request began are fresh enough for it.
    async with judge_harness() as h:
        await h.run(check())
        ctx = fresh(h)
        a = await h.run(check(), ctx=ctx)
        b = await h.run(check(), ctx=ctx)
    assert (a.cached, b.cached) == (False, True) and h.openai.calls == 2


async def test_identical_fresh_questions_in_flight_share_one_call() -> None:
    async with judge_harness(openai_default=level_reply(4, delay_s=0.1)) as h:
        await h.run(check())
        ctx = fresh(h)
        scores = await asyncio.gather(*(h.run(check(), ctx=ctx) for _ in range(3)))
    assert h.openai.calls == 2
    assert sorted(s.cached for s in scores) == [False, True, True]


async def test_a_fresh_question_joining_a_flight_that_read_an_older_verdict_asks_again() -> None:
    # The plain request's flight answers from the cache; the fresh one, asked at the same
    # moment, joined it and must not take that older verdict.
    async with judge_harness(openai_default=level_reply(5)) as h:
        await h.run(check())
        h.openai.default = level_reply(1)
        plain, again = await asyncio.gather(h.run(check()), h.run(check(), ctx=fresh(h)))
    assert (plain.value, plain.cached) == (1.0, True)
    assert (again.value, again.cached) == (0.0, False)
    assert h.openai.calls == 2


async def test_a_fresh_call_is_charged_to_the_budget_and_refused_when_it_cannot_pay() -> None:
    # A budget that cannot pay gets an error, never the older cached verdict instead.
    async with judge_harness() as h:
        await h.run(check())
        paid = Budget(1.0)
        ok = await h.run(check(), ctx=fresh(h, budget=paid))
        await asyncio.sleep(0.01)  # a later request: the verdict above is older than it
        poor = await h.run(check(), ctx=fresh(h, budget=Budget(1e-9)))
    assert paid.spent_usd == pytest.approx(COST) and ok.cost_usd == pytest.approx(COST)
    assert poor.error is not None and poor.error.code == ErrorCode.BUDGET_EXHAUSTED
    assert h.openai.calls == 2


async def test_every_sample_is_reserved_before_the_first_fresh_call() -> None:
    # max_tokens 10000 at $10/1M makes each call's ceiling ~0.1: a 0.25 budget holds two
    # ceilings, not three. With the three samples cached a plain request needs none; asked
    # again it needs all three, and is refused before any call.
    prices = {"judge-model": (1.0, 10.0)}
    async with judge_harness(judge_model="openai:judge-model", judge_prices=prices) as h:
        three = check(samples=3, max_tokens=10_000)
        await h.run(three)
        plain = await h.run(three, ctx=h.ctx(budget=Budget(0.25)))
        budget = Budget(0.25)
        again = await h.run(three, ctx=fresh(h, budget=budget))
    assert plain.error is None and plain.cached
    assert again.error is not None and again.error.code == ErrorCode.BUDGET_EXHAUSTED
    assert h.openai.calls == 3 and budget.spent_usd == 0.0 and budget.reserved_usd == 0


async def test_a_fresh_call_leaves_another_tenants_verdict_in_place() -> None:
    # beta's fresh call must not turn alpha's own verdict into one alpha pays for again.
    async with judge_harness(openai_default=level_reply(5)) as h:
        await h.run(check(), output=Output("same"), ctx=h.ctx(tenant="alpha"))
        h.openai.default = level_reply(1)
        beta = await h.run(check(), output=Output("same"), ctx=fresh(h, tenant="beta"))
        alpha = await h.run(check(), output=Output("same"), ctx=h.ctx(tenant="alpha"))
    assert (beta.value, beta.cached) == (0.0, False)
    assert (alpha.value, alpha.cached, alpha.cost_usd) == (1.0, True, 0.0)


async def test_tenants_that_trust_each_other_share_the_fresh_verdict() -> None:
    async with judge_harness(openai_default=level_reply(5), tenants_trust_each_other=True) as h:
        await h.run(check(), output=Output("same"), ctx=h.ctx(tenant="alpha"))
        h.openai.default = level_reply(1)
        await h.run(check(), output=Output("same"), ctx=fresh(h, tenant="beta"))
        alpha = await h.run(check(), output=Output("same"), ctx=h.ctx(tenant="alpha"))
    assert (alpha.value, alpha.cached) == (0.0, True)


async def test_an_entry_that_does_not_say_when_it_was_answered_is_older_than_any_request() -> None:
    undated = CachedAnswer('{"reasoning":"ok","score":5}', 100, 20)
    assert CachedAnswer.loads(undated.dumps()) == undated
    assert CachedAnswer.loads(undated.dumps()).at is None  # type: ignore[union-attr]
    assert not undated.answered_since(0.0)
    dated = CachedAnswer("x", 1, 2, at=100.5)
    assert CachedAnswer.loads(dated.dumps()).at == 100.5  # type: ignore[union-attr]
    assert dated.answered_since(100.5) and not dated.answered_since(100.6)


async def test_a_fresh_request_reads_each_sample_and_the_reported_model_anew() -> None:
    async with judge_harness(openai_default=Reply(content='{"reasoning":"r","score":5}')) as h:
        await h.run(check(samples=2), Sample(id="a"))
        h.openai.default = Reply(content='{"reasoning":"r","score":5}', model="gpt-4o-mini-new")
        score = await h.run(check(samples=2), Sample(id="a"), ctx=fresh(h))
    assert h.openai.calls == 4 and not score.cached
    assert score.judge is not None and score.judge.reported == ("gpt-4o-mini-new",)


# --- replicas sharing a Redis cache and its single-flight leases ---------------------------


def replica(h: Harness, url: str) -> JudgeService:
    """Another replica's judge service: the same stand-in, the same Redis."""
    return JudgeService.from_settings(
        Settings(
            openai_api_key=OPENAI_KEY,
            openai_base_url=h.openai.url,
            judge_model="openai:gpt-4o-mini",
            cache_url=url,
            cache_timeout_s=10.0,
            budget_timeout_s=10.0,
        )
    )


async def test_replicas_read_the_verdict_another_asked_again_for(
    redis_server: RedisServer,
) -> None:
    async with judge_harness(openai_default=level_reply(5), cache_url=redis_server.url) as h:
        other = replica(h, redis_server.url)
        try:
            await h.run(check())
            h.openai.default = level_reply(1)
            again = await h.run(check(), ctx=fresh(h))
            there = await h.run(check(), ctx=CheckContext(judge=other))
        finally:
            await other.aclose()
    assert (again.value, again.cached) == (0.0, False)
    assert (there.value, there.cached) == (0.0, True)
    assert h.openai.calls == 2


async def test_replicas_asking_again_at_once_make_one_call(redis_server: RedisServer) -> None:
    # One takes the verdict key's lease and calls; the other waits for that verdict (newer
    # than its request), not for the older one the cache held meanwhile.
    async with judge_harness(openai_default=level_reply(5), cache_url=redis_server.url) as h:
        other = replica(h, redis_server.url)
        try:
            await h.run(check())
            h.openai.default = level_reply(1, delay_s=0.3)
            here, there = await asyncio.gather(
                h.run(check(), ctx=fresh(h)),
                h.run(check(), ctx=fresh_on(other)),
            )
        finally:
            await other.aclose()
    assert sorted((s.value, s.cached) for s in (here, there)) == [(0.0, False), (0.0, True)]
    assert h.openai.calls == 2


def fresh_on(judge: JudgeService) -> CheckContext:
    return CheckContext(judge=judge, fresh_since=time.time())
