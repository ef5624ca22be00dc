"""Judge drift through a real server: a recorded run keeps each judge score's judges, the
model its provider reported and the prompt version; when a stand-in judge changes its
answers or its reported model between two recorded runs of one name, the drift figure
and the metric say so."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from prometheus_client import CollectorRegistry
from scorewire.core.judged import PROMPT_VERSION
from scorewire.judge import JudgeService
from scorewire.metrics.judge_drift import DriftMetrics
from scorewire.runs import Outcome, RunOutcomes, judge_drift
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import runs_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

KEY = "sk-test-drift-0123456789abcdef"
JUDGE = pb.CheckSpec(name="polite", type="judge", params={"rubric": "Is it polite?"})
EXACT = pb.CheckSpec(name="short", type="length", params={"max_chars": 100})
OLD, NEW = "gpt-4o-mini-2024-07-18", "gpt-4o-mini-2025-03-01"


def level(score: int, model: str = OLD) -> Reply:
    return Reply(content=json.dumps({"reasoning": "r", "score": score}), model=model)


class Served:
    def __init__(self, scoring: Any, runs: Any, metrics: DriftMetrics, registry: Any) -> None:
        self.scoring, self.runs, self.metrics, self.registry = scoring, runs, metrics, registry

    async def record(self, *texts: str) -> str:
        req = pb.RunSuiteRequest(checks=[JUDGE, EXACT], record=True, run_name="holdout")
        for i, text in enumerate(texts):
            req.cases.add(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=text))
        run_id = ""
        async for ev in self.scoring.RunSuite(req):
            if ev.WhichOneof("event") == "summary":
                run_id = ev.summary.run_id
        return run_id

    async def gauge(self, name: str, check: str = "polite") -> float | None:
        """The metric's value once the server compared the run (it does so after it)."""
        for _ in range(200):
            got = self.registry.get_sample_value(name, {"run_name": "holdout", "check": check})
            if got is not None:
                return float(got)
            await asyncio.sleep(0.02)
        return None


@pytest.fixture
def fake() -> Any:
    server = FakeOpenAI(default=level(5), api_key=KEY)
    with server.running():
        yield server


@pytest.fixture
async def served(fake: FakeOpenAI, tmp_path: Any) -> AsyncIterator[Served]:
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
    )
    judge = JudgeService.from_settings(settings)
    judge.use_cache = False  # a holdout rerun asks the judge again (a cache would answer)
    registry = CollectorRegistry()
    metrics = DriftMetrics(registry, limit=0.1)
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    running, port = await create_server(settings, judge=judge, runs=store, drift_observer=metrics)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Served(
            scoring_pb2_grpc.ScoringServiceStub(channel),
            runs_pb2_grpc.RunServiceStub(channel),
            metrics,
            registry,
        )
    finally:
        await channel.close()
        await running.stop(0)
        await judge.aclose()


async def test_a_recorded_judge_score_keeps_its_judge_reported_model_and_prompt_version(
    served: Served,
) -> None:
    run_id = await served.record("thank you")
    page = await served.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=run_id))
    judged, plain = page.results[0].result.scores
    assert list(judged.judge.models) == ["openai:gpt-4o-mini"]
    assert list(judged.judge.reported_models) == [OLD]
    assert judged.judge.prompt_version == PROMPT_VERSION
    # A deterministic check asked no judge: no record.
    assert not plain.HasField("judge")


async def test_changed_answers_between_two_runs_raise_the_drift_metric(
    served: Served, fake: FakeOpenAI
) -> None:
    await served.record("thank you", "thanks a lot")
    # Nothing to compare the first run of a name with.
    assert served.registry.get_sample_value("scorewire_judge_drift", {}) is None
    fake.default = level(3)  # same outputs, the judge now says level 3 of 5 (0.5)
    await served.record("thank you", "thanks a lot")
    assert await served.gauge("scorewire_judge_drift") == pytest.approx(-0.5)
    assert await served.gauge("scorewire_judge_drift_holdout") == 2
    assert await served.gauge("scorewire_judge_model_changed") == 0
    assert served.registry.get_sample_value("scorewire_judge_drift_limit") == 0.1


async def test_a_new_reported_model_sets_model_changed_even_when_the_mean_holds(
    served: Served, fake: FakeOpenAI
) -> None:
    await served.record("thank you")
    fake.default = level(5, model=NEW)
    await served.record("thank you")
    assert await served.gauge("scorewire_judge_model_changed") == 1
    assert await served.gauge("scorewire_judge_drift") == 0


def outcomes(*cases: tuple[str, str, float, Outcome], models: tuple[str, ...] = (OLD,)) -> Any:
    out = RunOutcomes()
    for key, text, value, outcome in cases:
        out.add(key, ["polite"], [outcome], [value], text, [models])
    return out


P, F, E = Outcome.PASSED, Outcome.FAILED, Outcome.ERRORED


def test_the_holdout_leaves_out_changed_outputs_and_errors() -> None:
    base = outcomes(("a", "x", 1.0, P), ("b", "y", 1.0, P), ("c", "z", 1.0, P))
    # b's output changed (not the judge's doing), c errored: only a is in the holdout.
    now = outcomes(("a", "x", 0.5, F), ("b", "other", 0.0, F), ("c", "z", 0.0, E))
    [d] = judge_drift(base, now)
    assert (d.holdout, d.base_mean, d.mean, d.delta) == (1, 1.0, 0.5, -0.5)
    assert d.exceeds(0.1) and not d.exceeds(0.5)


def test_a_check_that_asked_no_judge_has_no_drift() -> None:
    base, now = RunOutcomes(), RunOutcomes()
    base.add("a", ["short"], [P], [1.0], "x")
    now.add("a", ["short"], [F], [0.0], "x")
    assert judge_drift(base, now) == []


def test_an_unknown_reported_model_is_no_model_change() -> None:
    # A verdict from a cache entry older than the record reports no model.
    [d] = judge_drift(outcomes(("a", "x", 1.0, P), models=()), outcomes(("a", "x", 1.0, P)))
    assert not d.model_changed
