"""RunSuite's chunks start scoring while later cases are still being checked.

Whatever the workers have already scored, a case refused late in a big run refuses the
whole call before any result, naming the field, and costs no worker its process.
"""

from __future__ import annotations

import grpc
import pytest
from scorewire.v1 import scoring_pb2 as pb

from tests.server.conftest import Server, start_server
from tests.support.rpc import bad_request

CHECKS = [pb.CheckSpec(type="contains", params={"needles": ["answer"]})]


def _cases(n: int) -> list[pb.Case]:
    return [
        pb.Case(
            sample=pb.Sample(id=f"s{i}", expected_json='{"answer": 1}'),
            output=pb.Output(text=f"answer {i}"),
        )
        for i in range(n)
    ]


async def _results(stub: pb.RunSuiteRequest, req: pb.RunSuiteRequest) -> int:
    got = 0
    async for event in stub.RunSuite(req):  # type: ignore[attr-defined]
        got += len(event.results.results)
    return got


async def test_a_bad_case_late_in_a_big_run_refuses_it_before_any_result(server: Server) -> None:
    # Chunks before case 1,900 pass their checks and go to the workers; then it fails.
    pool = server.running.service.executor.pool
    pids = sorted(pool.pids())
    cases = _cases(2000)
    cases[1900].sample.expected_json = '{"answer": '
    received = 0
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for event in server.stub.RunSuite(pb.RunSuiteRequest(cases=cases, checks=CHECKS)):
            received += len(event.results.results)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "cases[1900].sample.expected_json" in bad_request(exc.value)
    assert received == 0
    # The chunks scored for nothing finish before the next call's (the queue is FIFO),
    # and no worker was killed for them.
    ok = await _results(server.stub, pb.RunSuiteRequest(cases=cases[:1900], checks=CHECKS))
    assert ok == 1900
    assert sorted(pool.pids()) == pids and pool.replaced == 0


async def test_an_output_over_the_limit_late_in_a_run_refuses_it_before_any_result() -> None:
    srv = await start_server(max_output_bytes=1000)
    try:
        cases = _cases(1000)
        cases[900].output.text = "é" * 501  # 1,002 bytes
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await _results(srv.stub, pb.RunSuiteRequest(cases=cases, checks=CHECKS))
        assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "cases[900].output.text" in bad_request(exc.value)
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("😀" * 250, False),  # 1,000 bytes: the longest text measured without encoding
        ("😀" * 251, True),  # 1,004 bytes: one code point more is measured, and refused
        ("a" * 1000, False),  # long in characters, short in bytes
        ("a" * 1001, True),
    ],
)
async def test_outputs_at_the_byte_limit_are_measured_exactly(text: str, refused: bool) -> None:
    srv = await start_server(max_output_bytes=1000)
    try:
        cases = _cases(3)
        cases[2].output.text = text
        req = pb.RunSuiteRequest(cases=cases, checks=CHECKS)
        if not refused:
            assert await _results(srv.stub, req) == 3
            return
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await _results(srv.stub, req)
        assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "cases[2].output.text" in bad_request(exc.value)
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def test_chunks_are_answered_in_order_whichever_worker_finishes_first(
    server: Server,
) -> None:
    # 5,000 cases in chunks of 256 over two workers: indices arrive ascending, each once.
    req = pb.RunSuiteRequest(cases=_cases(5000), checks=CHECKS)
    seen: list[int] = []
    summary = None
    async for event in server.stub.RunSuite(req):
        assert summary is None
        if event.HasField("summary"):
            summary = event.summary
        else:
            seen.extend(r.index for r in event.results.results)
    assert seen == list(range(5000))
    assert summary is not None and summary.cases == 5000 and summary.passed == 5000
