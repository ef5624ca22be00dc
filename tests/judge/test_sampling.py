"""Repeated sampling against the stand-in judge: aggregates, spread, one cached verdict per
sample, the budget reserved for every sample before the first call, errors never a pass."""

from __future__ import annotations

import pytest
from scorewire.core.cost import LimitExceeded, metering
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.engine.metering import request_meter
from scorewire.judge import Budget
from scorewire.judge.cache_entry import verdict_key
from scorewire.judge.prompts import render_grade
from scorewire.judge.sampling import DEFAULT_SAMPLE_TEMPERATURE, aggregate
from scorewire.settings import Settings

from tests.fakes.base import Reply
from tests.support.judge import compile_spec, judge_harness, level_reply, winner

PRICES = {"judge-model": (1.0, 10.0)}
CALL_COST = (100 * 1.0 + 20 * 10.0) / 1e6  # the stand-in's default usage at PRICES
RUBRIC = {"rubric": "Is it polite?"}


def judge(**params: object):  # type: ignore[no-untyped-def]
    return compile_spec("judge", {**RUBRIC, **params})


# --- aggregation, pure ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "how", "expected"),
    [
        ([1.0, 0.75, 0.25], "mean", 2 / 3),
        ([1.0, 0.75, 0.25], "median", 0.75),
        ([0.5, 0.25, 0.5, 1.0], "median", 0.5),  # even count: the mean of the middle two
        ([1.0, 1.0, 0.25], "majority", 1.0),
        ([1.0, 0.25], "majority", 0.25),  # a tie goes to the lower value
        ([0.75], "mean", 0.75),
    ],
)
def test_aggregates(values: list[float], how: str, expected: float) -> None:
    assert aggregate(values, how) == pytest.approx(expected)


# --- against the stand-in -----------------------------------------------------------------------


async def test_mean_of_three_samples_with_spread_and_the_sampling_temperature() -> None:
    async with judge_harness() as h:
        h.openai.script(level_reply(5), level_reply(4), level_reply(2))
        score = await h.run(judge(samples=3))
        assert h.openai.calls == 3
        assert score.error is None and score.value == pytest.approx(2 / 3)
        # the default pass level is 4 (0.75): the mean fails, and only the level-2
        # sample agrees with that verdict
        assert not score.passed
        assert score.spread is not None and score.spread.n == 3
        assert sorted(score.spread.values) == [0.25, 0.75, 1.0]
        assert score.spread.stdev == pytest.approx(0.3118, abs=1e-4)
        assert score.spread.agreement == pytest.approx(1 / 3)
        temps = {r.body["temperature"] for r in h.openai.requests}
        assert temps == {DEFAULT_SAMPLE_TEMPERATURE}
        assert "mean of 3 samples" in score.reason


async def test_majority_of_levels_passes_when_most_samples_pass() -> None:
    async with judge_harness() as h:
        h.openai.script(level_reply(4), level_reply(4), level_reply(1))
        score = await h.run(judge(samples=3, aggregate="majority"))
        assert score.passed and score.value == 0.75
        assert score.spread is not None and score.spread.agreement == pytest.approx(2 / 3)


async def test_median_with_an_explicit_temperature() -> None:
    async with judge_harness() as h:
        h.openai.script(level_reply(1), level_reply(5), level_reply(3))
        score = await h.run(judge(samples=3, aggregate="median", temperature=1.2))
        assert score.value == 0.5 and not score.passed
        assert {r.body["temperature"] for r in h.openai.requests} == {1.2}


async def test_one_sample_keeps_the_old_behaviour_and_no_spread() -> None:
    async with judge_harness() as h:
        score = await h.run(judge())
        assert score.spread is None and score.value == 0.75 and score.passed
        assert h.openai.requests[0].body["temperature"] == 0


async def test_the_engine_threshold_decides_and_recomputes_the_agreement() -> None:
    # rag.faithfulness passes at 0.75 (engine threshold): levels 4, 4, 3 → mean 0.667 fails
    check = compile_spec("rag.faithfulness", {"samples": 3})
    async with judge_harness() as h:
        h.openai.script(level_reply(4), level_reply(4), level_reply(3))
        score = await h.run(check, Sample("s", input={"context": "c"}), Output("a"))
        assert not score.passed and score.value == pytest.approx(2 / 3)
        assert score.spread is not None and score.spread.agreement == pytest.approx(1 / 3)
        assert "threshold 0.75" in score.reason


async def test_checkllm_assertions_sample_too() -> None:
    check = compile_spec("fluency", {"samples": 2, "threshold": 0.5})
    async with judge_harness() as h:
        h.openai.script(level_reply(5), level_reply(3))
        score = await h.run(check)
        assert h.openai.calls == 2 and score.passed and score.value == 0.75
        assert score.spread is not None and score.spread.agreement == 1.0


async def test_a_judge_error_in_any_sample_is_an_error_never_a_pass() -> None:
    async with judge_harness() as h:
        h.openai.script(level_reply(5), Reply(status=400), level_reply(5))
        score = await h.run(judge(samples=3))
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
        assert not score.passed and score.value == 0 and score.spread is None
        assert "one of 3 judge requests" in score.reason


async def test_an_unreadable_sample_is_an_invalid_verdict_error() -> None:
    async with judge_harness() as h:
        h.openai.script(level_reply(5), Reply(content="no json"))
        score = await h.run(judge(samples=2))
        assert score.error is not None and score.error.code == ErrorCode.INVALID_VERDICT
        assert not score.passed


# --- caching per sample -------------------------------------------------------------------------


def test_sample_zero_keeps_the_unsampled_key() -> None:
    prompt = render_grade("r", 5, [("output", "o")], ())
    base = {"backend": "openai", "model": "m", "temperature": 0.7, "max_tokens": 10}
    assert verdict_key(prompt, **base, sample=0) == verdict_key(prompt, **base)  # type: ignore[arg-type]
    assert verdict_key(prompt, **base, sample=1) != verdict_key(prompt, **base)  # type: ignore[arg-type]


async def test_each_sample_is_cached_and_more_samples_pay_only_the_new_ones() -> None:
    async with judge_harness() as h:
        first = await h.run(judge(samples=3))
        assert h.openai.calls == 3 and not first.cached
        again = await h.run(judge(samples=3))
        assert h.openai.calls == 3 and again.cached and again.cost_usd == 0
        more = await h.run(judge(samples=5))
        assert h.openai.calls == 5 and not more.cached
        # one sample at the sampling temperature is sample 0: already cached
        one = await h.run(judge(temperature=DEFAULT_SAMPLE_TEMPERATURE))
        assert h.openai.calls == 5 and one.cached


# --- budgets -----------------------------------------------------------------------------------


async def test_the_budget_is_reserved_for_every_sample_before_the_first_call() -> None:
    # max_tokens 10000 at $10/1M makes each call's ceiling ~0.1 (the prompt adds < 0.01):
    # a 0.25 budget holds two ceilings, not three
    async with judge_harness(judge_model="openai:judge-model", judge_prices=PRICES) as h:
        refused = await h.run(judge(samples=3, max_tokens=10_000), ctx=h.ctx(budget=Budget(0.25)))
        assert refused.error is not None and refused.error.code == ErrorCode.BUDGET_EXHAUSTED
        assert h.openai.calls == 0  # refused before paying for any sample
        budget = Budget(0.25)
        two = await h.run(judge(samples=2, max_tokens=10_000), ctx=h.ctx(budget=budget))
        assert two.error is None and h.openai.calls == 2
        assert budget.spent_usd == pytest.approx(2 * CALL_COST) and budget.reserved_usd == 0
        # two samples are cached now: three need only one more reservation, which fits
        three = await h.run(judge(samples=3, max_tokens=10_000), ctx=h.ctx(budget=Budget(0.25)))
        assert three.error is None and h.openai.calls == 3


async def test_the_server_limit_on_samples_is_refused_naming_the_setting() -> None:
    meter = request_meter(Settings(max_judge_samples=4))
    with metering(meter), pytest.raises(LimitExceeded) as info:
        judge(samples=5)
    assert info.value.setting == "max_judge_samples"
    assert info.value.field == "checks[0].params.samples"


async def test_a_single_judges_samples_count_against_the_calls_per_output_cap() -> None:
    # one judge asked 5 times is 5 calls for each output: over a cap of 4
    meter = request_meter(Settings(judge_watch={"max_calls_per_output": 4}))
    with metering(meter), pytest.raises(LimitExceeded) as info:
        judge(samples=5)
    assert info.value.setting == "judge_watch__max_calls_per_output"
    assert info.value.field == "checks[0].params.samples"


# --- pairwise -------------------------------------------------------------------------------------


async def test_pairwise_judges_every_sample_in_both_orders() -> None:
    check = compile_spec(
        "comparison.pairwise", {"rubric": "better", "baseline": {"s1": "base"}, "samples": 2}
    )
    async with judge_harness() as h:
        # the candidate wins every order of every sample
        h.openai.responder = lambda body: Reply(
            content=winner("A" if "<response_a>\nout" in body["messages"][1]["content"] else "B")
        )
        score = await h.run(check)
        assert h.openai.calls == 4
        assert score.error is None and score.value == 1.0 and score.passed
        assert score.spread is not None and score.spread.n == 2 and score.spread.agreement == 1
