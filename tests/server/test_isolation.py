"""Scoring runs in worker processes: no request holds the event loop (issue 13, finding 1).

Each test starts a real server on port 0 and calls it through generated stubs. Ordering,
not wall-clock time, is what they assert: a small call finishes while a big one is still
running; a killed worker is replaced and the server keeps answering.
"""

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.server import spin_checks  # noqa: F401 - test.nap compiles in this process too
from tests.server.conftest import Server, start_server
from tests.server.test_service import bad_request

SPIN = ["tests.server.spin_checks"]


@contextlib.asynccontextmanager
async def serving(**overrides: object) -> AsyncIterator[Server]:
    # Every Score goes to the workers unless a test turns inline scoring on.
    srv = await start_server(**{"inline_score_max_bytes": 0, **overrides})
    try:
        yield srv
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def poll(condition, what: str, tries: int = 3000) -> None:  # type: ignore[no-untyped-def]
    """Wait until `condition()` holds (polled every 10 ms, at most `tries` times)."""
    for _ in range(tries):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def spin_check(name: str = "spin", **params: float) -> pb.CheckSpec:
    spec = pb.CheckSpec(name=name, type="test.spin")
    for k, v in params.items():
        spec.params[k] = v
    return spec


def spin_request(seconds: float, *extra: pb.CheckSpec) -> pb.ScoreRequest:
    req = pb.ScoreRequest(checks=[spin_check(), *extra], output=pb.Output(text="hello"))
    req.sample.metadata["spin_s"] = seconds
    return req


def small_request() -> pb.ScoreRequest:
    return pb.ScoreRequest(
        checks=[pb.CheckSpec(type="contains", params={"needles": ["hello"]})],
        output=pb.Output(text="hello world"),
    )


async def others_are_served(srv: Server, big: asyncio.Task) -> None:  # type: ignore[type-arg]
    """Health.Check and a small Score from another channel answer while `big` runs."""
    async with grpc.aio.insecure_channel(srv.address) as other:
        health = health_pb2_grpc.HealthStub(other)
        answer = await health.Check(health_pb2.HealthCheckRequest(), timeout=60)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        score = await scoring_pb2_grpc.ScoringServiceStub(other).Score(small_request(), timeout=60)
        assert score.passed
    assert not big.done(), "the expensive call ended before the small ones were answered"


async def test_unique_items_over_20000_objects_is_scored_while_others_are_served() -> None:
    # Finding 1: uniqueItems over a big array of small objects (pairwise in the library)
    # ran on the event loop for minutes. It is now hashed (limits) and scored in a worker.
    items = [{"id": i, "v": "x"} for i in range(20_000)]
    schema = {"type": "array", "uniqueItems": True}
    req = pb.ScoreRequest(
        checks=[pb.CheckSpec(type="json_schema", params={"schema": schema})],
        output=pb.Output(text=json.dumps(items)),
    )
    async with serving(scoring_workers=2) as srv:
        big = asyncio.ensure_future(srv.stub.Score(req, timeout=120))
        async with grpc.aio.insecure_channel(srv.address) as other:
            health = health_pb2_grpc.HealthStub(other)
            answer = await health.Check(health_pb2.HealthCheckRequest(), timeout=60)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
        resp = await big
        assert resp.passed and not resp.scores[0].HasField("error")


async def test_validate_suite_whose_compilation_never_ends_does_not_stall_the_server() -> None:
    # Finding 1: a schema with 300 `pattern`s took half a minute to compile, through
    # ValidateSuite too, with the event loop held all along. Whatever compiling costs
    # (here a check type whose factory spins), it happens in a worker.
    req = pb.ValidateSuiteRequest(checks=[spin_check(compile_spin_s=3600)])
    async with serving(scoring_workers=2, imports=SPIN) as srv:
        big = asyncio.ensure_future(srv.stub.ValidateSuite(req, timeout=120))
        await poll(lambda: srv.running.service.executor.pool.busy_pids(), "compilation started")
        await others_are_served(srv, big)
        big.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await big


async def test_a_spinning_check_does_not_stall_other_callers() -> None:
    # The guarantee, whatever a check costs: a check that never ends holds one worker only.
    async with serving(scoring_workers=2, imports=SPIN) as srv:
        big = asyncio.ensure_future(srv.stub.Score(spin_request(-1), timeout=120))
        await poll(lambda: srv.running.service.executor.pool.busy_pids(), "the spin started")
        await others_are_served(srv, big)
        big.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await big


async def test_a_short_deadline_is_deadline_exceeded_and_the_worker_is_replaced() -> None:
    async with serving(scoring_workers=1, imports=SPIN) as srv:
        pool = srv.running.service.executor.pool
        before = set(pool.pids())
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.stub.Score(spin_request(-1), timeout=1.0)
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        await poll(lambda: pool.replaced >= 1, "the worker was replaced")
        assert set(pool.pids()).isdisjoint(before)
        # The only worker was killed and replaced: the next call is served by the new one.
        assert (await srv.stub.Score(small_request(), timeout=60)).passed


async def test_a_check_past_check_timeout_is_a_timeout_error_and_the_others_score() -> None:
    contains = pb.CheckSpec(name="c", type="contains", params={"needles": ["hello"]})
    async with serving(scoring_workers=1, imports=SPIN, check_timeout_s=0.5) as srv:
        resp = await srv.stub.Score(spin_request(-1, contains), timeout=60)
        spin, c = resp.scores
        assert spin.error.code == "TIMEOUT" and not spin.passed
        assert "check_timeout_s" in spin.error.message
        assert c.passed and not c.HasField("error")
        assert not resp.passed
        assert srv.running.service.executor.pool.replaced >= 1


async def test_run_suite_scores_every_case_when_one_case_is_stopped() -> None:
    # One case of a chunk spins forever: it gets TIMEOUT, every other case its own score.
    cases = [pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text="x")) for i in range(600)]
    cases[300].sample.metadata["spin_s"] = -1
    req = pb.RunSuiteRequest(checks=[spin_check()], cases=cases)
    async with serving(scoring_workers=2, imports=SPIN, check_timeout_s=0.5) as srv:
        results = {}
        summary = None
        async for msg in srv.stub.RunSuite(req, timeout=120):
            if msg.HasField("summary"):
                summary = msg.summary
            for r in msg.results.results:
                results[r.index] = r
        assert sorted(results) == list(range(600))
        assert results[300].scores[0].error.code == "TIMEOUT"
        assert all(results[i].passed for i in results if i != 300)
        assert summary is not None and summary.errored == 1 and summary.passed == 599


async def test_compilation_past_its_time_limit_is_resource_exhausted() -> None:
    req = pb.ScoreRequest(checks=[spin_check(compile_spin_s=3600)], output=pb.Output(text="x"))
    async with serving(scoring_workers=1, imports=SPIN, plan_compile_timeout_s=0.5) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.stub.Score(req, timeout=60)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "plan_compile_timeout_s" in err.value.details()
        assert "checks" in bad_request(err.value)
        assert (await srv.stub.Score(small_request(), timeout=60)).passed


async def test_the_server_keeps_working_after_a_worker_is_killed() -> None:
    async with serving(scoring_workers=2, imports=SPIN) as srv:
        pool = srv.running.service.executor.pool
        assert (await srv.stub.Score(small_request(), timeout=60)).passed
        # An idle worker killed from outside: the job that finds it dead is sent again.
        os.kill(pool.pids()[0], signal.SIGKILL)
        await poll(lambda: pool.replaced >= 1, "the idle killed worker was replaced")
        for _ in range(4):
            assert (await srv.stub.Score(small_request(), timeout=60)).passed
        # A busy worker killed from outside: its check is an error, never a pass.
        big = asyncio.ensure_future(srv.stub.Score(spin_request(-1), timeout=120))
        await poll(lambda: pool.busy_pids(scoring=True), "the spin started")
        os.kill(pool.busy_pids(scoring=True)[0], signal.SIGKILL)
        resp = await big
        assert resp.scores[0].error.code == "CHECK_FAILED" and not resp.passed
        await poll(lambda: pool.replaced >= 2, "both killed workers were replaced")
        for _ in range(4):
            assert (await srv.stub.Score(small_request(), timeout=60)).passed


async def test_compile_errors_keep_their_field_paths() -> None:
    req = pb.ScoreRequest(
        checks=[
            pb.CheckSpec(type="contains", params={"needles": ["a"]}),
            pb.CheckSpec(type="regex", params={"pattern": "(a"}),
        ],
        compact=["nonsense_check:1"],
        output=pb.Output(text="x"),
    )
    async with serving(scoring_workers=1) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.stub.Score(req, timeout=60)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        fields = bad_request(err.value)
        assert any(f.startswith("checks[1].params") for f in fields), fields
        assert any(f.startswith("compact[0]") for f in fields), fields


@pytest.mark.parametrize(
    ("sample", "output"),
    [
        (pb.Sample(), pb.Output()),  # both empty: still present
        (pb.Sample(id="s" * 200), pb.Output(text="é" * 70_000)),  # multi-byte lengths
    ],
)
def test_case_bytes_is_the_serialized_case(sample: pb.Sample, output: pb.Output) -> None:
    from scorewire.scoring.wire import case_bytes as _case_bytes

    assert pb.Case.FromString(_case_bytes(sample, output)) == pb.Case(sample=sample, output=output)


async def test_small_scores_measured_cheap_are_scored_inline_and_costly_ones_never() -> None:
    async with serving(scoring_workers=1, imports=SPIN, inline_score_max_bytes=16_384) as srv:
        pool = srv.running.service.executor.pool
        # The first calls go to a worker, which measures them; then the server compiles
        # the plan itself and answers without a worker round trip.
        assert (await srv.stub.Score(small_request(), timeout=60)).passed
        await poll(lambda: len(srv.running.service.executor.here) >= 1, "compiled here")
        before = pool.submitted
        for _ in range(5):
            assert (await srv.stub.Score(small_request(), timeout=60)).passed
        assert pool.submitted == before
        # A plan measured costly (a 50 ms spin) keeps going to the workers.
        for _ in range(3):
            before = pool.submitted
            assert (await srv.stub.Score(spin_request(0.05), timeout=60)).passed
            assert pool.submitted > before
        # And a big request with a cheap plan too.
        big = small_request()
        big.output.text = "hello " * 5_000
        before = pool.submitted
        assert (await srv.stub.Score(big, timeout=60)).passed
        assert pool.submitted > before


def nap_request(seconds: float) -> pb.ScoreRequest:
    req = pb.ScoreRequest(checks=[pb.CheckSpec(type="test.nap")], output=pb.Output(text="hi"))
    req.sample.metadata["nap_s"] = seconds
    return req


async def test_a_cheap_plan_once_slow_by_the_clock_is_still_scored_inline() -> None:
    # A worker descheduled on a busy machine reports a long latency for a cheap plan;
    # the 50 ms nap stands in for it (no CPU spent). One such call used to keep the
    # plan off the inline path for good: CPU time and the best latency decide now.
    async with serving(scoring_workers=1, imports=SPIN, inline_score_max_bytes=16_384) as srv:
        pool = srv.running.service.executor.pool
        assert (await srv.stub.Score(nap_request(0.05), timeout=60)).passed
        for _ in range(200):
            assert (await srv.stub.Score(nap_request(0), timeout=60)).passed
            if len(srv.running.service.executor.here) >= 1:
                break
        await poll(lambda: len(srv.running.service.executor.here) >= 1, "compiled here")
        before = pool.submitted
        for _ in range(5):
            assert (await srv.stub.Score(nap_request(0), timeout=60)).passed
        assert pool.submitted == before


async def test_a_check_that_blocks_without_computing_is_never_scored_inline() -> None:
    # Sleeping costs no CPU, but it would stall the event loop: every latency says so.
    async with serving(scoring_workers=1, imports=SPIN, inline_score_max_bytes=16_384) as srv:
        pool = srv.running.service.executor.pool
        for _ in range(5):
            before = pool.submitted
            assert (await srv.stub.Score(nap_request(0.01), timeout=60)).passed
            assert pool.submitted > before
        assert len(srv.running.service.executor.here) == 0


async def test_score_stream_cases_are_scored_in_workers_and_a_stopped_one_is_timeout() -> None:
    async def requests():  # type: ignore[no-untyped-def]
        yield pb.ScoreStreamRequest(config=pb.StreamConfig(checks=[spin_check()]))
        for i in range(6):
            case = pb.StreamCase(request_id=f"r{i}", output=pb.Output(text="x"))
            case.sample.metadata["spin_s"] = -1 if i == 3 else 0
            yield pb.ScoreStreamRequest(case=case)

    async with serving(scoring_workers=2, imports=SPIN, check_timeout_s=0.5) as srv:
        got = {r.request_id: r async for r in srv.stub.ScoreStream(requests(), timeout=60)}
        assert sorted(got) == [f"r{i}" for i in range(6)]
        assert got["r3"].scores[0].error.code == "TIMEOUT" and not got["r3"].passed
        assert all(got[f"r{i}"].passed for i in (0, 1, 2, 4, 5))


async def test_a_worker_killed_while_compiling_is_replaced_and_the_plan_compiled_again() -> None:
    req = pb.ScoreRequest(checks=[spin_check(compile_spin_s=1.0)], output=pb.Output(text="x"))
    async with serving(scoring_workers=1, imports=SPIN) as srv:
        pool = srv.running.service.executor.pool
        call = asyncio.ensure_future(srv.stub.Score(req, timeout=60))
        await poll(lambda: pool.busy_pids(), "compilation started")
        os.kill(pool.busy_pids()[0], signal.SIGKILL)
        resp = await call
        assert resp.passed and pool.replaced >= 1


async def test_workers_that_die_on_every_try_are_unavailable_not_internal() -> None:
    # Every worker that compiles these checks is killed from outside (as the kernel's OOM
    # killer would): after the retries the call is UNAVAILABLE saying so, not INTERNAL,
    # and the server goes on serving
    req = pb.ScoreRequest(checks=[spin_check(compile_spin_s=30.0)], output=pb.Output(text="x"))
    async with serving(scoring_workers=1, imports=SPIN) as srv:
        pool = srv.running.service.executor.pool
        call = asyncio.ensure_future(srv.stub.Score(req, timeout=120))
        killed: set[int] = set()
        for _ in range(3):  # the first try and both retries
            await poll(lambda: set(pool.busy_pids()) - killed, "a compilation started")
            pid = next(iter(set(pool.busy_pids()) - killed))
            killed.add(pid)
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "crashed compiling" in (err.value.details() or "")
        assert "not scored" in (err.value.details() or "")
        assert (await srv.stub.Score(small_request(), timeout=60)).passed
