"""Preflight over gRPC: a suite naming a judge the server cannot call is refused with
FAILED_PRECONDITION before any call, naming the field and the setting; ValidateSuite
reports the same problems (and `offline` skips the credential part)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from scorewire.judge import JudgeService
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

KEY = "sk-test-preflight-0123456789"

RUBRIC = pb.CheckSpec(name="helpful", type="judge", params={"rubric": "Is it helpful?"})


def check(kind: str, model: str | None = None, **params: Any) -> pb.CheckSpec:
    spec = pb.CheckSpec(type=kind, params=params)
    if model is not None:
        spec.params["model"] = model
    return spec


def case(text: str = "an answer") -> pb.Case:
    return pb.Case(sample=pb.Sample(id="s0"), output=pb.Output(text=text))


@pytest.fixture
def fake() -> Any:
    stand_in = FakeOpenAI(
        default=Reply(content=json.dumps({"reasoning": "r", "score": 5})), api_key=KEY
    )
    with stand_in.running():
        yield stand_in


async def _serve(settings: Settings) -> AsyncIterator[scoring_pb2_grpc.ScoringServiceStub]:
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield scoring_pb2_grpc.ScoringServiceStub(channel)
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


@pytest.fixture
async def keyless() -> AsyncIterator[scoring_pb2_grpc.ScoringServiceStub]:
    """A server whose judge has no backend at all (no key, no base URL)."""
    async for stub in _serve(Settings(host="127.0.0.1", port=0, metrics_enabled=False)):
        yield stub


@pytest.fixture
async def openai_only(fake: FakeOpenAI) -> AsyncIterator[scoring_pb2_grpc.ScoringServiceStub]:
    """A server whose judge reaches the OpenAI stand-in only."""
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
    )
    async for stub in _serve(settings):
        yield stub


def details(err: grpc.aio.AioRpcError) -> tuple[list[Any], list[Any]]:
    """(PreconditionFailure violations, BadRequest field violations) of a failed call."""
    raw = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
    assert raw is not None, "no rich status details"
    status = status_pb2.Status.FromString(raw)
    pre, bad = [], []
    for any_detail in status.details:
        if any_detail.Is(error_details_pb2.PreconditionFailure.DESCRIPTOR):
            msg = error_details_pb2.PreconditionFailure()
            any_detail.Unpack(msg)
            pre.extend(msg.violations)
        elif any_detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            msg2 = error_details_pb2.BadRequest()
            any_detail.Unpack(msg2)
            bad.extend(msg2.field_violations)
    return pre, bad


async def run_suite(stub: Any, **kw: Any) -> None:
    async for _ in stub.RunSuite(pb.RunSuiteRequest(**kw)):
        pass


async def test_run_suite_without_any_judge_backend_fails_its_precondition(keyless) -> None:
    # no backend at all: FAILED_PRECONDITION at the judge check's path, naming the setting
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await run_suite(keyless, checks=[check("contains", needles=["a"]), RUBRIC], cases=[case()])
    err = caught.value
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    pre, bad = details(err)
    assert [(v.type, v.subject) for v in pre] == [("BACKEND", "SCOREWIRE_OPENAI_API_KEY")]
    assert [v.field for v in bad] == ["checks[1]"]
    assert "SCOREWIRE_ANTHROPIC_API_KEY" in bad[0].description


async def test_score_and_score_stream_check_too(keyless) -> None:
    # Score: the same refusal before any judge call
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await keyless.Score(pb.ScoreRequest(output=pb.Output(text="x"), checks=[RUBRIC]))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    # ScoreStream: refused after its config
    config = pb.ScoreStreamRequest(config=pb.StreamConfig(checks=[RUBRIC]))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in keyless.ScoreStream(iter([config])):
            pass
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    # a check with no judge is not concerned
    resp = await keyless.Score(
        pb.ScoreRequest(output=pb.Output(text="abc"), checks=[check("contains", needles=["a"])])
    )
    assert resp.passed


async def test_a_named_backend_without_credentials_is_named(openai_only, fake) -> None:
    # the server has OpenAI only: a check naming anthropic is refused naming anthropic,
    # and nothing reached the OpenAI stand-in
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await run_suite(
            openai_only,
            checks=[RUBRIC, check("relevance", model="anthropic:claude-haiku-4-5")],
            cases=[case()],
        )
    err = caught.value
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    pre, bad = details(err)
    assert [(v.type, v.subject) for v in pre] == [("CREDENTIALS", "SCOREWIRE_ANTHROPIC_API_KEY")]
    assert [v.field for v in bad] == ["checks[1]"]
    assert "anthropic judge backend is not configured" in bad[0].description
    assert fake.calls == 0


async def test_an_unpriced_model_in_a_budgeted_run_is_refused(openai_only, fake) -> None:
    # a budget cannot hold calls it cannot price: refused up front, naming the price setting
    local = check("judge", model="openai:my-local-model", rubric="ok?")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await run_suite(openai_only, checks=[local], cases=[case()], budget_usd=1.0)
    pre, bad = details(caught.value)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert [(v.type, v.subject) for v in pre] == [("PRICE", "SCOREWIRE_JUDGE_PRICES")]
    assert "my-local-model" in bad[0].description
    assert fake.calls == 0
    # unbudgeted, the same model runs (its scores are flagged unpriced)
    resp = await openai_only.Score(pb.ScoreRequest(output=pb.Output(text="x"), checks=[local]))
    assert resp.scores[0].unpriced and fake.calls == 1


async def test_malformed_input_stays_invalid_argument(keyless) -> None:
    # a bad spec is INVALID_ARGUMENT even on a server without a judge
    bad = check("judge", model="nope:model", rubric="r")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await run_suite(keyless, checks=[bad], cases=[case()])
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


SUITE = """
settings: {budget: 1.0}
checks:
  tone: {type: judge, rubric: "Is it polite?", model: "anthropic:claude-haiku-4-5"}
  local: {type: judge, rubric: "Is it short?", model: "openai:my-local-model"}
  short: {type: length, max_chars: 100}
suites:
  smoke: {checks: [tone, local, short]}
"""


async def test_validate_suite_reports_preconditions_and_offline_skips_credentials(
    openai_only,
) -> None:
    # the suite is well formed (valid) but not runnable here: both problems listed
    resp = await openai_only.ValidateSuite(pb.ValidateSuiteRequest(suite_yaml=SUITE))
    assert resp.valid and not resp.runnable
    got = {(p.field, p.kind, p.setting) for p in resp.preconditions}
    assert got == {
        ("suite_yaml.checks.tone", "CREDENTIALS", "SCOREWIRE_ANTHROPIC_API_KEY"),
        ("suite_yaml.checks.local", "PRICE", "SCOREWIRE_JUDGE_PRICES"),
    }
    # offline: only the price problem, which no credential would fix
    resp = await openai_only.ValidateSuite(pb.ValidateSuiteRequest(suite_yaml=SUITE, offline=True))
    assert [(p.field, p.kind) for p in resp.preconditions] == [("suite_yaml.checks.local", "PRICE")]
    # and RunSuite refuses the same suite
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await run_suite(openai_only, suite_yaml=SUITE, cases=[case()])
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    # a runnable suite says so
    ok = await openai_only.ValidateSuite(pb.ValidateSuiteRequest(checks=[RUBRIC]))
    assert ok.valid and ok.runnable and not ok.preconditions


CHECKLLM_JUDGED = """
prompts: ["Answer: {{q}}"]
providers: [echo]
tests:
  - vars: {q: capital of France}
    outputs: {echo: Paris}
    assert:
      - {type: contains, value: Paris}
      - {type: rubric, value: names the capital}
"""


async def test_a_checkllm_suite_with_a_judge_assertion_fails_its_precondition(keyless) -> None:
    # the checkllm format over gRPC goes through the same preflight: its judge assertion
    # on a server with no judge backend is refused before any call, at the test's asserts
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await run_suite(keyless, suite_yaml=CHECKLLM_JUDGED)
    err = caught.value
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    pre, bad = details(err)
    assert [v.type for v in pre] == ["BACKEND"]
    assert [v.field for v in bad] == ["suite_yaml.tests[0].assert"]
    # without the judge assertion the same suite runs (the preflight is not the refusal)
    recorded = CHECKLLM_JUDGED.replace("      - {type: rubric, value: names the capital}\n", "")
    await run_suite(keyless, suite_yaml=recorded)
