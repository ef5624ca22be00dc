"""The native kernel answers exactly as the Python engine: every score, every byte.

The Python checks are the oracle. Random cases (ASCII and Unicode prose, JSON that
Python and the kernel parse alike or not, broken JSON, references of every shape) go
through both, in process (`score_objects`) and as a scoring worker's chunk
(`score_wire`); values, verdicts, reasons and errors must be equal, the chunk's message
must be the bytes `wire.case_results_message` writes for Python's results (given the
native latencies, the one thing that differs), and so must the summary counts and the
metrics tally.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from scorewire import api
from scorewire.core.context import CheckContext
from scorewire.core.model import Output, Sample
from scorewire.engine import native
from scorewire.engine.runner import PROGRESS_SLOTS, STARTED_AT, Case, Plan, score_case_sync
from scorewire.engine.spec import CheckSpec, compile_check
from scorewire.engine.summary import SummaryBuilder
from scorewire.metrics.runs import KNOWN_CODES, tally
from scorewire.regex.engine import UserRegex
from scorewire.scoring import wire
from scorewire.scoring import worker as sw
from scorewire.scoring.limits import check_extras
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.protocol import Reply, Scored, WorkerJob
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

from tests.support.components import require_component

if not native.available():
    require_component(
        "the native kernel", "not built here (make install builds service/native with cargo)"
    )

ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "integer", "minimum": 1},
        "status": {"enum": ["pending", "shipped"]},
        "items": {"type": "array", "items": {"type": "object", "required": ["sku"]}},
        "total": {"type": "number", "exclusiveMaximum": 1000},
        "tags": {"type": ["array", "null"], "maxItems": 2},
        "code": {"type": "string", "minLength": 2, "maxLength": 4},
    },
    "required": ["order_id", "status"],
    "additionalProperties": False,
}

SPECS: list[dict[str, Any]] = [
    {"type": "contains", "params": {"path": "must_include"}},
    {"type": "contains", "params": {"path": "must_include", "case_sensitive": False}},
    {"type": "contains", "params": {"require_all": False, "case_sensitive": False}},
    {"type": "contains", "params": {}},
    {"type": "contains", "params": {"needles": ["Refund", "order", "'q\"", "é"]}},
    {"type": "contains", "params": {"needles": ["refund", "ORDER"], "case_sensitive": False}},
    {"type": "contains", "params": {"path": "/list/1"}},
    {"type": "exact", "params": {"path": "answer"}},
    {"type": "exact", "params": {"path": "answer", "case_sensitive": False}},
    {"type": "exact", "params": {"path": "answer", "strip": False}},
    {"type": "exact", "params": {}},
    {"type": "exact", "params": {"expected": "  Paris \n"}},
    {"type": "exact", "params": {"expected": {"a": [1, 2.0, None, True]}}},
    {"type": "exact", "params": {"expected": 42}},
    {"type": "regex", "params": {"pattern": r"\b(refund|order_id|Paris)\b"}},
    {"type": "regex", "params": {"pattern": r"^\d+$", "must_match": False}},
    {"type": "regex", "params": {"pattern": "é|ß", "flags": ["IGNORECASE"]}},
    {"type": "json_schema", "params": {"schema": ORDER_SCHEMA}},
    {"type": "json_schema", "params": {"schema": {"type": "integer", "maximum": 100}}},
    {
        "type": "json_schema",
        "params": {
            "schema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "enum": [1, "a", None, False, 2.5],
            }
        },
    },
    {"type": "json_schema", "params": {"schema": {"type": "object", "minProperties": 1}}},
    {"type": "json_schema", "params": {"schema": {"anyOf": [{"type": "string"}]}}},
    {
        "type": "json_schema",
        "params": {
            "schema": {
                "type": "object",
                "properties": {
                    "a b": {"type": "integer"},
                    "x-1": {"const": 3},
                    "_u": {"enum": [1.5, "x", None]},
                    "é": {"type": "string", "maxLength": 0},
                },
                "required": ["zz", "a b"],
                "minProperties": 2,
                "maxProperties": 3,
            }
        },
    },
    {
        "type": "json_schema",
        "params": {
            "schema": {
                "type": "array",
                "items": {"type": ["integer", "string"], "minimum": -1, "maxLength": 0},
                "minItems": 1,
                "maxItems": 2,
            }
        },
    },
    {
        "type": "json_schema",
        "params": {
            "schema": {"properties": {"a": False, "b": True}, "additionalProperties": False}
        },
    },
    {"type": "length", "params": {"max_chars": 40}},
    {"type": "length", "params": {"max_words": 6, "min_chars": 3}},
    {"type": "length", "params": {"max_chars": 5, "max_words": 1, "min_chars": 1}},
    {
        "type": "contains",
        "params": {"needles": ["x"]},
        "when": {"type": "length", "params": {"max_chars": 9}},
    },
    {"type": "json_valid", "params": {}},
]

WORDS = [
    "refund",
    "Refund",
    "order",
    "ORDER",
    "order_id",
    "Paris",
    "paris",
    "the",
    "a",
    "'q\"",
    "it's",
    'say "hi"',
    "back\\slash",
    "tab\there",
    "new\nline",
    "\x0b",
    "\x1c",
    "\x7f",
    "é",
    "café",
    "İ",
    "ß",
    "K",
    "東京",
    "e\u0301",
    "…",
    "\xa0",
    "\u2028",
    "-",
    "...",
    "_x_",
    "42",
    "3.5",
    "",
]

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(WORDS),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["a", "b", "order_id", "status", "sku"]), inner, max_size=3
        ),
    ),
    max_leaves=8,
)
prose = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
order = st.fixed_dictionaries(
    {
        "order_id": st.one_of(st.integers(-2, 5), st.just("7"), st.just(3.0)),
        "status": st.sampled_from(["pending", "shipped", "lost"]),
    },
    optional={
        "items": st.lists(st.fixed_dictionaries({}, optional={"sku": st.just("S")}), max_size=2),
        "total": st.one_of(st.integers(0, 2000), st.floats(0, 2000)),
        "tags": st.one_of(st.none(), st.lists(st.just("t"), max_size=3)),
        "code": st.sampled_from(["A", "AB", "ABCDE", "é€"]),
        "extra": st.just(1),
    },
)
json_text = st.one_of(json_value, order).flatmap(
    lambda v: st.sampled_from(
        [
            json.dumps(v),
            json.dumps(v, ensure_ascii=False),
            " \n" + json.dumps(v) + "\t",
            json.dumps(v)[: max(1, len(json.dumps(v)) // 2)],
        ]
    )
)
odd_text = st.sampled_from(
    [
        "",
        "   ",
        "\n",
        "NaN",
        "Infinity",
        "-Infinity",
        '{"a": 1, "a": 2}',
        '"\\ud800"',
        '"\\ud83d\\ude00"',
        "[" * 200 + "]" * 200,
        "1e400",
        "-0",
        "-0.0",
        "1E5",
        "01",
        '{"a":1}x',
        "9" * 25,
        "tru",
        "\x0c{}",
        "\u3000{}",
    ]
)
text = st.one_of(prose, json_text, odd_text)
needles = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=5),
    st.sampled_from(WORDS),
    json_value,
)
expected = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={"answer": st.one_of(text, json_value, order), "must_include": needles},
    ),
    st.sampled_from(WORDS),
    st.lists(st.sampled_from(WORDS), max_size=3),
    json_value,
    st.fixed_dictionaries({"list": st.lists(needles, max_size=3)}),
)
case_parts = st.tuples(st.text(max_size=3), expected, text, st.one_of(st.none(), json_value))


def _plan(specs: list[dict[str, Any]]) -> Plan:
    checks = []
    for i, s in enumerate(specs):
        when = s.get("when")
        spec = CheckSpec(
            type=s["type"],
            params=s["params"],
            name=f"c{i}",
            when=CheckSpec(type=when["type"], params=when["params"]) if when else None,
        )
        checks.append(compile_check(spec, f"checks[{i}]"))
    return Plan(checks)


PLAN = _plan(SPECS)
CTX = CheckContext(extras=check_extras(Settings(max_needles_per_request=4)))
CAP = 120


def _scores(result: Any) -> list[tuple[Any, ...]]:
    return [
        (s.value, s.passed, s.reason, s.error, s.skipped, s.cached, s.unpriced, s.cost_usd)
        for s in result.scores
    ]


def _cases(parts: list[tuple[Any, ...]]) -> list[Case]:
    return [
        Case(Sample(sid, None, exp), Output(txt, value), i)
        for i, (sid, exp, txt, value) in enumerate(parts)
    ]


@hsettings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(case_parts, min_size=1, max_size=12))
def test_in_process_results_are_the_python_engines(parts: list[tuple[Any, ...]]) -> None:
    # Every score and the summary counts, whichever of the kernel or Python scored it.
    kernel = native.build(PLAN, CTX)
    assert kernel is not None
    got, counts = native.score_batch(kernel, iter(_cases(parts)), api._batch_case)
    want = [score_case_sync(PLAN, c, CTX) for c in _cases(parts)]
    assert [(r.index, r.sample_id, r.passed) for r in got] == [
        (r.index, r.sample_id, r.passed) for r in want
    ]
    assert [_scores(r) for r in got] == [_scores(r) for r in want]
    ours, theirs = SummaryBuilder(PLAN.names, PLAN.names), SummaryBuilder(PLAN.names, PLAN.names)
    ours.add_counts(counts)
    for r in want:
        theirs.add(r)
    assert ours.finish() == theirs.finish()


def _case_bytes(sid: str, exp: Any, txt: str, value: Any, as_json: bool) -> bytes:
    sample = pb.Sample(id=sid)
    if exp is not None:
        if as_json:
            sample.expected_json = json.dumps(exp)
        else:
            wire.py_to_value(exp, sample.expected)
    output = pb.Output(text=txt)
    if value is not None:
        output.value_json = json.dumps(value)
    return pb.Case(sample=sample, output=output).SerializeToString()


def _latencies(message: bytes) -> list[list[float]]:
    batch = pb.RunSuiteResponse.FromString(message).results.results
    return [[s.latency_ms for s in r.scores] for r in batch]


@hsettings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(case_parts, min_size=1, max_size=12), st.booleans(), st.integers(0, 1000))
def test_a_chunk_is_the_bytes_python_writes(
    parts: list[tuple[Any, ...]], as_json: bool, first: int
) -> None:
    # The chunk's message, counts and tally, against Python's for the same Case bytes.
    kernel = native.build(
        PLAN,
        CTX,
        max_reason_chars=CAP,
        spread_bytes=wire.score_bytes,
        known_codes=sorted(KNOWN_CODES),
    )
    assert kernel is not None
    data = [_case_bytes(*p, as_json=as_json) for p in parts]
    bounds = [0.001, 0.01, 1.0, 100.0]
    message, counts, tallied = kernel.score_wire(
        data, first, wire.python_case, 0, None, {}, lambda code: None, bounds
    )
    want = [score_case_sync(PLAN, wire.python_case(b, first + i), CTX) for i, b in enumerate(data)]
    for r, ms in zip(want, _latencies(message), strict=True):
        for s, m in zip(r.scores, ms, strict=True):
            s.latency_ms = m
    assert message == wire.case_results_message(PLAN.checks, want, CAP)
    theirs = SummaryBuilder(PLAN.names, PLAN.names)
    for r in want:
        theirs.add(r)
    ours = SummaryBuilder(PLAN.names, PLAN.names)
    ours.add_counts(counts)
    assert ours.finish() == theirs.finish()
    t = tally(len(PLAN.checks), want, bounds)
    assert tallied == (t.cases, t.passed, t.errored, t.millis, t.hist, t.codes)


EDGES: list[tuple[dict[str, Any], Any, str]] = [
    # (check, the sample's expected value, the output text)
    ({"type": "exact", "params": {"expected": 2**53 + 1}}, None, "9007199254740992.0"),
    ({"type": "exact", "params": {"expected": 2**53}}, None, "9007199254740992.0"),
    ({"type": "exact", "params": {"expected": 1}}, None, "true"),
    ({"type": "exact", "params": {"expected": -0.0}}, None, "0"),
    ({"type": "exact", "params": {"expected": {"a": 1}}}, None, '{"a": 1.0}'),
    ({"type": "exact", "params": {"expected": {"a": 1}}}, None, '{"a": 1, "a": 1}'),
    ({"type": "exact", "params": {"expected": [1, 2]}}, None, "[2, 1]"),
    ({"type": "exact", "params": {}}, "x" * 60, "y" * 61),
    ({"type": "exact", "params": {}}, "x" * 61, "y" * 60),
    ({"type": "exact", "params": {}}, "Paris", "\x1c Paris\xa0\u3000"),
    ({"type": "exact", "params": {"case_sensitive": False}}, "STRASSE", "straße"),
    ({"type": "exact", "params": {"case_sensitive": False}}, "i", "İ"),
    ({"type": "exact", "params": {}}, "a", "tab\there\x01\x7f'\\"),
    ({"type": "exact", "params": {}}, "a", "é"),
    ({"type": "length", "params": {"max_words": 0}}, None, "___ -- a_b 1.5 x\x1cy"),
    ({"type": "length", "params": {"max_words": 0}}, None, "東京は"),
    ({"type": "length", "params": {"max_chars": 1}}, None, "é"),
    ({"type": "contains", "params": {}}, {"must_include": ["n" * 41, "m" * 40, "a", "b"]}, "c"),
    (
        {"type": "contains", "params": {}},
        {"must_include": [str(i) for i in range(20)]},
        "0123456789 10 11 12 13 14 15 16 17 18 19",
    ),
    ({"type": "contains", "params": {"require_all": False}}, ["a", "z"], "abc"),
    ({"type": "contains", "params": {"case_sensitive": False}}, ["k"], "\u212a"),
    ({"type": "contains", "params": {"case_sensitive": False}}, ["SS"], "ß"),
    ({"type": "contains", "params": {"case_sensitive": False}}, ["é"], "É"),
    ({"type": "json_schema", "params": {"schema": {"type": "integer"}}}, None, "1.0"),
    ({"type": "json_schema", "params": {"schema": {"type": "integer"}}}, None, "1e2"),
    ({"type": "json_schema", "params": {"schema": {"maximum": 2**53}}}, None, str(2**53 + 1)),
    ({"type": "json_schema", "params": {"schema": {"minimum": 0.5}}}, None, "0"),
    ({"type": "json_schema", "params": {"schema": {"enum": [1, True]}}}, None, "1.0"),
    ({"type": "json_schema", "params": {"schema": {"enum": [1]}}}, None, "true"),
    ({"type": "json_schema", "params": {"schema": {"maxLength": 1}}}, None, '"éé"'),
    ({"type": "json_schema", "params": {"schema": {"type": "object"}}}, None, "\n\n  x"),
    ({"type": "json_schema", "params": {"schema": {"type": "object"}}}, None, '"\\ud800"'),
    ({"type": "json_schema", "params": {"schema": {"type": "number"}}}, None, "1e400"),
    (
        {"type": "json_schema", "params": {"schema": {"properties": {"x-1": {"const": 3}}}}},
        None,
        '{"x-1": 1}',
    ),
    (
        {"type": "json_schema", "params": {"schema": {"type": "string"}}},
        None,
        "[0.00001, 0.0001, 1e16, 1e15]",
    ),
    (
        {"type": "json_schema", "params": {"schema": {"type": "string"}}},
        None,
        "[-0.0, 1.5e300, 2.5e-7, 123456789012345678]",
    ),
    (
        {"type": "json_schema", "params": {"schema": {"type": "string"}}},
        None,
        "[0.1, 100.0, 1e22, 5e-324, true, null]",
    ),
    (
        {"type": "json_schema", "params": {"schema": {"type": "integer"}}},
        None,
        '"' + "x" * 200 + '"',
    ),
    (
        {
            "type": "json_schema",
            "params": {"schema": {"properties": {"a": {}}, "additionalProperties": False}},
        },
        None,
        '{"zb": 1, "za": 2, "a": 0}',
    ),
    (
        {
            "type": "json_schema",
            "params": {
                "schema": {
                    "properties": {
                        "a b": {"type": "string"},
                        "it's": {"type": "string"},
                        "b\\": {"type": "string"},
                    },
                    "required": ["q", "r"],
                }
            },
        },
        None,
        '{"a b": 1, "it\'s": 2, "b\\\\": 3}',
    ),
    (
        {"type": "json_schema", "params": {"schema": {"items": {"minimum": 5}}}},
        None,
        "[1, 2, 3, 4, 9]",
    ),
    (
        {"type": "json_schema", "params": {"schema": {"items": {"maximum": 5.5}}}},
        None,
        "[1, 6, 7.0]",
    ),
    ({"type": "json_schema", "params": {"schema": {"minLength": 1, "maxItems": 0}}}, None, '""'),
    ({"type": "json_schema", "params": {"schema": {"maxItems": 0, "minItems": 3}}}, None, "[1]"),
    ({"type": "json_schema", "params": {"schema": {"minProperties": 1}}}, None, "{}"),
    ({"type": "json_schema", "params": {"schema": {"maxProperties": 0}}}, None, '{"a": 1}'),
    ({"type": "json_schema", "params": {"schema": {"enum": ["é", "a"]}}}, None, '"b"'),
    ({"type": "length", "params": {"min_chars": 10**30}}, None, "x"),
    ({"type": "length", "params": {"max_chars": 2**64}}, None, "x"),
    (
        {"type": "contains", "params": {"path": "list.99999999999999999999999"}},
        {"list": ["a"]},
        "a",
    ),
    ({"type": "exact", "params": {"path": "/a/18446744073709551616"}}, {"a": [1]}, "1"),
    ({"type": "regex", "params": {"pattern": "a", "must_match": False}}, None, "bab"),
    ({"type": "regex", "params": {"pattern": "a", "must_match": False}}, None, "bbb"),
]


@pytest.mark.parametrize(("spec", "exp", "txt"), EDGES)
def test_edges_answer_as_python(spec: dict[str, Any], exp: Any, txt: str) -> None:
    # Where the kernel's rules (number equality, white space, folding, words, quoting,
    # previews, JSON) could part from Python's, they must not.
    # With a length check beside it, there is a kernel even when the edge's own check
    # has no twin (its parameters are beyond what the twins take: Python scores it).
    plan = _plan([spec, {"type": "length", "params": {"max_chars": 5}}])
    case = Case(Sample("s", None, exp), Output(txt))
    kernel = native.build(plan, CTX)
    assert kernel is not None
    got, _ = native.score_batch(kernel, iter([case]), api._batch_case)
    assert _scores(got[0]) == _scores(score_case_sync(plan, case, CTX))


# Documents whose every prefix (an output cut short) and every one-character change
# `test_broken_json_is_worded_as_pythons_decoder_words_it` scores.
DOCUMENTS = [
    '{"order_id": 1007, "status": "shipped", "items": [{"sku": "S-3", "qty": 2}], "total": 12.5}',
    '{"a": "q\\"u\\\\o\\/t\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00", "b": [true, false, null, {}, []]}',
    "[0, -0, 1.5, -2.5e-7, 1E+5, 1e22, 123456789, -0.0, 5e-324]",
    '{\n  "東京": "café",\r\n  "k": [\n    1,\n    "\u2028\u00a0"\n  ]\n}',
]
ODD_JSON = [
    *("1.", "1e", "1e+", "1e+x", "1.e5", "-", "-x", "--1", "01", "-01", "00", "1 2", "[1 2]"),
    *("[1,]", '{"a": 1,}', "[1, ]", '{"a": 1 , }', '{"a" 1}', '{"a":}', "{1: 2}", "{,}"),
    *('"abc', '"a\\qb"', '"a\\', '"\\u12"', '"\\u12', '"\\u00e9', '"\\u00e9"x'),
    *('"\\ud83d\\ude00', '"\\ud83d\\ude0', '"\\ud83d"', '"\\ud83d\\u0041"', '"\\udc00"'),
    *('"tab\there"', '"nul\x00"', '"del\x7f"', "nul", "tru", "fals", "nulll", "truex"),
    *("NaN", "[NaN", "-Infinity", "[Infinity]", "[-Infinity", "Nan", "Inf", "1e400", "[1e400"),
    *("9" * 25, "[" + "9" * 25 + " x", '{"a": 1, "a": 2', '{"a": 1, "a": 2} x', "[1]x"),
    *("{} {}", " \n [", "\ufeff{}", "[" * 200 + "]" * 199, "\u3000{}", "é", " é", "[é]"),
    *('{"a": 1é', '{"é": [1, "ü"', "\n\n  {\n", '"a\nb"', '["x", \t\n ,]'),
]


def _broken_texts() -> list[str]:
    out = list(ODD_JSON)
    for doc in DOCUMENTS:
        out += [doc[:k] for k in range(len(doc))]
        for k in range(0, len(doc), 3):
            out += [
                doc[:k] + c + doc[k + 1 :] for c in ("x", ",", "}", "]", '"', "\\", "\x01", ":")
            ]
    return out


def _writable(result: Any) -> bool:
    try:
        for sc in result.scores:
            sc.reason.encode()
    except UnicodeEncodeError:
        return False
    return True


def test_broken_json_is_worded_as_pythons_decoder_words_it() -> None:
    # Where an output is not JSON, exact (a JSON reference) and json_schema quote the
    # decoder's error, and exact its reference and the value it got: the kernel words
    # those itself, and must word them as Python does, or leave them to Python. In
    # process and from a chunk's bytes (the reference as a Value and as JSON text).
    reference = {"answer": {"b": [1, 2.5, "é\n", None], "a": {"x": True}}, "must_include": ["x"]}
    plan = _plan(
        [
            {"type": "exact", "params": {"path": "answer"}},
            {"type": "exact", "params": {"expected": [0.1, 1e16, -0.0, 'say "hi"\u2028\x1f']}},
            {"type": "json_schema", "params": {"schema": ORDER_SCHEMA}},
        ]
    )
    parts = [(f"s{i}", reference, t, None) for i, t in enumerate(_broken_texts())]
    kernel = native.build(plan, CTX, max_reason_chars=CAP, spread_bytes=wire.score_bytes)
    assert kernel is not None
    got, _ = native.score_batch(kernel, iter(_cases(parts)), api._batch_case)
    want = [score_case_sync(plan, c, CTX) for c in _cases(parts)]
    for g, w, p in zip(got, want, parts, strict=True):
        assert _scores(g) == _scores(w), p[2]
    # A message cannot hold a reason quoting a lone surrogate (`"\\ud83d"` parsed):
    # Python's writer raises for it, and so does the kernel's (below).
    parts = [p for p, w in zip(parts, want, strict=True) if _writable(w)]
    for as_json in (False, True):
        data = [_case_bytes(*p, as_json=as_json) for p in parts]
        message, _, _ = kernel.score_wire(data, 0, wire.python_case, 0, None, {}, None, None)
        want = [score_case_sync(plan, wire.python_case(b, i), CTX) for i, b in enumerate(data)]
        for r, ms in zip(want, _latencies(message), strict=True):
            for s, m in zip(r.scores, ms, strict=True):
                s.latency_ms = m
        assert message == wire.case_results_message(plan.checks, want, CAP)
    lone = _case_bytes("s", reference, '{"a": "\\ud83d"}', None, as_json=True)
    with pytest.raises(UnicodeEncodeError):
        kernel.score_wire([lone], 0, wire.python_case, 0, None, {}, None, None)


UNICODE_PLAN = _plan(
    [
        {"type": "contains", "params": {"path": "must_include", "case_sensitive": False}},
        {"type": "contains", "params": {"needles": ["ǅ", "ﬀ", "Σ", "İ"], "require_all": False}},
        {"type": "exact", "params": {"path": "answer", "case_sensitive": False}},
        {"type": "exact", "params": {"path": "answer"}},
        {"type": "length", "params": {"max_chars": 30, "max_words": 4}},
        {"type": "json_schema", "params": {"schema": {"enum": ["ß", 1]}}},
    ]
)
# Every character but surrogates, the common ones (punctuation, letters with case, marks,
# unspaced scripts, spaces, the unprintable) more often than the rest.
any_char = st.characters(blacklist_categories=["Cs"])
common_char = st.sampled_from(
    "“”‘’—–…«»·•€£¥°±×÷ßẞİıſǅﬀΣσςΩКкÉéÅå\u0301\u0308東京はをタイปลากาᄀ"
    "\u00a0\u2028\u2029\u3000\u0085\u200b\u00ad\u061c\ufeff\U0001f600\U000e0041 aZ09_-.,'\"\\\n\t"
)
unicode_text = st.text(st.one_of(common_char, common_char, any_char), max_size=40)


@hsettings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(unicode_text, unicode_text, st.lists(unicode_text, max_size=3))))
def test_text_beyond_ascii_answers_as_python(parts: list[tuple[str, str, list[str]]]) -> None:
    # Case folding, repr (previews), word counts and schema messages of text in any
    # script: the kernel knows each character from Python's own database (`char_facts`)
    # and must answer as Python, in process and from a chunk's bytes.
    cases = [
        Case(Sample(f"s{i}", None, {"answer": a, "must_include": n or ["x"]}), Output(t), i)
        for i, (t, a, n) in enumerate(parts)
    ]
    kernel = native.build(UNICODE_PLAN, CTX, max_reason_chars=CAP, spread_bytes=wire.score_bytes)
    assert kernel is not None
    got, _ = native.score_batch(kernel, iter(cases), api._batch_case)
    want = [score_case_sync(UNICODE_PLAN, c, CTX) for c in cases]
    assert [_scores(r) for r in got] == [_scores(r) for r in want]
    data = [
        _case_bytes(c.sample.id, c.sample.expected, c.output.text, None, as_json=True)
        for c in cases
    ]
    message, _, _ = kernel.score_wire(data, 0, wire.python_case, 0, None, {}, None, None)
    for r, ms in zip(want, _latencies(message), strict=True):
        for sc, m in zip(r.scores, ms, strict=True):
            sc.latency_ms = m
    assert message == wire.case_results_message(UNICODE_PLAN.checks, want, CAP)


def test_text_beyond_ascii_stays_in_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    # Prose with typographic quotes and dashes, accents, Japanese: every check answered
    # by the kernel (before, each of these cases went to Python for contains, exact and
    # length: 5x the time on prose with a typographic quote in every other output).
    calls: list[str] = []
    monkeypatch.setattr(native, "run_check_sync", lambda *a: calls.append(a[0].type))
    texts = ["“Refund” — in two days’ time.", "Café déjà vu…", "東京は晴れ。", "ÉTÉ"]
    cases = [
        Case(Sample(f"s{i}", None, {"answer": "été", "must_include": ["refund", "VU"]}), Output(t))
        for i, t in enumerate(texts * 50)
    ]
    kernel = native.build(UNICODE_PLAN, CheckContext())
    assert kernel is not None
    got, _ = native.score_batch(kernel, iter(cases), api._batch_case)
    assert calls == []
    assert got[1].scores[4].reason == "within limits (13 characters)"
    assert got[2].scores[4].reason == "5 words, over max_words 4"  # a word per character
    assert got[3].scores[2].passed and not got[3].scores[3].passed
    assert got[3].scores[3].reason == "expected 'été', got 'ÉTÉ'"


def test_plain_cases_never_reach_python(monkeypatch: pytest.MonkeyPatch) -> None:
    # The peers' shape of case (ASCII prose, JSON orders, short answers) is answered by
    # the twins alone, failures included, except the failures only Python can word.
    calls = []

    def counting(*args: Any) -> Any:
        calls.append(args[0].type)
        return score_case_sync(Plan([args[0]]), Case(args[1], args[2]), args[3]).scores[0]

    monkeypatch.setattr(native, "run_check_sync", counting)
    plan = _plan(
        [
            {"type": "contains", "params": {"path": "must_include", "case_sensitive": False}},
            {"type": "regex", "params": {"pattern": r"\b(refund|Paris)\b"}},
            {"type": "exact", "params": {"path": "answer"}},
            {"type": "json_schema", "params": {"schema": ORDER_SCHEMA}},
            {"type": "length", "params": {"max_chars": 30, "max_words": 4}},
        ]
    )
    order = {"order_id": 3, "status": "shipped"}
    cases = [
        Case(
            Sample("a", None, {"answer": "x", "must_include": ["refund", "Days"]}),
            Output("Refund in two days."),
        ),
        Case(Sample("b", None, {"answer": "Paris", "must_include": ["paris"]}), Output("Paris")),
        Case(
            Sample("c", None, {"answer": order, "must_include": ["3"]}), Output(json.dumps(order))
        ),
        Case(Sample("d", None, {"answer": "it's"}), Output("a 'quoted' \"word\" and more words")),
    ]
    kernel = native.build(plan, CheckContext())
    assert kernel is not None and kernel.native_checks == 5
    assert kernel.fills_objects  # Score's and CaseResult's slots are the ones it fills
    got, _ = native.score_batch(kernel, iter(cases), api._batch_case)
    assert calls == ["contains"]  # case d has no must_include: Python words that error
    assert [r.passed for r in got] == [False, False, False, False]
    assert [s.passed for s in got[1].scores] == [True, True, True, False, True]
    assert got[0].scores[2].reason == "expected 'x', got 'Refund in two days.'"
    # Results, their lists and native scores are left out of the cyclic collector's walks.
    assert not any(gc.is_tracked(o) for o in (got[0], got[0].scores, got[0].scores[0]))
    assert got[3].scores[2].reason.startswith("expected \"it's\", got 'a \\'quoted\\' \"word\"")


def test_the_worker_scores_a_chunk_natively_as_in_python() -> None:
    # The scoring worker's own job, with a check stopped by the server (`skip`) and one
    # case's checks past the deadline: the kernel answers as the Python loop does.
    def worker(on: bool) -> Any:
        progress = multiprocessing.RawArray("d", PROGRESS_SLOTS)
        return sw._Worker(progress, Settings(native_kernel=on)), progress

    checks = [pb.CheckSpec(type="contains", params=None)]
    checks[0].params.update({"needles": ["a"]})
    extra = pb.CheckSpec(type="length")
    extra.params.update({"max_chars": 3})
    source = PlanSource("", "", tuple(c.SerializeToString() for c in (*checks, extra)), (), None, 8)
    data = [
        pb.Case(
            sample=pb.Sample(id=f"s{i}"), output=pb.Output(text="abc"[: i % 4])
        ).SerializeToString()
        for i in range(6)
    ]
    answers = []
    for on in (True, False):
        w, progress = worker(on)
        for skip, deadline in (({2: {1: "TIMEOUT"}}, None), ({}, time.monotonic() - 1)):
            job = WorkerJob(
                b"k",
                source,
                Reply.RUN,
                5.0,
                deadline=deadline,
                cases=data,
                first=10,
                count=6,
                skip=skip,
                bounds_ms=(1.0,),
            )
            answers.append(w.handle(job))
            assert progress[STARTED_AT] == 0.0
    for got, want in zip(answers[:2], answers[2:], strict=True):
        assert isinstance(got, Scored) and isinstance(want, Scored)
        a = pb.RunSuiteResponse.FromString(got.message)
        b = pb.RunSuiteResponse.FromString(want.message)
        for m in (a, b):
            for r in m.results.results:
                for s in r.scores:
                    s.latency_ms = 0.0
        assert a == b
        assert got.counts.summary.finish() == want.counts.summary.finish()
        assert got.counts.tally.codes == want.counts.tally.codes
    skipped = pb.RunSuiteResponse.FromString(answers[0].message).results.results
    assert [r.index for r in skipped] == list(range(10, 16))
    assert skipped[2].scores[1].error.code == "TIMEOUT"
    late = pb.RunSuiteResponse.FromString(answers[1].message).results.results
    assert {s.error.code for r in late for s in r.scores} == {"DEADLINE_EXCEEDED"}


def test_regex_without_re2s_direct_match_answers_through_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An RE2 build without the direct `Match` call: the twin asks the pattern's `search`.
    monkeypatch.setattr(UserRegex, "re2_match", property(lambda self: None))
    plan = _plan(
        [
            {"type": "regex", "params": {"pattern": r"\bcafé\b"}},
            {"type": "regex", "params": {"pattern": "^a", "must_match": False}},
        ]
    )
    kernel = native.build(plan, CTX)
    assert kernel is not None and kernel.native_checks == 2
    texts = ["un café.", "cafés", "abc", "bca", "", "é" * 3]
    cases = [Case(Sample(f"s{i}"), Output(t), i) for i, t in enumerate(texts)]
    got, _ = native.score_batch(kernel, iter(cases), api._batch_case)
    want = [score_case_sync(plan, c, CTX) for c in cases]
    assert [_scores(r) for r in got] == [_scores(r) for r in want]
    assert [r.scores[0].passed for r in got] == [True, False, False, False, False, False]


def test_a_score_request_is_read_in_place_without_python() -> None:
    # The kernel reads a ScoreRequest's own bytes (checks, compact and budget_usd beside
    # the sample and output): no Case is asked of Python, and the ScoreResponse is the one
    # Python's path writes.
    plan = _plan(
        [
            {"type": "contains", "params": {"path": "must_include"}},
            {"type": "length", "params": {"max_chars": 12}},
        ]
    )
    kernel = native.build(plan, CTX, max_reason_chars=CAP, spread_bytes=wire.score_bytes)
    assert kernel is not None
    req = pb.ScoreRequest(output=pb.Output(text="a refund, soon"), budget_usd=2.5)
    req.sample.id = "s1"
    req.sample.expected_json = json.dumps({"must_include": ["refund", "later"]})
    req.checks.add(type="contains")
    req.compact.append("length:1..12")

    def no_case() -> Any:
        raise AssertionError("the kernel asked Python for the case")

    message, _ = kernel.score_one(req.SerializeToString(), no_case, CTX, None)
    got = pb.ScoreResponse.FromString(message)
    case = Case(Sample("s1", None, {"must_include": ["refund", "later"]}), Output("a refund, soon"))
    want = score_case_sync(plan, case, CTX)
    for s, m in zip(want.scores, got.scores, strict=True):
        s.latency_ms = m.latency_ms
    expected = pb.ScoreResponse(passed=want.passed)
    wire.add_scores(expected.scores, plan.checks, want.scores, CAP)
    assert message == expected.SerializeToString()
    assert [s.reason for s in got.scores] == [
        "found 1 of 2; missing 'later'",
        "14 characters, over max_chars 12",
    ]
