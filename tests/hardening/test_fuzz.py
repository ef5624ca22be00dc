"""Fuzzing a running server: random Score, RunSuite and ValidateSuite requests.

Hypothesis draws check types from ListChecks plus junk, parameters of right and wrong
types (deep nesting, huge numbers, NaN, infinities, NUL bytes), compact lines, samples,
outputs, gates, budgets, and suite YAML (valid documents mutated, and raw text). Every
request goes to one in-process server over a real channel. The invariants:

- a valid request (valid checks and compact lines, a valid gate and budget, at most the
  case limit, a valid suite document) is answered, never rejected: each RPC has a
  property over valid input alone, since one that also accepts rejections would pass a
  server refusing everything;
- no INTERNAL, UNKNOWN or any status besides the two rejections (and no deadline hit:
  every call has a 10 s deadline, far above what any of these requests needs);
- a rejection is INVALID_ARGUMENT or RESOURCE_EXHAUSTED with a google.rpc.BadRequest
  whose every violation names a field;
- a success has one score per check (structured first, then the non-blank compact
  lines, named after the line), scores obey the Score rules (an error never passes),
  and a RunSuite delivers every case exactly once and then one summary.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import struct_pb2
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scorewire.judge import JudgeService
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.openai_server import FakeOpenAI
from tests.hardening.support import (
    ThreadServer,
    assert_rejection,
    assert_scores,
    collect_run,
    stub,
    thread_server,
)
from tests.support.rpc import violations

FUZZ_KEY = "sk-fuzz-judge-0123456789"

DEADLINE_S = 10.0
FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadServer]:
    # One server for the module; a low case limit so RESOURCE_EXHAUSTED is reachable.
    # Its judge is the OpenAI stand-in: valid judge checks pass the preflight and run
    # (a server without a judge refuses them with FAILED_PRECONDITION, tested apart).
    fake = FakeOpenAI(api_key=FUZZ_KEY)
    with (
        fake.running(),
        thread_server(
            max_cases_per_request=40,
            make_judge=JudgeService.from_settings,
            openai_base_url=fake.url,
            openai_api_key=FUZZ_KEY,
            judge_model="openai:gpt-4o-mini",
            judge_max_retries=0,
        ) as srv,
    ):
        yield srv


@pytest.fixture(scope="module")
def client(server: ThreadServer) -> Iterator[Any]:
    with server.channel() as channel:
        yield stub(channel)


@pytest.fixture(scope="module")
def catalog(client: Any) -> dict[str, dict[str, Any]]:
    """Check type -> the JSON Schema properties of its parameters, from ListChecks."""
    resp = client.ListChecks(pb.ListChecksRequest(), timeout=DEADLINE_S)
    out: dict[str, dict[str, Any]] = {}
    for info in resp.checks:
        schema = _to_py(struct_pb2.Value(struct_value=info.params_schema))
        out[info.type] = dict(schema.get("properties") or {})
    assert "contains" in out and "regex" in out
    return out


def _to_py(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "struct_value":
        return {k: _to_py(x) for k, x in v.struct_value.fields.items()}
    if kind == "list_value":
        return [_to_py(x) for x in v.list_value.values]
    return getattr(v, kind) if kind and kind != "null_value" else None


# --- strategies ----------------------------------------------------------------------------

SPECIAL_TEXT = st.sampled_from(
    ["", " ", "\x00", "a\x00b", "é", "🦀", "\u200b", "\n", "..", "{", "[1,", "$ref", "#", "null"]
)
TEXT = st.one_of(st.text(max_size=24), SPECIAL_TEXT)
HUGE = st.sampled_from([1e308, -1e308, 1.7976931348623157e308, 2.0**53 + 1, 1e-320, -0.0, 1e15])
NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**40), 2**40).map(float),
    HUGE,
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def deep(draw: st.DrawFn) -> Any:
    """A value nested 5..25 levels deep: within protobuf's limit of 100 message levels."""
    value: Any = draw(SCALARS)
    for _ in range(draw(st.integers(5, 25))):
        value = [value] if draw(st.booleans()) else {draw(TEXT): value}
    return value


JSON_OR_DEEP = st.one_of(JSON, JSON, JSON, deep())


def _plausible(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value of the type a parameter's schema asks for (or close to it)."""
    kinds = {prop.get("type")} | {
        alt.get("type") for alt in prop.get("anyOf", []) if isinstance(alt, dict)
    }
    options: list[st.SearchStrategy[Any]] = []
    if "string" in kinds:
        options.append(TEXT)
    if "integer" in kinds:
        options.append(st.integers(-5, 10_000).map(float) | HUGE)
    if "number" in kinds:
        options.append(NUMBERS)
    if "boolean" in kinds:
        options.append(st.booleans())
    if "array" in kinds:
        options.append(st.lists(TEXT, max_size=4))
    if "object" in kinds:
        options.append(st.dictionaries(TEXT, JSON, max_size=4))
    if "enum" in prop:
        options.append(st.sampled_from(prop["enum"]))
    return st.one_of(*options) if options else JSON


@st.composite
def params_for(draw: st.DrawFn, props: dict[str, Any]) -> dict[str, Any]:
    """Parameters: mostly the type's own names with plausible or junk values, some junk keys."""
    out: dict[str, Any] = {}
    names = sorted(props)
    if names:
        for name in draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True)):
            plausible = draw(st.integers(0, 3)) > 0
            out[name] = draw(_plausible(props[name]) if plausible else JSON_OR_DEEP)
    for key in draw(st.lists(TEXT, max_size=2 if draw(st.integers(0, 4)) == 0 else 0)):
        out[key] = draw(JSON)
    return out


def _struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def _value(v: Any) -> struct_pb2.Value:
    return _struct({"v": v}).fields["v"]


# Valid parameters per type: most drawn specs start from one of these, so that requests
# get past validation and run, and a mutation then probes the edge of what is accepted.
VALID: list[tuple[str, dict[str, Any]]] = [
    ("contains", {"needles": ["Paris", "a"]}),
    ("contains", {"expected": "Paris", "case_sensitive": False, "require_all": False}),
    ("contains", {"path": "answer"}),
    ("exact", {}),
    ("exact", {"expected": "OK", "strip": True}),
    ("regex", {"pattern": "^(a+)+$"}),
    ("regex", {"pattern": "[0-9]{1,3}", "flags": 2.0, "must_match": False}),
    ("length", {"max_chars": 50.0, "min_chars": 1.0}),
    ("length", {"max_words": 3.0}),
    ("numeric_tolerance", {"expected": 5.0, "abs_tol": 0.5}),
    ("numeric_tolerance", {"path": "score", "output_path": "score", "rel_tol": 0.1}),
    ("json_schema", {"schema": {"type": "object", "required": ["score"]}}),
    (
        "json_schema",
        {"schema": {"$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}}},
    ),
    ("json_schema", {"schema": {"type": "string", "pattern": "(a|b)*c", "maxLength": 5}}),
    ("json_schema_v1", {"schema": {"type": "object", "properties": {"score": {"type": "number"}}}}),
    ("safe_regex", {"pattern": "^OK: [0-9]{1,3}$"}),
    ("output_length", {"minimum": 1.0, "maximum": 20.0}),
    ("number_range", {"path": "/score", "minimum": 0.0, "maximum": 10.0}),
    ("json_valid", {}),
    ("contains_text", {"value": "Paris"}),
    ("exact_text", {"value": "OK"}),
    ("safety.no_pii", {}),
    ("safety.no_pii", {"kinds": ["email", "card"]}),
    ("safety.forbidden", {"phrases": ["password", "ssn"]}),
    ("safety.refusal", {"expected": False}),
    ("safety.refusal", {}),
    ("trajectory.finished", {}),
    ("trajectory.max_steps", {"n": 3.0}),
    ("trajectory.no_repeated_calls", {"max_repeats": 1.0}),
    ("trajectory.tool_called", {"name": "search", "min_times": 1.0, "args": {"q": "x"}}),
    ("trajectory.tool_order", {"before": "search", "after": "answer"}),
    ("is_json", {}),
    ("is_valid_python", {}),
    ("starts_with", {"value": "OK"}),
    ("ends_with", {"value": "."}),
    ("not_contains", {"value": "sorry"}),
    ("word_count", {"value": 10.0}),
    ("max_tokens", {"value": 20.0}),
    ("min_tokens", {"value": 1.0, "encoding": "o200k_base"}),
    ("bleu", {"value": "the capital is Paris"}),
    ("rouge_l", {}),
    ("language", {"value": "en"}),
    ("similarity", {"value": "Paris"}),
    ("human", {}),
    ("judge", {"rubric": "Is it helpful?"}),
    ("rag.faithfulness", {}),
]
# In suite YAML a check's parameters sit beside its modifiers (`type`, `name`, `when`,
# ...); a type's own parameter of a modifier's name wins (tool_called's `name`).
VALID_IN_YAML = VALID


@st.composite
def mutate_params(draw: st.DrawFn, params: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
    """`params` with one key dropped, retyped, set to junk, or one junk key added."""
    out = dict(params)
    op = draw(st.integers(0, 3))
    if op == 0 and out:
        del out[draw(st.sampled_from(sorted(out)))]
    elif op == 1 and (out or props):
        key = draw(st.sampled_from(sorted(set(out) | set(props))))
        out[key] = draw(JSON_OR_DEEP)
    elif op == 2 and props:
        key = draw(st.sampled_from(sorted(props)))
        out[key] = draw(_plausible(props[key]))
    else:
        out[draw(TEXT)] = draw(JSON)
    return out


@st.composite
def check_spec(
    draw: st.DrawFn, catalog: dict[str, dict[str, Any]], depth: int = 0, clean: bool = False
) -> pb.CheckSpec:
    """A CheckSpec: usually a valid one (sometimes mutated), else a listed type with
    schema-shaped params, else junk; sometimes with `when`, examples or an extractor.
    `clean` draws only valid specs without modifiers, so that whole requests run."""
    mode = draw(st.integers(0, 4)) if clean else draw(st.integers(0, 9))
    if clean:
        ctype, params = draw(st.sampled_from(VALID))
        spec = pb.CheckSpec(type=ctype)
        spec.params.CopyFrom(_struct(params))
        return spec
    if mode < 7:
        ctype, params = draw(st.sampled_from(VALID))
        if mode >= 5:
            params = draw(mutate_params(params, catalog.get(ctype, {})))
    else:
        ctype = draw(st.sampled_from(sorted(catalog))) if mode < 9 else draw(TEXT)
        params = draw(params_for(catalog.get(ctype, {})))
    spec = pb.CheckSpec(type=ctype, name=draw(st.one_of(st.just(""), st.just(""), TEXT)))
    spec.params.CopyFrom(_struct(params))
    if depth < 3 and draw(st.integers(0, 6)) == 0:
        spec.when.CopyFrom(draw(check_spec(catalog, depth + 1)))
    if draw(st.integers(0, 9)) == 0:
        for _ in range(draw(st.integers(1, 2))):
            spec.examples.add(text=draw(TEXT), kind=draw(st.sampled_from([0, 1, 2, 7])))
    if draw(st.integers(0, 14)) == 0:
        spec.extractor = draw(TEXT)
    return spec


COMPACT_HEADS = ["contains:", "exact:", "regex:", "length:", "number:", "json_valid", "nope:", ""]
COMPACT_ARGS = st.one_of(
    TEXT,
    st.sampled_from(["1..5", "..3", "0..", "5..1", "-1..x", "/a:0..1", "@:0..10", "/a~1b:1..2"]),
    st.sampled_from(["(a+)+$", "a{1,33}", "[", "^OK$", "(?=x)", "\\p{L}", "a|" * 20 + "b"]),
)
VALID_COMPACT = st.sampled_from(
    [
        "contains:Paris",
        "exact:OK",
        "json_valid",
        "length:1..500",
        "length:..3",
        "number:/score:0..10",
        "number:@:0..1",
        "regex:^OK: [0-9]{1,3}$",
        "regex:(a|b)c",
    ]
)
CLEAN_COMPACT = st.lists(VALID_COMPACT, max_size=3, unique=True)
COMPACT_LINE = st.one_of(
    VALID_COMPACT,
    VALID_COMPACT,
    VALID_COMPACT,
    st.builds(lambda h, a: h + a, st.sampled_from(COMPACT_HEADS), COMPACT_ARGS),
    TEXT,
)


OUTPUT_TEXT = st.sampled_from(
    [
        "The capital is Paris.",
        "OK: 200",
        '{"score": 7, "answer": "Paris"}',
        "[1, 2, 3]",
        "I'm sorry, I cannot help with that.",
        "mail me at a@b.example or call 555-123-4567",
        "def f():\n    return 1\n",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
        "{" * 60,
        "",
    ]
)
TRAJECTORY = st.just(
    {"steps": [{"tool": "search", "args": {"q": "x"}}, {"tool": "answer"}], "answer": "Paris"}
)


@st.composite
def sample_output(draw: st.DrawFn) -> tuple[pb.Sample, pb.Output]:
    sample = pb.Sample(id=draw(TEXT))
    if draw(st.booleans()):
        sample.input.CopyFrom(_value(draw(JSON_OR_DEEP)))
    if draw(st.booleans()):
        sample.expected.CopyFrom(_value(draw(st.one_of(OUTPUT_TEXT, JSON_OR_DEEP))))
    if draw(st.booleans()):
        sample.metadata.CopyFrom(_struct(draw(st.dictionaries(TEXT, JSON, max_size=3))))
    output = pb.Output(text=draw(st.one_of(OUTPUT_TEXT, TEXT, st.text(max_size=400))))
    if draw(st.booleans()):
        output.value.CopyFrom(_value(draw(st.one_of(TRAJECTORY, JSON_OR_DEEP))))
    if draw(st.integers(0, 3)) == 0:
        output.metadata.CopyFrom(_struct(draw(st.dictionaries(TEXT, JSON, max_size=3))))
    return sample, output


OPTIONAL_MONEY = st.one_of(st.none(), NUMBERS, st.floats(0, 5))
VALID_MONEY = st.one_of(st.none(), st.floats(0, 5))


def _n_checks(checks: list[pb.CheckSpec], compact: list[str]) -> int:
    return len(checks) + sum(1 for line in compact if line.strip())


# --- Score -----------------------------------------------------------------------------------


def accepted(call: Callable[[], Any]) -> Any:
    """The answer to a valid request; a rejection of one fails, naming what was refused."""
    try:
        return call()
    except grpc.RpcError as err:
        pytest.fail(
            f"a valid request was refused: {err.code().name}: {err.details()} {violations(err)}"
        )


def _check_scored(resp: pb.ScoreResponse, checks: list[pb.CheckSpec], compact: list[str]) -> None:
    assert_scores(resp.scores, _n_checks(checks, compact), resp.passed)
    named = [s.name for s in resp.scores[len(checks) :]]
    assert named == [line.strip() for line in compact if line.strip()]


@FUZZ
@given(data=st.data())
def test_score_accepts_every_valid_request(client: Any, catalog: dict, data: Any) -> None:
    # Valid checks and compact lines (at least one), any sample, a valid budget: scored.
    compact = data.draw(CLEAN_COMPACT)
    checks = data.draw(
        st.lists(check_spec(catalog, clean=True), min_size=0 if compact else 1, max_size=4)
    )
    sample, output = data.draw(sample_output())
    req = pb.ScoreRequest(sample=sample, output=output, checks=checks, compact=compact)
    budget = data.draw(VALID_MONEY)
    if budget is not None:
        req.budget_usd = budget
    resp = accepted(lambda: client.Score(req, timeout=DEADLINE_S))
    _check_scored(resp, checks, compact)


@FUZZ
@given(data=st.data())
def test_score_answers_or_rejects_with_a_field(client: Any, catalog: dict, data: Any) -> None:
    # Any ScoreRequest: scores obeying the rules, or a rejection naming a field.
    clean = data.draw(st.booleans())
    checks = data.draw(st.lists(check_spec(catalog, clean=clean), max_size=4))
    compact = data.draw(CLEAN_COMPACT if clean else st.lists(COMPACT_LINE, max_size=4))
    sample, output = data.draw(sample_output())
    req = pb.ScoreRequest(sample=sample, output=output, checks=checks, compact=compact)
    budget = data.draw(OPTIONAL_MONEY)
    if budget is not None:
        req.budget_usd = budget
    try:
        resp = client.Score(req, timeout=DEADLINE_S)
    except grpc.RpcError as err:
        event(f"rejected {err.code().name}")
        assert_rejection(err)
        return
    event("scored")
    _check_scored(resp, checks, compact)
    if budget is not None:
        assert budget >= 0, "a negative or NaN budget must be rejected"


# --- RunSuite ------------------------------------------------------------------------------


@st.composite
def gate(draw: st.DrawFn, clean: bool = False) -> pb.Gate | None:
    """A gate (or none); `clean` ones hold rates in 0..1 and a cost ≥ 0."""
    if draw(st.booleans()):
        return None
    g = pb.Gate()
    for name in ("min_pass_rate", "min_mean_score", "max_error_rate", "max_cost_usd"):
        value = draw(st.one_of(st.none(), st.floats(0, 1)) if clean else OPTIONAL_MONEY)
        if value is not None:
            setattr(g, name, value)
    return g


def _cases(draw: st.DrawFn, n_max: int) -> list[pb.Case]:
    out = []
    for _ in range(draw(st.integers(0, n_max))):
        sample, output = draw(sample_output())
        out.append(pb.Case(sample=sample, output=output))
    return out


def _check_run(events: Iterator[pb.RunSuiteResponse], n_cases: int) -> None:
    results, summary = collect_run(events)
    # With no cases in the request, a suite's inline dataset supplies them.
    n_cases = n_cases or summary.cases
    assert sorted(results) == list(range(n_cases))
    assert summary.cases == n_cases
    n_checks = len(summary.checks)
    for r in results.values():
        assert_scores(r.scores, n_checks, r.passed)
    # every score is exactly one of passed, failed, errored or skipped (when: not met)
    total = summary.passed + summary.failed + summary.errored + summary.skipped
    assert total == n_cases * n_checks
    assert summary.skipped == sum(c.skipped for c in summary.checks)
    assert not (summary.errored and summary.error_rate == 0)


def _run_request(data: Any, catalog: dict, *, clean: bool, n_cases: int) -> pb.RunSuiteRequest:
    """A RunSuiteRequest of structured and compact checks over up to `n_cases` cases."""
    compact = data.draw(CLEAN_COMPACT if clean else st.lists(COMPACT_LINE, max_size=3))
    checks = data.draw(
        st.lists(check_spec(catalog, clean=clean), min_size=int(clean and not compact), max_size=3)
    )
    req = pb.RunSuiteRequest(checks=checks, compact=compact, cases=_cases(data.draw, n_cases))
    g = data.draw(gate(clean))
    if g is not None:
        req.gate.CopyFrom(g)
    budget = data.draw(VALID_MONEY if clean else OPTIONAL_MONEY)
    if budget is not None:
        req.budget_usd = budget
    return req


@FUZZ
@given(data=st.data())
def test_run_suite_runs_every_valid_request(client: Any, catalog: dict, data: Any) -> None:
    # Valid checks over up to 40 cases (the limit), a valid gate and budget: all run.
    req = _run_request(data, catalog, clean=True, n_cases=40)
    accepted(lambda: _check_run(client.RunSuite(req, timeout=DEADLINE_S), len(req.cases)))


@FUZZ
@given(data=st.data())
def test_run_suite_with_checks_delivers_each_case_once(
    client: Any, catalog: dict, data: Any
) -> None:
    # Structured and compact checks over up to 45 cases (the limit is 40).
    req = _run_request(data, catalog, clean=data.draw(st.booleans()), n_cases=45)
    try:
        _check_run(client.RunSuite(req, timeout=DEADLINE_S), len(req.cases))
        event("ran")
    except grpc.RpcError as err:
        event(f"rejected {err.code().name}")
        assert_rejection(err)
        if len(req.cases) > 40:
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def _outcome(call: Callable[[], Iterator[Any]]) -> tuple[Any, ...]:
    """What a RunSuite-shaped call answered, comparable across the two RPCs: its status
    code and field paths when refused, else every case's checks and verdicts."""
    try:
        results, summary = collect_run(call())
    except grpc.RpcError as err:
        return ("refused", err.code(), tuple(f for f, _ in assert_rejection(err)))
    timed = {"TIMEOUT", "DEADLINE_EXCEEDED"}  # a busy machine may time one run's check out
    per_case = {
        i: (
            r.passed if not any(s.error.code in timed for s in r.scores) else None,
            tuple((s.name, s.type, s.error.code not in timed and s.error.code) for s in r.scores),
        )
        for i, r in results.items()
    }
    return ("ran", summary.cases, per_case)


@settings(FUZZ, max_examples=60)
@given(data=st.data())
def test_run_suite_stream_answers_as_run_suite_whatever_the_chunks(
    client: Any, catalog: dict, data: Any
) -> None:
    # The same request as one RunSuite and as a RunSuiteStream cut at random points.
    req = _run_request(data, catalog, clean=data.draw(st.booleans()), n_cases=45)
    cases = list(req.cases)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(cases)), max_size=4)))
    first = pb.RunSuiteRequest()
    first.CopyFrom(req)
    del first.cases[:]
    first.cases.extend(cases[: cuts[0] if cuts else len(cases)])
    config = pb.RunSuiteStreamConfig(request=first, case_count=len(cases))
    messages = [pb.RunSuiteStreamRequest(config=config)]
    for a, b in zip(cuts, [*cuts[1:], len(cases)][: len(cuts)], strict=True):
        messages.append(pb.RunSuiteStreamRequest(cases=pb.CaseChunk(cases=cases[a:b])))
    unary = _outcome(lambda: client.RunSuite(req, timeout=DEADLINE_S))
    streamed = _outcome(lambda: client.RunSuiteStream(iter(messages), timeout=DEADLINE_S))
    event(f"{unary[0]} {unary[1]}")
    if unary[0] == "refused" and streamed[0] == "refused":
        assert streamed[1] == unary[1], (unary, streamed)
        # the fields are RunSuite's, but a count over the limit is the declared count
        if unary[2] != ("cases",):
            assert streamed[2] == unary[2], (unary, streamed)
    else:
        assert streamed == unary


# --- suite YAML ---------------------------------------------------------------------------

YAML_NAMES = st.one_of(st.sampled_from(["a", "b", "short", "smoke", "checks"]), TEXT)


@st.composite
def suite_document(
    draw: st.DrawFn, catalog: dict[str, dict[str, Any]], clean: bool
) -> dict[str, Any]:
    """A suite document: `clean` ones are valid; others are mostly in the right shape."""
    checks: dict[str, Any] = {}
    for name in draw(st.lists(YAML_NAMES, min_size=1, max_size=3, unique=True)):
        if clean:
            ctype, params = draw(st.sampled_from(VALID_IN_YAML))
        else:
            ctype = draw(st.one_of(st.sampled_from(sorted(catalog)), TEXT))
            params = draw(params_for(catalog.get(ctype, {})))
        checks[name] = {"type": ctype, **params}
        if draw(st.integers(0, 5)) == 0:
            checks[name]["when"] = {"type": "contains", "needles": [draw(TEXT) or "a"]}
    doc: dict[str, Any] = {"checks": checks}
    if draw(st.booleans()):
        names = st.sampled_from(sorted(checks))
        doc["suites"] = {
            draw(YAML_NAMES): {
                # a clean suite names at least one check (one with none is refused)
                "checks": draw(
                    st.lists(names if clean else names | TEXT, min_size=clean, max_size=3)
                ),
                "compact": draw(CLEAN_COMPACT if clean else st.lists(COMPACT_LINE, max_size=2)),
                "gate": {"min_pass_rate": draw(st.floats(0, 1) if clean else JSON)},
            }
        }
    if draw(st.booleans()):
        doc["settings"] = {
            "budget": draw(st.floats(0, 5) if clean else OPTIONAL_MONEY | JSON),
            "concurrency": draw(st.integers(1, 64) if clean else st.integers(-2, 2000) | JSON),
        }
    if not clean and draw(st.integers(0, 4)) == 0:
        doc[draw(TEXT)] = draw(JSON)
    return doc


def _dump(doc: dict[str, Any]) -> str:
    try:
        return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    except yaml.YAMLError:
        return str(doc)


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """`text` with a few characters inserted, deleted or replaced."""
    chars = list(text)
    alphabet = st.sampled_from(list(":-[]{}&*!|>#'\"\n \t%@`,?") + list(string.ascii_letters))
    for _ in range(draw(st.integers(1, 4))):
        if not chars:
            break
        i = draw(st.integers(0, len(chars) - 1))
        op = draw(st.integers(0, 2))
        if op == 0:
            chars.insert(i, draw(alphabet))
        elif op == 1:
            del chars[i]
        else:
            chars[i] = draw(alphabet)
    return "".join(chars)


YAML_SNIPPETS = st.sampled_from(
    [
        "a: &a [x, x]\nb: [*a, *a]\nchecks: {c: {type: contains, needles: *a}}\n",
        "checks: {c: &c {type: contains, needles: [a], when: *c}}\n",
        "checks: {c: {type: length, max_chars: 2001-13-45}}\n",
        "checks: {c: {type: length, max_chars: 59:59:59:59:59:59:59:59:59:59:59}}\n",
        "checks: !!python/object/apply:os.system [true]\n",
        "imports: [os]\nchecks: {c: {type: contains, needles: [a]}}\n",
        "datasets: {d: {path: /etc/passwd}}\nchecks: {c: {type: contains, needles: [a]}}\n",
        "checks: {c: {type: contains, needles: " + "[" * 120 + "]" * 120 + "}}\n",
        "--- a\n--- b\n",
        "\ufeffchecks: {}\n",
    ]
)


@st.composite
def suite_yaml(draw: st.DrawFn, catalog: dict[str, dict[str, Any]]) -> tuple[str, bool]:
    """Suite text, and whether it is a clean (valid) document."""
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.text(max_size=200)), False
    if kind == 1:
        return draw(YAML_SNIPPETS), False
    text = _dump(draw(suite_document(catalog, clean=kind != 3)))
    return (draw(mutated(text)), False) if kind == 2 else (text, kind != 3)


@FUZZ
@given(data=st.data())
def test_run_suite_runs_every_valid_suite(client: Any, catalog: dict, data: Any) -> None:
    # A valid suite document (checks, suites, settings) and valid compact lines: it runs.
    req = pb.RunSuiteRequest(
        suite_yaml=_dump(data.draw(suite_document(catalog, clean=True))),
        compact=data.draw(CLEAN_COMPACT),
        cases=_cases(data.draw, 5),
    )
    accepted(lambda: _check_run(client.RunSuite(req, timeout=DEADLINE_S), len(req.cases)))


@FUZZ
@given(data=st.data())
def test_run_suite_yaml_delivers_or_rejects(client: Any, catalog: dict, data: Any) -> None:
    # Suite YAML: valid-ish documents, mutated documents, hostile snippets, raw text.
    text, clean = data.draw(suite_yaml(catalog))
    cases = _cases(data.draw, 5)
    req = pb.RunSuiteRequest(
        suite_yaml=text,
        suite_name="" if clean else data.draw(st.one_of(st.just(""), YAML_NAMES)),
        compact=data.draw(CLEAN_COMPACT if clean else st.lists(COMPACT_LINE, max_size=2)),
        cases=cases,
    )
    try:
        _check_run(client.RunSuite(req, timeout=DEADLINE_S), len(cases))
        event("ran")
    except grpc.RpcError as err:
        event(f"rejected {err.code().name}")
        assert_rejection(err)


@settings(FUZZ, max_examples=120)
@given(data=st.data())
def test_validate_suite_finds_no_problem_in_a_valid_suite(
    client: Any, catalog: dict, data: Any
) -> None:
    # A valid suite document and valid compact lines: valid, no problems, its checks listed.
    req = pb.ValidateSuiteRequest(
        suite_yaml=_dump(data.draw(suite_document(catalog, clean=True))),
        compact=data.draw(CLEAN_COMPACT),
    )
    resp = accepted(lambda: client.ValidateSuite(req, timeout=DEADLINE_S))
    assert resp.valid and not resp.problems and resp.checks, resp


@settings(FUZZ, max_examples=120)
@given(data=st.data())
def test_validate_suite_answers_problems_not_errors(client: Any, catalog: dict, data: Any) -> None:
    # ValidateSuite lists a bad suite's problems (each with a field) instead of failing.
    text, clean = data.draw(suite_yaml(catalog))
    req = pb.ValidateSuiteRequest(
        suite_yaml=text,
        checks=[] if clean else data.draw(st.lists(check_spec(catalog), max_size=2)),
        compact=data.draw(CLEAN_COMPACT if clean else st.lists(COMPACT_LINE, max_size=2)),
    )
    try:
        resp = client.ValidateSuite(req, timeout=DEADLINE_S)
    except grpc.RpcError as err:
        assert_rejection(err, grpc.StatusCode.RESOURCE_EXHAUSTED)
        return
    event("valid" if resp.valid else "problems")
    if not resp.valid:
        assert resp.problems and all(p.field for p in resp.problems), resp
    else:
        assert not resp.problems and resp.checks


def test_a_tool_called_check_can_be_written_in_suite_yaml(client: Any) -> None:
    # trajectory.tool_called's parameter `name` is its parameter, not the modifier `name`
    text = "checks:\n  searched: {type: trajectory.tool_called, name: search}\n"
    resp = client.ValidateSuite(pb.ValidateSuiteRequest(suite_yaml=text), timeout=DEADLINE_S)
    assert resp.valid, resp.problems
    assert list(resp.checks) == ["searched"]


def test_nan_never_reaches_a_passing_budget(client: Any) -> None:
    # The fuzz relies on NaN budgets being rejected; pin it so the oracle stays honest.
    req = pb.ScoreRequest(output=pb.Output(text="x"), compact=["contains:x"], budget_usd=math.nan)
    with pytest.raises(grpc.RpcError) as info:
        client.Score(req, timeout=DEADLINE_S)
    assert assert_rejection(info.value) == [("budget_usd", "must be a finite number ≥ 0")]
