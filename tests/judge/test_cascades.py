"""Judge cascades against the stand-ins: the cheap judge decides when sure, the strong one
when it is unsure or for an audit picked by hash, the cost summed per judge asked, errors
never a pass, load errors at their field."""

from __future__ import annotations

from typing import Any

import pytest
from scorewire.core.errors import SpecError
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.judge import Budget
from scorewire.judge.cascades import audit_picks
from scorewire.suites.preflight import check_judges, judge_needs

from tests.fakes.base import Reply
from tests.support.judge import Harness, compile_spec, judge_harness, level_reply, winner

CHEAP, STRONG = "openai:gpt-4o-mini", "openai:gpt-4o"
PRICES = {"gpt-4o-mini": (1.0, 10.0), "gpt-4o": (1.0, 10.0)}
CALL_COST = (100 * 1.0 + 20 * 10.0) / 1e6  # the stand-in's default usage at PRICES
RUBRIC = {"rubric": "Is it polite?"}


def cascade(**params: object):  # type: ignore[no-untyped-def]
    return compile_spec("judge", {**RUBRIC, "cascade": [CHEAP, STRONG], **params})


def levels(h: Harness, cheap: int | list[int], strong: int) -> None:
    """The cheap judge answers `cheap` (one level, or one per request in turn), the
    strong one `strong`."""
    queue = list(cheap) if isinstance(cheap, list) else None

    def answer(body: Any) -> Reply:
        if body["model"] == "gpt-4o":
            return level_reply(strong)
        if queue is None:
            assert isinstance(cheap, int)
            return level_reply(cheap)
        return level_reply(queue.pop(0))

    h.openai.responder = answer


def asked(h: Harness) -> list[str]:
    return [r.body["model"] for r in h.openai.requests]


# --- who decides ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cheap", "strong", "escalated", "value", "why"),
    [
        (5, 2, False, 1.0, None),  # sure pass: the cheap judge decides
        (1, 5, False, 0.0, None),  # sure fail
        (4, 2, True, 0.25, "unsure: at the pass boundary"),  # the lowest passing level
        (3, 5, True, 1.0, "unsure: at the pass boundary"),  # the highest failing level
    ],
)
async def test_the_strong_judge_is_asked_only_when_the_cheap_one_is_unsure(
    cheap: int, strong: int, escalated: bool, value: float, why: str | None
) -> None:
    async with judge_harness(judge_prices=PRICES) as h:
        levels(h, cheap, strong)
        score = await h.run(cascade())
        assert score.error is None and score.value == value and score.passed is (value >= 0.75)
        assert asked(h) == (["gpt-4o-mini", "gpt-4o"] if escalated else ["gpt-4o-mini"])
        # the cost is summed over the judges asked
        assert score.cost_usd == pytest.approx(CALL_COST * (2 if escalated else 1))
        cheap_word = "pass" if cheap >= 4 else "fail"
        if escalated:
            strong_word = "pass" if strong >= 4 else "fail"
            assert f"{CHEAP} level {cheap}/5 {cheap_word}, {why}; " in score.reason
            assert f"{STRONG} level {strong}/5 {strong_word}, decided" in score.reason
        else:
            assert f"cascade ({CHEAP} level {cheap}/5 {cheap_word}, decided)" in score.reason
            assert f"{STRONG} " not in score.reason


async def test_samples_that_disagree_send_the_case_on() -> None:
    async with judge_harness() as h:
        # majority of 5, 5, 1 is 5 (sure by its level), but one sample fails
        levels(h, [5, 5, 1], 4)
        score = await h.run(cascade(samples=3, aggregate="majority"))
        assert asked(h).count("gpt-4o") == 3 and asked(h).count("gpt-4o-mini") == 3
        assert "unsure: its samples disagree" in score.reason
        assert score.value == 0.75 and score.passed
        # the spread is the deciding judge's
        assert score.spread is not None and score.spread.values == (0.75, 0.75, 0.75)


async def test_the_engine_threshold_sets_the_boundary() -> None:
    # fluency passes at 0.5 here: level 3 is the boundary, level 5 is sure
    sure = compile_spec("fluency", {"cascade": [CHEAP, STRONG], "threshold": 0.5})
    async with judge_harness() as h:
        levels(h, 5, 1)
        score = await h.run(sure)
        assert asked(h) == ["gpt-4o-mini"] and score.passed
        assert "threshold 0.5" in score.reason


async def test_a_pairwise_cascade_escalates_a_position_biased_tie() -> None:
    check = compile_spec(
        "comparison.pairwise",
        {"rubric": "better", "baseline": {"s1": "base"}, "cascade": [CHEAP, STRONG]},
    )
    async with judge_harness() as h:
        # the cheap judge always says A (a tie over both orders); the strong one prefers
        # the candidate in both orders
        def answer(body: Any) -> Reply:
            if body["model"] == "gpt-4o-mini":
                return Reply(content=winner("A"))
            first = "<response_a>\nout" in body["messages"][1]["content"]
            return Reply(content=winner("A" if first else "B"))

        h.openai.responder = answer
        score = await h.run(check)
        assert asked(h).count("gpt-4o") == 2 and score.value == 1.0 and score.passed
        assert f"{CHEAP} value 0.5 pass, unsure: at the pass boundary" in score.reason


# --- audits -------------------------------------------------------------------------------------


async def test_an_audit_share_of_one_sends_every_case_on() -> None:
    async with judge_harness() as h:
        levels(h, 5, 2)
        score = await h.run(cascade(audit_share=1.0))
        assert asked(h) == ["gpt-4o-mini", "gpt-4o"]
        assert f"{CHEAP} level 5/5 pass, audit; {STRONG} level 2/5 fail, decided" in score.reason
        assert not score.passed  # the stronger judge decides an audited case


async def test_audits_are_picked_by_hash_so_a_rerun_picks_the_same_cases() -> None:
    ids = [f"s{i}" for i in range(40)]

    async def audited_ids() -> set[str]:
        async with judge_harness() as h:
            levels(h, 5, 5)
            out = set()
            for sid in ids:
                output = Output(f"out {sid}")  # each its own verdict, not a cache hit
                score = await h.run(cascade(audit_share=0.25), Sample(sid), output)
                if ", audit;" in score.reason:
                    out.add(sid)
            assert asked(h).count("gpt-4o") == len(out)
            return out

    first = await audited_ids()
    assert 0 < len(first) < len(ids)  # a share, not all or none
    assert await audited_ids() == first
    assert first == {sid for sid in ids if audit_picks((sid, f"out {sid}"), 0.25)}
    # the output is part of the pick: another output of the same samples picks others
    assert {sid for sid in ids if audit_picks((sid, "other"), 0.25)} != first


async def test_a_rerun_comes_from_the_cache_for_every_judge_asked() -> None:
    async with judge_harness() as h:
        levels(h, 4, 5)
        first = await h.run(cascade())
        again = await h.run(cascade())
        assert len(asked(h)) == 2 and again.cached and again.cost_usd == 0
        assert again.reason == first.reason


# --- budgets and errors ---------------------------------------------------------------------------


async def test_a_budget_that_pays_only_the_cheap_judge_is_an_error_with_its_cost() -> None:
    # a ceiling is ~0.1 at max_tokens 10000; the cheap call spends 0.0901 of 0.15, and
    # what is left cannot hold the strong call's ceiling
    async with judge_harness(judge_prices=PRICES) as h:
        h.openai.script(level_reply(4, output_tokens=9000))
        budget = Budget(0.15)
        score = await h.run(cascade(max_tokens=10_000), ctx=h.ctx(budget=budget))
        assert score.error is not None and score.error.code == ErrorCode.BUDGET_EXHAUSTED
        assert not score.passed and asked(h) == ["gpt-4o-mini"]
        assert score.cost_usd == pytest.approx((100 + 9000 * 10) / 1e6)
        assert f"judge {STRONG} failed" in score.reason and f"after {CHEAP}" in score.reason


async def test_a_failed_judge_is_an_error_unless_skipped() -> None:
    async with judge_harness() as h:

        def answer(body: Any) -> Reply:
            return Reply(status=400) if body["model"] == "gpt-4o-mini" else level_reply(5)

        h.openai.responder = answer
        failed = await h.run(cascade())
        assert failed.error is not None and failed.error.code == ErrorCode.JUDGE_ERROR
        assert not failed.passed and asked(h) == ["gpt-4o-mini"]
        assert failed.reason.startswith(f"judge {CHEAP} failed: ")
        skipped = await h.run(cascade(on_judge_error="skip"))
        assert skipped.error is None and skipped.passed and skipped.value == 1.0
        assert f"{CHEAP} JUDGE_ERROR, skipped: " in skipped.reason
        assert f"{STRONG} level 5/5 pass, decided" in skipped.reason


async def test_the_last_judge_failing_is_an_error_even_with_skip() -> None:
    async with judge_harness() as h:

        def answer(body: Any) -> Reply:
            return Reply(content="no json") if body["model"] == "gpt-4o" else level_reply(4)

        h.openai.responder = answer
        score = await h.run(cascade(on_judge_error="skip"))
        assert score.error is not None and score.error.code == "INVALID_VERDICT"
        assert not score.passed and f"judge {STRONG} failed" in score.reason


# --- load errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field", "says"),
    [
        ({"cascade": [CHEAP]}, "cascade", "at least two judges"),
        ({"cascade": []}, "cascade", "at least one judge"),
        ({"cascade": [CHEAP, "openai:"]}, "cascade[1]", "no model after"),
        ({"cascade": [CHEAP, CHEAP]}, "cascade[1]", "repeats cascade[0]"),
        ({"cascade": [CHEAP, STRONG], "model": CHEAP}, "cascade", "not both"),
        ({"cascade": [CHEAP, STRONG], "judges": [CHEAP, STRONG]}, "cascade", "not both"),
        ({"cascade": [CHEAP, STRONG], "panel": "mean"}, "panel", "not to a cascade"),
        ({"cascade": [CHEAP, STRONG], "weights": [1, 2]}, "weights", "not to a cascade"),
        ({"audit_share": 0.1}, "audit_share", "cascade only"),
        ({"judges": [CHEAP, STRONG], "audit_share": 0.1}, "audit_share", "not to a panel"),
        ({"cascade": [CHEAP, STRONG], "audit_share": 1.5}, "audit_share", "less than or equal"),
        ({"cascade": [f"openai:m{i}" for i in range(5)]}, "cascade", "at most 4"),
    ],
)
def test_load_errors_name_the_field(params: dict[str, Any], field: str, says: str) -> None:
    with pytest.raises(SpecError) as info:
        compile_spec("judge", {**RUBRIC, **params})
    [violation] = info.value.violations
    assert violation.field == f"checks[0].params.{field}"
    assert says in violation.description


async def test_an_unpriced_cascade_judge_under_a_budget_is_refused_at_its_field() -> None:
    needs = judge_needs([("checks[0]", cascade(cascade=[CHEAP, "openai:my-local-model"]))])
    async with judge_harness() as h:
        [problem] = check_judges(needs, h.service, budgeted=True)
        assert problem.field == "checks[0].params.cascade[1]" and problem.kind == "PRICE"
