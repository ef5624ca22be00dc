"""Judge panels against the stand-in judges: each judge's samples aggregate, the judges
combine by `panel`, one cached verdict and one reservation per judge request, load errors
at their field, and a judge's error never a pass."""

from __future__ import annotations

from typing import Any

import pytest
from scorewire.core.errors import SpecError
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.judge import Budget
from scorewire.judge.panels import combine
from scorewire.suites.preflight import check_judges, judge_needs

from tests.fakes.base import Reply
from tests.support.judge import Harness, compile_spec, judge_harness, level_reply, winner

MINI = "openai:gpt-4o-mini"
BIG = "openai:gpt-4o"
HAIKU = "anthropic:claude-haiku-4-5"
THREE = [MINI, BIG, HAIKU]
RUBRIC = {"rubric": "Is it polite?"}
PRICES = {"gpt-4o-mini": (1.0, 10.0), "gpt-4o": (1.0, 10.0), "claude-haiku-4-5": (1.0, 10.0)}
CALL_COST = (100 * 1.0 + 20 * 10.0) / 1e6  # the stand-ins' default usage at PRICES


def judge(**params: object):  # type: ignore[no-untyped-def]
    return compile_spec("judge", {**RUBRIC, **params})


def levels(h: Harness, by_model: dict[str, int]) -> None:
    """Each stand-in answers every request with the level set for the request's model
    (level 3 for a model not listed)."""

    def answer(body: Any) -> Reply:
        return level_reply(by_model.get(body["model"], 3))

    h.openai.responder = answer
    h.anthropic.responder = answer


def three_levels(h: Harness, mini: int, big: int, haiku: int) -> None:
    levels(h, {"gpt-4o-mini": mini, "gpt-4o": big, "claude-haiku-4-5": haiku})


def load_error(type_: str, params: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(SpecError) as info:
        compile_spec(type_, params)
    [violation] = info.value.violations
    return violation.field, violation.description


# --- combining, pure ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "weights", "rule", "expected"),
    [
        ([1.0, 0.25, 0.75], [1, 1, 1], "mean", 2 / 3),
        ([1.0, 0.25, 0.75], [3, 1, 1], "weighted", 0.8),
        ([1.0, 0.25, 0.75], [1, 1, 1], "all", 0.25),
        ([1.0, 0.25, 0.75], [1, 1, 1], "any", 1.0),
        ([1.0, 0.25, 0.75], [1, 1, 1], "majority", 0.75),  # two of three reach 0.75
        ([1.0, 0.25], [1, 1], "majority", 0.25),  # a split of two is no majority
        ([1.0, 1.0, 0.5, 0.0], [1, 1, 1, 1], "majority", 0.5),  # three of four reach 0.5
        ([0.5], [1], "majority", 0.5),  # one judge decides alone
    ],
)
def test_combine(values: list[float], weights: list[float], rule: str, expected: float) -> None:
    assert combine(values, weights, rule) == pytest.approx(expected)


# --- outcomes against the stand-ins --------------------------------------------------------------


@pytest.mark.parametrize(
    ("panel", "extra", "value", "passed"),
    [
        # levels 5, 2, 4 (values 1, 0.25, 0.75) against the default pass level 4 (0.75)
        ("majority", {}, 0.75, True),  # two of three judges pass
        ("mean", {}, 2 / 3, False),
        ("all", {}, 0.25, False),  # gpt-4o fails
        ("any", {}, 1.0, True),
        ("weighted", {"weights": [3, 1, 1]}, 0.8, True),  # gpt-4o-mini outweighs the others
        ("weighted", {"weights": [1, 3, 1]}, 0.5, False),  # gpt-4o outweighs them
    ],
)
async def test_panel_outcomes(
    panel: str, extra: dict[str, Any], value: float, passed: bool
) -> None:
    async with judge_harness() as h:
        three_levels(h, 5, 2, 4)
        score = await h.run(judge(judges=THREE, panel=panel, **extra))
        assert score.error is None
        assert score.value == pytest.approx(value) and score.passed is passed
        # one request per judge, to the model each names
        assert sorted(r.body["model"] for r in h.openai.requests) == ["gpt-4o", "gpt-4o-mini"]
        assert [r.body["model"] for r in h.anthropic.requests] == ["claude-haiku-4-5"]
        # the reason gives every judge's verdict, and the spread is across the judges
        assert f"{MINI} level 5/5 pass; {BIG} level 2/5 fail; {HAIKU} level 4/5 pass" in (
            score.reason
        )
        assert score.reason.startswith(f"panel {panel} ")
        assert score.spread is not None and score.spread.n == 3
        assert sorted(score.spread.values) == [0.25, 0.75, 1.0]
        # agreement: the share of judges whose own verdict is the panel's
        assert score.spread.agreement == pytest.approx(2 / 3 if passed else 1 / 3)
        assert score.cost_usd > 0 and not score.cached


async def test_majority_is_the_default_panel_and_a_tie_fails() -> None:
    async with judge_harness() as h:
        levels(h, {"gpt-4o-mini": 5, "claude-haiku-4-5": 1})
        score = await h.run(judge(judges=[MINI, HAIKU]))
        assert score.reason.startswith("panel majority ")
        assert score.value == 0 and not score.passed and score.error is None


async def test_each_judges_samples_aggregate_before_the_judges_combine() -> None:
    async with judge_harness() as h:
        # gpt-4o-mini: 5, 5, 2 → majority 1.0; claude: 2, 2, 5 → majority 0.25
        h.openai.script(level_reply(5), level_reply(2), level_reply(5))
        h.anthropic.script(level_reply(2), level_reply(5), level_reply(2))
        score = await h.run(
            judge(judges=[MINI, HAIKU], panel="mean", samples=3, aggregate="majority")
        )
        assert h.openai.calls == 3 and h.anthropic.calls == 3
        assert score.value == pytest.approx(0.625) and not score.passed
        assert f"{MINI} majority of 3 samples 1 " in score.reason
        assert f"{HAIKU} majority of 3 samples 0.25 " in score.reason
        assert score.spread is not None and score.spread.values == (1.0, 0.25)
        # every sample of every judge is its own request (sample index 0..2 per model)
        temps = {r.body["temperature"] for r in h.openai.requests}
        assert temps == {0.7}


async def test_the_engine_threshold_decides_a_panel_with_the_same_bar() -> None:
    # rag.faithfulness passes at 0.75: levels 4, 3, 4 → majority 0.75 passes, all fails
    sample, output = Sample("s", input={"context": "c"}), Output("a")
    async with judge_harness() as h:
        three_levels(h, 4, 3, 4)
        majority = await h.run(compile_spec("rag.faithfulness", {"judges": THREE}), sample, output)
        assert majority.passed and majority.value == 0.75
        assert "threshold 0.75" in majority.reason and f"{BIG} level 3/5 fail" in majority.reason
        every = compile_spec("rag.faithfulness", {"judges": THREE, "panel": "all"})
        strict = await h.run(every, sample, output)
        assert not strict.passed and strict.value == 0.5
        # a checkllm assertion (threshold 0.8 by default: level 5 needed) panels too
        fluency = await h.run(compile_spec("fluency", {"judges": THREE, "panel": "any"}))
        assert not fluency.passed and f"{MINI} level 4/5 fail" in fluency.reason


async def test_a_pairwise_panel() -> None:
    check = compile_spec(
        "comparison.pairwise",
        {"rubric": "better", "baseline": {"s1": "base"}, "judges": [MINI, HAIKU], "panel": "all"},
    )
    async with judge_harness() as h:
        # gpt-4o-mini prefers the candidate in both orders; claude always says A (first)
        h.openai.responder = lambda body: Reply(
            content=winner("A" if "<response_a>\nout" in body["messages"][1]["content"] else "B")
        )
        h.anthropic.default = Reply(content=winner("A"))
        score = await h.run(check)
        assert h.openai.calls == 2 and h.anthropic.calls == 2
        assert score.value == 0.5 and score.passed  # claude's 0.5 (one order each) passes
        assert f"{MINI} value 1 pass; {HAIKU} value 0.5 pass" in score.reason


# --- cache and budget -----------------------------------------------------------------------------


async def test_a_rerun_comes_from_each_judges_cache_entry() -> None:
    async with judge_harness() as h:
        three_levels(h, 5, 2, 4)
        first = await h.run(judge(judges=THREE, samples=2))
        assert h.openai.calls == 4 and h.anthropic.calls == 2 and not first.cached
        again = await h.run(judge(judges=THREE, samples=2))
        assert h.openai.calls == 4 and h.anthropic.calls == 2
        assert again.cached and again.cost_usd == 0 and again.value == first.value
        # a one-judge check naming a panel judge as `model` finds that judge's verdict
        h.openai.reset()
        alone = await h.run(judge(model=BIG, temperature=0.7))
        assert alone.cached and h.openai.calls == 0 and alone.value == 0.25
        # a new judge in the panel pays only for itself
        more = await h.run(judge(judges=[*THREE, "openai:gpt-4.1"], samples=2))
        assert h.openai.calls == 2 and {r.body["model"] for r in h.openai.requests} == {"gpt-4.1"}
        assert not more.cached


async def test_a_budget_too_small_for_the_whole_panel_refuses_before_any_call() -> None:
    # max_tokens 10000 at $10/1M makes each call's ceiling ~0.1: 0.25 holds two, not three
    params = {"judges": THREE, "max_tokens": 10_000}
    async with judge_harness(judge_prices=PRICES) as h:
        three_levels(h, 5, 2, 4)
        refused = await h.run(judge(**params), ctx=h.ctx(budget=Budget(0.25)))
        assert refused.error is not None and refused.error.code == ErrorCode.BUDGET_EXHAUSTED
        assert not refused.passed
        assert "these 3 calls (one per judge and sample)" in refused.reason
        assert h.openai.calls == 0 and h.anthropic.calls == 0  # refused before any call
        budget = Budget(0.35)
        paid = await h.run(judge(**params), ctx=h.ctx(budget=budget))
        assert paid.error is None and h.openai.calls == 2 and h.anthropic.calls == 1
        assert paid.cost_usd == pytest.approx(3 * CALL_COST)
        assert budget.spent_usd == pytest.approx(3 * CALL_COST) and budget.reserved_usd == 0


async def test_an_unpriced_judge_at_run_time_refuses_the_whole_panel() -> None:
    # a caller that skips the preflight still gets no call: the reservation refuses
    async with judge_harness() as h:
        three_levels(h, 5, 2, 4)
        panel = judge(judges=[MINI, "openai:my-local-model"])
        score = await h.run(panel, ctx=h.ctx(budget=Budget(1.0)))
        assert score.error is not None and score.error.code == ErrorCode.UNPRICED_MODEL
        assert "my-local-model" in score.reason
        assert h.openai.calls == 0 and h.anthropic.calls == 0


# --- errors ---------------------------------------------------------------------------------------


async def test_a_judge_error_in_a_panel_is_an_error_naming_the_judge() -> None:
    async with judge_harness(judge_prices=PRICES) as h:
        levels(h, {"gpt-4o-mini": 5, "gpt-4o": 5})
        h.anthropic.responder = lambda body: Reply(status=400)  # not retried
        score = await h.run(judge(judges=THREE, panel="any"))
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
        assert not score.passed and score.value == 0 and score.spread is None
        assert score.reason.startswith(f"judge {HAIKU} failed: ")
        # the judges that answered are paid for, and the cost says so
        assert score.cost_usd == pytest.approx(2 * CALL_COST)


async def test_skip_leaves_a_failed_judge_out_and_says_so() -> None:
    async with judge_harness() as h:
        levels(h, {"gpt-4o-mini": 5, "gpt-4o": 2})
        h.anthropic.responder = lambda body: Reply(content="no json")  # unreadable
        score = await h.run(judge(judges=THREE, panel="any", on_judge_error="skip"))
        assert score.error is None and score.passed and score.value == 1.0
        assert "of 2 judges" in score.reason
        assert f"left out {HAIKU} (INVALID_VERDICT: " in score.reason
        assert score.spread is not None and score.spread.values == (1.0, 0.25)


async def test_skip_weights_only_the_judges_left() -> None:
    async with judge_harness() as h:
        levels(h, {"gpt-4o-mini": 5, "gpt-4o": 1})
        h.anthropic.responder = lambda body: Reply(status=400)
        params = {"panel": "weighted", "weights": [1, 3, 100], "on_judge_error": "skip"}
        score = await h.run(judge(judges=THREE, **params))
        assert score.value == pytest.approx(0.25) and not score.passed


async def test_a_panel_whose_every_judge_failed_is_an_error_even_with_skip() -> None:
    async with judge_harness() as h:
        h.openai.default = Reply(status=400)
        h.anthropic.default = Reply(status=400)
        score = await h.run(judge(judges=[MINI, HAIKU], on_judge_error="skip"))
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
        assert not score.passed and "every judge of the panel failed" in score.reason
        assert MINI in score.reason and HAIKU in score.reason


async def test_skip_never_skips_a_budget_refusal() -> None:
    async with judge_harness(judge_prices=PRICES) as h:
        three_levels(h, 5, 5, 5)
        check = judge(judges=THREE, on_judge_error="skip", max_tokens=10_000)
        score = await h.run(check, ctx=h.ctx(budget=Budget(0.15)))
        assert score.error is not None and score.error.code == ErrorCode.BUDGET_EXHAUSTED
        assert h.openai.calls == 0 and h.anthropic.calls == 0


# --- load errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field", "says"),
    [
        ({"judges": []}, "judges", "at least one judge"),
        ({"judges": [MINI, "anthropc:claude-haiku-4-5"]}, "judges[1]", "unknown judge backend"),
        ({"judges": [MINI, "openai:"]}, "judges[1]", "no model after"),
        ({"judges": [MINI, " "]}, "judges[1]", "must name a judge"),
        ({"judges": [MINI, HAIKU, MINI]}, "judges[2]", "repeats judges[0]"),
        ({"judges": [MINI, HAIKU], "model": BIG}, "judges", "not both"),
        ({"judges": [MINI, HAIKU], "panel": "weighted"}, "weights", "one weight per judge"),
        ({"judges": [MINI, HAIKU], "panel": "weighted", "weights": [1]}, "weights", "1 weights"),
        (
            {"judges": [MINI, HAIKU], "panel": "weighted", "weights": [1, 0]},
            "weights[1]",
            "positive",
        ),
        (
            {"judges": [MINI, HAIKU], "panel": "weighted", "weights": [-1, 2]},
            "weights[0]",
            "positive",
        ),
        ({"judges": [MINI, HAIKU], "weights": [1, 2]}, "weights", "panel: weighted only"),
        ({"panel": "mean"}, "panel", "name its `judges`"),
        ({"weights": [1.0]}, "weights", "name its `judges`"),
        ({"on_judge_error": "skip"}, "on_judge_error", "name its `judges`"),
        ({"judges": [MINI, HAIKU], "panel": "vote"}, "panel", ""),
        ({"judges": [f"openai:m{i}" for i in range(9)]}, "judges", "at most 8"),
    ],
)
def test_load_errors_name_the_field(params: dict[str, Any], field: str, says: str) -> None:
    where, description = load_error("judge", {**RUBRIC, **params})
    assert where == f"checks[0].params.{field}"
    assert says in description


@pytest.mark.parametrize(
    ("type_", "params"),
    [
        ("relevance", {}),
        ("rag.answer_relevance", {}),
        ("comparison.pairwise", {"rubric": "r", "baseline": {"s": "b"}}),
    ],
)
def test_every_judge_backed_family_refuses_a_bad_panel(type_: str, params: dict[str, Any]) -> None:
    bad = {**params, "judges": [MINI, "nope:x"]}
    assert load_error(type_, bad)[0] == "checks[0].params.judges[1]"


async def test_an_unpriced_judge_under_a_budget_is_refused_at_its_field() -> None:
    check = judge(judges=[MINI, "openai:my-local-model", HAIKU])
    needs = judge_needs([("checks[0]", check)])
    assert [f for f, _ in needs] == [f"checks[0].params.judges[{i}]" for i in range(3)]
    async with judge_harness() as h:
        [problem] = check_judges(needs, h.service, budgeted=True)
        assert problem.field == "checks[0].params.judges[1]" and problem.kind == "PRICE"
        assert "my-local-model" in problem.description
        assert check_judges(needs, h.service, budgeted=False) == []  # unbudgeted: runs unpriced


@pytest.mark.parametrize(
    ("params", "field", "routes_to"),
    [
        ({"judges": [MINI, HAIKU, "gpt-4o-mini"]}, "judges[2]", MINI),  # the default backend
        ({"judges": ["openai", BIG, MINI]}, "judges[2]", MINI),  # the backend's default model
        ({"cascade": ["gpt-4o", BIG]}, "cascade[1]", BIG),
    ],
)
async def test_one_model_under_two_names_is_refused_at_its_field(
    params: dict[str, Any], field: str, routes_to: str
) -> None:
    needs = judge_needs([("checks[0]", judge(**params))])
    async with judge_harness() as h:
        [problem] = check_judges(needs, h.service, budgeted=False)
    assert problem.kind == "DUPLICATE_JUDGE"
    assert problem.field == f"checks[0].params.{field}"
    assert routes_to in problem.description


async def test_distinct_models_and_separate_checks_are_not_aliases() -> None:
    panel = judge(judges=[MINI, BIG, HAIKU])
    one = judge(model="gpt-4o-mini")
    needs = judge_needs([("checks[0]", panel), ("checks[1]", one), ("checks[2]", one)])
    async with judge_harness() as h:
        assert check_judges(needs, h.service, budgeted=False) == []
