"""Score keeps its documented invariant: an error means value 0 and not passed."""

from __future__ import annotations

import pytest
from scorewire.core.context import EMPTY_CONTEXT
from scorewire.core.model import ErrorCode, Output, Sample, Score, ScoreError
from scorewire.engine.execute import run_check_sync
from scorewire.engine.spec import CheckSpec, compile_check

BROKEN = ScoreError(ErrorCode.CHECK_FAILED, "broken")


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        (1.0, True),  # a pass handed an error is not a pass
        (0.7, False),  # a partial value handed an error is 0
        (0.0, False),  # already consistent: unchanged
    ],
)
def test_an_error_score_has_value_zero_and_does_not_pass(value: float, passed: bool) -> None:
    score = Score(value, passed, "r", error=BROKEN)
    assert (score.value, score.passed, score.error) == (0.0, False, BROKEN)


def test_a_score_without_error_keeps_what_it_was_given() -> None:
    # no error: value and passed are the caller's, even a passing partial value
    score = Score(0.4, True, "partly", cost_usd=0.01, cached=True)
    assert (score.value, score.passed, score.reason, score.cost_usd, score.cached) == (
        0.4,
        True,
        "partly",
        0.01,
        True,
    )


def test_fail_with_error_keeps_its_cost() -> None:
    # the error state, with the dollars already spent
    score = Score.fail_with_error(ErrorCode.JUDGE_ERROR, "down", cost_usd=0.02)
    assert (score.value, score.passed, score.cost_usd) == (0.0, False, 0.02)
    assert score.error == ScoreError(ErrorCode.JUDGE_ERROR, "down")


def test_a_user_function_cannot_return_a_passing_error() -> None:
    # a python check that builds an inconsistent Score gets the invariant enforced
    def sloppy(sample: Sample, output: Output) -> Score:
        return Score(1.0, True, "fine?", error=BROKEN)

    cc = compile_check(CheckSpec(type="python", params={"fn": sloppy}), "checks[0]")
    got = run_check_sync(cc, Sample(), Output("x"), EMPTY_CONTEXT)
    assert (got.value, got.passed, got.error) == (0.0, False, BROKEN)
