"""`input_json`/`expected_json`/`value_json`: the same scores as the `Value` fields.

Each case is sent twice over a real channel, once with `google.protobuf.Value`s and once
with JSON texts, and every score must match (value, passed, reason, error). Integers
beyond 2^53 travel exactly only as JSON; malformed JSON, or both forms of one field, is
INVALID_ARGUMENT naming the field.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
from scorewire.client import _convert
from scorewire.v1 import scoring_pb2 as pb

from tests.server.conftest import Server
from tests.support.rpc import bad_request

CHECKS = [
    {"type": "contains", "params": {"path": "must_include", "case_sensitive": False}},
    {"type": "exact", "params": {"path": "answer"}},
    {"type": "regex", "params": {"pattern": r"\border\b"}},
    {
        "type": "json_schema",
        "params": {"schema": {"type": "object", "required": ["order_id"]}},
    },
    {"type": "length", "params": {"max_chars": 400, "max_words": 60}},
    {"type": "numeric_tolerance", "params": {"path": "n", "output_path": "n"}},
]

CASES: list[tuple[Any, Any, str, Any]] = [
    # (input, expected, output text, output value): the peers' shapes and edges.
    ({"q": "x"}, {"answer": "Paris", "must_include": ["paris"]}, "Paris", None),
    (None, {"answer": {"order_id": 7}, "must_include": ["order"]}, '{"order_id": 7}', None),
    ("q", {"answer": "no", "must_include": ["absent"]}, "the order ships", None),
    ([1, "two", None], {"n": 2.5, "answer": 2.5}, "", {"n": 2.5}),  # a structured output
    ({"deep": [[{"a": [True, False]}]]}, None, "text", None),  # no reference: an error
    ("é ✓ 東京", {"answer": "é ✓ 東京", "must_include": ["東京"]}, "é ✓ 東京", None),
]
WHOLE = (None, {"answer": 3, "n": 3, "must_include": ["3"]}, "4", {"n": 4})
"""Whole numbers: a Value makes them doubles (`3.0`), JSON keeps `3`; only reasons differ."""


def _request(case: tuple[Any, Any, str, Any], as_json: bool) -> pb.ScoreRequest:
    inp, expected, text, value = case
    sample = pb.Sample(id="s")
    output = pb.Output(text=text)
    for msg, name, obj in ((sample, "input", inp), (sample, "expected", expected)):
        if obj is not None:
            if as_json:
                setattr(msg, f"{name}_json", json.dumps(obj))
            else:
                _convert.fill_value(getattr(msg, name), obj)
    if value is not None:
        if as_json:
            output.value_json = json.dumps(value)
        else:
            _convert.fill_value(output.value, value)
    return pb.ScoreRequest(sample=sample, output=output, checks=_convert.to_checks(CHECKS))


def _scores(resp: pb.ScoreResponse) -> list[tuple[float, bool, str, str]]:
    return [(s.value, s.passed, s.reason, s.error.code) for s in resp.scores]


def _verdicts(resp: pb.ScoreResponse) -> list[tuple[float, bool, str]]:
    return [(s.value, s.passed, s.error.code) for s in resp.scores]


async def test_whole_numbers_score_alike_and_json_reasons_show_them_as_written(
    server: Server,
) -> None:
    by_value = await server.stub.Score(_request(WHOLE, as_json=False))
    by_json = await server.stub.Score(_request(WHOLE, as_json=True))
    assert _verdicts(by_value) == _verdicts(by_json)
    exact = 1  # the exact check's reason quotes the reference
    assert "expected 3.0" in by_value.scores[exact].reason
    assert "expected 3," in by_json.scores[exact].reason


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
async def test_value_and_json_forms_give_identical_scores(server: Server, case: Any) -> None:
    by_value = await server.stub.Score(_request(case, as_json=False))
    by_json = await server.stub.Score(_request(case, as_json=True))
    assert _scores(by_value) == _scores(by_json)
    assert by_value.passed == by_json.passed


async def test_runsuite_json_and_value_forms_give_identical_results(server: Server) -> None:
    # The scoring workers read the JSON texts too: same per-case scores and summary.
    async def run(as_json: bool) -> tuple[list[Any], pb.RunSummary]:
        req = pb.RunSuiteRequest(checks=_convert.to_checks(CHECKS))
        for case in CASES:
            r = _request(case, as_json)
            req.cases.add(sample=r.sample, output=r.output)
        results, summary = [], pb.RunSummary()
        async for ev in server.stub.RunSuite(req):
            if ev.HasField("summary"):
                summary = ev.summary
            else:
                results += [(c.index, _scores_of(c)) for c in ev.results.results]
        return sorted(results), summary

    def _scores_of(c: pb.CaseResult) -> list[tuple[float, bool, str, str]]:
        return [(s.value, s.passed, s.reason, s.error.code) for s in c.scores]

    assert await run(False) == await run(True)


async def test_integers_beyond_2_53_are_exact_only_in_json(server: Server) -> None:
    # 2^53 + 1 has no double: as a Value it arrives as 2^53 and equals the output's
    # 2^53; as JSON it keeps its last digit and does not.
    checks = _convert.to_checks([{"type": "exact"}])
    big = 2**53 + 1
    out = pb.Output(text=str(2**53))
    as_json = pb.ScoreRequest(
        sample=pb.Sample(expected_json=json.dumps(big)), output=out, checks=checks
    )
    as_value = pb.ScoreRequest(
        sample=pb.Sample(expected=_convert.to_value(big)), output=out, checks=checks
    )
    assert not (await server.stub.Score(as_json)).scores[0].passed
    assert (await server.stub.Score(as_value)).scores[0].passed
    exact = pb.ScoreRequest(
        sample=pb.Sample(expected_json=str(2**70 + 1)),
        output=pb.Output(text=str(2**70 + 1)),
        checks=checks,
    )
    assert (await server.stub.Score(exact)).scores[0].passed  # beyond 64 bits as well


@pytest.mark.parametrize(
    ("sample", "output", "field"),
    [
        (pb.Sample(expected_json='{"answer": '), pb.Output(), "sample.expected_json"),
        (pb.Sample(input_json="NaN"), pb.Output(), "sample.input_json"),  # not JSON
        (pb.Sample(), pb.Output(value_json="[1,]"), "output.value_json"),
        (
            pb.Sample(expected_json='"a"', expected=_convert.to_value("a")),
            pb.Output(),
            "sample.expected_json",
        ),  # both forms of one field
    ],
)
async def test_bad_json_fields_are_invalid_argument_naming_the_field(
    server: Server, sample: pb.Sample, output: pb.Output, field: str
) -> None:
    checks = _convert.to_checks([{"type": "length", "params": {"max_chars": 5}}])
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await server.stub.Score(pb.ScoreRequest(sample=sample, output=output, checks=checks))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in bad_request(err.value)
    req = pb.RunSuiteRequest(checks=checks)
    req.cases.add(output=pb.Output(text="fine"))
    req.cases.add(sample=sample, output=output)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in server.stub.RunSuite(req):
            pass
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"cases[1].{field}" in bad_request(err.value)


_FORMS = ["unset", "valid", "invalid", "both"]


@pytest.mark.parametrize("inp", _FORMS)
@pytest.mark.parametrize("exp", _FORMS)
@pytest.mark.parametrize("val", _FORMS)
def test_the_fast_check_agrees_with_the_violations(inp: str, exp: str, val: str) -> None:
    # Every case of a RunSuite goes through json_fields_ok; only a case it refuses is
    # given to json_field_violations, which must then find something (and find nothing
    # for a case it passes).
    from scorewire.server import convert

    sample, output = pb.Sample(id="s"), pb.Output(text="t")
    for msg, name, form in (
        (sample, "input", inp),
        (sample, "expected", exp),
        (output, "value", val),
    ):
        if form in ("valid", "both"):
            setattr(msg, f"{name}_json", '{"a": [1, 2.5, "x"]}')
        if form == "invalid":
            setattr(msg, f"{name}_json", '{"a": [1, ')
        if form == "both":
            getattr(msg, name).string_value = "x"
    violations = convert.json_field_violations(sample, output, "cases[3]")
    assert convert.json_fields_ok(sample, output) is (not violations)
    assert len(violations) == sum(f in ("invalid", "both") for f in (inp, exp, val))
