"""Runs sent in parts (OpenRun, `RunSuiteRequest.part`, CloseRun) over a real server.

A caller that splits a run into several RunSuite calls gets one recorded run, its parts'
results at the run's indexes, the caller's summary, and one count in
`scorewire_suite_runs_total`; bad input names its field; a run whose caller stops
sending ends incomplete.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
from scorewire.metrics.exporter import start_metrics
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.server.app import Running, create_server
from scorewire.settings import Settings
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import runs_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

import tests.server.custom_checks  # noqa: F401 - registers test.slow
from tests.metrics.helpers import Scrape
from tests.runs.conftest import CHECKS, RunServer, case, start_run_server
from tests.runs.test_tenants import md, srv

__all__ = ["srv"]


@dataclass
class PartsServer:
    running: Running
    channel: grpc.aio.Channel
    scoring: scoring_pb2_grpc.ScoringServiceStub
    runs: runs_pb2_grpc.RunServiceStub
    metrics_url: str

    def scrape(self) -> Scrape:
        with urllib.request.urlopen(self.metrics_url, timeout=10) as resp:
            return Scrape.parse(resp.read().decode("utf-8"))


async def start_parts_server(tmp_path, **overrides: object) -> PartsServer:
    settings = Settings(host="127.0.0.1", port=0, metrics_port=0, **overrides)
    metrics = start_metrics(settings)
    assert metrics is not None
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    running, port = await create_server(
        settings, runs=store, observer=metrics.observer, interceptors=metrics.interceptors
    )
    running.closers.append(metrics.aclose)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    return PartsServer(
        running,
        channel,
        scoring_pb2_grpc.ScoringServiceStub(channel),
        runs_pb2_grpc.RunServiceStub(channel),
        f"http://127.0.0.1:{metrics.http_port}/metrics",
    )


@pytest.fixture
async def server(tmp_path) -> AsyncIterator[PartsServer]:
    srv_ = await start_parts_server(tmp_path, runs_heartbeat_s=0.2)
    try:
        yield srv_
    finally:
        await srv_.channel.close()
        await srv_.running.stop(0)


async def summary_of(call) -> pb.RunSummary:
    found = pb.RunSummary()
    async for ev in call:
        if ev.WhichOneof("event") == "summary":
            found = ev.summary
    return found


def part(run_id: str, first: int, *cases: pb.Case) -> pb.RunSuiteRequest:
    return pb.RunSuiteRequest(
        checks=CHECKS, cases=list(cases), part=pb.RunPart(run_id=run_id, first_index=first)
    )


def failed_summary(cases: int) -> pb.RunSummary:
    """What the caller judged over every part: its own gate failed."""
    return pb.RunSummary(
        cases=cases, cases_passed=1, pass_rate=1 / cases, gate_passed=False,
        gate_reasons=["pass rate 33% is below 90%"],
    )  # fmt: skip


async def test_parts_make_one_recorded_run_counted_once_with_the_callers_gate(
    server: PartsServer,
) -> None:
    # Three parts, each passing the server's default gate, close a run whose own gate
    # failed: one run, every result at its run index, the failure counted once.
    opened = await server.runs.OpenRun(
        rpb.OpenRunRequest(record=True, run_name="nightly", labels={"git_sha": "1"},
                          suite="tests: []", checks=["has_paris", "short"])
    )  # fmt: skip
    rid = opened.run_id
    assert rid.startswith("run_")
    parts = [
        part(rid, 0, case("a", "Paris")),
        part(rid, 1, case("b", "Rome"), case("c", "Paris, France")),
    ]
    for p in parts:
        s = await summary_of(server.scoring.RunSuite(p))
        assert s.run_id == rid and s.gate_passed  # each part's own summary
    await server.runs.CloseRun(rpb.CloseRunRequest(run_id=rid, summary=failed_summary(3)))

    listed = await server.runs.ListRuns(rpb.ListRunsRequest())
    assert [r.run_id for r in listed.runs] == [rid]  # the parts are no runs of their own
    run = (await server.runs.GetRun(rpb.GetRunRequest(run_id=rid))).run
    assert run.status == rpb.RUN_STATUS_COMPLETE and run.source == "OpenRun"
    assert (run.name, dict(run.labels), run.results) == ("nightly", {"git_sha": "1"}, 3)
    assert not run.summary.gate_passed and run.summary.cases == 3
    results = await server.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=rid))
    assert [(r.result.index, r.result.sample_id) for r in results.results] == [
        (0, "a"), (1, "b"), (2, "c"),
    ]  # fmt: skip
    m = server.scrape()
    assert m.value("scorewire_suite_runs_total", gate="fail") == 1
    assert m.value("scorewire_suite_runs_total", gate="pass") == 0


async def test_an_unrecorded_run_in_parts_is_counted_once(server: PartsServer) -> None:
    # No store write at all: OpenRun answers no id, the parts and the close only count.
    opened = await server.runs.OpenRun(rpb.OpenRunRequest(record=False, run_name="x"))
    assert opened.run_id == ""
    for i in range(3):
        await summary_of(server.scoring.RunSuite(part("", i, case(f"s{i}", "Paris"))))
    await server.runs.CloseRun(rpb.CloseRunRequest(summary=failed_summary(3)))
    m = server.scrape()
    assert (m.value("scorewire_suite_runs_total", gate="fail"),
            m.value("scorewire_suite_runs_total", gate="pass")) == (1, 0)  # fmt: skip
    assert not (await server.runs.ListRuns(rpb.ListRunsRequest())).runs


async def test_close_records_the_cases_the_caller_scored_itself(server: PartsServer) -> None:
    # An output the caller could not produce was never sent: CloseRun carries it.
    rid = (await server.runs.OpenRun(rpb.OpenRunRequest(record=True, run_name="n"))).run_id
    await summary_of(server.scoring.RunSuite(part(rid, 0, case("a", "Paris"))))
    unsent = pb.CaseResult(
        index=1, sample_id="b",
        scores=[pb.Score(name="has_paris", type="contains",
                         error=pb.ScoreError(code="GENERATION_ERROR", message="no output"))],
    )  # fmt: skip
    await server.runs.CloseRun(
        rpb.CloseRunRequest(run_id=rid, summary=failed_summary(2),
                           cases=[pb.Case(sample=pb.Sample(id="b"))], results=[unsent])
    )  # fmt: skip
    results = await server.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=rid))
    assert [(r.result.index, r.result.sample_id) for r in results.results] == [(0, "a"), (1, "b")]
    assert results.results[1].result.scores[0].error.code == "GENERATION_ERROR"


async def test_an_interrupted_run_is_recorded_incomplete_and_not_counted(
    server: PartsServer,
) -> None:
    rid = (await server.runs.OpenRun(rpb.OpenRunRequest(record=True, run_name="n"))).run_id
    await summary_of(server.scoring.RunSuite(part(rid, 0, case("a", "Paris"))))
    await server.runs.CloseRun(rpb.CloseRunRequest(run_id=rid, interrupted=True))
    run = (await server.runs.GetRun(rpb.GetRunRequest(run_id=rid))).run
    assert run.status == rpb.RUN_STATUS_INCOMPLETE and run.results == 1
    assert not run.HasField("summary")
    m = server.scrape()
    assert m.total("scorewire_suite_runs_total") == 0


async def test_a_run_whose_caller_stops_sending_ends_incomplete(server: PartsServer) -> None:
    # Heartbeats every 0.2 s: nothing beats the opened run's, so it is a dead caller's.
    rid = (await server.runs.OpenRun(rpb.OpenRunRequest(record=True, run_name="n"))).run_id
    status = rpb.RUN_STATUS_RUNNING
    for _ in range(100):
        status = (await server.runs.GetRun(rpb.GetRunRequest(run_id=rid))).run.status
        if status != rpb.RUN_STATUS_RUNNING:
            break
        await asyncio.sleep(0.05)
    assert status == rpb.RUN_STATUS_INCOMPLETE
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await summary_of(server.scoring.RunSuite(part(rid, 0, case("a", "Paris"))))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_a_long_part_keeps_its_run_running(tmp_path) -> None:
    # A part scored for longer than three heartbeats beats the run's own: still running.
    srv_ = await start_parts_server(tmp_path, runs_heartbeat_s=0.1)
    try:
        rid = (await srv_.runs.OpenRun(rpb.OpenRunRequest(record=True))).run_id
        slow = pb.RunSuiteRequest(
            checks=[pb.CheckSpec(type="test.slow")],
            cases=[case("a", "x")],
            part=pb.RunPart(run_id=rid),
        )
        slow.cases[0].sample.metadata.update({"sleep": 1.0})
        await summary_of(srv_.scoring.RunSuite(slow))
        run = (await srv_.runs.GetRun(rpb.GetRunRequest(run_id=rid))).run
        assert run.status == rpb.RUN_STATUS_RUNNING and run.results == 1
    finally:
        await srv_.channel.close()
        await srv_.running.stop(0)


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        # a part's run is recorded, named and labelled by OpenRun
        (pb.RunSuiteRequest(record=True), "record"),
        (pb.RunSuiteRequest(run_name="x"), "run_name"),
        (pb.RunSuiteRequest(labels={"k": "v"}), "labels"),
        (pb.RunSuiteRequest(part=pb.RunPart(first_index=-1)), "part.first_index"),
    ],
)
async def test_a_part_with_fields_of_openrun_names_them(
    server: PartsServer, request_: pb.RunSuiteRequest, field: str
) -> None:
    req = pb.RunSuiteRequest(checks=CHECKS, cases=[case("a", "Paris")])
    req.MergeFrom(request_)
    req.part.SetInParent()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await summary_of(server.scoring.RunSuite(req))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in err.value.details()


async def test_unknown_and_ended_runs_are_refused(server: PartsServer) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await summary_of(server.scoring.RunSuite(part("run_nope", 0, case("a", "Paris"))))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND and "part.run_id" in err.value.details()
    # a run recorded by its own RunSuite call is ended by that call, not by CloseRun
    own = pb.RunSuiteRequest(checks=CHECKS, cases=[case("a", "Paris")], record=True)
    rid = (await summary_of(server.scoring.RunSuite(own))).run_id
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await server.runs.CloseRun(rpb.CloseRunRequest(run_id=rid, interrupted=True))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


@pytest.mark.parametrize(
    ("close", "field"),
    [
        (rpb.CloseRunRequest(), "summary"),  # required unless interrupted
        (rpb.CloseRunRequest(summary=pb.RunSummary(pass_rate=2.0)), "summary.pass_rate"),
        (rpb.CloseRunRequest(summary=pb.RunSummary(cases=-1)), "summary.cases"),
        (rpb.CloseRunRequest(summary=pb.RunSummary(cost_usd=float("nan"))), "summary.cost_usd"),
        (
            rpb.CloseRunRequest(
                summary=pb.RunSummary(checks=[pb.CheckSummary(name="c", mean_value=-0.5)])
            ),
            "summary.checks[0].mean_value",
        ),
        (rpb.CloseRunRequest(summary=pb.RunSummary(), cases=[pb.Case()]), "results"),
        (
            rpb.CloseRunRequest(
                summary=pb.RunSummary(), cases=[pb.Case()], results=[pb.CaseResult(index=-1)]
            ),
            "results[0].index",
        ),
    ],
)
async def test_a_bad_close_names_the_field(
    server: PartsServer, close: rpb.CloseRunRequest, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await server.runs.CloseRun(close)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in err.value.details()


@pytest.mark.parametrize(
    ("open_", "code", "field"),
    [
        (rpb.OpenRunRequest(record=True, run_name="a\x00b"), "INVALID_ARGUMENT", "run_name"),
        (rpb.OpenRunRequest(record=True, checks=["x" * 2000]), "INVALID_ARGUMENT", "checks[0]"),
        (rpb.OpenRunRequest(record=True, suite="s" * (5 << 20)), "RESOURCE_EXHAUSTED", "suite"),
    ],
)
async def test_a_bad_open_names_the_field(
    server: PartsServer, open_: rpb.OpenRunRequest, code: str, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await server.runs.OpenRun(open_)
    assert err.value.code().name == code
    assert field in err.value.details()


async def test_another_tenants_run_cannot_take_parts_or_be_closed(srv: RunServer) -> None:
    rid = (await srv.runs.OpenRun(rpb.OpenRunRequest(record=True), metadata=md("checkout"))).run_id
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await summary_of(
            srv.scoring.RunSuite(part(rid, 0, case("a", "Paris")), metadata=md("search"))
        )
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await srv.runs.CloseRun(
            rpb.CloseRunRequest(run_id=rid, interrupted=True), metadata=md("search")
        )
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    seen = await srv.runs.ListRuns(rpb.ListRunsRequest(), metadata=md("checkout"))
    assert [(r.run_id, r.caller) for r in seen.runs] == [(rid, "checkout")]


async def test_a_run_suite_stream_is_a_part_too(server: PartsServer) -> None:
    # The config's request names the part: its cases are recorded at the run's indexes.
    rid = (await server.runs.OpenRun(rpb.OpenRunRequest(record=True, run_name="s"))).run_id
    config = pb.RunSuiteStreamConfig(request=part(rid, 5, case("a", "Paris")), case_count=2)

    async def messages():
        yield pb.RunSuiteStreamRequest(config=config)
        yield pb.RunSuiteStreamRequest(cases=pb.CaseChunk(cases=[case("b", "Rome")]))

    summary = await summary_of(server.scoring.RunSuiteStream(messages()))
    assert summary.run_id == rid
    results = await server.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=rid))
    assert sorted((r.result.index, r.result.sample_id) for r in results.results) == [
        (5, "a"), (6, "b"),
    ]  # fmt: skip
    assert server.scrape().total("scorewire_suite_runs_total") == 0  # not closed yet


async def test_a_checkllm_document_cannot_be_a_part(server: PartsServer) -> None:
    # The server scores a checkllm document as a run of its own: refused, naming `part`.
    doc = "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: hi}\n    output: hi\n"
    req = pb.RunSuiteRequest(suite_yaml=doc, part=pb.RunPart())
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await summary_of(server.scoring.RunSuite(req))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "part" in err.value.details()


async def test_parts_on_either_store(open_store) -> None:
    # SQLite and PostgreSQL: the run's own heartbeat keeps it running while a part is
    # scored, and lapses into incomplete once nothing beats it; closing it then is
    # FAILED_PRECONDITION naming the run.
    srv_ = await start_run_server(await open_store(), runs_heartbeat_s=0.2)
    try:
        rid = (await srv_.runs.OpenRun(rpb.OpenRunRequest(record=True))).run_id
        await summary_of(srv_.scoring.RunSuite(part(rid, 3, case("a", "Paris"))))
        await srv_.runs.CloseRun(rpb.CloseRunRequest(run_id=rid, summary=failed_summary(1)))
        run = (await srv_.runs.GetRun(rpb.GetRunRequest(run_id=rid))).run
        assert (run.status, run.results) == (rpb.RUN_STATUS_COMPLETE, 1)
        left = (await srv_.runs.OpenRun(rpb.OpenRunRequest(record=True))).run_id
        for _ in range(100):
            run = (await srv_.runs.GetRun(rpb.GetRunRequest(run_id=left))).run
            if run.status != rpb.RUN_STATUS_RUNNING:
                break
            await asyncio.sleep(0.05)
        assert run.status == rpb.RUN_STATUS_INCOMPLETE
        # Its caller coming back late is told, not answered OK: the run stays incomplete.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv_.runs.CloseRun(rpb.CloseRunRequest(run_id=left, summary=failed_summary(1)))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert left in err.value.details() and "incomplete" in err.value.details()
        run = (await srv_.runs.GetRun(rpb.GetRunRequest(run_id=left))).run
        assert (run.status, run.HasField("summary")) == (rpb.RUN_STATUS_INCOMPLETE, False)
    finally:
        await srv_.stop()
