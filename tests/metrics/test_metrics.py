"""/metrics after real traffic: every series exists, with values that match the traffic."""

from __future__ import annotations

import platform
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from scorewire.core.errors import StartupError
from scorewire.judge.answers import CEILING_NOTE
from scorewire.metrics import start_metrics
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.metrics.helpers import (
    API_KEY,
    PRICED_MODEL,
    MetricsServer,
    Scrape,
    Seen,
    cases,
    judge_settings,
    judge_spec,
    judge_traffic,
    run_suite,
    start_metrics_server,
)
from tests.server import custom_checks
from tests.support.servers import free_port
from tests.support.wait import wait_until_async

SVC = "scorewire.v1.ScoringService"


def rpc(method: str, kind: str, **extra: str) -> dict[str, str]:
    return {"grpc_service": SVC, "grpc_method": method, "grpc_type": kind, **extra}


async def settled(srv: MetricsServer, method: str) -> Scrape:
    """A scrape taken once every started call of `method` has been handled (a
    cancelled call finishes on the server a moment after the client gives up)."""

    async def scrape_once_settled() -> Scrape | None:
        scrape = await srv.scrape()
        started = scrape.total("grpc_server_started_total", grpc_method=method)
        handled = scrape.total("grpc_server_handled_total", grpc_method=method)
        return scrape if started and started == handled else None

    return await wait_until_async(scrape_once_settled, f"every {method} call to be handled")


# --- gRPC ----------------------------------------------------------------------------------


async def test_grpc_series_count_every_kind_of_call(server: MetricsServer) -> None:
    # Unary OK and InvalidArgument, a server stream, a bidi stream: started, handled by
    # code (Go spelling), latency histogram and messages each way.
    await server.stub.Score(pb.ScoreRequest(output=pb.Output(text="hi"), compact=["contains:hi"]))
    await server.stub.Score(pb.ScoreRequest(output=pb.Output(text="x"), compact=["contains:x"]))
    with pytest.raises(grpc.aio.AioRpcError) as bad:
        await server.stub.Score(pb.ScoreRequest(compact=["lenght:1..3"]))
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    seen = Seen()
    texts = [f"answer {i}" for i in range(300)]
    suite_messages = await run_suite(
        server.stub, pb.RunSuiteRequest(compact=["contains:answer"], cases=cases(texts)), seen
    )

    async def stream() -> Any:
        yield pb.ScoreStreamRequest(config=pb.StreamConfig(compact=["contains:ok"]))
        for i in range(3):
            yield pb.ScoreStreamRequest(
                case=pb.StreamCase(request_id=str(i), output=pb.Output(text="ok"))
            )

    streamed = [r async for r in server.stub.ScoreStream(stream())]
    assert len(streamed) == 3

    m = await server.scrape()
    score, suite, bidi = (
        rpc("Score", "unary"),
        rpc("RunSuite", "server_stream"),
        rpc("ScoreStream", "bidi_stream"),
    )
    assert m.value("grpc_server_started_total", **score) == 3
    assert m.value("grpc_server_handled_total", **score, grpc_code="OK") == 2
    assert m.value("grpc_server_handled_total", **score, grpc_code="InvalidArgument") == 1
    assert m.value("grpc_server_handling_seconds_count", **score) == 3
    assert m.value("grpc_server_msg_received_total", **score) == 3
    # A unary call that fails sends no message.
    assert m.value("grpc_server_msg_sent_total", **score) == 2

    assert m.value("grpc_server_started_total", **suite) == 1
    assert m.value("grpc_server_handled_total", **suite, grpc_code="OK") == 1
    assert m.value("grpc_server_msg_received_total", **suite) == 1
    assert m.value("grpc_server_msg_sent_total", **suite) == suite_messages > 2

    assert m.value("grpc_server_handled_total", **bidi, grpc_code="OK") == 1
    assert m.value("grpc_server_msg_received_total", **bidi) == 4  # config + 3 cases
    assert m.value("grpc_server_msg_sent_total", **bidi) == 3
    assert m.value("grpc_server_handling_seconds_count", **bidi) == 1
    # The histogram's buckets are cumulative and end at the count.
    buckets = m.matching("grpc_server_handling_seconds_bucket", **score)
    assert max(v for _, v in buckets) == 3 == next(v for lb, v in buckets if lb["le"] == "+Inf")


async def test_methods_are_preregistered_at_zero(server: MetricsServer) -> None:
    # As go-grpc-prometheus does: every ScoringService method and code exists before any
    # call, so rates and alerts see a series from the start.
    m = await server.scrape()
    for method, kind in [
        ("Score", "unary"),
        ("RunSuite", "server_stream"),
        ("ScoreStream", "bidi_stream"),
        ("ListChecks", "unary"),
        ("ValidateSuite", "unary"),
    ]:
        assert m.value("grpc_server_started_total", **rpc(method, kind)) == 0
        for code in ("OK", "InvalidArgument", "DeadlineExceeded", "Internal", "Unauthenticated"):
            assert m.has("grpc_server_handled_total", **rpc(method, kind, grpc_code=code))


async def test_a_call_past_its_deadline_is_deadline_exceeded(server: MetricsServer) -> None:
    # The server cancels the handler when the deadline passes; that is DeadlineExceeded,
    # not Canceled.
    req = pb.ScoreRequest(checks=[pb.CheckSpec(type="test.slow")], output=pb.Output(text="x"))
    req.sample.metadata["sleep"] = "2"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await server.stub.Score(req, timeout=0.3)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    m = await settled(server, "Score")
    assert (
        m.value("grpc_server_handled_total", **rpc("Score", "unary"), grpc_code="DeadlineExceeded")
        == 1
    )


async def test_a_stream_the_caller_cancels_is_canceled(server: MetricsServer) -> None:
    # The client goes away mid-RunSuite: the call counts as Canceled.
    req = pb.RunSuiteRequest(checks=[pb.CheckSpec(type="test.slow")], cases=cases(["a", "b"]))
    for c in req.cases:
        c.sample.metadata["sleep"] = "5"
    started = custom_checks.STARTED["slow"]
    call = server.stub.RunSuite(req)
    await wait_until_async(lambda: custom_checks.STARTED["slow"] > started, "the run to start")
    call.cancel()
    m = await settled(server, "RunSuite")
    assert (
        m.value(
            "grpc_server_handled_total", **rpc("RunSuite", "server_stream"), grpc_code="Canceled"
        )
        == 1
    )


async def test_health_watch_counts_messages_written_through_the_context(
    server: MetricsServer,
) -> None:
    # grpc.health's Watch writes with context.write (no generator): sent still counts.
    stub = health_pb2_grpc.HealthStub(server.channel)
    call = stub.Watch(health_pb2.HealthCheckRequest(service=SVC))
    first = await call.read()
    assert first.status == health_pb2.HealthCheckResponse.SERVING
    call.cancel()
    m = await settled(server, "Watch")
    watch = {"grpc_service": "grpc.health.v1.Health", "grpc_method": "Watch"}
    assert m.value("grpc_server_msg_sent_total", **watch, grpc_type="server_stream") == 1
    assert m.value("grpc_server_handled_total", **watch, grpc_code="Canceled") == 1


# --- checks and suites ---------------------------------------------------------------------


async def test_check_counts_by_type_and_outcome_match_the_scores(server: MetricsServer) -> None:
    # pass, fail and error outcomes across Score, RunSuite and ScoreStream; the duration
    # histogram counts every score and sums their latencies.
    seen = Seen()
    boom = pb.CheckSpec(type="test.metrics_boom")
    resp = await server.stub.Score(
        pb.ScoreRequest(output=pb.Output(text="hello"), compact=["contains:hello"], checks=[boom])
    )
    seen.add_scores(resp.scores)
    texts = [f"answer {i}" if i % 3 else f"reply {i}" for i in range(500)]
    await run_suite(
        server.stub,
        pb.RunSuiteRequest(compact=["contains:answer", "length:0..8"], cases=cases(texts)),
        seen,
    )
    outcomes = seen.outcomes()
    assert {o for _, o in outcomes} == {"pass", "fail", "error"}, "traffic must cover them all"

    m = await server.scrape()
    for (kind, outcome), n in outcomes.items():
        assert m.value("scorewire_checks_total", type=kind, outcome=outcome) == n, (kind, outcome)
    for kind in {k for k, _ in outcomes}:
        scores = [s for s in seen.scores if s.type == kind]
        assert m.value("scorewire_check_duration_seconds_count", type=kind) == len(scores)
        assert m.value("scorewire_check_duration_seconds_bucket", type=kind, le="+Inf") == len(
            scores
        )
        assert m.value("scorewire_check_duration_seconds_sum", type=kind) == pytest.approx(
            sum(s.latency_ms for s in scores) / 1000, rel=1e-6, abs=1e-9
        )
    assert sum(v for _, v in m.matching("scorewire_checks_total")) == len(seen.scores)


async def test_suite_runs_count_gate_outcomes(server: MetricsServer) -> None:
    # One run passes its gate and two fail theirs (one on pass rate, one on errors).
    seen = Seen()
    ok = pb.RunSuiteRequest(compact=["contains:a"], cases=cases(["a", "ab"]))
    low = pb.RunSuiteRequest(
        compact=["contains:a"], cases=cases(["a", "b"]), gate=pb.Gate(min_pass_rate=0.9)
    )
    errs = pb.RunSuiteRequest(checks=[pb.CheckSpec(type="test.metrics_boom")], cases=cases(["a"]))
    for req in (ok, low, errs):
        await run_suite(server.stub, req, seen)
    assert seen.suite_gates == [True, False, False]
    m = await server.scrape()
    assert m.value("scorewire_suite_runs_total", gate="pass") == 1
    assert m.value("scorewire_suite_runs_total", gate="fail") == 2


async def test_two_servers_in_one_process_keep_separate_registries() -> None:
    # Each server has its own registry: traffic on one never shows on the other.
    a, b = await start_metrics_server(), await start_metrics_server()
    try:
        await a.stub.Score(pb.ScoreRequest(output=pb.Output(text="x"), compact=["contains:x"]))
        ma, mb = await a.scrape(), await b.scrape()
        assert ma.value("grpc_server_started_total", grpc_method="Score") == 1
        assert mb.value("grpc_server_started_total", grpc_method="Score") == 0
        assert not mb.matching("scorewire_checks_total")
    finally:
        await a.close()
        await b.close()


def test_metrics_disabled_starts_nothing() -> None:
    # metrics_enabled=false: no registry, no port.
    assert start_metrics(Settings(metrics_enabled=False, metrics_port=0)) is None


def test_metrics_port_taken_fails_at_start() -> None:
    # A busy metrics port is a start-up error, not a silent gap in monitoring.
    first = start_metrics(Settings(host="127.0.0.1", metrics_port=0))
    assert first is not None and first.http_port is not None
    try:
        # A StartupError (one line naming the setting) since the first-run errors work.
        with pytest.raises(StartupError, match="SCOREWIRE_METRICS_PORT"):
            start_metrics(Settings(host="127.0.0.1", metrics_port=first.http_port))
    finally:
        first.close()


# --- judge ----------------------------------------------------------------------------------


async def test_judge_series_match_uncached_and_cached_traffic(fake_openai: FakeOpenAI) -> None:
    # Dollars equal the sum of the scores' costs; cache hits save what the misses cost;
    # tokens, retries, outcomes and the budget follow the scripted traffic. The traffic
    # has an unpriced model, which a budget refuses unless unpriced calls are allowed.
    srv = await start_metrics_server(
        judge=True, **judge_settings(fake_openai, judge_budget_usd=1.0, judge_allow_unpriced=True)
    )
    try:
        seen = await judge_traffic(srv, fake_openai)
        m = await srv.scrape()
        stats = srv.judge.stats.snapshot() if srv.judge else {}
    finally:
        await srv.close()
    judged = [s for s in seen.scores if s.type == "judge"]
    uncached, cached = judged[:3], judged[3:6]
    assert [s.cached for s in uncached] == [False] * 3 and [s.cached for s in cached] == [True] * 3
    priced_cost = sum(s.cost_usd for s in uncached) + judged[7].cost_usd  # + the invalid verdict
    assert priced_cost > 0

    model = {"model": PRICED_MODEL}
    assert m.value("scorewire_judge_cost_usd_total", **model) == pytest.approx(priced_cost)
    assert m.value("scorewire_judge_cost_usd_total") == pytest.approx(
        sum(s.cost_usd for s in seen.scores)
    )
    assert m.value("scorewire_judge_saved_usd_total") == pytest.approx(
        sum(s.cost_usd for s in uncached)
    )
    assert m.value("scorewire_judge_tokens_total", **model, direction="input") == 600 + 10
    assert m.value("scorewire_judge_tokens_total", **model, direction="output") == 90 + 3
    assert m.value("scorewire_judge_tokens_total", model="my-local-model", direction="input") == 50
    assert m.value("scorewire_judge_unpriced_requests_total", model="my-local-model") == 1
    assert judged[6].unpriced

    calls = {"backend": "openai", **model}
    assert m.value("scorewire_judge_requests_total", **calls, outcome="ok") == 3
    assert m.value("scorewire_judge_requests_total", **calls, outcome="invalid_verdict") == 1
    assert m.value("scorewire_judge_requests_total", **calls, outcome="error") == 1
    assert m.value("scorewire_judge_requests_total", model="my-local-model", outcome="ok") == 1
    assert m.value("scorewire_judge_retries_total", **calls) == 1, (stats, fake_openai.requests)
    assert m.value("scorewire_judge_requests_in_flight", backend="openai") == 0

    # 3 misses (first run), 3 hits (second), then 3 more misses (unpriced, invalid, error).
    assert m.value("scorewire_judge_cache_lookups_total", result="hit") == 3
    assert m.value("scorewire_judge_cache_lookups_total", result="miss") == 6
    assert m.value("scorewire_judge_cache_lookups_total", result="bypass") == 0
    assert m.value("scorewire_judge_shared_requests_total") == 0
    assert m.value("scorewire_judge_budget_refusals_total") == 0

    assert m.value("scorewire_judge_budget_limit_usd") == 1.0
    assert m.value("scorewire_judge_budget_remaining_usd") == pytest.approx(1.0 - priced_cost)
    # The judge scores: the invalid verdict and the failed call are errors.
    assert m.value("scorewire_checks_total", type="judge", outcome="error") == 2


async def test_an_answer_without_usage_reports_and_counts_the_ceiling_it_was_charged(
    fake_openai: FakeOpenAI,
) -> None:
    # The upstream omits usage: the budgets charge the call's ceiling, and the score and
    # the cost metric say that same amount, flagged as an upper bound (changed
    # deliberately: the score said $0 and `unpriced`, and the metric left the money out).
    srv = await start_metrics_server(
        judge=True, **judge_settings(fake_openai, judge_budget_usd=1.0)
    )
    fake_openai.script(Reply(input_tokens=None, output_tokens=None))
    try:
        resp = await srv.stub.Score(
            pb.ScoreRequest(
                output=pb.Output(text="no usage"), checks=[judge_spec()], budget_usd=0.5
            )
        )
        m = await srv.scrape()
        assert srv.judge is not None and srv.judge.server_budget is not None
        charged = 1.0 - (srv.judge.server_budget.remaining_usd() or 0.0)
    finally:
        await srv.close()
    score = resp.scores[0]
    assert not score.error.code and not score.unpriced
    # at least all of max_tokens (1024) at gpt-4o-mini's output price was charged
    assert charged >= 1024 * 0.60 / 1e6 and score.cost_usd == pytest.approx(charged)
    assert CEILING_NOTE in score.reason
    assert m.value("scorewire_judge_cost_usd_total", model=PRICED_MODEL) == pytest.approx(charged)
    assert m.value("scorewire_judge_ceiling_charged_requests_total", model=PRICED_MODEL) == 1
    assert m.total("scorewire_judge_unpriced_requests_total") == 0
    assert m.value("scorewire_judge_requests_total", model=PRICED_MODEL, outcome="ok") == 1


async def test_an_unreachable_cache_counts_bypasses(fake_openai: FakeOpenAI) -> None:
    # Redis down: lookups bypass the cache (and scoring goes on, paying for the call).
    closed = free_port()
    srv = await start_metrics_server(
        judge=True, **judge_settings(fake_openai, cache_url=f"redis://127.0.0.1:{closed}/0")
    )
    try:
        resp = await srv.stub.Score(
            pb.ScoreRequest(output=pb.Output(text="x"), checks=[judge_spec()])
        )
        m = await srv.scrape()
        bypasses = srv.judge.stats.cache_bypasses if srv.judge else 0
    finally:
        await srv.close()
    assert not resp.scores[0].error.code and not resp.scores[0].cached
    assert bypasses >= 1
    assert m.value("scorewire_judge_cache_lookups_total", result="bypass") == bypasses
    assert m.value("scorewire_judge_cache_lookups_total", result="hit") == 0
    assert m.value("scorewire_judge_cost_usd_total") == pytest.approx(resp.scores[0].cost_usd)


# --- build info, latency resolution, error codes ---------------------------------------


async def test_build_info_names_the_scorewire_python_and_grpcio_versions(
    server: MetricsServer,
) -> None:
    # One series at 1, so dashboards can join on it or show what each replica runs.
    m = await server.scrape()
    [(labels, value)] = m.matching("scorewire_build_info")
    assert value == 1
    assert labels["python"] == platform.python_version()
    assert labels["grpcio"] == grpc.__version__
    assert labels["version"]  # the installed distribution's, or "unknown" from a bare tree


async def test_handling_histogram_resolves_sub_millisecond_calls(server: MetricsServer) -> None:
    # A deterministic Score takes well under 1 ms: the buckets start at 100 µs, not 5 ms.
    await server.stub.Score(pb.ScoreRequest(output=pb.Output(text="hi"), compact=["contains:hi"]))
    m = await server.scrape()
    bounds = [
        lb["le"]
        for lb, _ in m.matching("grpc_server_handling_seconds_bucket", **rpc("Score", "unary"))
    ]
    assert bounds[:5] == ["0.0001", "0.00025", "0.0005", "0.001", "0.0025"]


async def test_a_judge_without_a_key_is_refused_and_counted_by_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No API key: the judge makes no HTTP call. Deliberately changed by the preflight: the
    # request is refused with FAILED_PRECONDITION before any check runs (it used to score
    # a JUDGE_ERROR per check), so the series to watch is the gRPC code, and no check
    # error is counted.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    srv = await start_metrics_server(judge=True, judge_model="openai:gpt-4o-mini")
    try:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await srv.stub.Score(pb.ScoreRequest(output=pb.Output(text="x"), checks=[judge_spec()]))
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        m = await srv.scrape()
        score = rpc("Score", "unary")
        assert m.value("grpc_server_handled_total", **score, grpc_code="FailedPrecondition") == 1
        assert not m.has("scorewire_check_errors_total", type="judge", code="JUDGE_ERROR")
    finally:
        await srv.close()


async def test_generation_series_count_what_the_server_generated(fake_openai: FakeOpenAI) -> None:
    # A checkllm suite the server generates: two distinct prompts are generated, the third
    # is the first's twin (cached), and generation dollars are counted apart from judges'.
    doc = """
prompts: ["{{q}}"]
providers: ["openai:gpt-4o-mini"]
settings: {parallel: false}
tests:
  - {vars: {q: one}, assert: [{type: contains, value: x}]}
  - {vars: {q: two}, assert: [{type: contains, value: x}]}
  - {vars: {q: one}, assert: [{type: contains, value: x}]}
"""
    srv = await start_metrics_server(
        generation_enabled=True, openai_base_url=fake_openai.url, openai_api_key=API_KEY
    )
    try:
        messages = [m async for m in srv.stub.RunSuite(pb.RunSuiteRequest(suite_yaml=doc))]
        m = await srv.scrape()
    finally:
        await srv.close()
    summary = messages[-1].summary
    assert fake_openai.calls == 2 and summary.generation_calls == 2
    generated = m.value("scorewire_generations_total", backend="openai", outcome="generated")
    assert generated == 2
    assert m.value("scorewire_generations_total", backend="openai", outcome="cached") == 1
    cost = m.value("scorewire_generation_cost_usd_total", backend="openai")
    assert cost == pytest.approx(summary.generation_cost_usd) and cost > 0
