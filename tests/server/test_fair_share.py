"""The scoring workers and each judge backend's concurrency are shared by tenant: one
tenant's many requests wait behind each other, not in front of another tenant's
(weighted round robin; a per-tenant cap on the workers).

Ordering, not time, is what these assert: tenant A keeps every job it may hold busy
(checks that spin until told to stop, judge calls queued behind the concurrency limit),
and tenant B's Score is answered while A's work is still held up.
"""

from __future__ import annotations

import asyncio
import hashlib
import json

import grpc
from scorewire.judge import JudgeService
from scorewire.server.app import create_server
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.fakes.openai_server import FakeOpenAI
from tests.server.test_isolation import SPIN, poll, serving, small_request, spin_check
from tests.server.test_judge_over_grpc import JUDGE, KEY, judge_settings, verdict

TOKENS = {"hog": "token-of-the-hog", "neighbour": "token-of-the-neighbour"}
NAMED = json.dumps(
    [
        {"name": name, "sha256": hashlib.sha256(t.encode()).hexdigest(), "role": "caller"}
        for name, t in TOKENS.items()
    ]
)


def _as(name: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {TOKENS[name]}"),)


def _spinning_suite(cases: int) -> pb.RunSuiteRequest:
    req = pb.RunSuiteRequest(checks=[spin_check()])
    for i in range(cases):
        case = req.cases.add()
        case.sample.id = str(i)
        case.sample.metadata["spin_s"] = -1  # until its worker is killed
        case.output.text = "hello"
    return req


async def _drain(call: grpc.aio.UnaryStreamCall) -> None:  # type: ignore[type-arg]
    async for _ in call:
        pass


async def test_a_tenant_with_many_runs_leaves_a_worker_for_another_tenant() -> None:
    # Before: eight RunSuites of one tenant took both workers (each run may hold all but
    # one, and the queue was first come, first served), and the other tenant's Score
    # waited behind them until its deadline.
    async with serving(scoring_workers=2, imports=SPIN, auth_tokens=NAMED) as srv:
        stub = scoring_pb2_grpc.ScoringServiceStub(srv.channel)
        pool = srv.running.service.executor.pool
        assert pool is not None and pool.caller_cap == 1
        hog = [
            asyncio.create_task(_drain(stub.RunSuite(_spinning_suite(8), metadata=_as("hog"))))
            for _ in range(8)
        ]
        try:
            await poll(lambda: len(pool.busy_pids(scoring=True)) >= 1, "the hog is spinning")
            await asyncio.sleep(0.2)  # every run of the hog has queued its chunks
            assert len(pool.busy_pids(scoring=True)) == 1  # the hog holds one worker only
            answer = await stub.Score(small_request(), metadata=_as("neighbour"), timeout=60)
            assert answer.passed
            assert not any(t.done() for t in hog), "the hog's runs ended first"
        finally:
            for t in hog:
                t.cancel()
            await asyncio.gather(*hog, return_exceptions=True)


def _big_spinning_suite(kib: int) -> pb.RunSuiteRequest:
    req = _spinning_suite(1)
    req.cases[0].output.text = "x" * (kib * 1024)
    return req


async def test_bytes_in_flight_are_bounded_per_tenant_and_for_the_server() -> None:
    # A request whose bytes would pass what its tenant (or the server) holds already is
    # refused at once, naming the setting; the bytes come back when the call ends.
    limits = {"max_bytes_in_flight_per_tenant": 300_000, "max_bytes_in_flight": 500_000}
    async with serving(scoring_workers=2, imports=SPIN, auth_tokens=NAMED, **limits) as srv:
        stub = scoring_pb2_grpc.ScoringServiceStub(srv.channel)
        pool = srv.running.service.executor.pool
        assert pool is not None
        held = asyncio.create_task(
            _drain(stub.RunSuite(_big_spinning_suite(200), metadata=_as("hog")))
        )
        try:
            await poll(lambda: len(pool.busy_pids(scoring=True)) >= 1, "the hog is spinning")
            try:
                await _drain(stub.RunSuite(_big_spinning_suite(200), metadata=_as("hog")))
                raise AssertionError("a second 200 KiB request of the hog was let in")
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "max_bytes_in_flight_per_tenant" in (err.details() or "")
            # another tenant still fits its own share, up to the server's bound
            answer = await stub.Score(small_request(), metadata=_as("neighbour"), timeout=60)
            assert answer.passed
            try:
                await _drain(stub.RunSuite(_big_spinning_suite(290), metadata=_as("neighbour")))
                raise AssertionError("the server's bound was passed")
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "max_bytes_in_flight (" in (err.details() or "")
        finally:
            held.cancel()
            await asyncio.gather(held, return_exceptions=True)
        await poll(lambda: srv.running.service.in_flight._used == 0, "the bytes came back")


async def _score(
    stub: scoring_pb2_grpc.ScoringServiceStub, text: str, tenant: str
) -> pb.ScoreResponse:
    """A judge-backed Score of `text`, as `tenant`."""
    request = pb.ScoreRequest(output=pb.Output(text=text), checks=[JUDGE])
    return await stub.Score(request, metadata=_as(tenant), timeout=120)


def _waiting_for_the_judge(judge: JudgeService) -> int:
    return sum(limit.waiting for limit in judge._calls._limits.values())


async def test_a_tenant_with_many_judge_checks_leaves_the_next_judge_slot_to_another() -> None:
    # Two judge calls at once, each 0.4 s: the hog's 24 Scores keep both busy with 22 more
    # waiting. The neighbour's one judge Score goes in turn: its call was the 4th the
    # judge saw (in three runs here), 3 of the hog's Scores answered by then; the bound
    # is half the hog's, a margin for a busy machine. Before, the limit was a plain
    # semaphore, first come, first served: its call was the 25th, after all of the hog's.
    fake = FakeOpenAI(default=verdict(5), api_key=KEY)
    fake.default.delay_s = 0.4
    with fake.running():
        settings = judge_settings(fake, judge_concurrency=2, auth_tokens=NAMED)
        judge = JudgeService.from_settings(settings)
        running, port = await create_server(settings, judge=judge)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        stub = scoring_pb2_grpc.ScoringServiceStub(channel)
        hog: list[asyncio.Task[pb.ScoreResponse]] = []
        try:
            hog += [asyncio.create_task(_score(stub, f"hog {i}", "hog")) for i in range(24)]
            await poll(lambda: _waiting_for_the_judge(judge) == 22, "the hog's calls queued")
            answer = await _score(stub, "neighbour", "neighbour")
            hog_done = sum(t.done() for t in hog)
            assert not answer.scores[0].error.code and answer.scores[0].passed
            asked = [json.dumps(r.body) for r in fake.requests]
            turn = next(i for i, body in enumerate(asked) if "neighbour" in body)
            assert turn < 12, f"the neighbour's call was number {turn + 1} the judge saw"
            assert hog_done < 12, f"{hog_done} of the hog's 24 Scores ended first"
            for score in await asyncio.gather(*hog):
                assert score.scores[0].passed  # the hog's work is only delayed, not lost
        finally:
            for t in hog:
                t.cancel()
            await asyncio.gather(*hog, return_exceptions=True)
            await channel.close()
            await running.stop(0)
            await judge.aclose()
