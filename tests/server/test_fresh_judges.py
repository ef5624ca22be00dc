"""Asking the judges again through the real server: `judge_cache: JUDGE_CACHE_REFRESH`.

A holdout is recorded with the verdict cache on (the default); the OpenAI stand-in (the
real SDK talks to it) then changes its answer, or the model it reports. A plain rerun
reads the cached verdicts and shows nothing; a rerun that asks the judges again shows the
drift and the new model, leaves its verdicts in the cache for later requests, and is
held against and charged to the budgets like any judge call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from prometheus_client import CollectorRegistry
from scorewire.client import AsyncClient
from scorewire.judge import JudgeService
from scorewire.metrics.judge_drift import DriftMetrics
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import runs_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

KEY = "sk-test-fresh-judges-0123456789"
OLD, NEW = "gpt-4o-mini-2024-07-18", "gpt-4o-mini-2025-03-01"
RUBRIC = "Is it polite?"
JUDGE = pb.CheckSpec(name="polite", type="judge", params={"rubric": RUBRIC})
REFRESH, READ = pb.JUDGE_CACHE_REFRESH, pb.JUDGE_CACHE_READ
HOLDOUT = ("thank you", "thanks a lot")
COST = (100 * 0.15 + 20 * 0.60) / 1e6  # the stand-in's default usage at gpt-4o-mini's price


def level(score: int, model: str = OLD) -> Reply:
    return Reply(content=json.dumps({"reasoning": "r", "score": score}), model=model)


class Served:
    """A server with a run store and the drift gauges, its judge, and stubs."""

    def __init__(
        self, address: str, channel: grpc.aio.Channel, judge: JudgeService, registry: Any
    ) -> None:
        self.address, self.channel, self.judge, self.registry = address, channel, judge, registry
        self.scoring = scoring_pb2_grpc.ScoringServiceStub(channel)
        self.runs = runs_pb2_grpc.RunServiceStub(channel)

    async def holdout(self, **fields: Any) -> tuple[list[pb.Score], pb.RunSummary]:
        """Run (and record, as `holdout`) the holdout: its judge scores and the summary."""
        req = pb.RunSuiteRequest(checks=[JUDGE], record=True, run_name="holdout", **fields)
        for i, text in enumerate(HOLDOUT):
            req.cases.add(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=text))
        scores: list[pb.Score] = []
        summary = None
        async for ev in self.scoring.RunSuite(req):
            if ev.WhichOneof("event") == "summary":
                summary = ev.summary
            else:
                scores.extend(r.scores[0] for r in sorted(ev.results.results, key=_index))
        assert summary is not None
        return scores, summary

    async def gauges(self, expected: tuple[float, float]) -> tuple[float, float] | None:
        """(drift, model changed) of the holdout once they are `expected`, or as they are
        after 5 s: the server compares a recorded run with the one before after it ends."""
        labels = {"run_name": "holdout", "check": "polite"}
        now = None
        for _ in range(250):
            drift = self.registry.get_sample_value("scorewire_judge_drift", labels)
            changed = self.registry.get_sample_value("scorewire_judge_model_changed", labels)
            now = None if drift is None or changed is None else (drift, changed)
            if now == expected:
                break
            await asyncio.sleep(0.02)
        return now


def _index(r: pb.CaseResult) -> int:
    return r.index


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(default=level(5), api_key=KEY)
    with server.running():
        yield server


def settings_for(fake: FakeOpenAI, **extra: Any) -> Settings:
    return Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
        **extra,
    )


@pytest.fixture
async def served(fake: FakeOpenAI, tmp_path: Any) -> AsyncIterator[Served]:
    # The verdict cache is on, as by default; the server's budget watches every charge.
    settings = settings_for(fake, judge_budget_usd=1.0)
    judge = JudgeService.from_settings(settings)
    registry = CollectorRegistry()
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    running, port = await create_server(
        settings, judge=judge, runs=store, drift_observer=DriftMetrics(registry, limit=0.1)
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Served(f"127.0.0.1:{port}", channel, judge, registry)
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


def spent(served: Served) -> float:
    budget = served.judge.server_budget
    assert budget is not None
    return budget.spent_usd


# --- the holdout ---------------------------------------------------------------------------


async def test_a_rerun_that_asks_again_shows_the_drift_a_cached_rerun_hides(
    served: Served, fake: FakeOpenAI
) -> None:
    await served.holdout()
    fake.default = level(3)  # same outputs; the judge now says level 3 of 5 (0.5)
    plain, _ = await served.holdout()
    # What was wrong: the cache answers, so the rerun sees the old verdicts.
    assert [(s.value, s.cached) for s in plain] == [(1.0, True)] * 2
    assert await served.gauges((0.0, 0.0)) == (0.0, 0.0)
    fresh, summary = await served.holdout(judge_cache=REFRESH)
    assert [(s.value, s.cached) for s in fresh] == [(0.5, False)] * 2
    assert summary.cost_usd == pytest.approx(2 * COST)
    assert await served.gauges((-0.5, 0.0)) == (-0.5, 0.0)
    assert fake.calls == 4


async def test_a_rerun_that_asks_again_shows_the_providers_new_model(
    served: Served, fake: FakeOpenAI
) -> None:
    await served.holdout()
    fake.default = level(5, model=NEW)  # the same answers from another model
    plain, _ = await served.holdout()
    assert [list(s.judge.reported_models) for s in plain] == [[OLD]] * 2
    assert await served.gauges((0.0, 0.0)) == (0.0, 0.0)
    fresh, summary = await served.holdout(judge_cache=REFRESH)
    assert [list(s.judge.reported_models) for s in fresh] == [[NEW]] * 2
    assert await served.gauges((0.0, 1.0)) == (0.0, 1.0)
    page = await served.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=summary.run_id))
    assert {m for r in page.results for m in r.result.scores[0].judge.reported_models} == {NEW}


async def test_the_fresh_verdicts_stay_in_the_cache_for_later_requests(
    served: Served, fake: FakeOpenAI
) -> None:
    await served.holdout()
    fake.default = level(3)
    await served.holdout(judge_cache=REFRESH)
    later, summary = await served.holdout()
    assert [(s.value, s.cached) for s in later] == [(0.5, True)] * 2
    assert summary.cost_usd == 0 and fake.calls == 4


async def test_fresh_calls_are_charged_to_the_budgets_and_refused_past_them(
    served: Served, fake: FakeOpenAI
) -> None:
    await served.holdout()
    assert spent(served) == pytest.approx(2 * COST)
    await served.holdout()  # cached: nothing charged
    assert spent(served) == pytest.approx(2 * COST)
    await served.holdout(judge_cache=REFRESH, budget_usd=1.0)
    assert spent(served) == pytest.approx(4 * COST)
    # A request budget that cannot hold a call's ceiling refuses it: an error, never the
    # older verdict the cache still holds.
    poor, summary = await served.holdout(judge_cache=REFRESH, budget_usd=COST)
    assert [s.error.code for s in poor] == ["BUDGET_EXHAUSTED"] * 2
    assert not any(s.passed for s in poor) and not summary.gate_passed
    assert fake.calls == 4 and spent(served) == pytest.approx(4 * COST)


async def test_a_check_asking_more_calls_than_allowed_is_refused_asked_again_or_not(
    fake: FakeOpenAI,
) -> None:
    settings = settings_for(fake, judge_watch={"max_calls_per_output": 2})
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = scoring_pb2_grpc.ScoringServiceStub(channel)
            many = pb.CheckSpec(type="judge", params={"rubric": RUBRIC, "samples": 3})
            req = pb.ScoreRequest(output=pb.Output(text="x"), checks=[many], judge_cache=REFRESH)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.Score(req)
    finally:
        await running.stop(0)
        await judge.aclose()
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_calls_per_output" in (err.value.details() or "") and fake.calls == 0


# --- tenants -------------------------------------------------------------------------------


async def test_a_tenant_asks_again_only_against_its_own_budget(fake: FakeOpenAI) -> None:
    # Each call reports nearly its ceiling (~$0.0008): a token's $0.0012 holds one call.
    fake.default = Reply(
        content=json.dumps({"reasoning": "r", "score": 5}), input_tokens=1300, output_tokens=1024
    )
    tokens = ["token-a-0123456789", "token-b-0123456789"]
    digests = ",".join(hashlib.sha256(t.encode()).hexdigest() for t in tokens)
    settings = settings_for(fake, auth_token_sha256=digests, judge_budget_per_token_usd=0.0012)
    judge = JudgeService.from_settings(settings)
    running, port = await create_server(settings, judge=judge)

    def as_(token: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token}"),)

    def req(judge_cache: int = 0) -> pb.ScoreRequest:
        return pb.ScoreRequest(output=pb.Output(text="x"), checks=[JUDGE], judge_cache=judge_cache)

    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = scoring_pb2_grpc.ScoringServiceStub(channel)
            first = await stub.Score(req(), metadata=as_(tokens[0]))
            # a's budget holds no second call: asking again is refused, not answered from
            # the cache and not paid by anyone else
            again = await stub.Score(req(REFRESH), metadata=as_(tokens[0]))
            other = await stub.Score(req(REFRESH), metadata=as_(tokens[1]))
            # b's fresh verdict did not replace a's: a's own hit is still free and cached
            mine = await stub.Score(req(), metadata=as_(tokens[0]))
    finally:
        await running.stop(0)
        await judge.aclose()
    assert first.passed and not first.scores[0].cached
    assert again.scores[0].error.code == "BUDGET_EXHAUSTED"
    assert other.passed and not other.scores[0].cached and other.scores[0].cost_usd > 0
    assert mine.passed and mine.scores[0].cached and mine.scores[0].cost_usd == 0
    assert fake.calls == 2


# --- each request, the suite's setting, bad values -----------------------------------------


async def test_score_and_score_stream_ask_again(served: Served, fake: FakeOpenAI) -> None:
    one = pb.ScoreRequest(output=pb.Output(text="thank you"), checks=[JUDGE])
    await served.scoring.Score(one)
    fake.default = level(1)
    cached = await served.scoring.Score(one)
    one.judge_cache = REFRESH
    scored = await served.scoring.Score(one)

    async def stream() -> AsyncIterator[pb.ScoreStreamRequest]:
        yield pb.ScoreStreamRequest(config=pb.StreamConfig(checks=[JUDGE], judge_cache=REFRESH))
        yield pb.ScoreStreamRequest(
            case=pb.StreamCase(request_id="r", output=pb.Output(text="thanks a lot"))
        )

    await served.holdout()  # "thanks a lot" is cached at level 1 now
    fake.default = level(3)
    streamed = [r async for r in served.scoring.ScoreStream(stream())]
    assert (cached.scores[0].value, cached.scores[0].cached) == (1.0, True)
    assert (scored.scores[0].value, scored.scores[0].cached) == (0.0, False)
    assert [(r.scores[0].value, r.scores[0].cached) for r in streamed] == [(0.5, False)]


SUITE = """
settings: {fresh_judges: true}
checks:
  polite: {type: judge, rubric: "Is it polite?"}
"""


async def test_a_suite_that_asks_again_does_so_unless_the_request_says_read(
    served: Served, fake: FakeOpenAI
) -> None:
    def req(judge_cache: int) -> pb.RunSuiteRequest:
        return pb.RunSuiteRequest(
            suite_yaml=SUITE,
            cases=[pb.Case(sample=pb.Sample(id="s"), output=pb.Output(text="thank you"))],
            judge_cache=judge_cache,
        )

    async def value(judge_cache: int) -> tuple[float, bool]:
        async for ev in served.scoring.RunSuite(req(judge_cache)):
            if ev.WhichOneof("event") == "results":
                score = ev.results.results[0].scores[0]
                return score.value, score.cached
        raise AssertionError("no result")

    assert await value(READ) == (1.0, False)
    fake.default = level(1)
    assert await value(READ) == (1.0, True)
    assert await value(pb.JUDGE_CACHE_UNSPECIFIED) == (0.0, False)
    assert fake.calls == 2


CHECKLLM = """
settings: {fresh_judges: true}
tests:
  - output: thank you
    assert:
      - {type: judge, rubric: "Is it polite?"}
"""


async def test_a_checkllm_suite_that_asks_again_does_so(served: Served, fake: FakeOpenAI) -> None:
    async def value(judge_cache: int) -> tuple[float, bool]:
        req = pb.RunSuiteRequest(suite_yaml=CHECKLLM, judge_cache=judge_cache)
        async for ev in served.scoring.RunSuite(req):
            if ev.WhichOneof("event") == "results":
                score = ev.results.results[0].scores[0]
                return score.value, score.cached
        raise AssertionError("no result")

    assert await value(pb.JUDGE_CACHE_UNSPECIFIED) == (1.0, False)
    fake.default = level(1)
    assert await value(READ) == (1.0, True)
    assert await value(pb.JUDGE_CACHE_UNSPECIFIED) == (0.0, False)
    assert fake.calls == 2


def violations(err: grpc.aio.AioRpcError) -> list[str]:
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad = error_details_pb2.BadRequest()
                    detail.Unpack(bad)
                    return [v.field for v in bad.field_violations]
    return []


async def test_an_unknown_judge_cache_value_is_invalid_argument_naming_the_field(
    served: Served, fake: FakeOpenAI
) -> None:
    unknown: Any = 7  # a value of a newer client's enum
    with pytest.raises(grpc.aio.AioRpcError) as score:
        await served.scoring.Score(
            pb.ScoreRequest(output=pb.Output(text="x"), checks=[JUDGE], judge_cache=unknown)
        )
    with pytest.raises(grpc.aio.AioRpcError) as run:
        await served.holdout(judge_cache=unknown)

    async def stream() -> AsyncIterator[pb.ScoreStreamRequest]:
        yield pb.ScoreStreamRequest(config=pb.StreamConfig(checks=[JUDGE], judge_cache=unknown))

    with pytest.raises(grpc.aio.AioRpcError) as streamed:
        async for _ in served.scoring.ScoreStream(stream()):
            pass
    for err, field in ((score, "judge_cache"), (run, "judge_cache"),
                       (streamed, "config.judge_cache")):  # fmt: skip
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert violations(err.value) == [field]
    assert fake.calls == 0


# --- the Python client ---------------------------------------------------------------------


async def test_the_python_client_asks_again_with_fresh_judges(
    served: Served, fake: FakeOpenAI
) -> None:
    target = served.address
    case = {"sample": {"id": "s"}, "output": "thank you"}
    checks = [{"name": "polite", "type": "judge", "params": {"rubric": RUBRIC}}]
    async with AsyncClient(target) as client:
        await client.score("thank you", checks=checks)
        fake.default = level(1)
        cached = await client.score("thank you", checks=checks, fresh_judges=False)
        fresh = await client.score("thank you", checks=checks, fresh_judges=True)
        fake.default = level(3)
        run = client.run_suite([case], checks=checks, fresh_judges=True)
        suite = [r.scores[0] async for r in run]
        with pytest.raises(TypeError, match="fresh_judges"):
            await client.score("x", checks=checks, fresh_judges=cast(Any, "yes"))
    assert (cached.scores[0].value, cached.scores[0].cached) == (1.0, True)
    assert (fresh.scores[0].value, fresh.scores[0].cached) == (0.0, False)
    assert [(s.value, s.cached) for s in suite] == [(0.5, False)]
