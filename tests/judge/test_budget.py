"""Budgets: ceilings reserved before calls, refusal once they do not fit, no overshoot under
concurrency, unpriced models refused under a budget, upstream usage that cannot be true."""

from __future__ import annotations

import asyncio
import random

import pytest
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.judge import BUDGET_EXHAUSTED, Budget, PeriodBudget
from scorewire.judge.answers import CEILING_NOTE

from tests.fakes.base import Reply
from tests.support.judge import compile_spec, judge_harness, verdict, winner

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


async def test_a_ceiling_that_does_not_fit_is_refused_even_with_nothing_in_flight() -> None:
    # (changed deliberately: a lone call used to start whatever its estimate, so a call
    # with a huge max_tokens could spend far past the limit) the budget now holds
    b = Budget(0.05)
    assert await b.reserve(1.0) is None
    assert (b.reserved_usd, b.in_flight) == (0.0, 0)
    assert await b.reserve(0.05) is not None


async def test_a_negative_cost_is_charged_the_reservation_never_refunded() -> None:
    b = Budget(1.0)
    r = await b.reserve(0.3)
    assert r is not None
    b.settle(r, -5.0)
    assert b.spent_usd == 0.3 and b.remaining_usd() == pytest.approx(0.7)


async def test_a_cancelled_waiter_gives_its_parent_reservation_back() -> None:
    parent = Budget(10.0)
    child = Budget(1.0, parent=parent)
    first = await child.reserve(0.8)
    assert first is not None
    waiting = asyncio.create_task(child.reserve(0.5))
    await asyncio.sleep(0.01)
    assert parent.in_flight == 2
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert parent.in_flight == 1 and parent.reserved_usd == pytest.approx(0.8)


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


async def test_queued_reservations_are_served_in_order_and_newcomers_queue_behind() -> None:
    # a large ceiling waiting for calls in flight is served before a small one that
    # arrived after it, even though the small one would fit at once (it used to overtake:
    # under a steady stream of small calls a large one could wait until its deadline)
    b = Budget(1.0)
    first = await b.reserve(0.6)
    assert first is not None
    large = asyncio.create_task(b.reserve(0.9))
    await asyncio.sleep(0.01)
    small = asyncio.create_task(b.reserve(0.3))  # 0.6 + 0.3 fits, but 0.9 came first
    await asyncio.sleep(0.01)
    assert not large.done() and not small.done()
    b.settle(first, 0.05)  # 0.05 + 0.9 fits; 0.05 + 0.9 + 0.3 does not yet
    held = await asyncio.wait_for(large, 1)
    await asyncio.sleep(0.01)
    assert held is not None and not small.done()
    b.settle(held, 0.05)
    assert await asyncio.wait_for(small, 1) is not None


async def test_a_refused_reservation_does_not_hold_up_those_behind_it() -> None:
    # the first in the queue can no longer fit beside what is spent: it is refused, and
    # the next, which fits, is held in the same turn
    b = Budget(1.0)
    first = await b.reserve(0.5)
    assert first is not None
    large = asyncio.create_task(b.reserve(0.6))
    await asyncio.sleep(0.01)
    small = asyncio.create_task(b.reserve(0.3))
    await asyncio.sleep(0.01)
    b.settle(first, 0.5)
    assert await asyncio.wait_for(large, 1) is None
    assert await asyncio.wait_for(small, 1) is not None
    assert (b.in_flight, b.reserved_usd) == (1, pytest.approx(0.3))


async def test_a_reservation_leaving_the_queue_lets_the_next_one_go() -> None:
    # the first waiter's deadline passes: the one queued behind it, which fits beside
    # the call in flight, is held at once instead of waiting for that call
    b = Budget(1.0)
    first = await b.reserve(0.5)
    assert first is not None
    large = asyncio.create_task(b.reserve(0.9))
    await asyncio.sleep(0.01)
    small = asyncio.create_task(b.reserve(0.4))
    await asyncio.sleep(0.01)
    assert not small.done()
    large.cancel()
    assert await asyncio.wait_for(small, 1) is not None
    assert (b.in_flight, b.reserved_usd) == (2, pytest.approx(0.9))


async def test_nested_budgets_under_a_crowd_never_spend_past_any_limit() -> None:
    # 200 calls of two runs sharing a token's budget, each run also under a server-wide
    # budget as the judge holds them: random ceilings, costs up to the ceiling, calls that
    # end in random order. No budget ever spends or holds past its limit, every waiter is
    # answered, and nothing stays held.
    rng = random.Random(7)
    token = Budget(1.0)
    server = PeriodBudget(1.5, 3600)
    runs = [Budget(0.6, parent=token), Budget(0.7, parent=token)]
    budgets = [token, server, *runs]

    def within() -> bool:
        return all(
            b.limit_usd is None
            or (b.spent_usd <= b.limit_usd + 1e-12 and b.reserved_usd <= b.limit_usd + 1e-12)
            for b in budgets
        )

    async def call(i: int) -> bool:
        run = runs[i % 2]
        ceiling = rng.uniform(0.01, 0.2)
        mine = await run.reserve(ceiling)
        if mine is None:
            return False
        theirs = await server.reserve(ceiling)
        if theirs is None:
            run.release(mine)
            return False
        for _ in range(rng.randrange(4)):
            await asyncio.sleep(0)
            assert within()
        cost = rng.uniform(0, ceiling)
        run.settle(mine, cost)
        server.settle(theirs, cost)
        assert within()
        return True

    made = await asyncio.wait_for(asyncio.gather(*(call(i) for i in range(200))), 10)
    assert 0 < sum(made) < 200
    assert all(b.in_flight == 0 and b.reserved_usd == 0 for b in budgets)
    assert token.spent_usd == pytest.approx(sum(r.spent_usd for r in runs))


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


async def test_budget_under_concurrency_never_overshoots() -> None:
    # 60 distinct checks at once against a budget for ~10 calls: the spend stays within
    # the limit (each call holds its ceiling), the rest are BUDGET_EXHAUSTED errors, none
    # passes (changed deliberately: the spend used to overshoot by the calls in flight)
    limit = 10 * CALL_COST + CALL_COST / 2
    async with judge_harness(
        openai_default=_reply(), judge_model="openai:judge-model", judge_prices=PRICES,
        judge_concurrency=8,
    ) as h:  # fmt: skip
        check = compile_spec("judge", {"rubric": "polite?", "max_tokens": 100})
        budget = Budget(limit)
        ctx = h.ctx(budget=budget)
        scores = await asyncio.gather(
            *(h.run(check, Sample(id=str(i)), Output(f"out {i}"), ctx) for i in range(60))
        )
        calls = h.openai.calls
        spent = sum(s.cost_usd for s in scores)
        exhausted = [s for s in scores if s.error and s.error.code == ErrorCode.BUDGET_EXHAUSTED]
        assert spent == pytest.approx(budget.spent_usd)
        assert spent <= limit
        assert calls == len(scores) - len(exhausted)
        # each ceiling (~1,400 prompt tokens + 100) is a little above a call's cost
        assert 8 <= calls <= 10
        assert all(s.reason.startswith(BUDGET_EXHAUSTED) and not s.passed for s in exhausted)
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
        assert budget.spent_usd <= limit + 1e-12
        assert h.openai.max_in_flight <= 3


async def test_server_wide_budget_refuses_across_runs() -> None:
    # the settings' per-period budget applies on top of (and without) a run budget
    async with judge_harness(
        openai_default=_reply(), judge_model="openai:judge-model", judge_prices=PRICES,
        judge_budget_usd=1.5 * CALL_COST,
    ) as h:  # fmt: skip
        # a ceiling (~1,400 prompt tokens and 100 completion tokens) fits the limit once
        check = compile_spec("judge", {"rubric": "polite?", "max_tokens": 100})
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
        check = compile_spec("judge", {"rubric": "polite?", "max_tokens": 100})
        budget = Budget(1.5 * CALL_COST)
        first = await h.run(check, Sample(id="a"), Output("same"), h.ctx(budget=budget))
        again = await h.run(check, Sample(id="a"), Output("same"), h.ctx(budget=budget))
        other = await h.run(check, Sample(id="b"), Output("other"), h.ctx(budget=budget))
        assert first.error is None
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


# --- finding 2: unpriced models and huge max_tokens cannot bypass a budget -------------------

HUGE = {"rubric": "polite?", "model": "openai:o1-pro", "max_tokens": 32768}


async def _twenty(h, check, ctx):  # type: ignore[no-untyped-def]
    return await asyncio.gather(
        *(h.run(check, Sample(id=str(i)), Output(f"answer {i}"), ctx) for i in range(20))
    )


@pytest.mark.parametrize(
    ("run_budget", "settings"),
    [
        # a run budget alone
        (0.001, {}),
        # the server-wide budget alone
        (None, {"judge_budget_usd": 0.001}),
    ],
)
async def test_budgeted_call_to_an_unpriced_model_is_refused_naming_the_setting(
    run_budget: float | None, settings: dict[str, object]
) -> None:
    async with judge_harness(**settings) as h:
        check = compile_spec("judge", HUGE)
        budget = None if run_budget is None else Budget(run_budget)
        scores = await _twenty(h, check, h.ctx(budget=budget))
        assert h.openai.calls == 0
        for s in scores:
            assert s.error is not None and s.error.code == ErrorCode.UNPRICED_MODEL
            assert not s.passed and "o1-pro" in s.reason
            assert "SCOREWIRE_JUDGE_PRICES" in s.reason
        if h.service.server_budget is not None:
            assert h.service.server_budget.remaining_usd() == pytest.approx(0.001)


async def test_an_unbudgeted_call_to_an_unpriced_model_still_runs_flagged() -> None:
    async with judge_harness() as h:
        score = await h.run(compile_spec("judge", HUGE))
        assert score.error is None and score.unpriced and h.openai.calls == 1


async def test_a_fallback_price_prices_unknown_models_and_holds_their_ceiling() -> None:
    # priced by the fallback, the 32768-token ceiling ($0.33) does not fit $0.001
    async with judge_harness(judge_fallback_price=(1.0, 10.0)) as h:
        check = compile_spec("judge", HUGE)
        refused = await h.run(check, ctx=h.ctx(budget=Budget(0.001)))
        assert refused.error is not None and refused.error.code == ErrorCode.BUDGET_EXHAUSTED
        assert "32768 max_tokens" in refused.reason and h.openai.calls == 0
        budget = Budget(1.0)
        ok = await h.run(check, ctx=h.ctx(budget=budget))
        assert ok.error is None and not ok.unpriced
        assert ok.cost_usd == pytest.approx((100 * 1.0 + 20 * 10.0) / 1e6)
        assert budget.spent_usd == pytest.approx(ok.cost_usd)


async def test_allowing_unpriced_calls_lets_them_run_uncounted() -> None:
    async with judge_harness(judge_allow_unpriced=True) as h:
        budget = Budget(0.001)
        scores = await _twenty(h, compile_spec("judge", HUGE), h.ctx(budget=budget))
        assert h.openai.calls == 20 and all(s.error is None and s.unpriced for s in scores)
        assert budget.spent_usd == 0.0 and budget.unpriced_calls == 20


async def test_a_priced_call_with_a_huge_max_tokens_is_refused_before_it_is_made() -> None:
    # gpt-4o writes 32768 tokens for up to $0.33: its ceiling does not fit $0.001
    async with judge_harness() as h:
        check = compile_spec("judge", {**HUGE, "model": "openai:gpt-4o"})
        budget = Budget(0.001)
        scores = await _twenty(h, check, h.ctx(budget=budget))
        assert h.openai.calls == 0 and budget.spent_usd == 0.0
        assert all(
            s.error is not None and s.error.code == ErrorCode.BUDGET_EXHAUSTED for s in scores
        )
        assert "more than the $0.001000 left" in scores[0].reason


# --- finding 5: usage the upstream reports is validated -------------------------------------


@pytest.mark.parametrize(
    ("input_tokens", "output_tokens", "words"),
    [
        # a negative prompt count would be a refund
        (-1_000_000, 20, "prompt_tokens=-1000000"),
        # a negative completion count likewise
        (100, -5, "completion_tokens=-5"),
        # more completion tokens than max_tokens allowed
        (100, 10**9, "max_tokens"),
        # more prompt tokens than the prompt's bytes
        (10**9, 20, "more than this prompt"),
    ],
)
async def test_impossible_usage_is_an_error_charged_at_the_ceiling(
    input_tokens: int, output_tokens: int, words: str
) -> None:
    async with judge_harness(
        judge_model="openai:judge-model", judge_prices=PRICES, judge_budget_usd=1.0
    ) as h:
        reply = Reply(content=verdict(5), input_tokens=input_tokens, output_tokens=output_tokens)
        h.openai.script(reply)
        check = compile_spec("judge", {"rubric": "polite?", "max_tokens": 100})
        budget = Budget(0.5)
        score = await h.run(check, ctx=h.ctx(budget=budget))
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
        assert not score.passed and words in score.reason
        # charged, not refunded: neither budget rose above its limit or stayed untouched
        assert 0 < budget.spent_usd == pytest.approx(score.cost_usd)
        server = h.service.server_budget
        assert server is not None and 0 < (server.remaining_usd() or 0) < 1.0
        # and the cost metric counts what was charged, as a ceiling
        stats = h.service.stats
        assert stats.cost_usd == score.cost_usd and stats.ceiling_charges == 1
        # an impossible answer is not cached: the next identical request calls again
        again = await h.run(check, ctx=h.ctx(budget=budget))
        assert again.error is None and h.openai.calls == 2


async def test_no_usage_reported_under_a_budget_is_charged_the_ceiling() -> None:
    # (changed deliberately: the score said $0 and `unpriced` while the budget was charged
    # the ceiling) the score reports what was charged, as an upper bound
    async with judge_harness(judge_model="openai:judge-model", judge_prices=PRICES) as h:
        h.openai.script(Reply(content=verdict(4), input_tokens=None, output_tokens=None))
        budget = Budget(1.0)
        score = await h.run(compile_spec("judge", {"rubric": "polite?", "max_tokens": 100}),
                            ctx=h.ctx(budget=budget))  # fmt: skip
        assert score.error is None and not score.unpriced
        assert budget.spent_usd >= 100 * 10.0 / 1e6  # at least max_tokens at the output price
        assert score.cost_usd == budget.spent_usd and score.reason.endswith(CEILING_NOTE)
        stats = h.service.stats
        assert (stats.cost_usd, stats.ceiling_charges, stats.unpriced_calls) == (
            budget.spent_usd,
            1,
            0,
        )


@pytest.mark.parametrize(
    ("kind", "params", "content"),
    [
        # one verdict, passing at its level
        ("judge", {"rubric": "polite?", "max_tokens": 100}, verdict(4)),
        # under a threshold the engine words the reason again, and keeps the note
        ("judge", {"rubric": "polite?", "max_tokens": 100, "threshold": 0.5}, verdict(4)),
        # three samples, one of them without usage
        ("judge", {"rubric": "polite?", "max_tokens": 100, "samples": 3}, verdict(4)),
        # pairwise, both orders, one of them without usage
        ("comparison.pairwise", {"rubric": "better?", "baseline": {"s1": "b"}}, winner("A")),
    ],
)
async def test_a_score_whose_cost_includes_a_ceiling_says_so(
    kind: str, params: dict[str, object], content: str
) -> None:
    async with judge_harness(judge_model="openai:judge-model", judge_prices=PRICES) as h:
        h.openai.default = Reply(content=content)
        h.openai.script(Reply(content=content, input_tokens=None, output_tokens=None))
        budget = Budget(1.0)
        score = await h.run(compile_spec(kind, params), ctx=h.ctx(budget=budget))
        assert score.error is None, score.reason
        assert CEILING_NOTE in score.reason and not score.unpriced
        assert score.cost_usd == pytest.approx(budget.spent_usd)


async def test_an_error_score_charged_its_ceiling_says_so() -> None:
    # an answer that is no verdict, without usage: an error whose cost is the ceiling
    async with judge_harness(judge_model="openai:judge-model", judge_prices=PRICES) as h:
        h.openai.script(Reply(content="no verdict", input_tokens=None, output_tokens=None))
        budget = Budget(1.0)
        score = await h.run(compile_spec("judge", {"rubric": "polite?", "max_tokens": 100}),
                            ctx=h.ctx(budget=budget))  # fmt: skip
        assert score.error is not None and score.error.code == ErrorCode.INVALID_VERDICT
        assert score.error.message == score.reason and score.reason.endswith(CEILING_NOTE)
        assert 0 < score.cost_usd == budget.spent_usd


async def test_a_model_without_a_price_stays_unpriced_without_usage() -> None:
    # no price and no usage: nothing to charge, so the score is `unpriced` and says no bound
    async with judge_harness(judge_model="openai:judge-model") as h:
        h.openai.script(Reply(content=verdict(4), input_tokens=None, output_tokens=None))
        score = await h.run(compile_spec("judge", {"rubric": "polite?"}))
        assert score.unpriced and score.cost_usd == 0 and CEILING_NOTE not in score.reason
        assert h.service.stats.unpriced_calls == 1 and h.service.stats.ceiling_charges == 0
