"""The `judge` check: parameters, value and pass rules, prompt contents, error states."""

from __future__ import annotations

import pytest
from scorewire.core.context import EMPTY_CONTEXT
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.core.registry import REGISTRY
from scorewire.engine.execute import run_check
from scorewire.engine.spec import Example

from tests.support.checks import load_errors
from tests.support.judge import compile_spec, judge_harness, level_reply

RUBRIC = {"rubric": "The answer is polite."}


def test_registered_as_a_judge_backed_check() -> None:
    t = REGISTRY.get("judge")
    assert t is not None and t.uses_judge and t.is_async and t.family == "judge"


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({}, "checks[0].params.rubric", "required"),  # rubric is required
        ({"rubric": "   "}, "checks[0].params.rubric", "blank"),  # and not blank
        ({**RUBRIC, "scale": 1}, "checks[0].params.scale", "greater than or equal to 2"),
        ({**RUBRIC, "scale": 2.5}, "checks[0].params.scale", "integer"),  # not a level count
        ({**RUBRIC, "pass_level": 6}, "checks[0].params.pass_level", "1..5"),  # above scale
        ({**RUBRIC, "pass_level": 0}, "checks[0].params.pass_level", "greater than"),
        ({**RUBRIC, "threshold": 1.5}, "checks[0].params.threshold", "less than or equal"),
        # pass_level and threshold are alternatives
        ({**RUBRIC, "pass_level": 4, "threshold": 0.5}, "checks[0].params.threshold", "not both"),
        ({**RUBRIC, "model": "antropic:claude"}, "checks[0].params.model", "unknown judge backend"),
        ({**RUBRIC, "max_tokens": 0}, "checks[0].params.max_tokens", "greater than"),
        # `temperature` became a parameter with repeated sampling; top_p is still unknown
        ({**RUBRIC, "top_p": 0.9}, "checks[0].params.top_p", "unknown parameter"),
        # several samples at temperature 0 would repeat one verdict
        (
            {**RUBRIC, "samples": 3, "temperature": 0},
            "checks[0].params.temperature",
            "same verdict",
        ),
        ({**RUBRIC, "samples": 17}, "checks[0].params.samples", "less than or equal to 16"),
        ({**RUBRIC, "samples": 0}, "checks[0].params.samples", "greater than"),
        ({**RUBRIC, "aggregate": "mode"}, "checks[0].params.aggregate", "mean"),
    ],
)
def test_bad_params_are_load_errors(params: dict[str, object], field: str, message: str) -> None:
    errors = load_errors("judge", params)
    assert message in errors.get(field, ""), errors


@pytest.mark.parametrize(
    ("params", "level", "value", "passed"),
    [
        ({}, 4, 0.75, True),  # default pass_level on 1–5 is 4
        ({}, 3, 0.5, False),  # below the default pass level
        ({}, 5, 1.0, True),  # top
        ({}, 1, 0.0, False),  # bottom
        ({"scale": 3}, 2, 0.5, True),  # default pass_level on 1–3 is 2
        ({"scale": 2}, 1, 0.0, False),  # on 1–2 only the top level passes
        ({"scale": 2}, 2, 1.0, True),
        ({"scale": 10}, 9, 8 / 9, True),  # second-highest on 1–10
        ({"pass_level": 5}, 4, 0.75, False),  # explicit pass_level
        ({"pass_level": 2}, 2, 0.25, True),
        ({"threshold": 0.75}, 4, 0.75, True),  # threshold compares value ≥ threshold
        ({"threshold": 0.8}, 4, 0.75, False),
        ({"threshold": 0.0}, 1, 0.0, True),  # threshold 0 passes everything
    ],
)
async def test_value_and_pass_rule(
    params: dict[str, object], level: int, value: float, passed: bool
) -> None:
    async with judge_harness() as h:
        h.openai.script(level_reply(level))
        score = await h.run(compile_spec("judge", {**RUBRIC, **params}))
        assert score.error is None
        assert score.value == pytest.approx(value) and score.passed is passed
        assert score.reason.startswith(f"level {level}/")


async def test_prompt_carries_rubric_scale_input_and_output_but_not_the_reference() -> None:
    async with judge_harness() as h:
        await h.run(
            compile_spec("judge", {**RUBRIC, "scale": 7}),
            Sample("s", input={"question": "Hi?"}, expected="SECRET-REFERENCE"),
            Output("Hello!"),
        )
        user = h.openai.requests[0].body["messages"][1]["content"]
        assert "<rubric>\nThe answer is polite.\n</rubric>" in user
        assert "from 1 to 7" in user and '{"question": "Hi?"}' in user and "Hello!" in user
        assert "SECRET-REFERENCE" not in user  # include_reference defaults to false


async def test_include_reference_shows_the_expected_value() -> None:
    async with judge_harness() as h:
        await h.run(
            compile_spec("judge", {**RUBRIC, "include_reference": True}),
            Sample("s", expected={"answer": 42}),
        )
        user = h.openai.requests[0].body["messages"][1]["content"]
        assert '<reference>\n{"answer": 42}\n</reference>' in user


async def test_include_reference_without_expected_is_an_error_and_calls_nothing() -> None:
    async with judge_harness() as h:
        score = await h.run(compile_spec("judge", {**RUBRIC, "include_reference": True}))
        assert score.error is not None and score.error.code == ErrorCode.MISSING_REFERENCE
        assert h.openai.calls == 0


async def test_examples_go_into_the_prompt() -> None:
    async with judge_harness() as h:
        examples = (Example("Thank you kindly!", "positive"), Example("Go away.", "negative"))
        await h.run(compile_spec("judge", RUBRIC, examples=examples))
        user = h.openai.requests[0].body["messages"][1]["content"]
        assert '<example kind="positive">\nThank you kindly!\n</example>' in user
        assert '<example kind="negative">\nGo away.\n</example>' in user


async def test_examples_of_one_spec_do_not_leak_into_another() -> None:
    # each spec's factory call builds its own function, so bound examples stay apart
    async with judge_harness() as h:
        compile_spec("judge", RUBRIC, examples=(Example("LEAK", "positive"),))
        await h.run(compile_spec("judge", RUBRIC))
        assert "LEAK" not in h.openai.requests[0].body["messages"][1]["content"]


async def test_json_output_value_is_shown_when_there_is_no_text() -> None:
    async with judge_harness() as h:
        await h.run(compile_spec("judge", RUBRIC), output=Output("", value={"a": 1}))
        assert (
            '<output>\n{"a": 1}\n</output>' in h.openai.requests[0].body["messages"][1]["content"]
        )


async def test_without_a_judge_it_is_an_error_never_a_pass() -> None:
    score = await run_check(compile_spec("judge", RUBRIC), Sample(), Output("x"), EMPTY_CONTEXT)
    assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
    assert score.reason == "no judge is configured" and not score.passed


async def test_model_param_routes_the_call() -> None:
    async with judge_harness() as h:
        h.anthropic.script(level_reply(5))
        score = await h.run(compile_spec("judge", {**RUBRIC, "model": "anthropic:claude-opus-4-1"}))
        assert score.passed and h.anthropic.requests[0].body["model"] == "claude-opus-4-1"
        assert h.openai.calls == 0
