"""The checkllm LLM-as-judge assertion types: what each shows the judge, and how it passes."""

from __future__ import annotations

from typing import Any

import pytest
from scorewire.checks.judge_assertions import DEFAULT_THRESHOLD, NAMES
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.core.registry import REGISTRY

from tests.support.checks import load_errors
from tests.support.judge import compile_spec, judge_harness, level_reply

FORMAT_TYPES = [
    "relevance",
    "hallucination",
    "faithfulness",
    "toxicity",
    "fluency",
    "coherence",
    "correctness",
    "rubric",
    "sentiment",
    "bias",
    "summarization",
    "instruction_following",
    "role_adherence",
    "groundedness",
    "answer_completeness",
    "context_relevance",
]

VARS = {
    "query": "How do I return an item?",
    "context": "Items can be returned within 30 days with a receipt.",
    "expected": "Within 30 days, with the receipt.",
    "role": "a polite support agent",
    "instructions": "Answer in one sentence.",
    "source": "The full return policy: 30 days, receipt required, refunds in 5 days.",
}
OUTPUT = Output("Bring it back within 30 days with your receipt.")


def test_every_format_type_is_registered_as_a_judge_check() -> None:
    # the sixteen names of the format, no more, all judge-backed and listed by ListChecks
    assert sorted(NAMES) == sorted(FORMAT_TYPES)
    for name in FORMAT_TYPES:
        t = REGISTRY.get(name)
        assert t is not None and t.uses_judge and t.family == "judge", name


@pytest.mark.parametrize(
    ("name", "params", "field", "message"),
    [
        # rubric needs its criteria
        ("rubric", {}, "value", "required parameter is missing"),
        # a blank criteria is no criteria
        ("rubric", {"value": "  "}, "value", "must not be blank"),
        # types without a value take none
        ("relevance", {"value": "x"}, "value", "unknown parameter"),
        ("toxicity", {"value": "x"}, "value", "unknown parameter"),
        # the threshold is 0..1
        ("fluency", {"threshold": 1.5}, "threshold", "less than or equal to 1"),
        # a judge model must route
        ("coherence", {"model": "nope:x"}, "model", "unknown judge backend"),
        # groundedness takes a list of documents, none of them blank
        ("groundedness", {"value": []}, "value", "non-empty list"),
        ("groundedness", {"value": ["a", " "]}, "value", "non-empty list"),
        # the judge check's own keys are not assertion keys
        ("sentiment", {"scale": 3}, "scale", "unknown parameter"),
    ],
)
def test_bad_parameters_are_load_errors(
    name: str, params: dict[str, Any], field: str, message: str
) -> None:
    errors = load_errors(name, params)
    assert message in errors.get(f"checks[0].params.{field}", ""), errors


# (type, params, blocks the prompt must hold, tags it must not hold)
MATERIAL = [
    # relevance: the query and the output
    ("relevance", {}, ["<input>\nHow do I return", "<output>\nBring it back"], ["<context>"]),
    # hallucination: the context and the output, not the query
    ("hallucination", {}, ["<context>\nItems can be returned", "<output>"], ["<input>"]),
    # faithfulness: the context, the query when present, the output
    ("faithfulness", {}, ["<context>", "<input>", "<output>"], ["<reference>"]),
    # toxicity, fluency, coherence, sentiment, bias: the output alone
    ("toxicity", {}, ["<output>"], ["<input>", "<context>"]),
    ("fluency", {}, ["<output>"], ["<input>", "<context>"]),
    ("coherence", {}, ["<output>"], ["<input>", "<context>"]),
    ("sentiment", {}, ["<output>"], ["<input>", "<context>"]),
    ("bias", {}, ["<output>"], ["<input>", "<context>"]),
    # correctness: the sample's expected value as the reference
    ("correctness", {}, ["<reference>\nWithin 30 days, with the receipt."], []),
    # correctness: `value` replaces the expected value
    ("correctness", {"value": "Thirty days."}, ["<reference>\nThirty days."], ["with the receipt"]),
    # rubric: the criteria
    ("rubric", {"value": "Mentions the receipt."}, ["<criteria>\nMentions the receipt."], []),
    # summarization: var `source` before `context`
    ("summarization", {}, ["<source>\nThe full return policy"], ["<context>"]),
    # summarization: `value` replaces the source
    ("summarization", {"value": "Doc."}, ["<source>\nDoc.\n"], []),
    # instruction_following: the instructions and the input
    ("instruction_following", {}, ["<instructions>\nAnswer in one", "<input>"], []),
    # role_adherence: the role
    ("role_adherence", {}, ["<role>\na polite support agent"], []),
    # groundedness: a list of documents is numbered
    ("groundedness", {"value": ["Doc A.", "Doc B."]}, ["[1] Doc A.\n\n[2] Doc B."], []),
    # groundedness: the context by default
    ("groundedness", {}, ["<source>\nItems can be returned"], []),
    # answer_completeness: the query and the output
    ("answer_completeness", {}, ["<input>", "<output>"], ["<context>"]),
    # context_relevance: context and query; the output is not judged
    ("context_relevance", {}, ["<context>", "<input>"], ["<output>"]),
]


@pytest.mark.parametrize(("name", "params", "blocks", "absent"), MATERIAL)
async def test_each_type_shows_the_judge_its_material(
    name: str, params: dict[str, Any], blocks: list[str], absent: list[str]
) -> None:
    check = compile_spec(name, params)
    sample = Sample("s1", dict(VARS), VARS["expected"])
    async with judge_harness() as h:
        h.openai.script(level_reply(5))
        score = await h.run(check, sample, OUTPUT)
        user = h.openai.requests[-1].body["messages"][1]["content"]
    assert score.passed and score.value == 1.0, score
    for block in blocks:
        assert block in user, (block, user)
    for tag in absent:
        assert tag not in user, (tag, user)


@pytest.mark.parametrize(
    ("name", "variables", "missing"),
    [
        # relevance needs a query
        ("relevance", {"context": "c"}, "query"),
        # hallucination needs the context
        ("hallucination", {"query": "q"}, "context"),
        # correctness needs an expected answer somewhere
        ("correctness", {"query": "q"}, "expected"),
        # role_adherence needs a role
        ("role_adherence", {"query": "q"}, "role"),
        # instruction_following needs instructions or an input
        ("instruction_following", {"context": "c"}, "instructions"),
        # context_relevance needs both context and query
        ("context_relevance", {"query": "q"}, "context"),
        # an empty context is no context
        ("groundedness", {"context": ""}, "source"),
    ],
)
async def test_missing_material_is_an_error_without_a_call(
    name: str, variables: dict[str, Any], missing: str
) -> None:
    check = compile_spec(name, {})
    async with judge_harness() as h:
        score = await h.run(check, Sample("s1", variables), OUTPUT)
        calls = h.openai.calls
    assert score.error is not None and score.error.code == ErrorCode.MISSING_REFERENCE
    assert missing in score.error.message and not score.passed
    assert calls == 0


async def test_plain_text_input_is_the_query() -> None:
    # a sample whose input is a string is asked about as the query
    check = compile_spec("relevance", {})
    async with judge_harness() as h:
        h.openai.script(level_reply(5))
        score = await h.run(check, Sample("s1", "What is 2+2?"), Output("4"))
        user = h.openai.requests[-1].body["messages"][1]["content"]
    assert score.passed and "<input>\nWhat is 2+2?" in user


@pytest.mark.parametrize(
    ("level", "threshold", "value", "passed"),
    [
        # the default threshold 0.8 needs the top level
        (5, None, 1.0, True),
        (4, None, 0.75, False),
        # a threshold of 0.75 passes level 4 (exactly at the threshold)
        (4, 0.75, 0.75, True),
        # level 3 is value 0.5
        (3, 0.5, 0.5, True),
        (2, 0.5, 0.25, False),
        # threshold 0 passes the lowest level
        (1, 0.0, 0.0, True),
    ],
)
async def test_value_is_the_level_on_a_1_to_5_scale(
    level: int, threshold: float | None, value: float, passed: bool
) -> None:
    params = {} if threshold is None else {"threshold": threshold}
    check = compile_spec("fluency", params)
    async with judge_harness() as h:
        h.openai.script(level_reply(level))
        score = await h.run(check, Sample("s1"), OUTPUT)
    assert score.value == value and score.passed is passed and score.error is None
    assert f"level {level}/5" in score.reason
    assert DEFAULT_THRESHOLD == 0.8


async def test_unreadable_verdict_is_an_error_never_a_pass() -> None:
    # a judge answer that is not a verdict scores INVALID_VERDICT
    from tests.fakes.base import Reply

    check = compile_spec("toxicity", {})
    async with judge_harness() as h:
        h.openai.script(Reply(content="looks fine to me"))
        score = await h.run(check, Sample("s1"), OUTPUT)
    assert score.error is not None and score.error.code == ErrorCode.INVALID_VERDICT
    assert not score.passed


async def test_without_a_judge_every_type_is_a_judge_error() -> None:
    # no judge configured: an error score, not a pass
    from scorewire.core.context import CheckContext
    from scorewire.engine.execute import run_check

    for name in FORMAT_TYPES:
        params = {"value": "criteria"} if name == "rubric" else {}
        score = await run_check(
            compile_spec(name, params), Sample("s", dict(VARS)), OUTPUT, CheckContext()
        )
        assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR, name


def test_the_same_names_work_in_evalstone_suites() -> None:
    # format names are check types: keyed checks with their parameters beside `type`
    from scorewire.suites.evalstone import load_suite_text

    suite = load_suite_text(
        "checks:\n"
        "  on_topic: {type: relevance, threshold: 0.7}\n"
        "  grounded: {type: groundedness, value: [a, b]}\n"
        "  criteria: {type: rubric, value: Mentions the receipt.}\n"
    )
    assert [c.type for c in suite.select().plan.checks] == ["relevance", "groundedness", "rubric"]
    assert all(c.uses_judge for c in suite.select().plan.checks)
