"""A recorded run keeps each judge score's spread, so the reviewer queue puts the outputs
whose samples disagree first: a real server records a RunSuite whose judge (the OpenAI
stand-in, the real SDK) is asked three times per output, and the viewer reads the run back
from the run store as it serves `/runs/<id>/queue`.

Outputs: `split` (levels 5, 1, 5: value 2/3, a fail, one sample of three agrees),
`middle` (3, 3, 3: 0.5, exactly the middle of the scale, all agree) and `sure` (5, 5, 5).
The queue is `split`, `middle`, `sure`; without the spread the run store used to drop,
`middle` came first, nearest the middle.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
from scorewire.judge import JudgeService
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc
from scorewire.viewer.agreement_view import review_queue
from scorewire.viewer.store import store_source_for

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

KEY = "sk-test-queue-spread-0123456789"
ANSWERS = {"split": (5, 1, 5), "middle": (3, 3, 3), "sure": (5, 5, 5)}
JUDGE = pb.CheckSpec(name="polite", type="judge", params={"rubric": "Is it polite?", "samples": 3})


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    asked: Counter[str] = Counter()

    def judge(body: Any) -> Reply:
        user = body["messages"][-1]["content"]
        name = next(n for n in ANSWERS if f"<output>\n{n}" in user)
        level = ANSWERS[name][asked[name] % 3]
        asked[name] += 1
        return Reply(content=json.dumps({"reasoning": "r", "score": level}))

    f = FakeOpenAI(api_key=KEY)
    f.responder = judge
    with f.running():
        yield f


@pytest.fixture
async def recorded(fake: FakeOpenAI, tmp_path: Any) -> AsyncIterator[tuple[Any, str]]:
    """The run store after a recorded RunSuite, and the run's id."""
    settings = Settings(
        host="127.0.0.1",
        port=0,
        metrics_enabled=False,
        openai_base_url=fake.url,
        openai_api_key=KEY,
        judge_model="openai:gpt-4o-mini",
    )
    judge = JudgeService.from_settings(settings)
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    running, port = await create_server(settings, judge=judge, runs=store)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            req = pb.RunSuiteRequest(checks=[JUDGE], record=True, run_name="queue")
            for name in ANSWERS:
                req.cases.add(sample=pb.Sample(id=name), output=pb.Output(text=name))
            run_id = ""
            async for ev in scoring_pb2_grpc.ScoringServiceStub(channel).RunSuite(req):
                if ev.WhichOneof("event") == "summary":
                    run_id = ev.summary.run_id
        assert run_id
        yield store, run_id
    finally:
        await running.stop(0)
        await judge.aclose()


async def test_the_queue_puts_disagreeing_samples_first(recorded: tuple[Any, str]) -> None:
    store, run_id = recorded
    source = store_source_for(store, asyncio.get_running_loop(), lambda who: None, timeout_s=10)
    # the viewer's threads read the store on the server's loop, as when it serves a page
    cases = await asyncio.to_thread(lambda: source(None).results(run_id))
    spreads = {c.sample_id: c.scores[0].spread for c in cases}
    assert spreads["split"] is not None and spreads["split"].samples == 3
    # the mean 2/3 is under the bar of level 4 (0.75): a fail, which one sample of three gave
    split = next(c for c in cases if c.sample_id == "split").scores[0]
    assert split.value == pytest.approx(2 / 3) and not split.passed
    assert spreads["split"].agreement == pytest.approx(1 / 3)
    assert sorted(spreads["split"].values) == [0.0, 1.0, 1.0]
    assert spreads["middle"] is not None and spreads["middle"].agreement == 1.0
    queue = review_queue(cases, lambda keys: {})
    assert [c.sample_id for c in queue] == ["split", "middle", "sure"]
