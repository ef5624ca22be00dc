"""A judge panel through the real server: Score lists each judge's verdict, a bad panel is
INVALID_ARGUMENT at its field, an unpriced panel judge under a budget FAILED_PRECONDITION
at its field, both before any judge call."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from scorewire.judge import JudgeService
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.server.test_preflight import details

OPENAI_KEY = "sk-test-grpc-panel-0123456789"
ANTHROPIC_KEY = "sk-ant-test-grpc-panel-9876543210"
MINI, HAIKU = "openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"


def level(score: int) -> Reply:
    return Reply(content=json.dumps({"reasoning": "r", "score": score}))


@pytest.fixture
def fakes() -> Any:
    openai = FakeOpenAI(default=level(5), api_key=OPENAI_KEY)
    anthropic = FakeAnthropic(default=level(2), api_key=ANTHROPIC_KEY)
    with openai.running(), anthropic.running():
        yield openai, anthropic


@pytest.fixture
async def stub(fakes: Any) -> AsyncIterator[scoring_pb2_grpc.ScoringServiceStub]:
    openai, anthropic = fakes
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=openai.url,
        openai_api_key=OPENAI_KEY,
        anthropic_base_url=anthropic.url,
        anthropic_api_key=ANTHROPIC_KEY,
        judge_model=MINI,
    )
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield scoring_pb2_grpc.ScoringServiceStub(channel)
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


def panel(*judges: str, **params: Any) -> pb.CheckSpec:
    fields = struct_pb2.Struct()
    fields.update({"rubric": "Is it polite?", "judges": list(judges), **params})
    return pb.CheckSpec(name="polite", type="judge", params=fields)


def request(*checks: pb.CheckSpec, **kw: Any) -> pb.ScoreRequest:
    return pb.ScoreRequest(output=pb.Output(text="thank you"), checks=list(checks), **kw)


async def test_score_with_a_panel_lists_each_judge(stub: Any, fakes: Any) -> None:
    openai, anthropic = fakes
    resp = await stub.Score(request(panel(MINI, HAIKU, panel="any")))
    [score] = resp.scores
    assert not score.error.code and score.passed and score.value == 1.0
    assert f"{MINI} level 5/5 pass; {HAIKU} level 2/5 fail" in score.reason
    assert score.spread.samples == 2 and list(score.spread.values) == [1.0, 0.25]
    assert score.cost_usd > 0 and openai.calls == 1 and anthropic.calls == 1
    # the same panel again: every verdict from the cache
    again = (await stub.Score(request(panel(MINI, HAIKU, panel="any")))).scores[0]
    assert again.cached and again.cost_usd == 0 and openai.calls + anthropic.calls == 2
    # every judge must pass: anthropic's level 2 fails the panel
    strict = (await stub.Score(request(panel(MINI, HAIKU, panel="all")))).scores[0]
    assert not strict.passed and strict.value == 0.25


async def test_a_bad_panel_is_invalid_argument_at_its_field(stub: Any, fakes: Any) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.Score(request(panel(MINI, "anthropc:claude")))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    _, bad = details(caught.value)
    assert [v.field for v in bad] == ["checks[0].params.judges[1]"]
    assert "unknown judge backend" in bad[0].description
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.Score(request(panel(MINI, HAIKU, panel="weighted", weights=[1.0, 0.0])))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in details(caught.value)[1]] == ["checks[0].params.weights[1]"]
    assert sum(f.calls for f in fakes) == 0


async def test_an_unpriced_panel_judge_under_a_budget_is_refused_at_its_field(
    stub: Any, fakes: Any
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.Score(request(panel(MINI, "openai:my-local-model"), budget_usd=1.0))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    pre, bad = details(caught.value)
    assert [v.type for v in pre] == ["PRICE"]
    assert [v.field for v in bad] == ["checks[0].params.judges[1]"]
    assert sum(f.calls for f in fakes) == 0


async def test_score_with_a_cascade_says_which_judge_decided(stub: Any, fakes: Any) -> None:
    openai, anthropic = fakes
    fields = struct_pb2.Struct()
    fields.update({"rubric": "Is it polite?", "cascade": [MINI, HAIKU], "audit_share": 1.0})
    spec = pb.CheckSpec(name="polite", type="judge", params=fields)
    [score] = (await stub.Score(request(spec))).scores
    # the cheap judge is sure (level 5), the audit sends the case on, the strong one decides
    assert f"{MINI} level 5/5 pass, audit; {HAIKU} level 2/5 fail, decided" in score.reason
    assert not score.passed and not score.error.code
    assert openai.calls == 1 and anthropic.calls == 1


async def test_a_panel_over_the_judge_calls_per_output_cap_is_refused_at_its_field(
    fakes: Any,
) -> None:
    # 2 judges × 3 samples is 6 calls for each output, over a cap of 4: refused before any.
    openai, anthropic = fakes
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=openai.url,
        openai_api_key=OPENAI_KEY,
        anthropic_base_url=anthropic.url,
        anthropic_api_key=ANTHROPIC_KEY,
        judge_model=MINI,
        judge_watch={"max_calls_per_output": 4},
    )
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub = scoring_pb2_grpc.ScoringServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Score(request(panel(MINI, HAIKU, samples=3)))
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        _, bad = details(caught.value)
        assert [v.field for v in bad] == ["checks[0].params.judges"]
        assert "judge_watch__max_calls_per_output" in bad[0].description
        assert "2 judges × 3 samples" in bad[0].description
        assert sum(f.calls for f in fakes) == 0
        # 2 × 2 = 4 is within it
        resp = await stub.Score(request(panel(MINI, HAIKU, samples=2)))
        [score] = resp.scores
        assert not score.error.code
        # the spread holds one value per judge; the calls behind them are all four
        assert (score.spread.samples, score.spread.judge_calls) == (2, 4)
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()
