"""The extractor modifier: a judge extracts content, the check runs on it, cached like a verdict."""

from __future__ import annotations

import json

from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import Params, Registry, check_type
from scorewire.engine.execute import run_check
from scorewire.engine.spec import CheckSpec, CompiledCheck, Example, compile_check
from scorewire.judge import Budget

from tests.fakes.base import Reply
from tests.support.judge import judge_harness

# A private registry with one deterministic check, so these tests do not depend on
# another family's check types.
REG = Registry()


class EqualsParams(Params):
    text: str


@check_type("equals", description="output equals text", family="test", params=EqualsParams,
            registry=REG)  # fmt: skip
def build_equals(p: EqualsParams):  # type: ignore[no-untyped-def]
    def fn(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        same = output.text == p.text
        return Score(float(same), same, f"got {output.text!r}")

    return fn


def extracting(text: str = "Name, Age", **spec: object) -> CompiledCheck:
    return compile_check(
        CheckSpec("equals", {"text": text}, extractor="the column names", **spec),  # type: ignore[arg-type]
        "checks[0]",
        registry=REG,
    )


def extraction(found: bool, text: str) -> Reply:
    return Reply(content=json.dumps({"found": found, "extracted": text}))


TABLE = Output("| Name | Age |\n|---|---|\n| Ann | 3 |")


async def test_the_check_runs_on_the_extraction() -> None:
    async with judge_harness() as h:
        h.openai.script(extraction(True, "Name, Age"))
        score = await run_check(extracting(), Sample("s"), TABLE, h.ctx())
        prompt = h.openai.requests[0].body["messages"][1]["content"]
        assert score.passed and score.cost_usd > 0
        assert "<request>\nthe column names\n</request>" in prompt and "| Name | Age |" in prompt
        assert h.openai.requests[0].body["response_format"]["json_schema"]["name"] == "extraction"


async def test_the_extraction_is_cached_like_a_verdict() -> None:
    async with judge_harness() as h:
        h.openai.script(extraction(True, "Name, Age"))
        await run_check(extracting(), Sample("s"), TABLE, h.ctx())
        again = await run_check(extracting(text="Name"), Sample("s"), TABLE, h.ctx())
        assert h.openai.calls == 1 and not again.passed and again.cost_usd == 0.0


async def test_nothing_to_extract_is_an_extraction_error() -> None:
    async with judge_harness() as h:
        h.openai.script(extraction(False, ""))
        score = await run_check(extracting(), Sample("s"), Output("no table here"), h.ctx())
        assert score.error is not None and score.error.code == ErrorCode.EXTRACTION_FAILED
        assert "nothing matching" in score.reason and score.cost_usd > 0


async def test_an_invalid_extraction_answer_is_an_error() -> None:
    async with judge_harness() as h:
        h.openai.script(Reply(content='{"extracted": "x"}'))
        score = await run_check(extracting(), Sample("s"), TABLE, h.ctx())
        assert score.error is not None and score.error.code == ErrorCode.EXTRACTION_FAILED
        assert "invalid verdict" in score.reason


async def test_extraction_respects_the_budget() -> None:
    async with judge_harness() as h:
        budget = Budget(0.0)
        score = await run_check(extracting(), Sample("s"), TABLE, h.ctx(budget=budget))
        assert score.error is not None and "budget exhausted" in score.reason
        assert h.openai.calls == 0


async def test_examples_go_into_the_extraction_prompt_when_passed() -> None:
    # the engine's extractor call does not pass examples yet; the service accepts them
    async with judge_harness() as h:
        h.openai.script(extraction(True, "A"))
        ex = (Example("Name, Age", "positive"),)
        await h.service.extract("the column names", Sample("s"), TABLE, h.ctx(), ex)
        prompt = h.openai.requests[0].body["messages"][1]["content"]
        assert '<example kind="positive">\nName, Age\n</example>' in prompt
