"""RunSuiteStream: RunSuite with its cases arriving in chunks after a config.

The answers are RunSuite's whatever the chunks; every way a stream can disagree with its
config is refused with the field named, before any result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import grpc
import pytest
from scorewire.v1 import scoring_pb2 as pb

from tests.server.conftest import Server, serving
from tests.support.rpc import bad_request

CHECKS = [
    pb.CheckSpec(name="has", type="contains", params={"needles": ["answer 1"]}),
    pb.CheckSpec(name="short", type="length", params={"max_chars": 9}),
]


def _cases(n: int) -> list[pb.Case]:
    return [
        pb.Case(
            sample=pb.Sample(id=f"s{i}", expected_json='{"answer": 1}'),
            output=pb.Output(text=f"answer {i}"),
        )
        for i in range(n)
    ]


def _stream(
    request: pb.RunSuiteRequest, chunks: Iterable[Sequence[pb.Case]], case_count: int
) -> list[pb.RunSuiteStreamRequest]:
    config = pb.RunSuiteStreamConfig(request=request, case_count=case_count)
    out = [pb.RunSuiteStreamRequest(config=config)]
    out += [pb.RunSuiteStreamRequest(cases=pb.CaseChunk(cases=c)) for c in chunks]
    return out


async def _collect(events) -> tuple[list[pb.CaseResult], pb.RunSummary | None]:  # type: ignore[no-untyped-def]
    results: list[pb.CaseResult] = []
    summary = None
    async for ev in events:
        if ev.WhichOneof("event") == "summary":
            summary = ev.summary
        else:
            results.extend(ev.results.results)
    return results, summary


async def test_a_streamed_run_answers_as_runsuite_whatever_its_chunks(server: Server) -> None:
    cases = _cases(2000)
    cases[7].output.text = "no"
    want, want_summary = await _collect(
        server.stub.RunSuite(pb.RunSuiteRequest(checks=CHECKS, cases=cases))
    )
    # 50 cases in the config, then uneven chunks (the server cuts its own jobs)
    first = pb.RunSuiteRequest(checks=CHECKS, cases=cases[:50])
    chunks = [cases[i : i + 137] for i in range(50, 2000, 137)]
    got, summary = await _collect(server.stub.RunSuiteStream(iter(_stream(first, chunks, 2000))))
    assert summary is not None and want_summary is not None
    assert [r.index for r in got] == list(range(2000))
    strip = [(r.index, r.sample_id, r.passed, [(s.name, s.passed, s.value) for s in r.scores])
             for r in got]  # fmt: skip
    assert strip == [
        (r.index, r.sample_id, r.passed, [(s.name, s.passed, s.value) for s in r.scores])
        for r in want
    ]
    assert (summary.cases, summary.cases_passed) == (want_summary.cases, want_summary.cases_passed)
    assert summary.cases == 2000 and 0 < summary.cases_passed < 2000
    assert summary.gate_passed == want_summary.gate_passed


async def test_a_bad_case_in_a_late_chunk_refuses_the_call_before_any_result(
    server: Server,
) -> None:
    cases = _cases(2000)
    cases[1900].sample.expected_json = '{"answer": '
    chunks = [cases[i : i + 500] for i in range(0, 2000, 500)]
    received = 0
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        call = server.stub.RunSuiteStream(
            iter(_stream(pb.RunSuiteRequest(checks=CHECKS), chunks, 2000))
        )
        async for ev in call:
            received += len(ev.results.results)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "cases[1900].sample.expected_json" in bad_request(exc.value)
    assert received == 0


@pytest.mark.parametrize(
    ("sent", "declared", "message"),
    [(10, 11, "11 cases declared, 10 sent"), (12, 11, "11 cases declared, more sent")],
)
async def test_cases_sent_must_be_the_declared_count(
    server: Server, sent: int, declared: int, message: str
) -> None:
    cases = _cases(sent)
    requests = _stream(pb.RunSuiteRequest(checks=CHECKS), [cases[:6], cases[6:]], declared)
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await _collect(server.stub.RunSuiteStream(iter(requests)))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_request(exc.value) == {"config.case_count": message}


async def test_the_config_comes_first_and_only_first(server: Server) -> None:
    chunk = pb.RunSuiteStreamRequest(cases=pb.CaseChunk(cases=_cases(2)))
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await _collect(server.stub.RunSuiteStream(iter([chunk])))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "config" in bad_request(exc.value)
    twice = _stream(pb.RunSuiteRequest(checks=CHECKS), [_cases(2)], 4)
    twice.append(twice[0])
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await _collect(server.stub.RunSuiteStream(iter(twice)))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert bad_request(exc.value) == {"message": "the stream sent a config after the first message"}


async def test_a_declared_count_over_the_case_limit_is_refused_before_any_case() -> None:
    async with serving(max_cases_per_request=100) as srv:
        requests = _stream(pb.RunSuiteRequest(checks=CHECKS), [], 101)  # no case needed
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await _collect(srv.stub.RunSuiteStream(iter(requests)))
        assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "max_cases_per_request" in bad_request(exc.value)["config.case_count"]


async def test_the_messages_together_are_bounded_by_max_message_bytes() -> None:
    # Each message is far below the bound; together they are over it.
    async with serving(max_message_bytes=64 * 1024) as srv:
        cases = _cases(4000)  # about 30 bytes each
        chunks = [cases[i : i + 500] for i in range(0, 4000, 500)]
        requests = _stream(pb.RunSuiteRequest(checks=CHECKS), chunks, 4000)
        assert all(r.ByteSize() < 64 * 1024 for r in requests)
        assert sum(r.ByteSize() for r in requests) > 64 * 1024
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await _collect(srv.stub.RunSuiteStream(iter(requests)))
        assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "max_message_bytes" in bad_request(exc.value)["cases"]


async def test_async_checks_and_a_suites_own_cases_run_once_every_case_arrived(
    server: Server,
) -> None:
    # test.slow is async: the cases are gathered, then scored as one RunSuite.
    slow = pb.CheckSpec(name="slow", type="test.slow")
    cases = _cases(6)
    for c in cases:
        c.sample.metadata.update({"sleep": 0.01})
    requests = _stream(pb.RunSuiteRequest(checks=[slow]), [cases[:3], cases[3:]], 6)
    got, summary = await _collect(server.stub.RunSuiteStream(iter(requests)))
    assert sorted(r.index for r in got) == list(range(6))
    assert summary is not None and summary.cases_passed == 6
    # A suite document's own cases: no chunk, a count of 0.
    suite = (
        "checks:\n  short: {type: length, max_chars: 9}\n"
        "datasets:\n  d:\n    cases:\n"
        "      - {id: a, output: tiny}\n      - {id: b, output: far too long}\n"
        "suites:\n  s: {dataset: d, checks: [short]}\n"
    )
    got, summary = await _collect(
        server.stub.RunSuiteStream(iter(_stream(pb.RunSuiteRequest(suite_yaml=suite), [], 0)))
    )
    assert [r.passed for r in sorted(got, key=lambda r: r.index)] == [True, False]
    assert summary is not None and summary.cases == 2


async def test_a_stream_needs_a_token_like_every_call() -> None:
    import hashlib
    import json

    token = "token-of-ci-0123456789"
    entry = {"name": "ci", "sha256": hashlib.sha256(token.encode()).hexdigest(), "role": "caller"}
    async with serving(auth_tokens=json.dumps([entry])) as srv:
        requests = _stream(pb.RunSuiteRequest(checks=CHECKS), [_cases(3)], 3)
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await _collect(srv.stub.RunSuiteStream(iter(requests)))
        assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
        md = (("authorization", f"Bearer {token}"),)
        got, summary = await _collect(srv.stub.RunSuiteStream(iter(requests), metadata=md))
        assert len(got) == 3 and summary is not None


async def test_chunks_are_scored_while_the_stream_is_still_open(server: Server) -> None:
    # The first 1,200 cases go to the workers before the caller sends the rest: the
    # server does not wait for the whole stream (yet answers only after it).
    import asyncio

    from tests.support.wait import wait_until_async

    pool = server.running.service.executor.pool
    before = pool.submitted
    cases = _cases(2000)
    release = asyncio.Event()
    messages = _stream(pb.RunSuiteRequest(checks=CHECKS), [cases[:1200], cases[1200:]], 2000)

    async def requests():  # type: ignore[no-untyped-def]
        yield messages[0]
        yield messages[1]
        await release.wait()
        yield messages[2]

    got: list[pb.CaseResult] = []

    async def read() -> pb.RunSummary | None:
        results, summary = await _collect(server.stub.RunSuiteStream(requests()))
        got.extend(results)
        return summary

    reader = asyncio.ensure_future(read())
    try:
        await wait_until_async(lambda: pool.submitted >= before + 4, "chunks sent to workers")
        assert not got and not reader.done()  # nothing answered while cases are missing
    finally:
        release.set()
    summary = await reader
    assert summary is not None and summary.cases == 2000 and len(got) == 2000
