"""JSON Schema: RunLog subset v1 — accepted schemas, rejected ones, limits, evaluation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.schema.subset import (
    MAX_CANDIDATE_DEPTH,
    MAX_CANDIDATE_VALUES,
    MAX_SCHEMA_BYTES,
    SchemaSubsetError,
    compile_subset_schema,
)

SEED_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "number", "minimum": 0, "maximum": 10}},
    "required": ["score"],
    "additionalProperties": False,
}


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


# --- evaluation -----------------------------------------------------------------------

EVALUATIONS: list[tuple[str, dict[str, Any], str, bool, str]] = [
    # (rule, schema, answer text, passes, reason fragment)
    ("the seed's schema accepts a score", SEED_SCHEMA, '{"score": 7}', True, "matches"),
    ("minimum is inclusive", SEED_SCHEMA, '{"score": 0}', True, ""),
    ("maximum is inclusive", SEED_SCHEMA, '{"score": 10}', True, ""),
    (
        "above the maximum fails",
        SEED_SCHEMA,
        '{"score": 10.5}',
        False,
        "/score: must be at most 10",
    ),
    ("below the minimum fails", SEED_SCHEMA, '{"score": -1}', False, "must be at least 0"),
    ("a required property is missing", SEED_SCHEMA, "{}", False, "/score: required property"),
    (
        "additionalProperties false",
        SEED_SCHEMA,
        '{"score":1,"x":2}',
        False,
        "/x: property not allowed",
    ),
    ("additionalProperties defaults to true", _obj(), '{"x": 1}', True, ""),
    ("a numeric string is not a number", SEED_SCHEMA, '{"score": "7"}', False, "got a string"),
    ("a boolean is not a number", SEED_SCHEMA, '{"score": true}', False, "got a boolean"),
    ("the wrong root type", SEED_SCHEMA, "[1]", False, "@: expected an object, got an array"),
    ("text that is not JSON fails", SEED_SCHEMA, "score: 7", False, "not valid JSON"),
    ("NaN is not JSON", {"type": "number"}, "NaN", False, "not valid JSON"),
    ("white space around JSON is fine", {"type": "null"}, " null \n", True, ""),
    ("integer accepts 2.0", {"type": "integer"}, "2.0", True, ""),
    ("integer rejects 2.5", {"type": "integer"}, "2.5", False, "expected an integer"),
    ("integer rejects true", {"type": "integer"}, "true", False, "got a boolean"),
    (
        "an integer too big for a double is parsed, then fails as not finite",
        {"type": "number"},
        "1" * 5000,
        False,
        "got a huge number",
    ),
    ("string length counts code points", {"type": "string", "maxLength": 2}, '"😀é"', True, ""),
    (
        "maxLength is inclusive",
        {"type": "string", "maxLength": 2},
        '"abc"',
        False,
        "at most 2 characters",
    ),
    ("minLength", {"type": "string", "minLength": 2}, '"a"', False, "at least 2 characters"),
    ("minItems", {"type": "array", "minItems": 2}, "[1]", False, "at least 2 items"),
    ("maxItems", {"type": "array", "maxItems": 1}, "[1,2]", False, "at most 1 items"),
    (
        "items apply to every item",
        {"type": "array", "items": {"type": "string"}},
        '["a", 1]',
        False,
        "/1: expected a string",
    ),
    ("const", {"type": "string", "const": "yes"}, '"no"', False, 'must equal "yes"'),
    ("const passes", {"type": "string", "const": "yes"}, '"yes"', True, ""),
    ("enum", {"type": "integer", "enum": [1, 2]}, "3", False, "must be one of [1, 2]"),
    ("enum matches 1.0 to 1", {"type": "integer", "enum": [1, 2]}, "1.0", True, ""),
    ("boolean const", {"type": "boolean", "const": True}, "false", False, "must equal true"),
    ("null type", {"type": "null"}, "0", False, "expected null"),
    (
        "nested path",
        _obj(a=_obj(b={"type": "integer"})),
        '{"a":{"b":"x"}}',
        False,
        "/a/b: expected an integer",
    ),
    (
        "~ and / in names are escaped in paths",
        _obj(**{"a/b~": {"type": "null"}}),
        '{"a/b~": 1}',
        False,
        "/a~1b~0:",
    ),
]


@pytest.mark.parametrize(
    ("rule", "schema", "text", "passes", "fragment"), EVALUATIONS, ids=[e[0] for e in EVALUATIONS]
)
def test_evaluation(
    rule: str, schema: dict[str, Any], text: str, passes: bool, fragment: str
) -> None:
    passed, reason = compile_subset_schema(schema).check_text(text)
    assert passed is passes
    assert fragment in reason


def test_at_most_three_failing_paths_are_shown() -> None:
    # five failures: three spelled out, then a count
    schema = {"type": "object", "required": ["a", "b", "c", "d", "e"]}
    passed, reason = compile_subset_schema(schema).check_text("{}")
    assert not passed
    assert reason.count("required property is missing") == 3
    assert reason.endswith("; and 2 more")


def test_three_failing_paths_need_no_count() -> None:
    # exactly three failures: no "and more"
    schema = {"type": "object", "required": ["a", "b", "c"]}
    _, reason = compile_subset_schema(schema).check_text("{}")
    assert reason.count("missing") == 3 and "more" not in reason


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


CANDIDATE_LIMITS = [
    # (rule, answer text, passes, fragment)
    ("32 nesting levels are evaluated", _nested(MAX_CANDIDATE_DEPTH), True, ""),
    (
        "33 nesting levels fail",
        _nested(MAX_CANDIDATE_DEPTH + 1),
        False,
        "32 candidate nesting levels",
    ),
    ("nesting beyond the parser fails too", _nested(5000), False, "32 candidate nesting levels"),
    ("512 values are evaluated", json.dumps([0] * (MAX_CANDIDATE_VALUES - 1)), True, ""),
    ("513 values fail", json.dumps([0] * MAX_CANDIDATE_VALUES), False, "limit is 512 values"),
    ("object values count, keys do not", json.dumps({str(i): i for i in range(511)}), True, ""),
]


@pytest.mark.parametrize(
    ("rule", "text", "passes", "fragment"), CANDIDATE_LIMITS, ids=[c[0] for c in CANDIDATE_LIMITS]
)
def test_candidate_limit(rule: str, text: str, passes: bool, fragment: str) -> None:
    schema = {"type": "object"} if text.startswith("{") else {"type": "array"}
    passed, reason = compile_subset_schema(schema).check_text(text)
    assert passed is passes
    assert fragment in reason


# --- rejected schemas -----------------------------------------------------------------

REJECTED: list[tuple[str, Any, str, str]] = [
    # (rule, schema, path inside the schema, message fragment)
    ("$ref", {"$ref": "#/x"}, "$ref", "references"),
    ("$defs", {"type": "null", "$defs": {}}, "$defs", "references"),
    ("pattern", {"type": "string", "pattern": "a"}, "pattern", "patterns"),
    (
        "patternProperties",
        {"type": "object", "patternProperties": {}},
        "patternProperties",
        "patterns",
    ),
    ("format", {"type": "string", "format": "email"}, "format", "formats"),
    ("allOf", {"allOf": []}, "allOf", "combined schemas"),
    ("anyOf", {"anyOf": []}, "anyOf", "combined schemas"),
    ("oneOf", {"oneOf": []}, "oneOf", "combined schemas"),
    ("not", {"not": {}}, "not", "combined schemas"),
    ("if", {"type": "null", "if": {}}, "if", "combined schemas"),
    ("unknown keyword", {"type": "string", "title": "x"}, "title", "unknown keyword 'title'"),
    (
        "$schema is not part of the subset",
        {"$schema": "x", "type": "null"},
        "$schema",
        "unknown keyword",
    ),
    ("a node without a type", {"properties": {}}, "", "exactly one type"),
    ("a list of types", {"type": ["string", "null"]}, "type", "exactly one type"),
    ("an unknown type", {"type": "date"}, "type", "unknown type"),
    ("a schema that is not an object", True, "", "must be a JSON object"),
    (
        "a nested schema that is not an object",
        _obj(a=True),
        "properties.a",
        "must be a JSON object",
    ),
    (
        "a keyword on the wrong type",
        {"type": "number", "minLength": 1},
        "minLength",
        "does not apply to type number",
    ),
    ("properties on an array", {"type": "array", "properties": {}}, "properties", "does not apply"),
    (
        "additionalProperties as a schema",
        {"type": "object", "additionalProperties": {}},
        "additionalProperties",
        "true or false",
    ),
    ("items as a list", {"type": "array", "items": [{"type": "null"}]}, "items", "one schema"),
    ("items as a boolean", {"type": "array", "items": True}, "items", "must be a JSON object"),
    ("required not a list", {"type": "object", "required": "a"}, "required", "list of names"),
    ("required with duplicates", {"type": "object", "required": ["a", "a"]}, "required", "unique"),
    (
        "properties not an object",
        {"type": "object", "properties": []},
        "properties",
        "must be an object",
    ),
    ("an empty enum", {"type": "string", "enum": []}, "enum", "non-empty"),
    ("an enum with an object", {"type": "string", "enum": [{}]}, "enum", "scalars"),
    ("const on an object", {"type": "object", "const": 1}, "const", "does not apply"),
    ("const of the wrong type", {"type": "string", "const": 1}, "const", "is not a string"),
    (
        "enum value of the wrong type",
        {"type": "integer", "enum": [1, 1.5]},
        "enum",
        "is not an integer",
    ),
    ("const and enum together", {"type": "null", "const": None, "enum": [None]}, "", "not both"),
    ("a boolean bound", {"type": "number", "minimum": True}, "minimum", "must be a number"),
    ("a string length limit", {"type": "string", "maxLength": "3"}, "maxLength", "whole number"),
    (
        "a fractional length limit",
        {"type": "string", "maxLength": 2.5},
        "maxLength",
        "whole number",
    ),
    (
        "minimum above maximum",
        {"type": "number", "minimum": 2, "maximum": 1},
        "",
        "minimum is above",
    ),
    (
        "minLength above maxLength",
        {"type": "string", "minLength": 2, "maxLength": 1},
        "",
        "minimum is above",
    ),
    (
        "minItems above maxItems",
        {"type": "array", "minItems": 2, "maxItems": 1},
        "",
        "minimum is above",
    ),
    ("NaN in a schema", {"type": "number", "minimum": float("nan")}, "", "not plain JSON"),
    ("not JSON at all", {"type": "null", "x": object()}, "", "not plain JSON"),
    (
        "a nested error has its path",
        _obj(a={"type": "array", "items": {"type": "string", "format": "x"}}),
        "properties.a.items.format",
        "formats",
    ),
]


@pytest.mark.parametrize(
    ("rule", "schema", "path", "fragment"), REJECTED, ids=[r[0] for r in REJECTED]
)
def test_rejected_schema(rule: str, schema: Any, path: str, fragment: str) -> None:
    with pytest.raises(SchemaSubsetError) as info:
        compile_subset_schema(schema)
    assert info.value.path == path
    assert fragment in info.value.message


def test_a_pydantic_friendly_whole_number_is_accepted() -> None:
    # 2.0 is a whole number, as JSON from other languages writes it
    compile_subset_schema({"type": "string", "maxLength": 2.0})


# --- schema limits, at and just past each boundary ------------------------------------


def _sized(n_bytes: int) -> dict[str, Any]:
    base = {"type": "string", "const": ""}
    pad = n_bytes - len(json.dumps(base, separators=(",", ":")))
    return {"type": "string", "const": "x" * pad}


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "null"}
    for _ in range(levels - 1):
        node = {"type": "array", "items": node}
    return node


def _nodes(children: list[int]) -> dict[str, Any]:
    # root + one object per entry of `children`, each with that many null properties
    return _obj(
        **{
            f"o{i}": _obj(**{f"p{j}": {"type": "null"} for j in range(n)})
            for i, n in enumerate(children)
        }
    )


def _props(n: int) -> dict[str, Any]:
    return _obj(**{f"p{i}": {"type": "null"} for i in range(n)})


SCHEMA_LIMITS: list[tuple[str, Any, str]] = [
    # (rule, schema, "" when accepted or the fragment naming the limit)
    ("4096 bytes is accepted", _sized(MAX_SCHEMA_BYTES), ""),
    ("4097 bytes is rejected", _sized(MAX_SCHEMA_BYTES + 1), "limit is 4 KiB (4096 bytes)"),
    ("bytes are UTF-8 bytes, not characters", {"type": "string", "const": "é" * 2040}, "4 KiB"),
    ("8 nesting levels are accepted", _deep(8), ""),
    ("9 nesting levels are rejected", _deep(9), "limit is 8 nesting levels"),
    ("100 nodes are accepted", _nodes([32, 32, 31, 0]), ""),
    ("101 nodes are rejected", _nodes([32, 32, 32, 0]), "limit is 100 nodes"),
    ("32 properties are accepted", _props(32), ""),
    ("33 properties are rejected", _props(33), "limit is 32 properties per node"),
    (
        "32 required fields are accepted",
        {"type": "object", "required": [f"r{i}" for i in range(32)]},
        "",
    ),
    (
        "33 required fields are rejected",
        {"type": "object", "required": [f"r{i}" for i in range(33)]},
        "limit is 32 required fields",
    ),
    ("32 enum values are accepted", {"type": "integer", "enum": list(range(32))}, ""),
    (
        "33 enum values are rejected",
        {"type": "integer", "enum": list(range(33))},
        "limit is 32 enum values",
    ),
    ("a bound of 1e15 is accepted", {"type": "number", "maximum": 1e15}, ""),
    ("a bound of -1e15 is accepted", {"type": "number", "minimum": -1e15}, ""),
    (
        "a bound just above 1e15 is rejected",
        {"type": "number", "maximum": 1e15 + 1},
        "within ±1e15",
    ),
    (
        "a bound just below -1e15 is rejected",
        {"type": "number", "minimum": -1e15 - 1},
        "within ±1e15",
    ),
    (
        "an infinite bound is rejected",
        {"type": "number", "minimum": float("inf")},
        "not plain JSON",
    ),
    ("a length limit of 0 is accepted", {"type": "string", "minLength": 0}, ""),
    ("a length limit of 8192 is accepted", {"type": "string", "maxLength": 8192}, ""),
    (
        "a length limit of 8193 is rejected",
        {"type": "string", "maxLength": 8193},
        "length limits are 0–8192",
    ),
    (
        "a negative length limit is rejected",
        {"type": "string", "minLength": -1},
        "length limits are 0–8192",
    ),
    ("an array limit of 512 is accepted", {"type": "array", "maxItems": 512}, ""),
    (
        "an array limit of 513 is rejected",
        {"type": "array", "maxItems": 513},
        "array limits are 0–512",
    ),
    (
        "a negative array limit is rejected",
        {"type": "array", "minItems": -1},
        "array limits are 0–512",
    ),
]


@pytest.mark.parametrize(
    ("rule", "schema", "fragment"), SCHEMA_LIMITS, ids=[s[0] for s in SCHEMA_LIMITS]
)
def test_schema_limit(rule: str, schema: Any, fragment: str) -> None:
    if not fragment:
        compile_subset_schema(schema)
        return
    with pytest.raises(SchemaSubsetError) as info:
        compile_subset_schema(schema)
    assert fragment in info.value.message


def test_the_size_fixture_is_exact() -> None:
    # the 4096-byte case really is 4096 bytes
    text = json.dumps(_sized(MAX_SCHEMA_BYTES), separators=(",", ":"))
    assert len(text.encode()) == MAX_SCHEMA_BYTES


# --- properties -----------------------------------------------------------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 600)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(
        ["object", "array", "string", "number", "integer", "boolean", "null", "type", "x"]
    ),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "properties",
                    "required",
                    "items",
                    "minItems",
                    "maxItems",
                    "minLength",
                    "maxLength",
                    "minimum",
                    "maximum",
                    "const",
                    "enum",
                    "additionalProperties",
                    "a",
                    "$ref",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_JSON, _JSON)
def test_any_schema_compiles_or_is_rejected_cleanly(schema: Any, candidate: Any) -> None:
    # arbitrary JSON never raises anything but SchemaSubsetError, nor does evaluation
    try:
        compiled = compile_subset_schema(schema)
    except SchemaSubsetError as err:
        assert err.message
        return
    passed, reason = compiled.check_value(candidate)
    assert reason and isinstance(passed, bool)
