"""Every JSON Schema draft the json_schema check accepts, with every format, through the server.

The check takes drafts 3, 4, 6, 7, 2019-09 and 2020-12 (from `$schema`). For each draft,
every format name any of them defines, as jsonschema declares its format checkers
(draft 3's `ip-address`, `host-name` and `color` included, whether or not the library a
checker needs is installed), plus a name no draft defines, is put in a schema with
`required` in that draft's form and scored through one real server: Score, and RunSuite
(scoring workers, and the native kernel where it takes the schema), over outputs that
conform, that do not, and that are not JSON. `format` is an annotation (module
docstring of `scorewire.schema.full`), so any value passes a format; a missing required
property or a wrong type fails; nothing is INTERNAL, refused or an error score. A
Hypothesis variant draws the draft, the format, where it sits in the schema and the
instances, and holds the verdicts to jsonschema's own validator for that draft; another
draws documents of any keywords of any shape, which must be scored or refused at a field
under `checks[0].params.schema`.
"""

from __future__ import annotations

import ast
import inspect
import json
from collections.abc import Iterator
from typing import Any

import grpc
import jsonschema._format
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.protocols import Validator
from jsonschema.validators import (
    Draft3Validator,
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
)
from scorewire.v1 import scoring_pb2 as pb

from tests.checks.test_deterministic import JSON_SCHEMA, JSON_SCHEMA_LOAD_ERRORS
from tests.hardening.support import collect_run, stub, thread_server
from tests.support.rpc import bad_request

DEADLINE_S = 60.0
DRAFTS: dict[str, tuple[str, type[Validator], str]] = {
    # draft: ($schema, jsonschema's validator, its keyword in `_checks_drafts`)
    "3": ("http://json-schema.org/draft-03/schema#", Draft3Validator, "draft3"),
    "4": ("http://json-schema.org/draft-04/schema#", Draft4Validator, "draft4"),
    "6": ("http://json-schema.org/draft-06/schema#", Draft6Validator, "draft6"),
    "7": ("http://json-schema.org/draft-07/schema#", Draft7Validator, "draft7"),
    "2019-09": (
        "https://json-schema.org/draft/2019-09/schema",
        Draft201909Validator,
        "draft201909",
    ),
    "2020-12": (
        "https://json-schema.org/draft/2020-12/schema",
        Draft202012Validator,
        "draft202012",
    ),
}


def _declared_formats() -> dict[str, set[str]]:
    """Format names per draft where jsonschema declares them (`@_checks_drafts(...)`).

    A draft's `FORMAT_CHECKER` holds only the formats whose checker library is installed
    (draft 3's `host-name` needs fqdn, `color` webcolors); the declarations name them all.
    """
    tree = ast.parse(inspect.getsource(jsonschema._format))
    found: dict[str, set[str]] = {draft: set() for draft in DRAFTS}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_checks_drafts"):
            continue
        names = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
        for draft, (_, _, keyword) in DRAFTS.items():
            name = names.get(keyword) or names.get("name")
            if isinstance(name, str):
                found[draft].add(name)
    return found


DECLARED = _declared_formats()
FORMATS = sorted(set().union(*DECLARED.values()) | {"no-such-format"})
"""Every format any accepted draft defines, and one none does: each goes to every draft."""


def test_the_formats_are_every_one_jsonschema_checks() -> None:
    # the declarations were read: they hold every format checker installed for each draft,
    # and draft 3's own names, which later drafts renamed
    for draft, (_, validator, _) in DRAFTS.items():
        assert set(validator.FORMAT_CHECKER.checkers) <= DECLARED[draft], draft
    assert {"ip-address", "host-name", "color", "time"} <= DECLARED["3"]
    assert {"ipv4", "hostname", "date-time", "uri"} <= DECLARED["4"]
    assert {"duration", "uuid"} <= DECLARED["2020-12"]


def schema_with(draft: str, fmt: str) -> dict[str, Any]:
    """An object whose `v` is a string of format `fmt` and required (in the draft's form),
    and whose `w`, of any type, has the format too."""
    uri = DRAFTS[draft][0]
    v: dict[str, Any] = {"type": "string", "format": fmt}
    schema: dict[str, Any] = {
        "$schema": uri,
        "type": "object",
        "properties": {"v": v, "w": {"format": fmt}},
    }
    if draft == "3":
        v["required"] = True  # draft 3: a boolean inside the property
    else:
        schema["required"] = ["v"]
    return schema


STRINGS = [
    "", "x", "not a format at all", "127.0.0.1", "999.1.1.1", "::1", "example.com",
    "-bad-.host", "a@example.com", "2020-01-01", "2020-13-45", "12:00:00", "25:99",
    "2020-01-01T12:00:00Z", "http://example.com/a?b#c", "#/a", "/a/b", "0/a", "(",
    "[a-z]+", "red", "#ff0000", "P1D", "PT", "123e4567-e89b-12d3-a456-426614174000",
    "xn--nxasmq6b.com", "ñ", "🦀", "\u0000", "{x}",
]  # fmt: skip
OUTPUTS: list[tuple[str, str, bool]] = [
    # (rule, output, passes)
    *((f"format is an annotation: v={s!r}", json.dumps({"v": s}), True) for s in STRINGS),
    *(
        (f"format is an annotation on other types: w={w!r}", json.dumps({"v": "x", "w": w}), True)
        for w in [5, 1.5, -0.0, True, None, [], {"a": [1]}, "x"]
    ),
    ("required in the draft's form: v missing fails", json.dumps({"w": "2020-01-01"}), False),
    ("required in the draft's form: an empty object fails", "{}", False),
    ("type still applies: a number is no string", json.dumps({"v": 5}), False),
    ("type still applies: null is no string", json.dumps({"v": None}), False),
    ("the root is an object", json.dumps(["x"]), False),
    ("text that is not JSON fails", "v: 127.0.0.1", False),
]  # fmt: skip


def _check(schema: dict[str, Any], name: str) -> pb.CheckSpec:
    spec = pb.CheckSpec(type="json_schema", name=name)
    spec.params.update({"schema": schema})
    return spec


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    # Two scoring workers: Score's first requests and every RunSuite go through them.
    with thread_server(scoring_workers=2) as srv, srv.channel() as channel:
        yield stub(channel)


def _rpc_problem(err: grpc.RpcError) -> str:
    return f"{err.code().name}: {err.details()}"  # type: ignore[attr-defined]


def _score_problems(scores: Any, passes: bool, where: str) -> list[str]:
    """What is wrong with the scores of an output that `passes` (or not) every check."""
    problems = []
    for s in scores:
        if s.HasField("error"):
            problems.append(f"{where} {s.name}: error {s.error.code} {s.error.message}")
        elif s.passed is not passes:
            problems.append(f"{where} {s.name}: passed={s.passed}, {s.reason}")
    return problems


@pytest.mark.parametrize("draft", list(DRAFTS))
def test_every_format_of_every_draft_scores_through_score(client: Any, draft: str) -> None:
    # one Score per output, a json_schema check per format: never INTERNAL, never an error
    checks = [_check(schema_with(draft, fmt), fmt) for fmt in FORMATS]
    problems: list[str] = []
    for rule, text, passes in OUTPUTS:
        request = pb.ScoreRequest(checks=checks, output=pb.Output(text=text))
        try:
            response = client.Score(request, timeout=DEADLINE_S)
        except grpc.RpcError as err:
            problems.append(f"{rule}: {_rpc_problem(err)}")
            continue
        assert len(response.scores) == len(FORMATS)
        problems += _score_problems(response.scores, passes, rule)
    assert problems == []


@pytest.mark.parametrize("draft", list(DRAFTS))
def test_every_format_of_every_draft_scores_through_run_suite(client: Any, draft: str) -> None:
    # the same through RunSuite: plans compiled and run in the workers (natively for 2020-12)
    checks = [_check(schema_with(draft, fmt), fmt) for fmt in FORMATS]
    cases = [pb.Case(output=pb.Output(text=text)) for _, text, _ in OUTPUTS]
    try:
        results, summary = collect_run(
            client.RunSuite(pb.RunSuiteRequest(checks=checks, cases=cases), timeout=DEADLINE_S)
        )
    except grpc.RpcError as err:
        pytest.fail(_rpc_problem(err))
    assert sorted(results) == list(range(len(OUTPUTS)))
    problems: list[str] = []
    for i, (rule, _, passes) in enumerate(OUTPUTS):
        problems += _score_problems(results[i].scores, passes, rule)
    assert problems == []
    assert summary.errored == 0


def test_the_draft_3_schema_that_was_internal(client: Any) -> None:
    # the outside check's own schema: draft 3's `required: true` holds, and says why
    schema = {
        "$schema": "http://json-schema.org/draft-03/schema#",
        "properties": {"a": {"required": True}},
    }
    check = _check(schema, "draft3")
    ok = client.Score(pb.ScoreRequest(checks=[check], output=pb.Output(text='{"a": 1}')))
    assert ok.passed and not ok.scores[0].HasField("error")
    missing = client.Score(pb.ScoreRequest(checks=[check], output=pb.Output(text="{}")))
    (score,) = missing.scores
    assert not score.passed and not score.HasField("error")
    assert "'a' is a required property" in score.reason


def test_the_check_tables_answer_alike_through_the_server(client: Any) -> None:
    # the json_schema rows of the check family's tables (schemas jsonschema or its
    # reference resolver tripped on among them), scored by Score and RunSuite, or refused
    problems: list[str] = []
    for schema, text, value, passes, fragment in JSON_SCHEMA:
        output = pb.Output(text=text)
        if value is not None:
            output.value_json = json.dumps(value)
        check = _check(schema, "table")
        try:
            scored = client.Score(pb.ScoreRequest(checks=[check], output=output)).scores
            run = pb.RunSuiteRequest(checks=[check], cases=[pb.Case(output=output)])
            results, _ = collect_run(client.RunSuite(run, timeout=DEADLINE_S))
        except grpc.RpcError as err:
            problems.append(f"{schema}: {_rpc_problem(err)}")
            continue
        for where, scores in (("Score", scored), ("RunSuite", results[0].scores)):
            problems += _score_problems(scores, passes, f"{where} {schema}")
            if fragment not in scores[0].reason:
                problems.append(f"{where} {schema}: {scores[0].reason!r} lacks {fragment!r}")
    for schema, field, fragment in JSON_SCHEMA_LOAD_ERRORS:
        request = pb.ScoreRequest(checks=[_check(schema, "table")], output=pb.Output(text="1"))
        with pytest.raises(grpc.RpcError) as err:
            client.Score(request, timeout=DEADLINE_S)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, _rpc_problem(err.value)
        assert fragment in bad_request(err.value).get(field, ""), bad_request(err.value)
    assert problems == []


# --- drawn schemas and instances, held to jsonschema's own verdict ----------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(STRINGS),
    st.text(max_size=8),
)
INSTANCES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["v", "w", "x"]), inner, max_size=3),
    ),
    max_leaves=8,
)
TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]


@st.composite
def drawn_schemas(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A draft and a schema of it with a format somewhere: at the root, in a (required)
    property, in items, in additionalProperties, under all-of or not (draft 3's spellings
    for those two: extends, disallow)."""
    draft = draw(st.sampled_from(list(DRAFTS)))
    leaf: dict[str, Any] = {"format": draw(st.sampled_from(FORMATS))}
    if draw(st.booleans()):
        leaf["type"] = draw(st.sampled_from(TYPES))
    where = draw(st.sampled_from(["root", "property", "items", "additional", "all", "not"]))
    old = draft == "3"
    schema: dict[str, Any]
    if where == "root":
        schema = leaf
    elif where == "property":
        schema = {"properties": {"v": leaf}}
        if draw(st.booleans()):
            if old:
                leaf["required"] = True
            else:
                schema["required"] = ["v"]
    elif where == "items":
        schema = {"items": leaf}
    elif where == "additional":
        schema = {"properties": {"x": {}}, "additionalProperties": leaf}
    elif where == "all":
        schema = {"extends": leaf} if old else {"allOf": [leaf]}
    else:
        schema = {"disallow": [leaf]} if old else {"not": leaf}
    return draft, {"$schema": DRAFTS[draft][0], **schema}


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(drawn=drawn_schemas(), instances=st.lists(INSTANCES, min_size=1, max_size=4))
def test_drawn_schemas_score_as_jsonschema_validates(
    client: Any, drawn: tuple[str, dict[str, Any]], instances: list[Any]
) -> None:
    # never INTERNAL or an error, and each verdict is jsonschema's (no format checker:
    # format is an annotation) for the same draft, through Score and RunSuite alike
    draft, schema = drawn
    oracle = DRAFTS[draft][1](schema)
    want = [oracle.is_valid(x) for x in instances]
    texts = [json.dumps(x) for x in instances]
    check = _check(schema, "drawn")
    try:
        response = client.Score(
            pb.ScoreRequest(checks=[check], output=pb.Output(text=texts[0])), timeout=DEADLINE_S
        )
        results, _ = collect_run(
            client.RunSuite(
                pb.RunSuiteRequest(
                    checks=[check], cases=[pb.Case(output=pb.Output(text=t)) for t in texts]
                ),
                timeout=DEADLINE_S,
            )
        )
    except grpc.RpcError as err:
        pytest.fail(_rpc_problem(err))
    assert _score_problems(response.scores, want[0], "Score") == []
    for i, passes in enumerate(want):
        assert _score_problems(results[i].scores, passes, f"RunSuite case {i}") == []


# --- drawn documents of any keywords: scored or refused at a field, never a fault -----------

KEYWORDS = sorted(
    {k for _, validator, _ in DRAFTS.values() for k in validator.VALIDATORS}
    | {"$id", "id", "$defs", "definitions", "$anchor", "format"}
)
"""Every keyword a draft validates (jsonschema's own tables), and the identifying ones."""
WORDS = st.sampled_from(["string", "object", "integer", "x", "#", "#/definitions/a", "a+"])
LEAVES = st.one_of(
    st.none(), st.booleans(), st.sampled_from([0, 1, -1, 2.5, 0.01, 1e300]), WORDS,
    st.sampled_from(FORMATS),
)  # fmt: skip


@st.composite
def documents(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """A mapping of keywords to values of any shape: well-formed now and then, mostly not."""
    value = st.one_of(
        LEAVES,
        st.lists(LEAVES, max_size=3),
        st.deferred(lambda: documents(depth + 1)) if depth < 3 else LEAVES,
        st.dictionaries(st.sampled_from(["a", "v", "w"]), LEAVES, max_size=2),
    )
    keys = st.sampled_from(KEYWORDS)
    return draw(st.dictionaries(keys, value, max_size=4 if depth < 3 else 1))


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    draft=st.sampled_from(list(DRAFTS)),
    document=documents(),
    instance=INSTANCES,
)
def test_any_document_is_scored_or_refused_at_its_field(
    client: Any, draft: str, document: dict[str, Any], instance: Any
) -> None:
    # what a draft's metaschema lets through (and jsonschema or its reference resolver
    # then trips on) is refused at its field, or scored: never INTERNAL, never an error
    schema = {**document, "$schema": DRAFTS[draft][0]}
    request = pb.ScoreRequest(
        checks=[_check(schema, "drawn")], output=pb.Output(text=json.dumps(instance))
    )
    try:
        response = client.Score(request, timeout=DEADLINE_S)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, _rpc_problem(err)
        fields = list(bad_request(err))
        assert fields and all(f.startswith("checks[0].params.schema") for f in fields), fields
        return
    (score,) = response.scores
    assert not score.HasField("error"), score
