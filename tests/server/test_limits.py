"""Every per-request cost bounded before it is paid (issue 13), over a real server.

Each limit is a setting; a request over one is RESOURCE_EXHAUSTED naming the setting and
the field, before anything is compiled or scored. Requests within the limits still work.
"""

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format, struct_pb2
from scorewire.engine.metering import REQUEST_SETTINGS
from scorewire.scoring.plans import PlanCache
from scorewire.settings import Settings
from scorewire.text import resources
from scorewire.v1 import scoring_pb2 as pb

from tests.server import custom_checks
from tests.server.conftest import Server, start_server
from tests.server.test_service import bad_request


def spec(ctype: str, name: str = "", **params: object) -> pb.CheckSpec:
    return json_format.ParseDict({"type": ctype, "name": name, "params": params}, pb.CheckSpec())


async def refused(call, setting: str) -> dict[str, str]:
    """Await a call that must be RESOURCE_EXHAUSTED naming `setting`; its field violations."""
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        got = call()
        if hasattr(got, "__aiter__"):
            async for _ in got:
                pass
        else:
            await got
    assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, exc.value.details()
    assert setting in exc.value.details()
    return bad_request(exc.value)


@pytest.fixture
async def small() -> AsyncIterator[Server]:
    """A server with small limits, so that requests over them stay small in the test."""
    srv = await start_server(
        max_metric_input_bytes_per_case=10_000,
        check_timeout_s=0.3,
        plan_cache_bytes=2 * 1024 * 1024,
        max_reason_chars=100,
    )
    try:
        yield srv
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


# --- needles ------------------------------------------------------------------------


async def test_contains_with_thousands_of_needles_is_refused(server: Server) -> None:
    # Finding: 5,000 needles on a 10 MB output scored for 16 s.
    req = pb.ScoreRequest(
        output=pb.Output(text="x"),
        checks=[spec("contains", needles=[f"n{i}" for i in range(5000)])],
    )
    fields = await refused(lambda: server.stub.Score(req), "max_needles_per_request")
    assert "checks[0].params.needles" in fields


async def test_needle_count_is_summed_over_checks_and_compact_lines(server: Server) -> None:
    # 250 needles in a check, five phrases and two compact `contains:` lines pass 256.
    req = pb.ScoreRequest(
        output=pb.Output(text="x"),
        checks=[
            spec("contains", needles=[f"n{i}" for i in range(250)]),
            spec("safety.forbidden", phrases=[f"p{i}" for i in range(5)]),
        ],
        compact=["contains:c1", "contains:c2"],
    )
    await refused(lambda: server.stub.Score(req), "max_needles_per_request")


async def test_a_checkllm_suite_is_held_to_the_needles_of_its_biggest_test(
    server: Server,
) -> None:
    # Each test's checks read only its own cases, so a suite of 1,000 tests with one
    # `contains` each scans no more than one plain check does: it runs. One test of 257
    # needles is refused, naming the test.
    def doc(tests: list[str]) -> str:
        lines = ["prompts: ['{{q}}']", "providers: [openai:gpt-4o-mini]", "tests:"]
        return "\n".join(lines + [f"  - {{vars: {{q: q}}, assert: [{t}]}}" for t in tests])

    many = doc([f"{{type: contains, value: n{i}}}" for i in range(1000)])
    cases = [pb.Case(test=str(i), output=pb.Output(text=f"n{i}")) for i in range(1000)]
    summary = None
    async for m in server.stub.RunSuite(pb.RunSuiteRequest(suite_yaml=many, cases=cases)):
        summary = m.summary if m.HasField("summary") else summary
    assert summary is not None and summary.cases_passed == 1000
    needles = ", ".join(f"n{i}" for i in range(257))
    big = doc(["{type: contains, value: x}", f"{{type: safety.forbidden, phrases: [{needles}]}}"])
    req = pb.RunSuiteRequest(suite_yaml=big, cases=[pb.Case(test=str(i)) for i in range(2)])
    fields = await refused(lambda: server.stub.RunSuite(req), "max_needles_per_request")
    assert any(f.startswith("suite_yaml.tests[1]") for f in fields), fields


async def test_needle_characters_are_bounded(server: Server) -> None:
    req = pb.ScoreRequest(
        output=pb.Output(text="x"), checks=[spec("safety.forbidden", phrases=["p" * 70_000])]
    )
    fields = await refused(lambda: server.stub.Score(req), "max_needle_chars_per_request")
    assert "checks[0].params.phrases" in fields


async def test_needles_read_from_a_sample_are_bounded_per_case(server: Server) -> None:
    # Needles in the sample's expected value arrive with each case: over the limit, that
    # case's score is an error naming the setting; the other cases score as usual.
    needles = {"must_include": [f"n{i}" for i in range(5000)]}
    many = json_format.ParseDict(needles, struct_pb2.Value())
    few = json_format.ParseDict({"must_include": ["ok"]}, struct_pb2.Value())
    cases = [
        pb.Case(sample=pb.Sample(id="many", expected=many), output=pb.Output(text="ok")),
        pb.Case(sample=pb.Sample(id="few", expected=few), output=pb.Output(text="ok")),
    ]
    req = pb.RunSuiteRequest(checks=[pb.CheckSpec(type="contains")], cases=cases)
    results = {
        r.sample_id: r.scores[0] async for m in server.stub.RunSuite(req) for r in m.results.results
    }
    assert results["many"].error.code == "INVALID_REFERENCE" and not results["many"].passed
    assert "max_needles_per_request" in results["many"].reason
    assert results["few"].passed


async def test_needles_within_the_limits_still_score(server: Server) -> None:
    req = pb.ScoreRequest(
        output=pb.Output(text="n1 n2"),
        checks=[spec("contains", needles=[f"n{i}" for i in range(256)], require_all=False)],
    )
    resp = await server.stub.Score(req)
    assert resp.scores[0].passed and not resp.scores[0].HasField("error")


# --- regular expressions -------------------------------------------------------------


async def test_many_costly_regexes_are_refused_before_they_compile(server: Server) -> None:
    # Finding: 64 regex checks in 3 kB took 9 s to compile (`\d{1000}` is 84,000 RE2
    # instructions); the request's program-size budget stops it after a few.
    checks = [spec("regex", pattern=rf"\d{{1000}}x{i}") for i in range(64)]
    req = pb.ScoreRequest(output=pb.Output(text="x"), checks=checks)
    fields = await refused(lambda: server.stub.Score(req), "max_regex_program_size_per_request")
    assert any(f.startswith("checks[") and f.endswith(".params.pattern") for f in fields)


async def test_pattern_characters_are_bounded(server: Server) -> None:
    req = pb.ScoreRequest(output=pb.Output(text="x"), checks=[spec("regex", pattern="a" * 20_000)])
    fields = await refused(lambda: server.stub.Score(req), "max_pattern_chars_per_request")
    assert "checks[0].params.pattern" in fields


async def test_cheap_regexes_within_the_limits_still_compile(server: Server) -> None:
    checks = [spec("regex", pattern=rf"^answer {i}\b", flags=256) for i in range(64)]
    req = pb.ScoreRequest(output=pb.Output(text="answer 3"), checks=checks)
    resp = await server.stub.Score(req)
    assert [s.passed for s in resp.scores] == [i == 3 for i in range(64)]
    assert not any(s.HasField("error") for s in resp.scores)


# --- JSON Schemas ----------------------------------------------------------------------


def _schema_with_patterns(n: int) -> dict:
    return {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "pattern": rf"^\w+{i}$"} for i in range(n)},
    }


async def test_a_schema_with_hundreds_of_patterns_is_refused(server: Server) -> None:
    # Finding: a 20 kB schema with 300 `pattern`s stalled 36 s and took ~850 MB.
    req = pb.ScoreRequest(
        output=pb.Output(text="{}"), checks=[spec("json_schema", schema=_schema_with_patterns(300))]
    )
    fields = await refused(lambda: server.stub.Score(req), "max_patterns_per_request")
    assert any(f.startswith("checks[0].params.schema.properties.p") for f in fields)


async def test_validate_suite_refuses_the_same_schema(server: Server) -> None:
    # ValidateSuite compiles too: it is bounded the same way, not answered with problems.
    suite = json.dumps(
        {"checks": {"s": {"type": "json_schema", "schema": _schema_with_patterns(300)}}}
    )
    fields = await refused(
        lambda: server.stub.ValidateSuite(pb.ValidateSuiteRequest(suite_yaml=suite)),
        "max_patterns_per_request",
    )
    assert any(f.startswith("suite_yaml.checks.s.schema.properties.p") for f in fields)


async def test_schema_size_and_keywords_are_bounded(server: Server) -> None:
    big = {"enum": ["v" * 1000 for _ in range(100)]}
    req = pb.ScoreRequest(output=pb.Output(text="1"), checks=[spec("json_schema", schema=big)])
    await refused(lambda: server.stub.Score(req), "max_schema_bytes_per_request")
    wide = {"properties": {f"k{i}": {"type": "integer"} for i in range(2100)}}
    req = pb.ScoreRequest(output=pb.Output(text="1"), checks=[spec("json_schema", schema=wide)])
    await refused(lambda: server.stub.Score(req), "max_schema_keywords_per_request")


async def test_a_schema_within_the_limits_still_validates(server: Server) -> None:
    schema = _schema_with_patterns(20)
    req = pb.ScoreRequest(
        output=pb.Output(text='{"p3": "abc3"}'), checks=[spec("json_schema", schema=schema)]
    )
    resp = await server.stub.Score(req)
    assert resp.scores[0].passed, resp.scores[0].reason


async def test_unique_items_over_many_objects_is_not_quadratic(server: Server) -> None:
    # Finding: uniqueItems over 10,000 small objects stalled the server 83 s (pairwise).
    # 20,000 would take minutes pairwise; hashing answers well within the deadline.
    items = [{"id": i, "name": f"n{i}"} for i in range(20_000)]
    req = pb.ScoreRequest(
        output=pb.Output(text=json.dumps(items)),
        checks=[spec("json_schema", schema={"type": "array", "uniqueItems": True})],
    )
    resp = await server.stub.Score(req, timeout=60)
    assert resp.scores[0].passed, resp.scores[0].reason


# --- languages ---------------------------------------------------------------------------


async def test_many_language_codes_are_refused_before_any_model_loads(server: Server) -> None:
    # Finding: 64 language codes in one request loaded 1.2 GB and stalled 8 s.
    codes = ["sv", "da", "fi", "pl", "cs", "hu"]
    before = dict(resources.DETECTOR_LOADS)
    req = pb.ScoreRequest(
        output=pb.Output(text="x"), checks=[spec("language", value=c) for c in codes]
    )
    fields = await refused(lambda: server.stub.Score(req), "max_languages_per_request")
    assert "checks[4].params.value" in fields
    assert before == resources.DETECTOR_LOADS  # refused before loading anything


async def test_one_language_repeated_counts_once(server: Server) -> None:
    # Five checks of the same code name one language; they share one detector, loaded
    # at most once per process however many requests name it.
    req = pb.ScoreRequest(
        output=pb.Output(text="The capital of France is Paris, a city on the Seine."),
        checks=[spec("language", name=f"en{i}", value="en") for i in range(5)],
    )
    first = await server.stub.Score(req)
    assert all(s.passed for s in first.scores), [s.reason for s in first.scores]
    loads = dict(resources.DETECTOR_LOADS)
    req2 = pb.ScoreRequest(
        output=pb.Output(text="Bonjour"), checks=[spec("language", name="again", value="en")]
    )
    await server.stub.Score(req2)
    assert loads == resources.DETECTOR_LOADS
    assert all(n == 1 for n in resources.DETECTOR_LOADS.values())


async def test_languages_loaded_by_the_process_are_bounded() -> None:
    # Models stay loaded for the process's life, so their number is bounded too: with
    # room for exactly what is loaded (at least the base twelve, English among them), a request
    # needing one more language is refused before it loads, and the loaded ones serve.
    # The bound holds per process, and the scoring workers are the processes that load
    # models (issue 13, finding 1): room for the base twelve alone, whatever this test
    # process has loaded before.
    loaded = set(resources.LANGUAGE_BASE_SET)
    srv = await start_server(max_languages_loaded=len(loaded))
    try:
        ok = pb.ScoreRequest(
            output=pb.Output(text="The capital of France is Paris, a city on the Seine."),
            checks=[spec("language", value="en")],
        )
        assert (await srv.stub.Score(ok)).scores[0].passed
        before = dict(resources.DETECTOR_LOADS)
        candidates = ("eo", "sw", "yo", "zu", "ga")
        new = next(c for c in candidates if c not in resources.loaded_languages())
        req = pb.ScoreRequest(output=pb.Output(text="x"), checks=[spec("language", value=new)])
        fields = await refused(lambda: srv.stub.Score(req), "max_languages_loaded")
        assert "checks[0].params.value" in fields
        assert before == resources.DETECTOR_LOADS
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def test_examples_are_bounded_like_outputs(server: Server) -> None:
    # Examples are scored when the request loads, so their text is an output in effect:
    # 256 needles over 64 examples of 10 kB each would scan 160 MB before any case.
    examples = [{"text": "e" * 10_000, "kind": "EXAMPLE_KIND_NEGATIVE"} for _ in range(64)]
    check = json_format.ParseDict(
        {"type": "contains", "params": {"needles": ["zz"]}, "examples": examples}, pb.CheckSpec()
    )
    req = pb.ScoreRequest(output=pb.Output(text="x"), checks=[check])
    fields = await refused(lambda: server.stub.Score(req), "max_example_chars_per_request")
    assert "checks[0].examples" in fields


# --- names and reasons -------------------------------------------------------------------


async def test_a_huge_check_name_is_refused_at_load(server: Server) -> None:
    # Finding: a 300 kB check name made RunSuite fail with "Sent message larger than max"
    # and no results: every score carries the name.
    req = pb.RunSuiteRequest(
        checks=[pb.CheckSpec(type="length", name="n" * 300_000, params={"max_chars": 5})],
        cases=[pb.Case(output=pb.Output(text=str(i))) for i in range(300)],
    )
    fields = await refused(lambda: server.stub.RunSuite(req), "max_check_name_chars")
    assert "checks[0].name" in fields


async def test_a_huge_compact_line_is_refused_as_a_name(server: Server) -> None:
    req = pb.ScoreRequest(output=pb.Output(text="x"), compact=["exact:" + "e" * 5000])
    await refused(lambda: server.stub.Score(req), "max_check_name_chars")


async def test_reasons_are_cut_when_results_are_built(small: Server) -> None:
    # A check may write any reason; the response carries at most max_reason_chars.
    req = pb.RunSuiteRequest(
        checks=[pb.CheckSpec(type="test.long_reason")],
        cases=[pb.Case(output=pb.Output(text="300000")) for _ in range(40)],
    )
    results = [r for m in [m async for m in small.stub.RunSuite(req)] for r in m.results.results]
    assert len(results) == 40
    assert all(len(r.scores[0].reason) == 100 for r in results)
    assert all(r.scores[0].reason.endswith("…") and r.passed for r in results)
    check = pb.CheckSpec(type="test.long_reason")
    one = await small.stub.Score(pb.ScoreRequest(output=pb.Output(text="150"), checks=[check]))
    assert len(one.scores[0].reason) == 100


# --- whole-text checks -------------------------------------------------------------------


async def test_token_counting_input_is_bounded_per_case(small: Server) -> None:
    # Finding: 64 × max_tokens on a 10 MB output scored for 25 s. The bound is the bytes
    # all whole-text checks of a case read together (here 10,000).
    checks = [spec("max_tokens", name=f"t{i}", value=10) for i in range(3)]
    req = pb.ScoreRequest(output=pb.Output(text="word " * 800), checks=checks)
    fields = await refused(lambda: small.stub.Score(req), "max_metric_input_bytes_per_case")
    assert "output.text" in fields
    ok = pb.ScoreRequest(output=pb.Output(text="word " * 600), checks=checks[:2])
    resp = await small.stub.Score(ok)
    assert len(resp.scores) == 2 and not any(s.HasField("error") for s in resp.scores)


async def test_run_suite_names_the_case_over_the_metric_bound(small: Server) -> None:
    req = pb.RunSuiteRequest(
        checks=[spec("bleu", value="a reference"), spec("word_count", value=5)],
        cases=[pb.Case(output=pb.Output(text="w " * (5 if i != 7 else 4000))) for i in range(9)],
    )
    fields = await refused(lambda: small.stub.RunSuite(req), "max_metric_input_bytes_per_case")
    assert "cases[7].output.text" in fields


async def test_a_stream_case_over_the_metric_bound_is_an_error_score(small: Server) -> None:
    async def requests():
        yield pb.ScoreStreamRequest(config=pb.StreamConfig(checks=[spec("word_count", value=9)]))
        for i, n in enumerate((3, 20_000, 3)):
            yield pb.ScoreStreamRequest(
                case=pb.StreamCase(request_id=f"r{i}", output=pb.Output(text="w" * n))
            )

    got = {r.request_id: r async for r in small.stub.ScoreStream(requests())}
    assert got["r0"].passed and got["r2"].passed
    assert not got["r1"].passed and got["r1"].scores[0].error.code == "INVALID_INPUT"
    assert "max_metric_input_bytes_per_case" in got["r1"].scores[0].reason


# --- memory: the stream's queue and the plan cache --------------------------------------


async def test_a_slow_reader_stops_its_stream_being_read(server: Server) -> None:
    # Finding: ScoreStream queued every unsent response (RSS 75 -> 1,721 MB). Now a
    # finished case holds its slot until its response is queued, the queue holds at
    # most `max_concurrency` + 1, so an unread stream stops being read and scored.
    n = 1000
    # 32 kB responses, so that gRPC's own buffers fill after some dozens.
    name = "c" * 1000
    start = custom_checks.SCORED["count"]

    async def requests():
        yield pb.ScoreStreamRequest(
            config=pb.StreamConfig(
                checks=[pb.CheckSpec(type="test.count", name=f"{name}{j}") for j in range(32)]
            )
        )
        for i in range(n):
            yield pb.ScoreStreamRequest(case=pb.StreamCase(request_id=f"r{i}"))

    call = server.stub.ScoreStream(requests())
    first = await call.read()  # the stream runs; now stop reading
    assert first.request_id.startswith("r")

    # Poll until the server has stopped scoring (no progress over several polls).
    last, still = -1, 0
    for _ in range(400):
        await asyncio.sleep(0.02)
        now = custom_checks.SCORED["count"] - start
        still = still + 1 if now == last else 0
        last = now
        if still >= 15:
            break
    scored_cases = last // 32
    # Bounded by the queue, the tasks in flight and gRPC's buffers, not by the stream.
    assert scored_cases < n // 2, scored_cases
    # Reading resumes the stream: every case is answered, once.
    ids = {first.request_id}
    while (r := await call.read()) is not grpc.aio.EOF:
        ids.add(r.request_id)
    assert len(ids) == n


def test_plan_cache_is_bounded_in_bytes() -> None:
    # Finding: 40 requests with 48 MB parameters kept 2.1 GB (capped by count only).
    cache = PlanCache(size=512, max_bytes=10_000)
    for i in range(40):
        cache.get_or_build(bytes([i]), lambda: object(), source_bytes=400)  # type: ignore[arg-type,return-value]
        assert cache.bytes <= 10_000
    assert 0 < len(cache) < 40
    cache.get_or_build(b"huge", lambda: object(), source_bytes=50_000)  # type: ignore[arg-type,return-value]
    assert cache.bytes <= 10_000 and len(cache) > 0  # a plan over the budget is not kept


class _FullestPlanCache:
    """The plan caches of the server and its workers (the budget holds for each process):
    the fullest one's estimated bytes and length, as last reported."""

    def __init__(self, server: Server) -> None:
        self._executor = server.running.service.executor

    @property
    def bytes(self) -> int:
        return max(b for b, _ in self._executor.cache_stats())

    def __len__(self) -> int:
        return max(n for _, n in self._executor.cache_stats())


async def test_the_server_plan_cache_stays_within_its_byte_budget(small: Server) -> None:
    cache = _FullestPlanCache(small)
    for i in range(20):
        big = "e" * 200_000 + str(i)  # a distinct 200 kB parameter per request
        req = pb.ScoreRequest(output=pb.Output(text="x"), checks=[spec("exact", expected=big)])
        resp = await small.stub.Score(req)
        assert not resp.scores[0].passed
        assert cache.bytes <= 2 * 1024 * 1024
    assert len(cache) >= 1


async def test_the_plan_cache_counts_compiled_regex_programs(small: Server) -> None:
    # A 12-character pattern compiles to ~25,000 RE2 instructions (~0.5 MB): the cache
    # charges what compiling made, not just the request's size.
    cache = _FullestPlanCache(small)
    for i in range(10):
        req = pb.ScoreRequest(
            output=pb.Output(text="x"), checks=[spec("regex", pattern=rf"\d{{300}}x{i}")]
        )
        await small.stub.Score(req)
        assert cache.bytes <= 2 * 1024 * 1024
    assert 1 <= len(cache) <= 2


# --- timeouts ----------------------------------------------------------------------------


async def test_the_check_timeout_setting_is_the_default_per_check_timeout(small: Server) -> None:
    # Finding: SCOREWIRE_CHECK_TIMEOUT_S was ignored; a hanging check ran to the deadline.
    req = pb.ScoreRequest(
        sample=pb.Sample(metadata={"sleep": 30}),
        output=pb.Output(text="x"),
        checks=[pb.CheckSpec(type="test.slow")],
    )
    resp = await small.stub.Score(req, timeout=20)
    assert resp.scores[0].error.code == "TIMEOUT" and not resp.scores[0].passed


async def test_a_suite_timeout_still_wins_over_the_setting(small: Server) -> None:
    suite = "checks: {s: {type: test.slow}}\nsettings: {check_timeout_s: 0.1}\n"
    case = pb.Case(sample=pb.Sample(metadata={"sleep": 0.2}), output=pb.Output(text="x"))
    req = pb.RunSuiteRequest(suite_yaml=suite, cases=[case])
    msgs = [m async for m in small.stub.RunSuite(req)]
    score = msgs[0].results.results[0].scores[0]
    assert score.error.code == "TIMEOUT"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ("{check_timeout_s: .nan}", "suite_yaml.settings.check_timeout_s"),
        ("{check_timeout_s: .inf}", "suite_yaml.settings.check_timeout_s"),
        ("{budget: .inf}", "suite_yaml.settings.budget"),
        ("{budget: .nan}", "suite_yaml.settings.budget"),
    ],
)
async def test_non_finite_suite_settings_are_refused(
    server: Server, settings: str, field: str
) -> None:
    suite = f"checks: {{s: {{type: length, max_chars: 5}}}}\nsettings: {settings}\n"
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in server.stub.RunSuite(pb.RunSuiteRequest(suite_yaml=suite)):
            pass
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in bad_request(exc.value)


async def test_non_finite_gates_and_thresholds_are_refused(server: Server) -> None:
    suite = (
        "checks: {b: {type: bleu, value: ref, threshold: .nan}}\n"
        "suites: {s: {checks: [b], gate: {max_cost: .inf}}}\n"
    )
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in server.stub.RunSuite(pb.RunSuiteRequest(suite_yaml=suite)):
            pass
    fields = bad_request(exc.value)
    assert "suite_yaml.checks.b.threshold" in fields
    assert any(f.startswith("suite_yaml.suites.s.gate") for f in fields), fields
    req = pb.ScoreRequest(
        output=pb.Output(text="x"),
        checks=[pb.CheckSpec(type="rouge_l", params={"value": "x", "threshold": float("nan")})],
    )
    with pytest.raises(grpc.aio.AioRpcError) as exc2:
        await server.stub.Score(req)
    assert exc2.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "checks[0].params.threshold" in bad_request(exc2.value)


@pytest.mark.parametrize("budget", [float("inf"), float("nan"), -1.0])
async def test_non_finite_request_budgets_are_refused(server: Server, budget: float) -> None:
    req = pb.ScoreRequest(output=pb.Output(text="x"), compact=["contains:x"], budget_usd=budget)
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await server.stub.Score(req)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "budget_usd" in bad_request(exc.value)
    gate = pb.Gate(max_cost_usd=float("inf"))
    run = pb.RunSuiteRequest(compact=["contains:x"], gate=gate, cases=[pb.Case()])
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in server.stub.RunSuite(run):
            pass
    fields = bad_request(exc.value)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert any(f.startswith("gate.max_cost_usd") for f in fields), fields


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_server_settings_are_refused_at_start(value: str, monkeypatch) -> None:
    monkeypatch.setenv("SCOREWIRE_CHECK_TIMEOUT_S", value)
    with pytest.raises(ValueError, match="check_timeout_s"):
        Settings()


NEW_SETTINGS = (
    *REQUEST_SETTINGS,
    "max_metric_input_bytes_per_case",
    "max_reason_chars",
    "plan_cache_bytes",
)


@pytest.mark.parametrize("name", NEW_SETTINGS)
def test_every_request_limit_is_a_documented_setting(name: str) -> None:
    # Each limit is a Settings field with a docstring and a row in the configuration page's
    # table of what one request may cost.
    part, _, field = name.partition("__")  # a nested part's field: `part__field`
    assert part in Settings.model_fields
    if field:
        nested = Settings.model_fields[part].get_default(call_default_factory=True)
        assert field in type(nested).model_fields
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert f"`{name.upper()}`" in page
