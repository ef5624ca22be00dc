"""Budgets: reservations before calls, refusal once spent, bounded overshoot under concurrency."""

from __future__ import annotations

import asyncio

import pytest
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.judge import BUDGET_EXHAUSTED, Budget, PeriodBudget

from tests.fakes.base import Reply
from tests.support.judge import compile_spec, judge_harness, verdict

# The stand-in's model is priced through settings so every call costs exactly this:
# 1000 input + 100 output tokens at $1 / $10 per 1M tokens.
PRICES = {"judge-model": (1.0, 10.0)}
CALL_COST = (1000 * 1.0 + 100 * 10.0) / 1e6


async def test_reserve_then_settle_records_real_cost() -> None:
    # the reservation is released and the real cost is what counts
    b = Budget(1.0)
    r = await b.reserve(0.3)
    assert r is not None and b.reserved_usd == 0.3 and b.in_flight == 1
    b.settle(r, 0.1)
    assert (b.spent_usd, b.reserved_usd, b.in_flight, b.calls) == (0.1, 0.0, 0, 1)


async def test_exhausted_budget_refuses() -> None:
    # once spent reaches the limit, nothing more is reserved
    b = Budget(0.2)
    r = await b.reserve(0.1)
    assert r is not None
    b.settle(r, 0.25)
    assert b.exhausted and await b.reserve(0.01) is None


async def test_lone_call_may_start_even_if_estimate_exceeds_what_is_left() -> None:
    # with nothing in flight, one call runs while money is left (its estimate may be high)
    b = Budget(0.05)
    assert await b.reserve(1.0) is not None


async def test_reservation_waits_for_calls_in_flight() -> None:
    # a call that does not fit beside the in-flight ones waits, then sees the real cost
    b = Budget(1.0)
    first = await b.reserve(0.8)
    assert first is not None
    waiting = asyncio.create_task(b.reserve(0.5))
    await asyncio.sleep(0.01)
    assert not waiting.done()  # 0.8 + 0.5 > 1.0: it must wait
    b.settle(first, 0.1)  # the first call was cheap
    second = await asyncio.wait_for(waiting, 1)
    assert second is not None and b.spent_usd == 0.1


async def test_waiter_is_refused_when_in_flight_call_spends_the_rest() -> None:
    # the waiting call is refused when the in-flight call exhausts the budget
    b = Budget(1.0)
    first = await b.reserve(0.8)
    assert first is not None
    waiting = asyncio.create_task(b.reserve(0.5))
    await asyncio.sleep(0.01)
    b.settle(first, 1.0)
    assert await asyncio.wait_for(waiting, 1) is None


async def test_release_gives_the_reservation_back_without_counting_a_call() -> None:
    b = Budget(1.0)
    r = await b.reserve(0.5)
    assert r is not None
    b.release(r)
    b.release(r)  # idempotent
    assert (b.spent_usd, b.reserved_usd, b.in_flight, b.calls) == (0.0, 0.0, 0, 0)


async def test_unknown_cost_is_counted_as_unpriced_not_guessed() -> None:
    b = Budget(1.0)
    r = await b.reserve(0.0)
    assert r is not None
    b.settle(r, None)
    assert b.spent_usd == 0.0 and b.unpriced_calls == 1


async def test_period_budget_starts_afresh_each_period() -> None:
    # the server-wide budget resets when its period rolls over
    now = [1000.0]
    b = PeriodBudget(0.1, 60, clock=lambda: now[0])
    r = await b.reserve(0.0)
    assert r is not None
    b.settle(r, 0.2)
    assert await b.reserve(0.0) is None
    now[0] += 60
    assert await b.reserve(0.0) is not None


def test_negative_budget_is_rejected() -> None:
    with pytest.raises(ValueError):
        Budget(-1.0)


def _reply() -> Reply:
    return Reply(content=verdict(4), input_tokens=1000, output_tokens=100, delay_s=0.02)


async def test_budget_under_concurrency_never_overshoots_beyond_calls_in_flight() -> None:
    # 60 distinct checks at once against a budget for ~10 calls: the spend stays within
    # limit + (calls in flight × cost), the rest are BUDGET_EXHAUSTED errors, none passes
    limit = 10 * CALL_COST + CALL_COST / 2
    async with judge_harness(
        openai_default=_reply(), judge_model="openai:judge-model", judge_prices=PRICES,
        judge_concurrency=8,
    ) as h:  # fmt: skip
        check = compile_spec("judge", {"rubric": "polite?"})
        budget = Budget(limit)
        ctx = h.ctx(budget=budget)
        scores = await asyncio.gather(
            *(h.run(check, Sample(id=str(i)), Output(f"out {i}"), ctx) for i in range(60))
        )
        calls = h.openai.calls
        spent = sum(s.cost_usd for s in scores)
        exhausted = [s for s in scores if s.error and s.error.code == ErrorCode.BUDGET_EXHAUSTED]
        assert spent == pytest.approx(budget.spent_usd)
        assert spent <= limit + h.openai.max_in_flight * CALL_COST
        assert calls == len(scores) - len(exhausted)
        assert 10 <= calls < 60
        assert all(s.reason == BUDGET_EXHAUSTED and not s.passed for s in exhausted)
        assert budget.in_flight == 0 and budget.reserved_usd == 0


async def test_reservations_keep_overshoot_to_a_single_call() -> None:
    # with estimates above the real cost (max_tokens reserved), concurrent calls cannot
    # all start: the spend overshoots by at most one call
    cheap = Reply(content=verdict(4), input_tokens=100, output_tokens=100, delay_s=0.02)
    cost = (100 * 1.0 + 100 * 10.0) / 1e6  # below the estimate (~300 prompt tokens + 100)
    limit = 3 * cost
    async with judge_harness(
        openai_default=cheap, judge_model="openai:judge-model", judge_prices=PRICES,
        judge_concurrency=32,
    ) as h:  # fmt: skip
        check = compile_spec("judge", {"rubric": "polite?", "max_tokens": 100})
        budget = Budget(limit)
        ctx = h.ctx(budget=budget)
        await asyncio.gather(
            *(h.run(check, Sample(id=str(i)), Output(f"o{i}"), ctx) for i in range(40))
        )
        assert budget.spent_usd <= limit + cost + 1e-12
        assert h.openai.max_in_flight <= 3


async def test_server_wide_budget_refuses_across_runs() -> None:
    # the settings' per-period budget applies on top of (and without) a run budget
    async with judge_harness(
        openai_default=_reply(), judge_model="openai:judge-model", judge_prices=PRICES,
        judge_budget_usd=CALL_COST,
    ) as h:  # fmt: skip
        check = compile_spec("judge", {"rubric": "polite?"})
        first = await h.run(check, Sample(id="a"), Output("one"))
        second = await h.run(check, Sample(id="b"), Output("two"))
        assert first.error is None and first.cost_usd == pytest.approx(CALL_COST)
        assert second.error is not None and second.error.code == ErrorCode.BUDGET_EXHAUSTED
        assert second.reason.startswith(BUDGET_EXHAUSTED)
        assert h.openai.calls == 1


async def test_cached_verdict_is_served_after_the_budget_is_spent() -> None:
    # a cached verdict costs nothing, so an exhausted budget does not block it
    async with judge_harness(
        openai_default=_reply(), judge_model="openai:judge-model", judge_prices=PRICES
    ) as h:
        check = compile_spec("judge", {"rubric": "polite?"})
        budget = Budget(CALL_COST / 2)
        first = await h.run(check, Sample(id="a"), Output("same"), h.ctx(budget=budget))
        again = await h.run(check, Sample(id="a"), Output("same"), h.ctx(budget=budget))
        other = await h.run(check, Sample(id="b"), Output("other"), h.ctx(budget=budget))
        assert first.error is None and budget.exhausted
        assert again.error is None and again.cached and again.cost_usd == 0.0
        assert other.error is not None and other.error.code == ErrorCode.BUDGET_EXHAUSTED
        assert h.openai.calls == 1


async def test_a_parent_budget_bounds_every_child() -> None:
    # A run budget with a parent (a token's budget) is refused once the parent is spent,
    # and a refused child gives its parent reservation back.
    from scorewire.judge.budget import Budget

    parent = Budget(1.0)
    a, b = Budget(None, parent=parent), Budget(10.0, parent=parent)
    r = await a.reserve(0.6)
    assert r is not None and parent.reserved_usd == 0.6
    a.settle(r, 1.0)
    assert parent.spent_usd == 1.0 and a.spent_usd == 1.0
    assert await b.reserve(0.1) is None and b.exhausted
    assert parent.reserved_usd == 0.0
    c = Budget(0.0, parent=Budget(5.0))
    assert await c.reserve(0.1) is None
    assert c.parent is not None and c.parent.reserved_usd == 0.0 and c.parent.in_flight == 0
