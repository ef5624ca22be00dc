"""RAG checks: fixed rubrics and scale, the input fields they read, and their closed key sets."""

from __future__ import annotations

import pytest
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.core.registry import REGISTRY
from scorewire.engine.spec import Example

from tests.support.checks import load_errors
from tests.support.judge import compile_spec, judge_harness, level_reply

RAG_INPUT = {"question": "When was the bridge built?", "context": "The bridge opened in 1932."}
ANSWER = Output("It was built in 1932.")

TYPES = ["rag.faithfulness", "rag.context_relevance", "rag.answer_relevance"]


@pytest.mark.parametrize("name", TYPES)
def test_registered_as_judge_backed(name: str) -> None:
    t = REGISTRY.get(name)
    assert t is not None and t.uses_judge and t.family == "rag"


@pytest.mark.parametrize(
    ("name", "params", "field", "message"),
    [
        # the judge's own keys are not RAG keys: each RAG check has a fixed rubric and scale
        ("rag.faithfulness", {"scale": 3}, "scale", "unknown parameter"),
        ("rag.faithfulness", {"pass_level": 4}, "pass_level", "unknown parameter"),
        ("rag.context_relevance", {"include_reference": True}, "include_reference", "unknown"),
        ("rag.answer_relevance", {"rubric": "x"}, "rubric", "unknown parameter"),
        ("rag.answer_relevance", {"max_tokens": 10}, "max_tokens", "unknown parameter"),
        # each takes only the fields it reads
        ("rag.faithfulness", {"question": "q"}, "question", "unknown parameter"),
        ("rag.answer_relevance", {"context": "c"}, "context", "unknown parameter"),
        # threshold is 0..1
        ("rag.faithfulness", {"threshold": 2}, "threshold", "less than or equal to 1"),
        ("rag.context_relevance", {"threshold": -0.1}, "threshold", "greater than or equal"),
        # a field name must name something
        ("rag.context_relevance", {"context": " "}, "context", "must name a field"),
        ("rag.answer_relevance", {"model": "nope:x"}, "model", "unknown judge backend"),
    ],
)
def test_keys_outside_the_catalog_are_load_errors(
    name: str, params: dict[str, object], field: str, message: str
) -> None:
    errors = load_errors(name, params)
    assert message in errors.get(f"checks[0].params.{field}", ""), errors


@pytest.mark.parametrize(
    ("name", "blocks", "absent"),
    [
        # faithfulness: context and answer, no question
        ("rag.faithfulness", ["<context>\nThe bridge opened in 1932.", "<answer>\nIt was built"],
         ["<question>"]),
        # context relevance: question and context; the answer is ignored
        ("rag.context_relevance", ["<question>\nWhen was", "<context>\nThe bridge"], ["<answer>"]),
        # answer relevance: question and answer; no context
        ("rag.answer_relevance", ["<question>\nWhen was", "<answer>\nIt was built"],
         ["<context>"]),
    ],
)  # fmt: skip
async def test_each_check_shows_the_judge_what_it_grades(
    name: str, blocks: list[str], absent: list[str]
) -> None:
    async with judge_harness() as h:
        score = await h.run(compile_spec(name, {}), Sample("s", input=RAG_INPUT), ANSWER)
        user = h.openai.requests[0].body["messages"][1]["content"]
        assert score.error is None
        assert all(b in user for b in blocks) and not any(a in user for a in absent)
        assert "from 1 to 5" in user


@pytest.mark.parametrize(
    ("params", "level", "passed"),
    [
        ({}, 4, True),  # default threshold 0.75 = level 4 of 5
        ({}, 3, False),
        ({"threshold": 0.5}, 3, True),
        ({"threshold": 1.0}, 4, False),
    ],
)
async def test_value_and_threshold(params: dict[str, object], level: int, passed: bool) -> None:
    async with judge_harness() as h:
        h.openai.script(level_reply(level))
        score = await h.run(compile_spec("rag.faithfulness", params), Sample("s", input=RAG_INPUT))
        assert score.error is None, score
        assert score.value == pytest.approx((level - 1) / 4) and score.passed is passed


async def test_question_and_context_name_the_input_fields() -> None:
    async with judge_harness() as h:
        sample = Sample("s", input={"q": "Why?", "docs": ["first chunk", "second chunk"]})
        await h.run(
            compile_spec("rag.context_relevance", {"question": "q", "context": "docs"}), sample
        )
        user = h.openai.requests[0].body["messages"][1]["content"]
        assert "<question>\nWhy?\n</question>" in user
        assert "[1] first chunk\n\n[2] second chunk" in user  # chunks are numbered


@pytest.mark.parametrize(
    ("name", "sample_input", "missing"),
    [
        ("rag.faithfulness", {"question": "q"}, "'context'"),  # no context field
        ("rag.context_relevance", {"context": "c"}, "'question'"),  # no question field
        ("rag.answer_relevance", None, "'question'"),  # no input at all
        ("rag.faithfulness", "just text", "'context'"),  # a string input has no context
        ("rag.faithfulness", {"context": None}, "'context'"),  # null is missing
    ],
)
async def test_a_missing_input_field_is_an_error_and_calls_nothing(
    name: str, sample_input: object, missing: str
) -> None:
    async with judge_harness() as h:
        score = await h.run(compile_spec(name, {}), Sample("s", input=sample_input))
        assert score.error is not None and score.error.code == ErrorCode.MISSING_REFERENCE
        assert missing in score.reason and not score.passed and h.openai.calls == 0


async def test_a_plain_text_input_is_the_question() -> None:
    async with judge_harness() as h:
        score = await h.run(compile_spec("rag.answer_relevance", {}), Sample("s", input="Why?"))
        assert score.error is None
        assert (
            "<question>\nWhy?\n</question>" in h.openai.requests[0].body["messages"][1]["content"]
        )


async def test_examples_go_into_the_prompt() -> None:
    async with judge_harness() as h:
        check = compile_spec("rag.faithfulness", {}, examples=(Example("EX-TEXT", "negative"),))
        await h.run(check, Sample("s", input=RAG_INPUT))
        assert (
            '<example kind="negative">\nEX-TEXT'
            in h.openai.requests[0].body["messages"][1]["content"]
        )
