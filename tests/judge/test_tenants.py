"""`cached` reveals no other tenant's work: the verdict cache is shared, the knowledge is not.

Issue 13, finding 4 (the cache half): `cached: true` told one tenant that another had
already scored the exact same text. Checks run through the engine with contexts of
different tenants, against the OpenAI stand-in through the real SDK.
"""

from __future__ import annotations

import asyncio

import pytest
from scorewire.core.fairness import current_caller, tenant_key
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.judge import Budget
from scorewire.judge.cache_entry import CachedAnswer

from tests.fakes.base import Reply
from tests.support.judge import compile_spec, judge_harness, verdict
from tests.support.wait import wait_until_async

COST = (100 * 0.15 + 20 * 0.60) / 1e6  # the stand-in's default usage at gpt-4o-mini's price


def check():  # type: ignore[no-untyped-def]
    return compile_spec("judge", {"rubric": "Is it polite?"})


async def test_a_hit_on_another_tenants_verdict_looks_like_a_fresh_call() -> None:
    async with judge_harness() as h:
        a = await h.run(check(), output=Output("same text"), ctx=h.ctx(tenant="alpha"))
        budget = Budget(1.0)
        b = await h.run(
            check(), output=Output("same text"), ctx=h.ctx(tenant="beta", budget=budget)
        )
        a_again = await h.run(check(), output=Output("same text"), ctx=h.ctx(tenant="alpha"))
        saved = h.service.stats.saved_usd
    assert h.openai.calls == 1  # the cache is still shared: one call was paid for
    # beta cannot tell: not cached, the cost a call would have had, charged to its budget
    assert (b.cached, b.value, b.reason) == (False, a.value, a.reason)
    assert b.cost_usd == pytest.approx(COST) == pytest.approx(a.cost_usd)
    assert budget.spent_usd == pytest.approx(COST)
    # the payer sees its own hit as one
    assert a_again.cached and a_again.cost_usd == 0.0
    # the saving shows in the metrics' counters only
    assert saved == pytest.approx(2 * COST)


async def test_tenants_that_trust_each_other_see_each_others_hits() -> None:
    async with judge_harness(tenants_trust_each_other=True) as h:
        await h.run(check(), output=Output("same text"), ctx=h.ctx(tenant="alpha"))
        b = await h.run(check(), output=Output("same text"), ctx=h.ctx(tenant="beta"))
    assert b.cached and b.cost_usd == 0.0 and h.openai.calls == 1


async def test_a_foreign_hit_is_refused_when_the_callers_budget_could_not_pay() -> None:
    # a fresh call would be refused, so the hit must be refused too (or it would show)
    async with judge_harness() as h:
        await h.run(check(), output=Output("same text"), ctx=h.ctx(tenant="alpha"))
        poor = await h.run(
            check(), output=Output("same text"), ctx=h.ctx(tenant="beta", budget=Budget(1e-9))
        )
    assert poor.error is not None and poor.error.code == ErrorCode.BUDGET_EXHAUSTED


async def test_identical_requests_in_flight_are_shared_only_within_a_tenant() -> None:
    # joining another tenant's call in flight would say the same as a cache hit
    async with judge_harness(openai_default=Reply(content=verdict(4), delay_s=0.1)) as h:
        scores = await asyncio.gather(
            *(
                h.run(check(), Sample(id=t), Output("same text"), h.ctx(tenant=t))
                for t in ("alpha", "beta")
            )
        )
        same = await asyncio.gather(
            *(
                h.run(check(), Sample(id="g"), Output("other text"), h.ctx(tenant="gamma"))
                for _ in range(3)
            )
        )
    assert h.openai.calls == 3  # alpha, beta, and one for gamma's three
    assert not any(s.cached for s in scores)
    assert sorted(s.cached for s in same) == [False, True, True]


async def test_entries_without_a_tenant_stay_readable() -> None:
    # entries written before tenants were recorded (no "t") are hits for callers without
    # a tenant, and hidden from a tenant, who cannot know who paid for them
    old = '{"v":1,"text":"{\\"reasoning\\":\\"ok\\",\\"score\\":5}","in":100,"out":20}'
    entry = CachedAnswer.loads(old)
    assert entry == CachedAnswer('{"reasoning":"ok","score":5}', 100, 20, None)
    assert CachedAnswer.loads(CachedAnswer("x", 1, 2, "alpha").dumps()) == CachedAnswer(
        "x", 1, 2, "alpha"
    )
    assert '"t"' not in CachedAnswer("x", 1, 2).dumps()  # the old form is still written
    async with judge_harness() as h:
        first = await h.run(check(), output=Output("legacy"))
        anonymous = await h.run(check(), output=Output("legacy"))
        tenant = await h.run(check(), output=Output("legacy"), ctx=h.ctx(tenant="alpha"))
    assert not first.cached and anonymous.cached and not tenant.cached
    assert tenant.cost_usd == pytest.approx(COST) and h.openai.calls == 1


async def test_tenant_weights_share_a_backends_concurrency() -> None:
    # One call at a time, `heavy` weighing 3: with 8 calls of each tenant waiting (asked
    # in turn, heavy first), the judge sees 6 of heavy's for 2 of light's among the next
    # 8. A plain semaphore served them as asked: 4 and 4.
    async with judge_harness(judge_concurrency=1, tenant_weights={"heavy": 3.0}) as h:
        limit = h.service._calls._limits["openai"]

        async def ask(tenant: str, i: int) -> None:
            current_caller.set(tenant_key(tenant))  # as the server sets it for a call
            ctx = h.ctx(tenant=tenant)
            score = await h.run(check(), output=Output(f"{tenant} number {i}"), ctx=ctx)
            assert score.error is None

        async with limit.slot("tenant:someone"):  # the only slot, held while they queue
            tenants = ("heavy", "light")
            tasks = [asyncio.create_task(ask(t, i)) for i in range(8) for t in tenants]
            await wait_until_async(lambda: limit.waiting == 16, "every call waiting")
        await asyncio.gather(*tasks)
    asked = ["heavy" if "heavy number" in str(r.body) else "light" for r in h.openai.requests]
    assert asked[:8].count("heavy") == 6 and asked.count("heavy") == 8
