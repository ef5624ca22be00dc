"""The ScoringService over a real channel: every RPC, errors, deadlines, cancellation."""

import asyncio
import json

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.server import custom_checks
from tests.server.conftest import Server, start_server
from tests.support.rpc import bad_request, first_message
from tests.support.wait import wait_until_async


def request(msg_type, data):
    """Build a message from its proto3 JSON form (which the API promises)."""
    return json_format.ParseDict(data, msg_type())


async def test_score_json_form_round_trip(server: Server) -> None:
    # The request and response JSON shapes of the issue are the wire contract.
    req = request(
        pb.ScoreRequest,
        {
            "sample": {"id": "s1", "input": {"q": "capital?"}, "expected": "Paris"},
            "output": {"text": "The capital is Paris."},
            "checks": [
                {"name": "c1", "type": "contains", "params": {"needles": ["Paris"]}},
                {"type": "exact"},
            ],
            "compact": ["contains:capital", "length:1..5"],
        },
    )
    resp = await server.stub.Score(req)
    body = json_format.MessageToDict(resp)
    names = [s["name"] for s in body["scores"]]
    assert names == ["c1", "exact", "contains:capital", "length:1..5"]
    by_name = {s["name"]: s for s in body["scores"]}
    assert by_name["c1"]["passed"] is True and by_name["c1"]["value"] == 1.0
    assert "latencyMs" in by_name["c1"]
    assert by_name["exact"].get("passed", False) is False
    assert by_name["length:1..5"].get("passed", False) is False
    assert body.get("passed", False) is False


async def test_score_missing_reference_is_an_error_score_not_an_rpc_error(server: Server) -> None:
    # A check that errs is a score with error, never an RPC error, and never passes.
    req = request(
        pb.ScoreRequest,
        {"sample": {"id": "s"}, "output": {"text": "x"}, "checks": [{"type": "exact"}]},
    )
    resp = await server.stub.Score(req)
    assert resp.scores[0].error.code == "MISSING_REFERENCE"
    assert not resp.scores[0].passed and not resp.passed


async def test_integer_params_accept_whole_doubles_and_reject_fractions(server: Server) -> None:
    # Struct numbers are doubles: flags 2.0 means IGNORECASE, 2.5 is a field error.
    ok = request(
        pb.ScoreRequest,
        {
            "output": {"text": "HELLO"},
            "checks": [{"type": "regex", "params": {"pattern": "hello", "flags": 2.0}}],
        },
    )
    assert (await server.stub.Score(ok)).scores[0].passed
    bad = request(
        pb.ScoreRequest,
        {
            "output": {"text": "HELLO"},
            "checks": [
                {"type": "contains", "params": {"needles": ["a"]}},
                {"type": "regex", "params": {"pattern": "hello", "flags": 2.5}},
            ],
        },
    )
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await server.stub.Score(bad)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "checks[1].params.flags" in bad_request(exc.value)


async def test_regex_flags_by_name_and_unicode_word_boundary_over_the_wire(
    server: Server,
) -> None:
    # Issue 14: flags as Python's names (a Struct list), \b with Python's Unicode meaning.
    ok = request(
        pb.ScoreRequest,
        {
            "output": {"text": "UN CAF\u00c9.\n"},
            "checks": [
                {"type": "regex", "params": {"pattern": r"\bcaf\u00e9\b\.$", "flags": ["I"]}},
                {"type": "regex", "params": {"pattern": r"\bcaf\b", "flags": ["IGNORECASE"]}},
            ],
        },
    )
    got = await server.stub.Score(ok)
    assert [s.passed for s in got.scores] == [True, False]
    bad = request(
        pb.ScoreRequest,
        {
            "output": {"text": "x"},
            "checks": [{"type": "regex", "params": {"pattern": "x", "flags": ["I", "CASELESS"]}}],
        },
    )
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await server.stub.Score(bad)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "CASELESS" in bad_request(exc.value)["checks[0].params.flags[1]"]


async def test_bad_request_lists_every_field_violation(server: Server) -> None:
    # Unknown type, unknown parameter and an unsafe pattern are all reported at once.
    req = request(
        pb.ScoreRequest,
        {
            "output": {"text": "x"},
            "checks": [
                {"type": "containz"},
                {"type": "length", "params": {"max_wrds": 3}},
                {"type": "regex", "params": {"pattern": "(?<=a)b"}},
            ],
            "compact": ["lenght:1..3"],
        },
    )
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await server.stub.Score(req)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    fields = bad_request(exc.value)
    assert "checks[0].type" in fields and "contains" in fields["checks[0].type"]
    assert "checks[1].params.max_wrds" in fields
    assert "checks[2].params.pattern" in fields
    assert any(f.startswith("compact[0]") for f in fields)


async def test_no_checks_is_invalid_argument(server: Server) -> None:
    # A request that asks for nothing is a caller mistake, not an empty pass.
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await server.stub.Score(pb.ScoreRequest(output=pb.Output(text="x")))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "checks" in bad_request(exc.value)


async def test_too_many_checks_is_resource_exhausted_naming_the_limit(server: Server) -> None:
    # The per-request check limit answers RESOURCE_EXHAUSTED with the limit's name.
    checks = [pb.CheckSpec(type="length", params={"max_chars": 5})] * 65
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await server.stub.Score(pb.ScoreRequest(checks=checks))
    assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "max_checks_per_request" in exc.value.details()


async def test_output_size_limit_is_resource_exhausted() -> None:
    # An output over max_output_bytes is refused with the field path of the text.
    srv = await start_server(max_output_bytes=1000)
    try:
        req = pb.ScoreRequest(
            output=pb.Output(text="é" * 600),
            checks=[pb.CheckSpec(type="length", params={"max_chars": 5})],
        )
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await srv.stub.Score(req)
        assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "output.text" in bad_request(exc.value)
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


def _cases(n: int, **meta: float) -> list[pb.Case]:
    out = []
    for i in range(n):
        c = pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text=f"answer {i}"))
        for k, v in meta.items():
            c.sample.metadata[k] = v
        out.append(c)
    return out


async def test_run_suite_delivers_every_case_exactly_once(server: Server) -> None:
    # 10,000 cases: each index and id arrives once, batched, then one summary last.
    n = 10_000
    req = pb.RunSuiteRequest(
        cases=_cases(n),
        compact=["contains:answer", "length:0..8"],
        gate=pb.Gate(min_pass_rate=0.5),
    )
    seen: list[int] = []
    messages = 0
    summary = None
    async for event in server.stub.RunSuite(req):
        assert summary is None, "nothing may follow the summary"
        if event.WhichOneof("event") == "results":
            messages += 1
            seen.extend(r.index for r in event.results.results)
        else:
            summary = event.summary
    assert sorted(seen) == list(range(n))
    assert messages < n / 10, "results must be batched"
    assert summary is not None and summary.cases == n
    # "answer 0".."answer 9" are 8 characters, the rest are longer.
    assert summary.cases_passed == 10
    assert summary.checks[1].passed == 10 and summary.checks[1].failed == n - 10
    assert not summary.gate_passed and "min_pass_rate" in summary.gate_reasons[0]


async def test_run_suite_from_yaml_with_a_gate(server: Server) -> None:
    # A suite document selects its checks and gate; results name the keyed checks.
    suite = """
checks:
  has_answer: {type: contains, needles: [answer]}
  short: {type: length, max_chars: 100}
suites:
  smoke:
    checks: [has_answer, short]
    gate: {min_pass_rate: 1.0}
"""
    req = pb.RunSuiteRequest(suite_yaml=suite, cases=_cases(20))
    events = [e async for e in server.stub.RunSuite(req)]
    summary = events[-1].summary
    assert summary.gate_passed and summary.cases_passed == 20
    assert [c.name for c in summary.checks] == ["has_answer", "short"]


async def test_run_suite_yaml_errors_carry_paths(server: Server) -> None:
    # Unknown keys and types in a suite document are reported under suite_yaml.
    suite = "checks:\n  short: {type: length, max_wrds: 3}\n  x: {type: nope}\n"
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in server.stub.RunSuite(pb.RunSuiteRequest(suite_yaml=suite)):
            pass
    fields = bad_request(exc.value)
    assert "suite_yaml.checks.short.max_wrds" in fields
    assert "suite_yaml.checks.x.type" in fields


async def test_run_suite_rejects_imports_from_a_request(server: Server) -> None:
    # Python code never enters over the wire: `imports:` in a request is refused.
    suite = "imports: [os]\nchecks:\n  a: {type: length, max_chars: 3}\n"
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in server.stub.RunSuite(pb.RunSuiteRequest(suite_yaml=suite)):
            pass
    assert "suite_yaml.imports" in bad_request(exc.value)


async def test_score_stream_echoes_request_ids(server: Server) -> None:
    # Cases flow in as produced; each response carries the caller's request id.
    async def requests():
        yield pb.ScoreStreamRequest(config=pb.StreamConfig(compact=["contains:ok"]))
        for i in range(50):
            text = "ok" if i % 2 == 0 else "no"
            yield pb.ScoreStreamRequest(
                case=pb.StreamCase(request_id=f"r{i}", output=pb.Output(text=text))
            )

    got = {r.request_id: r.passed async for r in server.stub.ScoreStream(requests())}
    assert len(got) == 50
    assert all(got[f"r{i}"] == (i % 2 == 0) for i in range(50))


async def test_score_stream_must_start_with_config(server: Server) -> None:
    # A case before the config is INVALID_ARGUMENT naming `config`.
    async def requests():
        yield pb.ScoreStreamRequest(case=pb.StreamCase(request_id="r0"))

    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in server.stub.ScoreStream(requests()):
            pass
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "config" in bad_request(exc.value)


async def test_list_checks_serves_descriptions_and_param_schemas(server: Server) -> None:
    # Every registered type is listed with a description and a parameter schema.
    resp = await server.stub.ListChecks(pb.ListChecksRequest())
    by_type = {c.type: c for c in resp.checks}
    for name in ("contains", "regex", "json_schema", "trajectory.tool_called", "safety.no_pii"):
        assert name in by_type, name
        assert by_type[name].description
    schema = json_format.MessageToDict(by_type["regex"].params_schema)
    assert "pattern" in schema["properties"]


async def test_list_checks_documents_every_parameter(server: Server) -> None:
    # Every parameter of every listed type (custom ones included) carries a description.
    resp = await server.stub.ListChecks(pb.ListChecksRequest())
    bare = [
        f"{c.type}.{name}"
        for c in resp.checks
        for name, prop in json_format.MessageToDict(c.params_schema).get("properties", {}).items()
        if not prop.get("description")
    ]
    assert resp.checks
    assert bare == []


async def test_list_checks_lists_each_concept_once_with_its_other_spellings(
    server: Server,
) -> None:
    # one canonical type per concept; the compact and checkllm spellings are its aliases
    resp = await server.stub.ListChecks(pb.ListChecksRequest())
    by_type = {c.type: c for c in resp.checks}
    expected = {
        "contains": {"contains_text"},
        "exact": {"exact_text"},
        "length": {"output_length", "word_count"},
        "json_valid": {"is_json"},
    }
    for canonical, aliases in expected.items():
        assert set(by_type[canonical].aliases) == aliases
        assert not aliases & set(by_type)  # not listed a second time
    # genuinely different meanings stay apart, and say so
    assert "safe_regex" in by_type["regex"].description
    assert "json_schema" in by_type["json_schema_v1"].description
    # a type that takes a Python function cannot be used over the wire: not offered
    assert "python" not in by_type


async def test_results_name_the_canonical_type(server: Server) -> None:
    # a compact line and checkllm's spelling score as the types a reader finds in the docs
    resp = await server.stub.Score(
        pb.ScoreRequest(
            output=pb.Output(text="Paris"),
            compact=["contains:Paris", "length:1..10"],
            checks=[pb.CheckSpec(type="is_json")],
        )
    )
    assert [(s.name, s.type) for s in resp.scores] == [
        ("is_json", "json_valid"),
        ("contains:Paris", "contains"),
        ("length:1..10", "length"),
    ]
    assert [s.passed for s in resp.scores] == [False, True, True]


async def test_validate_suite_returns_problems_without_failing(server: Server) -> None:
    # ValidateSuite answers OK with every problem and its path.
    resp = await server.stub.ValidateSuite(
        pb.ValidateSuiteRequest(suite_yaml="checks:\n  short: {type: length, max_wrds: 3}\n")
    )
    assert not resp.valid
    assert [p.field for p in resp.problems] == ["suite_yaml.checks.short.max_wrds"]
    ok = await server.stub.ValidateSuite(
        pb.ValidateSuiteRequest(
            suite_yaml="checks:\n  a: {type: length, max_chars: 3}\nsuites:\n  s: {checks: [a]}\n"
        )
    )
    assert ok.valid and list(ok.suites) == ["s"] and list(ok.checks) == ["a"]


async def test_deadline_bounds_the_checks(server: Server) -> None:
    # A deadline shorter than the check ends the call with DEADLINE_EXCEEDED.
    req = pb.ScoreRequest(
        sample=pb.Sample(id="slow"),
        checks=[pb.CheckSpec(type="test.slow")],
    )
    req.sample.metadata["sleep"] = 5.0
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await server.stub.Score(req, timeout=0.3)
    assert exc.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_cancelling_a_stream_stops_its_work(server: Server) -> None:
    # The caller cancels after the first batch; cases not yet started never start.
    custom_checks.STARTED.update(slow=0, finished=0, cancelled=0)
    req = pb.RunSuiteRequest(cases=_cases(400, sleep=0.05), checks=[pb.CheckSpec(type="test.slow")])
    call = server.stub.RunSuite(req)
    first = await first_message(call)
    assert first.WhichOneof("event") == "results"
    call.cancel()
    # the server has seen the cancellation once it cancels the checks that were running
    await wait_until_async(
        lambda: custom_checks.STARTED["cancelled"] and not custom_checks.in_flight(),
        "the running checks to be cancelled",
    )
    started = custom_checks.STARTED["slow"]
    # not a wait but the observation: work that went on would start more checks meanwhile
    await asyncio.sleep(0.5)
    assert custom_checks.STARTED["slow"] == started, "work went on after cancellation"
    assert started < 400


async def test_health_and_reflection(server: Server) -> None:
    # grpc.health.v1 reports SERVING; reflection lists the scoring service.
    health = health_pb2_grpc.HealthStub(server.channel)
    resp = await health.Check(health_pb2.HealthCheckRequest(service="scorewire.v1.ScoringService"))
    assert resp.status == health_pb2.HealthCheckResponse.SERVING
    refl = reflection_pb2_grpc.ServerReflectionStub(server.channel)

    async def ask():
        yield reflection_pb2.ServerReflectionRequest(list_services="")

    answer = await first_message(refl.ServerReflectionInfo(ask()))
    names = [s.name for s in answer.list_services_response.service]
    assert "scorewire.v1.ScoringService" in names
    assert "grpc.health.v1.Health" in names


async def test_shutdown_turns_health_not_serving_and_finishes_in_flight_calls() -> None:
    # On shutdown health goes NOT_SERVING while a running call still completes.
    srv = await start_server()
    health = health_pb2_grpc.HealthStub(srv.channel)
    req = pb.ScoreRequest(checks=[pb.CheckSpec(type="test.slow")])
    req.sample.metadata["sleep"] = 0.5
    started = custom_checks.STARTED["slow"]
    in_flight = asyncio.ensure_future(srv.stub.Score(req))
    await wait_until_async(lambda: custom_checks.STARTED["slow"] > started, "the call to run")
    statuses = []

    async def watch():
        async for r in health.Watch(health_pb2.HealthCheckRequest(service="")):
            statuses.append(r.status)
            if r.status == health_pb2.HealthCheckResponse.NOT_SERVING:
                return

    watcher = asyncio.ensure_future(watch())
    await wait_until_async(lambda: statuses, "the first health status")
    stopping = asyncio.ensure_future(srv.running.stop(5.0))
    resp = await in_flight
    assert resp.scores[0].passed
    await asyncio.wait_for(watcher, 2)
    assert statuses[-1] == health_pb2.HealthCheckResponse.NOT_SERVING
    await stopping
    await srv.channel.close()


async def test_a_custom_check_numeric_result_uses_its_threshold(server: Server) -> None:
    # Custom checks registered on the server are callable by name with a threshold.
    req = request(
        pb.ScoreRequest,
        {
            "output": {"text": "12345"},
            "checks": [{"type": "test.echo_len", "params": {"threshold": 0.4}}],
        },
    )
    score = (await server.stub.Score(req)).scores[0]
    assert score.value == pytest.approx(0.5) and score.passed


def test_json_form_of_examples_uses_enum_names() -> None:
    # "kind": "EXAMPLE_KIND_POSITIVE" is how examples are written in JSON.
    m = request(
        pb.CheckSpec,
        {"type": "contains", "examples": [{"text": "a", "kind": "EXAMPLE_KIND_POSITIVE"}]},
    )
    assert (
        json.loads(json_format.MessageToJson(m))["examples"][0]["kind"] == "EXAMPLE_KIND_POSITIVE"
    )


async def test_bytes_that_do_not_parse_are_invalid_argument_not_internal(server: Server) -> None:
    # Invalid UTF-8 in a string field is the caller's input: INVALID_ARGUMENT, not INTERNAL.
    raw = server.channel.unary_unary("/scorewire.v1.ScoringService/Score")
    bad = b"\x12\x04\x0a\x02\xff\xfe"  # output { text: <invalid UTF-8> }
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await raw(bad)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "request" in bad_request(exc.value)
    stream = server.channel.stream_stream("/scorewire.v1.ScoringService/ScoreStream")

    async def messages():
        yield pb.ScoreStreamRequest(
            config=pb.StreamConfig(compact=["json_valid"])
        ).SerializeToString()
        yield b"\x12\x05\x0a\x03\xc3\x28\x41"  # case { request_id: <invalid UTF-8> }

    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in stream(messages()):
            pass
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_blank_compact_entry_is_invalid_over_the_wire(server: Server) -> None:
    # Each compact entry gets a result; a blank one is refused rather than dropped.
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await server.stub.Score(pb.ScoreRequest(compact=["json_valid", "  "]))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "compact[1]" in bad_request(exc.value)
