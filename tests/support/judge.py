"""A judge service wired to the protocol stand-ins, for tests.

    async with judge_harness() as h:
        h.openai.script(Reply(content='{"reasoning": "ok", "score": 5}'))
        score = await h.run(check, Sample(...), Output("..."))

Both stand-ins run with their own API keys; the service gets them through Settings
exactly as in production. Sleeps between retries are recorded and skipped (so tests
check the waits without waiting), unless `real_sleep=True`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.model import Output, Sample, Score
from scorewire.engine.execute import run_check
from scorewire.engine.spec import CheckSpec, CompiledCheck, Example, compile_check
from scorewire.judge import Budget, JudgeService
from scorewire.settings import Settings

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

OPENAI_KEY = "sk-test-OPENAI-secret-0123456789"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-secret-9876543210"


def verdict(score: int, reasoning: str = "because") -> str:
    """A level verdict as a judge writes it."""
    return json.dumps({"reasoning": reasoning, "score": score})


def winner(which: str, reasoning: str = "because") -> str:
    """A pairwise verdict as a judge writes it."""
    return json.dumps({"reasoning": reasoning, "winner": which})


def level_reply(score: int, **kw: Any) -> Reply:
    """A successful reply carrying a level verdict."""
    return Reply(content=verdict(score), **kw)


class Harness:
    """Stand-ins, the service built from settings, and helpers to run checks."""

    def __init__(self, openai: FakeOpenAI, anthropic: FakeAnthropic, service: JudgeService) -> None:
        self.openai = openai
        self.anthropic = anthropic
        self.service = service
        self.sleeps: list[float] = []

    def ctx(
        self,
        *,
        budget: Budget | None = None,
        deadline: float | None = None,
        tenant: str | None = None,
    ) -> CheckContext:
        """A context with this judge (for `tenant`, when given)."""
        return CheckContext(judge=self.service, budget=budget, deadline=deadline, tenant=tenant)

    async def run(
        self,
        check: CompiledCheck,
        sample: Sample | None = None,
        output: Output | None = None,
        ctx: CheckContext | None = None,
    ) -> Score:
        """Run a compiled check through the engine, with this judge."""
        return await run_check(
            check, sample or Sample(id="s1"), output or Output("out"), ctx or self.ctx()
        )


def compile_spec(
    type_: str,
    params: dict[str, Any],
    *,
    examples: Sequence[Example] = (),
    extractor: str | None = None,
) -> CompiledCheck:
    """Compile one check spec (raises SpecError for a bad one)."""
    return compile_check(
        CheckSpec(type_, params, examples=examples, extractor=extractor), "checks[0]"
    )


@asynccontextmanager
async def judge_harness(
    *,
    real_sleep: bool = False,
    openai_default: Reply | None = None,
    reject_json_schema: bool = False,
    **settings: Any,
) -> AsyncIterator[Harness]:
    """Start both stand-ins and a JudgeService pointed at them; tear all down after."""
    openai = FakeOpenAI(
        default=openai_default, api_key=OPENAI_KEY, reject_json_schema=reject_json_schema
    )
    anthropic = FakeAnthropic(api_key=ANTHROPIC_KEY)
    openai.start()
    anthropic.start()
    service: JudgeService | None = None
    try:
        values: dict[str, Any] = {
            "openai_api_key": OPENAI_KEY,
            "openai_base_url": openai.url,
            "anthropic_api_key": ANTHROPIC_KEY,
            "anthropic_base_url": anthropic.url,
            "judge_model": "openai:gpt-4o-mini",
            "judge_retry_base_s": 0.01,
            "judge_timeout_s": 5.0,
            # A slow moment must not bypass the cache; timeout tests set their own.
            "cache_timeout_s": 10.0,
            "budget_timeout_s": 10.0,
        }
        values.update(settings)
        service = JudgeService.from_settings(Settings(**values))
        harness = Harness(openai, anthropic, service)
        if not real_sleep:

            async def record(delay: float) -> None:
                harness.sleeps.append(delay)
                await asyncio.sleep(0)

            service._calls._sleep = record
        yield harness
    finally:
        if service is not None:
            await service.aclose()
        openai.stop()
        anthropic.stop()
