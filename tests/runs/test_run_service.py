"""Recording over gRPC and the RunService, on a real server with SQLite or PostgreSQL."""

from __future__ import annotations

import grpc
import pytest
from scorewire.server.call_context import RUN_ID_METADATA
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

import tests.server.custom_checks  # noqa: F401 - registers test.slow
from tests.runs.conftest import CHECKS, RunServer, case, start_run_server
from tests.server.conftest import start_server
from tests.support.rpc import bad_request
from tests.support.wait import wait_until_async

CASES = [case("a", "Paris"), case("b", "Lyon, a much longer answer"), case("c", "Paris is it")]


def suite(**fields: object) -> pb.RunSuiteRequest:
    req = pb.RunSuiteRequest(checks=CHECKS, cases=CASES, record=True, run_name="nightly")
    for k, v in fields.items():
        if k == "labels":
            req.labels.update(v)  # type: ignore[arg-type]
        else:
            setattr(req, k, v)
    return req


async def run_suite(
    srv: RunServer, req: pb.RunSuiteRequest
) -> tuple[list[pb.CaseResult], pb.RunSummary, str]:
    call = srv.scoring.RunSuite(req)
    results: list[pb.CaseResult] = []
    summary = pb.RunSummary()
    async for ev in call:
        if ev.WhichOneof("event") == "results":
            results.extend(ev.results.results)
        else:
            summary = ev.summary
    md = dict(await call.initial_metadata())
    return results, summary, str(md.get(RUN_ID_METADATA, ""))


async def test_a_recorded_run_suite_comes_back_from_get_run(run_server: RunServer) -> None:
    results, summary, from_metadata = await run_suite(run_server, suite(labels={"git_sha": "abc"}))
    assert summary.run_id and summary.run_id == from_metadata
    run = (await run_server.runs.GetRun(rpb.GetRunRequest(run_id=summary.run_id))).run
    assert (run.name, run.source, run.status, run.results) == (
        "nightly",
        "RunSuite",
        rpb.RUN_STATUS_COMPLETE,
        3,
    )
    assert dict(run.labels) == {"git_sha": "abc"}
    assert list(run.checks) == ["has_paris", "short"]
    assert '"needles": ["Paris"]' in run.suite and len(run.suite_sha256) == 64
    assert run.summary.cases == 3 and run.summary.cases_passed == 2
    assert run.summary.run_id == summary.run_id
    assert run.summary.gate_passed == summary.gate_passed
    assert run.HasField("ended_at") and run.ended_at.ToDatetime() >= run.started_at.ToDatetime()
    assert len(results) == 3


async def test_every_stored_result_is_the_one_that_was_sent(run_server: RunServer) -> None:
    sent, summary, _ = await run_suite(run_server, suite())
    page = await run_server.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=summary.run_id))
    assert sorted(r.result.SerializeToString() for r in page.results) == sorted(
        r.SerializeToString() for r in sent
    )
    by_id = {r.result.sample_id: r for r in page.results}
    assert by_id["b"].case.output.text == "Lyon, a much longer answer"
    assert by_id["b"].case.sample.input.string_value == "capital of France?"


async def test_a_run_is_not_recorded_unless_asked_or_the_server_default_says(
    open_store,
) -> None:
    srv = await start_run_server(await open_store())
    try:
        _, summary, md = await run_suite(srv, suite(record=False))
        assert summary.run_id == "" and md == ""
        req = suite()
        req.ClearField("record")
        _, summary, _ = await run_suite(srv, req)
        assert summary.run_id == ""
        assert (await srv.runs.ListRuns(rpb.ListRunsRequest())).runs == []
    finally:
        await srv.stop()
    srv = await start_run_server(await open_store(), runs_record=True)
    try:
        _, summary, _ = await run_suite(srv, req)
        assert summary.run_id
    finally:
        await srv.stop()


async def test_results_filter_by_check_and_outcome_and_page(run_server: RunServer) -> None:
    _, summary, _ = await run_suite(run_server, suite())
    rid = summary.run_id

    async def ids(**kw: object) -> list[str]:
        page = await run_server.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=rid, **kw))
        return sorted(r.result.sample_id for r in page.results)

    assert await ids(check="has_paris", outcome=rpb.OUTCOME_FAILED) == ["b"]
    assert await ids(check="short", outcome=rpb.OUTCOME_FAILED) == ["b"]
    assert await ids(outcome=rpb.OUTCOME_PASSED) == ["a", "c"]
    assert await ids(check="short") == ["a", "b", "c"]
    assert await ids(outcome=rpb.OUTCOME_ERRORED) == []
    assert await ids(check="nope") == []
    seen, token = [], ""
    while True:
        page = await run_server.runs.ListRunResults(
            rpb.ListRunResultsRequest(run_id=rid, page_size=1, page_token=token)
        )
        seen.extend(r.result.sample_id for r in page.results)
        token = page.next_page_token
        if not token:
            break
    assert sorted(seen) == ["a", "b", "c"] and len(seen) == 3


async def test_list_runs_filters_by_name_label_and_pages_newest_first(
    run_server: RunServer,
) -> None:
    ids = []
    for name, model in (("a", "x"), ("b", "y"), ("a", "y")):
        _, s, _ = await run_suite(run_server, suite(run_name=name, labels={"model": model}))
        ids.append(s.run_id)

    async def listed(**kw: object) -> list[str]:
        return [r.run_id for r in (await run_server.runs.ListRuns(rpb.ListRunsRequest(**kw))).runs]

    assert await listed() == ids[::-1]
    assert await listed(name="a") == [ids[2], ids[0]]
    assert await listed(labels={"model": "y"}) == [ids[2], ids[1]]
    assert await listed(status=rpb.RUN_STATUS_INCOMPLETE) == []
    page = await run_server.runs.ListRuns(rpb.ListRunsRequest(page_size=2))
    rest = await run_server.runs.ListRuns(
        rpb.ListRunsRequest(page_size=2, page_token=page.next_page_token)
    )
    assert [r.run_id for r in page.runs] + [r.run_id for r in rest.runs] == ids[::-1]
    assert rest.next_page_token == ""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await run_server.runs.ListRuns(
            rpb.ListRunsRequest(name="b", page_size=2, page_token=page.next_page_token)
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "other filters" in bad_request(err.value)["page_token"]


async def test_compare_runs_reports_deltas_and_changed_cases(run_server: RunServer) -> None:
    _, base, _ = await run_suite(run_server, suite())
    changed = suite()
    changed.cases[0].output.text = "Berlin"  # a: has_paris passed, now fails
    changed.cases[1].output.text = "Paris"  # b: failed both checks, now passes both
    _, now, _ = await run_suite(run_server, changed)
    c = await run_server.runs.CompareRuns(
        rpb.CompareRunsRequest(base_run_id=base.run_id, run_id=now.run_id)
    )
    assert [x.sample_id for x in c.regressed] == ["a"] and list(c.regressed[0].checks) == [
        "has_paris"
    ]
    assert [(x.sample_id, list(x.checks)) for x in c.improved] == [("b", ["has_paris", "short"])]
    assert sorted(x.sample_id for x in c.output_changed) == ["a", "b"]
    assert (c.matched, c.only_in_base, c.only_in_run) == (3, 0, 0)
    assert (c.regressed_total, c.improved_total, c.output_changed_total) == (1, 1, 2)
    deltas = {d.name: d for d in c.checks}
    assert deltas["has_paris"].base_pass_rate == pytest.approx(2 / 3)
    assert deltas["has_paris"].pass_rate == pytest.approx(2 / 3)
    assert deltas["short"].pass_rate_delta == pytest.approx(1 / 3)
    assert c.regressed[0].base_output == "Paris" and c.regressed[0].output == "Berlin"


async def test_delete_run_removes_it(run_server: RunServer) -> None:
    _, s, _ = await run_suite(run_server, suite())
    await run_server.runs.DeleteRun(rpb.DeleteRunRequest(run_id=s.run_id))
    for call in (
        run_server.runs.GetRun(rpb.GetRunRequest(run_id=s.run_id)),
        run_server.runs.DeleteRun(rpb.DeleteRunRequest(run_id=s.run_id)),
        run_server.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=s.run_id)),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("call", "request_", "field"),
    [
        ("GetRun", rpb.GetRunRequest(), "run_id"),
        ("ListRunResults", rpb.ListRunResultsRequest(run_id="x", page_size=-1), "page_size"),
        ("ListRunResults", rpb.ListRunResultsRequest(run_id="x", outcome=99), "outcome"),  # type: ignore[arg-type]
        ("ListRuns", rpb.ListRunsRequest(page_size=5000), "page_size"),
        ("ListRuns", rpb.ListRunsRequest(page_token="garbage"), "page_token"),
        ("ListRuns", rpb.ListRunsRequest(status=42), "status"),  # type: ignore[arg-type]
        ("CompareRuns", rpb.CompareRunsRequest(run_id="x"), "base_run_id"),
        ("DeleteRun", rpb.DeleteRunRequest(), "run_id"),
    ],
)
async def test_bad_requests_name_the_field(
    run_server: RunServer, call: str, request_: object, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await getattr(run_server.runs, call)(request_)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in bad_request(err.value)


async def test_unknown_run_ids_are_not_found(run_server: RunServer) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await run_server.runs.GetRun(rpb.GetRunRequest(run_id="run_0000"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await run_server.runs.CompareRuns(
            rpb.CompareRunsRequest(base_run_id="run_0000", run_id="run_0001")
        )
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


async def test_run_labels_over_the_limits_are_refused_naming_the_setting(open_store) -> None:
    srv = await start_run_server(await open_store(), max_run_labels=1, max_run_label_chars=8)
    try:
        for req, _field, needle in (
            (suite(labels={"a": "1", "b": "2"}), "labels", "max_run_labels"),
            (suite(run_name="x" * 9), "run_name", "max_run_label_chars"),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await run_suite(srv, req)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert needle in (err.value.details() or "")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await run_suite(srv, suite(labels={"": "v"}))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert 'labels[""]' in bad_request(err.value)
    finally:
        await srv.stop()


async def test_recording_on_a_server_without_a_run_store_is_unavailable() -> None:
    server = await start_server()
    try:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for _ in server.stub.RunSuite(suite()):
                pass
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "run store" in (err.value.details() or "")
    finally:
        await server.channel.close()
        await server.running.stop(0)


async def test_a_recorded_score_stream_is_a_run(run_server: RunServer) -> None:
    async def requests():
        cfg = pb.StreamConfig(checks=CHECKS, record=True, run_name="live")
        cfg.labels["model"] = "m1"
        yield pb.ScoreStreamRequest(config=cfg)
        for i, c in enumerate(CASES):
            yield pb.ScoreStreamRequest(
                case=pb.StreamCase(request_id=str(i), sample=c.sample, output=c.output)
            )

    call = run_server.scoring.ScoreStream(requests())
    responses = [r async for r in call]
    run_id = dict(await call.initial_metadata())[RUN_ID_METADATA]
    assert len(responses) == 3
    run = (await run_server.runs.GetRun(rpb.GetRunRequest(run_id=run_id))).run
    assert (run.source, run.name, run.status, run.results) == (
        "ScoreStream",
        "live",
        rpb.RUN_STATUS_COMPLETE,
        3,
    )
    assert run.summary.cases == 3 and run.summary.cases_passed == 2
    page = await run_server.runs.ListRunResults(
        rpb.ListRunResultsRequest(run_id=run_id, outcome=rpb.OUTCOME_FAILED)
    )
    assert [r.case.output.text for r in page.results] == ["Lyon, a much longer answer"]


async def test_runs_survive_a_server_restart(open_store) -> None:
    srv = await start_run_server(await open_store())
    try:
        _, s, _ = await run_suite(srv, suite())
    finally:
        await srv.stop()
    srv = await start_run_server(await open_store())
    try:
        run = (await srv.runs.GetRun(rpb.GetRunRequest(run_id=s.run_id))).run
        assert run.status == rpb.RUN_STATUS_COMPLETE and run.results == 3
    finally:
        await srv.stop()


async def test_the_server_enforces_retention(open_store) -> None:
    srv = await start_run_server(await open_store(), runs_max_runs=2, runs_heartbeat_s=0.05)
    try:
        ids = [(await run_suite(srv, suite()))[1].run_id for _ in range(4)]

        async def kept() -> list[str] | None:
            runs = (await srv.runs.ListRuns(rpb.ListRunsRequest())).runs
            return [r.run_id for r in runs] if len(runs) == 2 else None

        assert await wait_until_async(kept, "only the newest two runs are kept") == ids[:1:-1]
    finally:
        await srv.stop()


async def test_a_cancelled_call_leaves_its_run_incomplete_and_running_runs_are_not_deleted(
    run_server: RunServer,
) -> None:
    req = pb.RunSuiteRequest(checks=[pb.CheckSpec(type="test.slow")], record=True)
    for i in range(200):
        c = req.cases.add()
        c.sample.id = f"s{i}"
        c.sample.metadata["sleep"] = 0.05
    call = run_server.scoring.RunSuite(req)
    run_id = dict(await call.initial_metadata())[RUN_ID_METADATA]
    first = await call.read()
    assert first.WhichOneof("event") == "results"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await run_server.runs.DeleteRun(rpb.DeleteRunRequest(run_id=run_id))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    call.cancel()

    async def incomplete() -> rpb.Run | None:
        run = (await run_server.runs.GetRun(rpb.GetRunRequest(run_id=run_id))).run
        return run if run.status == rpb.RUN_STATUS_INCOMPLETE else None

    run = await wait_until_async(incomplete, "the cancelled run is incomplete")
    assert run.results >= len(first.results.results)
    await run_server.runs.DeleteRun(rpb.DeleteRunRequest(run_id=run_id))


async def test_a_recorded_run_suite_stream_is_stored_like_a_run_suite(
    run_server: RunServer,
) -> None:
    # The cases arrive in two chunks; the run holds them all, with their cases.
    request = suite()
    del request.cases[:]
    config = pb.RunSuiteStreamConfig(request=request, case_count=len(CASES))
    messages = [
        pb.RunSuiteStreamRequest(config=config),
        pb.RunSuiteStreamRequest(cases=pb.CaseChunk(cases=CASES[:1])),
        pb.RunSuiteStreamRequest(cases=pb.CaseChunk(cases=CASES[1:])),
    ]
    summary = pb.RunSummary()
    async for ev in run_server.scoring.RunSuiteStream(iter(messages)):
        if ev.WhichOneof("event") == "summary":
            summary = ev.summary
    assert summary.run_id and summary.cases == 3
    run = (await run_server.runs.GetRun(rpb.GetRunRequest(run_id=summary.run_id))).run
    assert (run.name, run.status, run.results) == ("nightly", rpb.RUN_STATUS_COMPLETE, 3)
    listed = await run_server.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=run.run_id))
    assert [r.result.sample_id for r in listed.results] == ["a", "b", "c"]
    assert [r.case.output.text for r in listed.results] == [c.output.text for c in CASES]
