"""The Python client (sync and asyncio) against the real server on a free port.

Only compact checks (seed 002) are used, so the tests pin the client, not a check
family's details: `contains:Paris` passes when the text holds "Paris".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from google.protobuf import struct_pb2
from scorewire.client import (
    AsyncClient,
    Client,
    FieldViolation,
    ScorewireError,
    _channel,
    _convert,
    pb,
)
from scorewire.client.errors import decode_status, field_violations_of

COMPACT = ["contains:Paris", "length:1..100"]
N_CASES = 1000


def suite_cases(n: int) -> list[dict[str, object]]:
    """n cases; every third output (index divisible by 3) lacks "Paris" and fails."""
    return [
        {
            "sample": {"id": f"s{i}", "input": {"question": "capital?", "n": i}},
            "output": "no idea" if i % 3 == 0 else f"answer {i}: Paris",
        }
        for i in range(n)
    ]


def expected_passed_cases(n: int) -> int:
    return sum(1 for i in range(n) if i % 3 != 0)


@pytest.fixture
def client(scorewire_addr: str) -> Iterator[Client]:
    with Client(scorewire_addr) as c:
        yield c


@pytest.fixture
async def aclient(scorewire_addr: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(scorewire_addr) as c:
        yield c


# --- no server: conversion, targets, error decoding ---------------------------------------


@pytest.mark.parametrize(
    ("obj", "kind"),
    [
        (None, "null_value"),  # None is JSON null
        (True, "bool_value"),  # bool before int: True is not 1.0
        (3, "number_value"),  # ints become doubles
        (2.5, "number_value"),
        ("x", "string_value"),
        ({"a": [1, {"b": None}]}, "struct_value"),  # nesting through lists and objects
        ((1, 2), "list_value"),  # tuples are lists
    ],
)
def test_to_value_maps_each_json_kind(obj: object, kind: str) -> None:
    assert _convert.to_value(obj).WhichOneof("kind") == kind


def test_to_value_rejects_non_json() -> None:
    # A set has no JSON form: fail in the caller, not on the server.
    with pytest.raises(TypeError):
        _convert.to_value({1, 2})


def test_check_dict_becomes_checkspec_with_params_when_and_examples() -> None:
    spec = _convert.to_check(
        {
            "type": "safe_regex",
            "name": "ok",
            "params": {"pattern": "^OK$", "n": 2},
            "when": {"type": "contains_text", "params": {"value": "x"}},
            "examples": [{"text": "OK", "kind": "positive"}, ("no", "negative")],
        }
    )
    assert spec.params.fields["n"].number_value == 2.0
    assert spec.when.type == "contains_text"
    assert [e.kind for e in spec.examples] == [pb.EXAMPLE_KIND_POSITIVE, pb.EXAMPLE_KIND_NEGATIVE]


def test_check_dict_takes_flat_parameters_as_in_yaml() -> None:
    # The flat form of YAML suites and the in-process API: keys beside `type` are params.
    flat = _convert.to_check({"type": "output_length", "maximum": 3, "name": "short"})
    nested = _convert.to_check({"type": "output_length", "params": {"maximum": 3}, "name": "short"})
    assert flat == nested and flat.params.fields["maximum"].number_value == 3.0


def test_check_dict_with_params_both_nested_and_flat_names_them() -> None:
    # Both shapes at once is ambiguous: refused, naming the stray key.
    with pytest.raises(ValueError, match="maximum"):
        _convert.to_check({"type": "output_length", "params": {"minimum": 1}, "maximum": 3})


def test_flat_checks_score_through_the_real_server(client: Client) -> None:
    # the flat shape reaches the server as the nested one; error paths say params
    (got,) = client.score("Paris", checks=[{"type": "contains", "needles": ["Paris"]}]).scores
    assert got.passed and got.error.code == ""
    with pytest.raises(ScorewireError) as err:
        client.score("Paris", checks=[{"type": "contains", "needels": ["Paris"]}])
    assert "checks[0].params.needels" in str(err.value)


def test_sample_absent_expected_stays_unset_but_none_is_null() -> None:
    # Plain values travel as JSON text (`expected_json`): an absent key sends nothing,
    # None sends JSON null.
    absent = _convert.to_sample({"id": "a"})
    assert not absent.HasField("expected") and absent.expected_json == ""
    null = _convert.to_sample({"expected": None})
    assert null.expected_json == "null" and not null.HasField("expected")


def test_plain_values_travel_as_json_text_and_what_json_cannot_write_as_a_value() -> None:
    # Big integers keep every digit in JSON; NaN has no JSON form and goes into the
    # Value (a double); a Value given by the caller is kept as it is.
    big = _convert.to_sample({"expected": {"n": 2**64 + 1}})
    assert big.expected_json == '{"n":18446744073709551617}'
    nan = _convert.to_output({"text": "", "value": float("nan")})
    assert nan.value_json == "" and nan.value.number_value != nan.value.number_value
    kept = _convert.to_sample({"input": _convert.to_value("q")})
    assert kept.input.string_value == "q" and kept.input_json == ""
    with pytest.raises(TypeError):  # still no JSON form for a set
        _convert.to_sample({"input": {1, 2}})


@pytest.mark.parametrize(
    ("target", "want"),
    [
        ("localhost:50051", "dns:///localhost:50051"),  # plain host:port goes through DNS
        ("dns:///svc:1", "dns:///svc:1"),  # a scheme is kept
        ("unix:/tmp/s.sock", "unix:/tmp/s.sock"),
        ("ipv4:127.0.0.1:1", "ipv4:127.0.0.1:1"),
    ],
)
def test_normalize_target(target: str, want: str) -> None:
    assert _channel.normalize_target(target) == want


def test_default_options_pick_round_robin_and_keepalive() -> None:
    opts = dict(_channel.channel_options(30, 10, [("grpc.keepalive_time_ms", 5000)]))
    assert '"round_robin"' in opts["grpc.service_config"]
    assert opts["grpc.keepalive_time_ms"] == 5000  # a caller's option replaces the default


def test_field_violations_decoded_from_status_trailer() -> None:
    from google.rpc import error_details_pb2, status_pb2

    bad = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field="checks[0].type", description="x")
        ]
    )
    status = status_pb2.Status(code=3, message="bad")
    status.details.add().Pack(bad)
    trailer = [("other", "v"), ("grpc-status-details-bin", status.SerializeToString())]
    assert field_violations_of(decode_status(trailer)) == [FieldViolation("checks[0].type", "x")]


# --- Score --------------------------------------------------------------------------------


def test_score_happy_path_with_plain_python_values(client: Client) -> None:
    resp = client.score(
        "The capital of France is Paris.",
        sample={"id": "q1", "input": {"question": "Capital of France?"}, "expected": "Paris"},
        checks=[{"type": "output_length", "params": {"minimum": 1, "maximum": 200}}],
        compact=["contains:Paris"],
    )
    # Structured checks first, then compact ones, each named.
    assert [s.name for s in resp.scores] == ["output_length", "contains:Paris"]
    assert all(s.passed and s.value == 1 and not s.HasField("error") for s in resp.scores)
    assert resp.passed


def test_score_accepts_proto_messages(client: Client) -> None:
    resp = client.score(
        pb.Output(text="no"),
        sample=pb.Sample(id="q", input=struct_pb2.Value(string_value="?")),
        checks=[pb.CheckSpec(type="contains_text", params=_convert.to_struct({"value": "Paris"}))],
    )
    assert [s.passed for s in resp.scores] == [False]  # ran and failed: a result, no error
    assert not resp.passed


async def test_async_score_happy_path(aclient: AsyncClient) -> None:
    resp = await aclient.score({"text": "Paris"}, compact=COMPACT)
    assert [s.name for s in resp.scores] == COMPACT
    assert resp.passed


# --- RunSuite -----------------------------------------------------------------------------


def assert_suite_complete(results: list[pb.CaseResult], summary: pb.RunSummary) -> None:
    """Every case exactly once, and the summary agrees with the results."""
    indexes = [r.index for r in results]
    assert sorted(indexes) == list(range(N_CASES))  # each index once: none lost, none doubled
    assert all(r.sample_id == f"s{r.index}" for r in results)
    assert all(len(r.scores) == len(COMPACT) for r in results)
    passed_cases = sum(r.passed for r in results)
    passed_scores = sum(s.passed for r in results for s in r.scores)
    assert passed_cases == expected_passed_cases(N_CASES)
    assert summary.cases == N_CASES
    assert summary.cases_passed == passed_cases
    assert summary.passed == passed_scores
    assert summary.failed == N_CASES * len(COMPACT) - passed_scores
    assert summary.errored == 0
    assert summary.pass_rate == pytest.approx(passed_cases / N_CASES)
    assert [c.name for c in summary.checks] == COMPACT
    assert [c.passed for c in summary.checks] == [passed_cases, N_CASES]


def test_run_suite_1000_cases_each_result_once_and_summary_matches(client: Client) -> None:
    run = client.run_suite(suite_cases(N_CASES), compact=COMPACT)
    results = list(run)
    assert_suite_complete(results, run.summary)


async def test_async_run_suite_1000_cases(aclient: AsyncClient) -> None:
    run = aclient.run_suite(suite_cases(N_CASES), compact=COMPACT)
    results, summary = await run.collect()
    assert_suite_complete(results, summary)


class _Methods(grpc.UnaryUnaryClientInterceptor, grpc.StreamStreamClientInterceptor,
               grpc.UnaryStreamClientInterceptor):  # fmt: skip
    """Records the method of every call made through the channel it wraps."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def intercept_unary_unary(self, continuation, details, request):  # type: ignore[no-untyped-def]
        self.seen.append(details.method)
        return continuation(details, request)

    def intercept_unary_stream(self, continuation, details, request):  # type: ignore[no-untyped-def]
        self.seen.append(details.method)
        return continuation(details, request)

    def intercept_stream_stream(self, continuation, details, requests):  # type: ignore[no-untyped-def]
        self.seen.append(details.method)
        return continuation(details, requests)


def test_a_batch_over_one_chunk_streams_and_answers_as_runsuite(scorewire_addr: str) -> None:
    methods = _Methods()
    channel = grpc.intercept_channel(grpc.insecure_channel(scorewire_addr), methods)
    n = 3 * _convert.STREAM_CHUNK_CASES + 7
    with Client(channel=channel) as c:
        small = list(c.run_suite(suite_cases(_convert.STREAM_CHUNK_CASES), compact=COMPACT))
        assert methods.seen == ["/scorewire.v1.ScoringService/RunSuite"]
        # a generator of cases: listed first, since the count goes in the config
        run = c.run_suite((case for case in suite_cases(n)), compact=COMPACT)
        results = list(run)
    assert methods.seen[-1] == "/scorewire.v1.ScoringService/RunSuiteStream"
    assert len(small) == _convert.STREAM_CHUNK_CASES
    assert sorted(r.index for r in results) == list(range(n))
    assert all(r.sample_id == f"s{r.index}" for r in results)
    assert all(r.passed == (r.index % 3 != 0) for r in results)
    assert run.summary.cases == n and run.summary.cases_passed == expected_passed_cases(n)


def test_a_bad_case_in_a_streamed_batch_raises_at_the_call(client: Client) -> None:
    cases = suite_cases(2 * _convert.STREAM_CHUNK_CASES)
    cases[_convert.STREAM_CHUNK_CASES + 3]["sample"] = {"id": "x", "bogus": 1}
    with pytest.raises(TypeError, match="bogus"):
        client.run_suite(cases, compact=COMPACT)
    # the chunks already sent went with a cancelled call; the client goes on
    assert list(client.run_suite(suite_cases(2), compact=COMPACT))


class _AsyncUnaryStream(grpc.aio.UnaryStreamClientInterceptor):
    """Records the method of each server-streaming call (grpc.aio files an interceptor
    under its first type only, so each type is its own object)."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    async def intercept_unary_stream(self, continuation, details, request):  # type: ignore[no-untyped-def]
        self.seen.append(details.method.decode())  # bytes in grpc.aio
        return await continuation(details, request)


class _AsyncStreamStream(grpc.aio.StreamStreamClientInterceptor):
    """Records the method of each bidirectional call."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    async def intercept_stream_stream(self, continuation, details, requests):  # type: ignore[no-untyped-def]
        self.seen.append(details.method.decode())
        return await continuation(details, requests)


async def test_async_run_suite_streams_a_batch_over_one_chunk(scorewire_addr: str) -> None:
    seen: list[str] = []
    interceptors = [_AsyncUnaryStream(seen), _AsyncStreamStream(seen)]
    channel = grpc.aio.insecure_channel(scorewire_addr, interceptors=interceptors)
    n = 2 * _convert.STREAM_CHUNK_CASES + 1
    async with AsyncClient(channel=channel) as c:
        results, summary = await c.run_suite(suite_cases(n), compact=COMPACT).collect()
        assert seen == ["/scorewire.v1.ScoringService/RunSuiteStream"]
        assert sorted(r.index for r in results) == list(range(n))
        assert summary.cases == n and summary.cases_passed == expected_passed_cases(n)
        # a case that cannot be converted ends the stream; it raises from the iteration
        cases = suite_cases(n)
        cases[-1]["output"] = 42
        with pytest.raises(TypeError):
            await c.run_suite(cases, compact=COMPACT).collect()
        results, _ = await c.run_suite(suite_cases(3), compact=COMPACT).collect()
        assert len(results) == 3 and seen[-1] == "/scorewire.v1.ScoringService/RunSuite"


def test_run_suite_summary_before_iteration_is_an_error(client: Client) -> None:
    # The summary comes last: reading it early would silently drop results.
    with client.run_suite(suite_cases(3), compact=COMPACT) as run, pytest.raises(RuntimeError):
        _ = run.summary


def test_run_suite_gate_from_dict(client: Client) -> None:
    run = client.run_suite(suite_cases(30), compact=COMPACT, gate={"min_pass_rate": 0.9})
    _, summary = run.collect()
    assert not summary.gate_passed  # 2/3 of cases pass, under 0.9
    assert summary.gate_reasons


# --- ScoreStream --------------------------------------------------------------------------


def test_score_stream_echoes_each_request_id_once(client: Client) -> None:
    cases = ({"request_id": f"r{i}", "output": "Paris" if i % 2 else "x"} for i in range(50))
    responses = list(client.score_stream(cases, compact=["contains:Paris"]))
    assert sorted(r.request_id for r in responses) == sorted(f"r{i}" for i in range(50))
    assert all(r.passed == (int(r.request_id[1:]) % 2 == 1) for r in responses)


async def test_async_score_stream_from_async_generator(aclient: AsyncClient) -> None:
    async def cases() -> AsyncIterator[tuple[str, None, str]]:
        for i in range(20):
            yield (str(i), None, "Paris")

    ids = [r.request_id async for r in aclient.score_stream(cases(), compact=COMPACT)]
    assert sorted(ids, key=int) == [str(i) for i in range(20)]


def test_score_stream_bad_case_raises_the_callers_error(client: Client) -> None:
    # A case the client cannot convert surfaces as itself, not as gRPC's CANCELLED.
    cases = iter([{"request_id": "a", "output": "Paris"}, {"request_id": "b", "oops": 1}])
    with pytest.raises(TypeError, match="oops"):
        list(client.score_stream(cases, compact=COMPACT))


async def test_async_score_stream_bad_case_raises_the_callers_error(aclient: AsyncClient) -> None:
    # grpc.aio cancels the call when the request iterator raises; the caller sees its
    # own TypeError, not an asyncio.CancelledError it never asked for.
    cases = [{"request_id": f"r{i}", "output": "Paris"} for i in range(50)]
    cases[30] = {"request_id": "bad", "oops": 1}
    with pytest.raises(TypeError, match="oops"):
        async for _ in aclient.score_stream(cases, compact=COMPACT):
            pass


# --- errors -------------------------------------------------------------------------------

BAD_CHECKS = [
    {"type": "no_such_check"},
    {"type": "output_length", "params": {"minimum": 1, "maximun": 5}},
]


def assert_bad_request(err: ScorewireError) -> None:
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    fields = [v.field for v in err.field_violations]
    # Every problem is listed with its path, not just the first.
    assert "checks[0].type" in fields
    assert "checks[1].params.maximun" in fields
    assert all(isinstance(v, FieldViolation) and v.description for v in err.field_violations)


def test_score_invalid_argument_has_field_violations(client: Client) -> None:
    with pytest.raises(ScorewireError) as info:
        client.score("x", checks=BAD_CHECKS)
    assert_bad_request(info.value)


@pytest.mark.parametrize("n", [5, 2 * _convert.STREAM_CHUNK_CASES + 1])  # RunSuite, streamed
def test_run_suite_invalid_argument_raised_while_iterating(client: Client, n: int) -> None:
    run = client.run_suite(suite_cases(n), checks=BAD_CHECKS)
    with pytest.raises(ScorewireError) as info:
        list(run)
    assert_bad_request(info.value)


async def test_async_invalid_argument_has_field_violations(aclient: AsyncClient) -> None:
    with pytest.raises(ScorewireError) as info:
        await aclient.score("x", checks=BAD_CHECKS)
    assert_bad_request(info.value)


@pytest.mark.parametrize("n", [5, 20 * _convert.STREAM_CHUNK_CASES])  # RunSuite, streamed
async def test_async_run_suite_invalid_argument(aclient: AsyncClient, n: int) -> None:
    # Streamed, the server refuses the config while the client still writes chunks:
    # grpc.aio first says INTERNAL "Internal error from Core"; the server's status wins.
    with pytest.raises(ScorewireError) as info:
        await aclient.run_suite(suite_cases(n), checks=BAD_CHECKS).collect()
    assert_bad_request(info.value)


def test_score_stream_without_checks_is_invalid_argument(client: Client) -> None:
    with pytest.raises(ScorewireError) as info:
        list(client.score_stream([("a", None, "x")]))
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.field_violations


async def test_async_score_stream_refused_while_writing_is_the_refusal(
    aclient: AsyncClient,
) -> None:
    # The server refuses the config while the client still writes 200 large cases; it reads
    # them on before answering, so grpc.aio reports the refusal, not INTERNAL.
    cases = [(f"r{i}", None, "x" * 100_000) for i in range(200)]
    with pytest.raises(ScorewireError) as info:
        async for _ in aclient.score_stream(cases):
            pass
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.field_violations


# A 1 ms deadline over 20,000 cases: sending the request alone takes longer.
DEADLINE_CASES = 20 * N_CASES


def test_run_suite_deadline_expires(client: Client) -> None:
    run = client.run_suite(suite_cases(DEADLINE_CASES), compact=COMPACT, timeout=0.001)
    with pytest.raises(ScorewireError) as info:
        list(run)
    assert info.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert info.value.field_violations == []


async def test_async_run_suite_deadline_expires(aclient: AsyncClient) -> None:
    run = aclient.run_suite(suite_cases(DEADLINE_CASES), compact=COMPACT, timeout=0.001)
    with pytest.raises(ScorewireError) as info:
        await run.collect()
    assert info.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def test_client_default_deadline_applies(scorewire_addr: str) -> None:
    # The client-wide default is the deadline of a call that sets none.
    with Client(scorewire_addr, timeout=0.001) as c, pytest.raises(ScorewireError) as info:
        c.run_suite(suite_cases(DEADLINE_CASES), compact=COMPACT).collect()
    assert info.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


@pytest.mark.parametrize(
    "obj",
    [{"a": [1, 2.5, 'é\n"', None, True]}, "x", 3, 2**70, [], {}, ("t", 1), -0.0, 1e300],
)
def test_json_text_is_what_json_dumps_writes(obj: object) -> None:
    # The client's encoder is the C encoder of json.dumps made once; same text, compact.
    import json

    sample = _convert.to_sample({"expected": obj})
    assert sample.expected_json == json.dumps(
        obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
