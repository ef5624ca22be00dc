"""Deterministic checks: exact, contains, regex, json_schema, numeric_tolerance, length, python."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, field_validator
from scorewire.core.context import EMPTY_CONTEXT, CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import REGISTRY
from scorewire.engine.execute import run_check
from scorewire.engine.spec import CheckSpec, compile_check
from scorewire.schema.full import compile_schema

from tests.support.checks import load_errors, score


def assert_score(got: Score, value: float, passed: bool, reason: str = "") -> None:
    assert got.error is None, got.error
    assert (got.value, got.passed) == (value, passed), got.reason
    assert reason in got.reason


def assert_error(got: Score, code: str, fragment: str = "") -> None:
    assert got.error is not None, got
    assert got.error.code == code
    assert not got.passed and got.value == 0.0
    assert fragment in got.error.message


# --- exact -----------------------------------------------------------------------------

EXACT = [
    # literal text, stripped by default
    ({"expected": "Paris"}, " Paris\n", None, None, 1.0),
    # strip: false keeps white space significant
    ({"expected": "Paris", "strip": False}, "Paris\n", None, None, 0.0),
    # case-sensitive by default
    ({"expected": "Paris"}, "paris", None, None, 0.0),
    # case_sensitive: false uses Unicode case folding (ß ~ SS)
    ({"expected": "Straße", "case_sensitive": False}, "STRASSE", None, None, 1.0),
    # the sample's expected value is the reference when no literal is given
    ({}, "42 apples", None, "42 apples", 1.0),
    # path: into the sample's expected value, dotted with list indexes
    ({"path": "answer.items.0"}, "Paris", None, {"answer": {"items": ["Paris"]}}, 1.0),
    # path: as a JSON pointer
    ({"path": "/answer/items/0"}, "Paris", None, {"answer": {"items": ["Paris"]}}, 1.0),
    # a JSON reference compares with output.value (key order ignored)
    ({}, "", {"b": [1, 2], "a": 1}, {"a": 1, "b": [1, 2]}, 1.0),
    # ... or with output.text parsed as JSON when the output has no value
    ({}, '{"a": 1.0}', None, {"a": 1}, 1.0),
    # JSON equality: true is not 1
    ({"expected": True}, "1", None, None, 0.0),
    # JSON equality: 2 == 2.0
    ({"expected": 2}, "2.0", None, None, 1.0),
    # a string reference compares text, even when it looks like a number
    ({"expected": "2"}, "2", None, None, 1.0),
    # different JSON fails
    ({"expected": [1, 2]}, "[2, 1]", None, None, 0.0),
]


@pytest.mark.parametrize(("params", "text", "value", "expected", "want"), EXACT)
def test_exact(params: dict[str, Any], text: str, value: Any, expected: Any, want: float) -> None:
    got = score("exact", params, text=text, value=value, expected=expected)
    assert_score(got, want, want == 1.0)


def test_exact_reference_json_but_output_not_json_is_a_plain_fail() -> None:
    # Unparseable text against a JSON reference: a fail with the reason, not an error.
    got = score("exact", {"expected": {"a": 1}}, text="not json")
    assert_score(got, 0.0, False, "not JSON")


def test_exact_fail_reason_shows_both_sides() -> None:
    got = score("exact", {"expected": "Paris"}, text="London")
    assert "'Paris'" in got.reason and "'London'" in got.reason


MISSING_REFERENCE = [
    # no literal and no sample expected
    ({}, None, "sample 's1' has none"),
    # the path names a key that is not there
    ({"path": "answer.city"}, {"answer": {}}, "'answer.city' (no key 'city')"),
    # the path runs past the end of a list
    ({"path": "items.3"}, {"items": [1]}, "index 3 is past the end"),
    # null at the path
    ({"path": "answer"}, {"answer": None}, "is null"),
    # stepping into a scalar
    ({"path": "a.b"}, {"a": 3}, "cannot step into a number"),
]


@pytest.mark.parametrize("check", ["exact", "numeric_tolerance"])
@pytest.mark.parametrize(("params", "expected", "fragment"), MISSING_REFERENCE)
def test_missing_or_null_reference_is_an_error(
    check: str, params: dict[str, Any], expected: Any, fragment: str
) -> None:
    got = score(check, params, text="1", expected=expected)
    assert_error(got, ErrorCode.MISSING_REFERENCE, fragment)


EXACT_LOAD_ERRORS = [
    # path reads the sample; with a literal it is ambiguous
    ({"expected": "x", "path": "a"}, "checks[0].params.path", "cannot be combined"),
    # an empty key in a dotted path
    ({"path": "a..b"}, "checks[0].params.path", "empty key"),
    # a bad escape in a JSON pointer
    ({"path": "/a~2"}, "checks[0].params.path", "'~0' and '~1'"),
    # unknown parameters are errors with their path
    ({"expected": "x", "casesensitive": False}, "checks[0].params.casesensitive", "unknown"),
    # wrong type
    ({"expected": "x", "strip": "sometimes"}, "checks[0].params.strip", "boolean"),
]


@pytest.mark.parametrize(("params", "field", "fragment"), EXACT_LOAD_ERRORS)
def test_exact_load_errors(params: dict[str, Any], field: str, fragment: str) -> None:
    errors = load_errors("exact", params)
    assert fragment in errors[field]


# --- contains --------------------------------------------------------------------------

CONTAINS = [
    # every needle found: value 1, pass
    ({"needles": ["Paris", "France"]}, "Paris is in France", None, 1.0, True),
    # value is the fraction found; require_all fails on a missing needle
    ({"needles": ["Paris", "Spain"]}, "Paris is in France", None, 0.5, False),
    # require_all: false passes on any needle, value still the fraction
    ({"needles": ["Paris", "Spain"], "require_all": False}, "Paris", None, 0.5, True),
    # require_all: false with none found fails
    ({"needles": ["Rome"], "require_all": False}, "Paris", None, 0.0, False),
    # case-sensitive by default
    ({"needles": ["paris"]}, "Paris", None, 0.0, False),
    # case_sensitive: false folds case
    ({"needles": ["paris"], "case_sensitive": False}, "PARIS", None, 1.0, True),
    # the sample's expected.must_include is the default source
    ({}, "Paris, France", {"must_include": ["Paris", "France"]}, 1.0, True),
    # path: names another place in the sample
    ({"path": "keywords"}, "a b", {"keywords": ["a", "c"]}, 0.5, False),
    # a sample expected that is a list of strings is the needle list
    ({}, "a b", ["a", "b"], 1.0, True),
    # a sample expected that is a string is one needle
    ({}, "hello world", "world", 1.0, True),
    # a literal expected: an object with must_include
    ({"expected": {"must_include": ["x"]}}, "xyz", None, 1.0, True),
    # a literal expected: a list
    ({"expected": ["x", "q"]}, "xyz", None, 0.5, False),
]


@pytest.mark.parametrize(("params", "text", "expected", "value", "passed"), CONTAINS)
def test_contains(
    params: dict[str, Any], text: str, expected: Any, value: float, passed: bool
) -> None:
    assert_score(score("contains", params, text=text, expected=expected), value, passed)


def test_contains_reason_names_missing_needles() -> None:
    got = score("contains", {"needles": ["a", "Spain", "Peru"]}, text="a")
    assert "found 1 of 3" in got.reason and "'Spain'" in got.reason and "'Peru'" in got.reason


CONTAINS_SAMPLE_ERRORS = [
    # no expected value at all
    (None, ErrorCode.MISSING_REFERENCE, "has none"),
    # an expected object without must_include
    ({"answer": "x"}, ErrorCode.MISSING_REFERENCE, "no must_include"),
    # an empty needle list from the sample is an error score
    ({"must_include": []}, ErrorCode.INVALID_REFERENCE, "empty"),
    # a needle that is not a string
    ({"must_include": ["a", 3]}, ErrorCode.INVALID_REFERENCE, "needle 1 is a number"),
    # an empty needle would match everything
    ({"must_include": [""]}, ErrorCode.INVALID_REFERENCE, "needle 0 is empty"),
    # needles must be strings or lists
    ({"must_include": 7}, ErrorCode.INVALID_REFERENCE, "not a number"),
]


@pytest.mark.parametrize(("expected", "code", "fragment"), CONTAINS_SAMPLE_ERRORS)
def test_contains_bad_sample_needles_are_error_scores(
    expected: Any, code: str, fragment: str
) -> None:
    assert_error(score("contains", {}, text="a", expected=expected), code, fragment)


CONTAINS_LOAD_ERRORS = [
    # an empty literal needle list is a load error
    ({"needles": []}, "checks[0].params.needles", "empty"),
    # an empty literal needle
    ({"needles": ["a", ""]}, "checks[0].params.needles", "needle 1 is empty"),
    # needles and expected together
    ({"needles": ["a"], "expected": ["b"]}, "checks[0].params.needles", "not both"),
    # an empty literal expected list
    ({"expected": []}, "checks[0].params.expected", "empty"),
    # a literal expected with path
    ({"expected": ["a"], "path": "x"}, "checks[0].params.path", "cannot be combined"),
    # needles must be strings
    ({"needles": [1]}, "checks[0].params.needles[0]", "string"),
]


@pytest.mark.parametrize(("params", "field", "fragment"), CONTAINS_LOAD_ERRORS)
def test_contains_load_errors(params: dict[str, Any], field: str, fragment: str) -> None:
    assert fragment in load_errors("contains", params)[field]


# --- regex -----------------------------------------------------------------------------

REGEX = [
    # a substring search
    ({"pattern": r"\d{3}"}, "code 123 ok", True),
    # must_match: false inverts the pass
    ({"pattern": r"\d{3}", "must_match": False}, "code 123 ok", False),
    ({"pattern": r"\d{3}", "must_match": False}, "no code", True),
    # flags=2 is IGNORECASE
    ({"pattern": "paris", "flags": 2}, "PARIS", True),
    ({"pattern": "paris"}, "PARIS", False),
    # flags=2.0 (a protobuf double) is accepted as 2
    ({"pattern": "paris", "flags": 2.0}, "PARIS", True),
    # flags=8 is MULTILINE, 16 is DOTALL
    ({"pattern": "^b$", "flags": 8}, "a\nb", True),
    ({"pattern": "a.b", "flags": 16}, "a\nb", True),
    # Python's $ matches before a final newline
    ({"pattern": "^OK$"}, "OK\n", True),
    # flags by Python's names, long or short, any case, in a list or one string
    ({"pattern": "^b$", "flags": ["IGNORECASE", "MULTILINE"]}, "a\nB", True),
    ({"pattern": "^b$", "flags": ["I"]}, "a\nB", False),
    ({"pattern": "a.b", "flags": ["s", "re.X"]}, "a\nb", True),
    ({"pattern": "paris", "flags": "IGNORECASE"}, "PARIS", True),
    ({"pattern": "^b$", "flags": "I|M"}, "a\nB", True),
    # \b is Python's Unicode word boundary, without re.ASCII
    ({"pattern": r"\bcat\b"}, "the cat sat", True),
    ({"pattern": r"\bcat\b"}, "concatenate", False),
    ({"pattern": r"\bcaf\u00e9\b", "flags": ["IGNORECASE"]}, "UN CAF\u00c9.", True),
    # issue 14 defect 3: ASCII \B never matches between the bytes of one character
    ({"pattern": r"\B", "flags": ["ASCII"]}, "a\u00e9b", False),
    ({"pattern": r"\B", "flags": 256}, "a\u65e5b", False),
    # $ in the middle of a pattern
    ({"pattern": "(?:done$|ok)!?"}, "all done\n", True),
    # VERBOSE
    ({"pattern": "\\d{3}  # an area code", "flags": ["VERBOSE"]}, "call 555", True),
    # the empty pattern matches every output, as in Python
    ({"pattern": ""}, "anything", True),
    ({"pattern": "", "must_match": False}, "", False),
]


@pytest.mark.parametrize(("params", "text", "passed"), REGEX)
def test_regex(params: dict[str, Any], text: str, passed: bool) -> None:
    got = score("regex", params, text=text)
    assert_score(got, 1.0 if passed else 0.0, passed)


def test_regex_pathological_pattern_returns() -> None:
    # (a+)+$ against 50,000 a's and a "!": hangs Python's re, answers at once on RE2.
    got = score("regex", {"pattern": "(a+)+$"}, text="a" * 50_000 + "!")
    assert_score(got, 0.0, False)


REGEX_LOAD_ERRORS = [
    # flags must be an integer: 2.5 is refused
    ({"pattern": "a", "flags": 2.5}, "checks[0].params.flags", "integer"),
    # LOCALE cannot be honoured and is named, by bit or by name
    ({"pattern": "a", "flags": 4}, "checks[0].params.flags", "re.LOCALE (4)"),
    ({"pattern": "a", "flags": ["LOCALE"]}, "checks[0].params.flags", "re.LOCALE (4)"),
    # unknown flag bits and names are errors, never silently dropped
    ({"pattern": "a", "flags": 1024}, "checks[0].params.flags", "unknown flag bits"),
    (
        {"pattern": "a", "flags": ["IGNORECASE", "CASELESS"]},
        "checks[0].params.flags[1]",
        "unknown flag name 'CASELESS'",
    ),
    ({"pattern": "a", "flags": "I|Q"}, "checks[0].params.flags", "unknown flag name 'Q'"),
    # a group holding a word boundary is written out at most 8 times
    ({"pattern": r"(?:\bab){9}"}, "checks[0].params.pattern", "more than 8 times"),
    # a lookahead is refused at the pattern's path
    ({"pattern": "foo(?=bar)"}, "checks[0].params.pattern", "lookahead"),
    # a backreference
    ({"pattern": r"(a)\1"}, "checks[0].params.pattern", "backreference"),
    # RE2's repeat limit
    ({"pattern": "a{2000}"}, "checks[0].params.pattern", "1000"),
    # the pattern is required
    ({}, "checks[0].params.pattern", "required"),
]


@pytest.mark.parametrize(("params", "field", "fragment"), REGEX_LOAD_ERRORS)
def test_regex_load_errors(params: dict[str, Any], field: str, fragment: str) -> None:
    assert fragment in load_errors("regex", params)[field]


# --- json_schema -----------------------------------------------------------------------

D3 = "http://json-schema.org/draft-03/schema#"
D4 = "http://json-schema.org/draft-04/schema#"
D7 = "http://json-schema.org/draft-07/schema#"

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Z]"},
        "age": {"type": "integer", "minimum": 0},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}

JSON_SCHEMA = [
    # output.value conforms
    (PERSON, "", {"name": "Ada", "age": 36}, True, "conforms"),
    # the text is parsed when there is no value
    (PERSON, '{"name": "Ada", "age": 36}', None, True, "conforms"),
    # a failing pattern is reported with its path
    (PERSON, "", {"name": "ada", "age": 36}, False, "$.name: 'ada' does not match"),
    # additionalProperties: false
    (PERSON, "", {"name": "Ada", "age": 1, "x": 1}, False, "'x' was unexpected"),
    # text that is not JSON fails, value 0, not an error
    (PERSON, "{'name': 'Ada'}", None, False, "not valid JSON"),
    # NaN is not JSON
    ({"type": "number"}, "NaN", None, False, "not valid JSON"),
    # draft from $schema: draft-04's boolean exclusiveMaximum
    (
        {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5,
         "exclusiveMaximum": True},
        "5", None, False, "greater than or equal to the maximum",
    ),
    # draft-07 via $schema: dependencies
    (
        {"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": ["b"]}},
        '{"a": 1}', None, False, "'b' is a dependency of 'a'",
    ),
    # patternProperties run on RE2 (keys) and additionalProperties consults them
    (
        {"type": "object", "patternProperties": {"^x_": {"type": "integer"}},
         "additionalProperties": False},
        '{"x_a": 1, "y": 2}', None, False, "'y' was unexpected",
    ),
    (
        {"type": "object", "patternProperties": {"^x_": {"type": "integer"}},
         "additionalProperties": False},
        '{"x_a": "no"}', None, False, "$.x_a: 'no' is not of type 'integer'",
    ),
    # format is an annotation, not asserted
    ({"type": "string", "format": "email"}, '"not an email"', None, True, "conforms"),
    # local $ref resolves
    (
        {"$defs": {"n": {"type": "integer"}}, "type": "array", "items": {"$ref": "#/$defs/n"}},
        "[1, 2, 3]", None, True, "conforms",
    ),
    # a property named like a keyword still has its schema checked
    (
        {"type": "object", "properties": {"enum": {"type": "string", "pattern": "^a"}}},
        '{"enum": "b"}', None, False, "does not match",
    ),
    # draft 3: `required: true` inside the property
    ({"$schema": D3, "properties": {"a": {"required": True}}}, "{}", None, False,
     "'a' is a required property"),
    # draft 3's own format names are annotations too
    ({"$schema": D3, "type": "string", "format": "ip-address"}, '"not an address"', None, True,
     "conforms"),
    # draft 3's divisibleBy is exact, as multipleOf is (in floats 0.07 / 0.01 is not whole)
    ({"$schema": D3, "divisibleBy": 0.01}, "0.07", None, True, "conforms"),
    ({"$schema": D3, "divisibleBy": 0.01}, "0.075", None, False, "not a multiple of 0.01"),
    # draft 3 has no multipleOf: an unknown keyword, ignored whatever its value
    ({"$schema": D3, "multipleOf": "x"}, "5", None, True, "conforms"),
    # draft 3's single-schema extends, beside a $ref
    ({"$schema": D3, "extends": {"type": "object"}, "properties": {"a": {"$ref": "#"}}},
     '{"a": []}', None, False, "$.a: [] is not of type 'object'"),
    # dependencies mixing a schema and a property list, beside a $ref (drafts 4, 7)
    (
        {"$schema": D4, "dependencies": {"a": {"required": ["b"]}, "c": ["a"]},
         "properties": {"b": {"$ref": "#/definitions/n"}},
         "definitions": {"n": {"type": "integer"}}},
        '{"c": 1}', None, False, "'a' is a dependency of 'c'",
    ),
    (
        {"$schema": D7, "dependencies": {"a": {"required": ["b"]}, "c": ["a"]},
         "properties": {"b": {"$ref": "#/definitions/n"}},
         "definitions": {"n": {"type": "integer"}}},
        '{"a": 1, "b": "x"}', None, False, "$.b: 'x' is not of type 'integer'",
    ),
    # draft 4's `id` sets the base of the $refs under it
    (
        {"$schema": D4, "properties": {"p": {"$ref": "#/definitions/a"}},
         "definitions": {"a": {"id": "http://x.test/a",
                               "properties": {"q": {"$ref": "#/definitions/b"}},
                               "definitions": {"b": {"type": "integer"}}}}},
        '{"p": {"q": "s"}}', None, False, "$.p.q: 's' is not of type 'integer'",
    ),
    # additionalItems beside a boolean items schema is ignored, as beside any single schema
    ({"$schema": D7, "items": True, "additionalItems": False}, "[1, 2]", None, True, "conforms"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "text", "value", "passed", "fragment"), JSON_SCHEMA)
def test_json_schema(
    schema: dict[str, Any], text: str, value: Any, passed: bool, fragment: str
) -> None:
    got = score("json_schema", {"schema": schema}, text=text, value=value)
    assert_score(got, 1.0 if passed else 0.0, passed, fragment)


def test_json_schema_reason_lists_at_most_three_paths() -> None:
    schema = {"type": "object", "required": ["a", "b", "c", "d", "e"]}
    got = score("json_schema", {"schema": schema}, text="{}")
    assert got.reason.count("is a required property") == 3
    assert got.reason.endswith("and more")


def test_json_schema_pattern_is_linear_time() -> None:
    # A catastrophic pattern inside a schema runs on RE2, not on Python's re.
    schema = {"type": "string", "pattern": "^(a+)+$"}
    got = score("json_schema", {"schema": schema}, text=json.dumps("a" * 50_000 + "!"))
    assert_score(got, 0.0, False, "does not match")


def test_json_schema_validator_compiled_once_per_schema() -> None:
    # Identical schemas share one compiled validator.
    assert compile_schema({"type": "integer"}) is compile_schema({"type": "integer"})


JSON_SCHEMA_LOAD_ERRORS = [
    # a malformed schema fails at load at its path
    ({"type": "objectx"}, "checks[0].params.schema.type", "invalid JSON Schema"),
    ({"properties": {"a": {"minLength": -1}}}, "checks[0].params.schema.properties.a.minLength",
     "invalid JSON Schema"),
    # a pattern RE2 cannot honour fails at load at its path
    ({"properties": {"a": {"pattern": "(?=x)"}}}, "checks[0].params.schema.properties.a.pattern",
     "lookahead"),
    # a patternProperties key is a pattern too
    ({"patternProperties": {"(?<=a)b": {}}}, "checks[0].params.schema.patternProperties.(?<=a)b",
     "lookbehind"),
    # an unknown $schema is refused rather than silently replaced by the latest draft
    ({"$schema": "http://example.com/my-draft"}, "checks[0].params.schema.$schema",
     "unknown JSON Schema draft"),
    # a dangling local $ref
    ({"$ref": "#/$defs/missing"}, "checks[0].params.schema.$ref", "cannot resolve"),
    # a remote $ref is never fetched
    ({"$ref": "https://example.com/schema.json"}, "checks[0].params.schema.$ref",
     "cannot resolve"),
    # unevaluatedProperties would evaluate patternProperties with Python's re
    ({"patternProperties": {"^a": {}}, "unevaluatedProperties": False},
     "checks[0].params.schema", "unevaluatedProperties"),
    # the schema must be an object
    ([1, 2], "checks[0].params.schema", "JSON Schema object"),
    # draft 3's metaschema takes any type name; an unknown one is refused at its path
    ({"$schema": D3, "type": "strng"}, "checks[0].params.schema.type", "unknown type 'strng'"),
    ({"$schema": D3, "disallow": ["string", "nubmer"]}, "checks[0].params.schema.disallow[1]",
     "unknown type 'nubmer'"),
    # draft 4's metaschema does not say a $ref is a string
    ({"$schema": D4, "properties": {"a": {"$ref": 5}}},
     "checks[0].params.schema.properties.a.$ref", "$ref must be a string"),
    # a $dynamicRef resolves at load like a $ref
    ({"$dynamicRef": "#nowhere"}, "checks[0].params.schema.$dynamicRef", "cannot resolve"),
    # a limit: where the reference library cannot index the document (here draft 3's
    # single-schema extends), a $ref to an id nested in it is refused
    (
        {"$schema": D3, "extends": {"type": "object"},
         "definitions": {"x": {"id": "http://x.test/x", "type": "integer"}},
         "properties": {"p": {"$ref": "http://x.test/x"}}},
        "checks[0].params.schema.properties.p.$ref", "cannot resolve",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "field", "fragment"), JSON_SCHEMA_LOAD_ERRORS)
def test_json_schema_load_errors(schema: Any, field: str, fragment: str) -> None:
    assert fragment in load_errors("json_schema", {"schema": schema})[field]


class Person(BaseModel):
    name: str
    age: int

    @field_validator("name")
    @classmethod
    def capitalised(cls, v: str) -> str:
        if not v[:1].isupper():
            raise ValueError("must be capitalised")
        return v


PYDANTIC = [
    # a conforming output value
    ("", {"name": "Ada", "age": 36}, True, "conforms to Person"),
    # conforming text
    ('{"name": "Ada", "age": 36}', None, True, "conforms to Person"),
    # the model's own validators apply
    ('{"name": "ada", "age": 36}', None, False, "$.name: Value error, must be capitalised"),
    # missing field path
    ('{"name": "Ada"}', None, False, "$.age: Field required"),
    # not JSON
    ("nope", None, False, "not valid JSON"),
]


@pytest.mark.parametrize(("text", "value", "passed", "fragment"), PYDANTIC)
def test_json_schema_with_pydantic_model(
    text: str, value: Any, passed: bool, fragment: str
) -> None:
    got = score("json_schema", {"schema": Person}, text=text, value=value)
    assert_score(got, 1.0 if passed else 0.0, passed, fragment)


# --- numeric_tolerance -----------------------------------------------------------------

NUMERIC = [
    # default tolerance is math.isclose's: rounding noise passes
    ({"expected": 0.3}, "0.30000000000000004", None, None, True),
    # ... but a real difference fails
    ({"expected": 0.3}, "0.31", None, None, False),
    # abs_tol
    ({"expected": 10, "abs_tol": 0.5}, "10.5", None, None, True),
    ({"expected": 10, "abs_tol": 0.5}, "10.6", None, None, False),
    # rel_tol (of the larger magnitude)
    ({"expected": 100, "rel_tol": 0.05}, "104", None, None, True),
    ({"expected": 100, "rel_tol": 0.05}, "106", None, None, False),
    # the sample's expected value, a numeric string
    ({}, " 42 ", None, "42", True),
    # path: into the sample
    ({"path": "answer"}, "7", None, {"answer": 7}, True),
    # output_path into output.value
    ({"expected": 7, "output_path": "result.score"}, "", {"result": {"score": 7}}, None, True),
    # output_path into the text parsed as JSON, as a JSON pointer
    ({"expected": 7, "output_path": "/scores/0"}, '{"scores": [7.0, 1]}', None, None, True),
    # without output_path a numeric output.value is used
    ({"expected": 3}, "", 3, None, True),
    # a literal numeric string reference
    ({"expected": "2.5"}, "2.5", None, None, True),
]


@pytest.mark.parametrize(("params", "text", "value", "expected", "passed"), NUMERIC)
def test_numeric_tolerance(
    params: dict[str, Any], text: str, value: Any, expected: Any, passed: bool
) -> None:
    got = score("numeric_tolerance", params, text=text, value=value, expected=expected)
    assert_score(got, 1.0 if passed else 0.0, passed)


NUMERIC_OUTPUT_FAILS = [
    # prose is not a number: a plain fail with the reason
    ({"expected": 42}, "The answer is 42", None, "not a number"),
    # float() extras are not numbers
    ({"expected": 1000}, "1_000", None, "not a number"),
    ({"expected": 1}, "nan", None, "not a number"),
    # output_path missing in the output
    ({"expected": 1, "output_path": "score"}, '{"other": 1}', None, "no key 'score'"),
    # output_path on text that is not JSON
    ({"expected": 1, "output_path": "score"}, "score: 1", None, "not valid JSON"),
    # a boolean is not a number
    ({"expected": 1, "output_path": "ok"}, "", {"ok": True}, "not a number"),
]


@pytest.mark.parametrize(("params", "text", "value", "fragment"), NUMERIC_OUTPUT_FAILS)
def test_numeric_tolerance_non_numeric_output_fails(
    params: dict[str, Any], text: str, value: Any, fragment: str
) -> None:
    got = score("numeric_tolerance", params, text=text, value=value)
    assert_score(got, 0.0, False, fragment)


@pytest.mark.parametrize(
    "expected",
    [
        "forty-two",  # a word
        True,  # a boolean is not a number
        [42],  # a list
    ],
)
def test_numeric_tolerance_non_numeric_reference_is_an_error(expected: Any) -> None:
    got = score("numeric_tolerance", {}, text="42", expected=expected)
    assert_error(got, ErrorCode.INVALID_REFERENCE, "not a number")


NUMERIC_LOAD_ERRORS = [
    # a literal reference that is not a number
    ({"expected": "abc"}, "checks[0].params.expected", "not a number"),
    # tolerances are non-negative
    ({"expected": 1, "abs_tol": -1}, "checks[0].params.abs_tol", "greater than or equal"),
    ({"expected": 1, "rel_tol": -0.1}, "checks[0].params.rel_tol", "greater than or equal"),
    # a bad output_path
    ({"expected": 1, "output_path": "a."}, "checks[0].params.output_path", "empty key"),
]


@pytest.mark.parametrize(("params", "field", "fragment"), NUMERIC_LOAD_ERRORS)
def test_numeric_tolerance_load_errors(params: dict[str, Any], field: str, fragment: str) -> None:
    assert fragment in load_errors("numeric_tolerance", params)[field]


# --- length ----------------------------------------------------------------------------

LENGTH = [
    # limits are inclusive
    ({"max_chars": 5}, "abcde", True),
    ({"max_chars": 5}, "abcdef", False),
    ({"min_chars": 3}, "abc", True),
    ({"min_chars": 3}, "ab", False),
    # characters are Unicode code points, not bytes
    ({"max_chars": 3}, "\u00e9\u00e9\u00e9", True),
    ({"max_chars": 1}, "\U0001f600", True),
    # words are runs of non-white-space
    ({"max_words": 2}, "one  two\n", True),
    ({"max_words": 2}, "one two three", False),
    # every limit applies
    ({"min_chars": 2, "max_words": 1}, "a b", False),
]


@pytest.mark.parametrize(("params", "text", "passed"), LENGTH)
def test_length(params: dict[str, Any], text: str, passed: bool) -> None:
    got = score("length", params, text=text)
    assert_score(got, 1.0 if passed else 0.0, passed)


def test_length_reason_names_the_broken_limit() -> None:
    got = score("length", {"max_chars": 3, "max_words": 1}, text="ab cd")
    assert "5 characters, over max_chars 3" in got.reason
    assert "2 words, over max_words 1" in got.reason


LENGTH_LOAD_ERRORS = [
    # at least one limit
    ({}, "checks[0].params", "at least one"),
    # min over max
    ({"min_chars": 9, "max_chars": 3}, "checks[0].params.min_chars", "over max_chars"),
    # negative limits
    ({"max_chars": -1}, "checks[0].params.max_chars", "greater than or equal"),
    # 2.5 characters
    ({"max_chars": 2.5}, "checks[0].params.max_chars", "integer"),
]


@pytest.mark.parametrize(("params", "field", "fragment"), LENGTH_LOAD_ERRORS)
def test_length_load_errors(params: dict[str, Any], field: str, fragment: str) -> None:
    assert fragment in load_errors("length", params)[field]


# --- python ----------------------------------------------------------------------------


def _true(sample: Sample, output: Output) -> bool:
    return "ok" in output.text


def _half(sample: Sample, output: Output) -> float:
    return 0.5


def _low(sample: Sample, output: Output) -> float:
    return 0.2


def _score(sample: Sample, output: Output) -> Score:
    return Score(0.3, True, "custom")


def _too_big(sample: Sample, output: Output) -> float:
    return 1.5


def _none(sample: Sample, output: Output) -> None:
    return None


def _raises(sample: Sample, output: Output) -> bool:
    raise KeyError("boom")


def _with_ctx(sample: Sample, output: Output, ctx: CheckContext) -> bool:
    return ctx is EMPTY_CONTEXT


PYTHON = [
    # a bool is pass/fail
    (_true, "ok", 1.0, True, None),
    (_true, "no", 0.0, False, None),
    # a number in 0..1 is the value, passing at 0.5
    (_half, "", 0.5, True, None),
    (_low, "", 0.2, False, None),
    # a Score is kept as returned
    (_score, "", 0.3, True, None),
    # the three-argument form receives the context
    (_with_ctx, "", 1.0, True, None),
    # a number outside 0..1 is an error
    (_too_big, "", 0.0, False, ErrorCode.CHECK_FAILED),
    # None is an error
    (_none, "", 0.0, False, ErrorCode.CHECK_FAILED),
    # an exception is an error naming the function
    (_raises, "", 0.0, False, ErrorCode.CHECK_FAILED),
]


@pytest.mark.parametrize(("fn", "text", "value", "passed", "code"), PYTHON)
def test_python(fn: Any, text: str, value: float, passed: bool, code: str | None) -> None:
    got = score("python", {"fn": fn}, text=text)
    assert (got.value, got.passed) == (value, passed)
    assert (got.error.code if got.error else None) == code
    if code:
        assert fn.__name__ in got.error.message  # type: ignore[union-attr]


def test_python_threshold_sets_where_a_number_passes() -> None:
    # threshold (default 0.5, as for custom checks) decides a numeric result
    assert not score("python", {"fn": _half, "threshold": 0.6}).passed
    assert score("python", {"fn": _low, "threshold": 0.2}).passed
    errors = load_errors("python", {"fn": _half, "threshold": 2})
    assert "less than or equal to 1" in errors["checks[0].params.threshold"]


async def test_python_async_function() -> None:
    # An async fn makes an async check, run through run_check.
    async def judge(sample: Sample, output: Output) -> bool:
        return output.text == "yes"

    cc = compile_check(CheckSpec(type="python", params={"fn": judge}), "checks[0]")
    assert cc.is_async
    got = await run_check(cc, Sample(), Output("yes"), EMPTY_CONTEXT)
    assert got.passed


PYTHON_LOAD_ERRORS = [
    # over the wire a string is not callable: python checks are Python-API only
    ("lambda s, o: True", "python checks exist only in the Python API; register a custom "
     "check on the server instead"),
    ({"module": "x"}, "exist only in the Python API"),
    # the function must take (sample, output[, ctx])
    (lambda x: True, "must take (sample, output)"),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "fragment"), PYTHON_LOAD_ERRORS)
def test_python_load_errors(fn: Any, fragment: str) -> None:
    assert fragment in load_errors("python", {"fn": fn})["checks[0].params.fn"]


# --- registry --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["exact", "contains", "regex", "json_schema", "numeric_tolerance", "length", "python"],
)
def test_registered_with_a_serialisable_parameter_schema(name: str) -> None:
    # ListChecks serves each type's parameter schema as JSON.
    check_type = REGISTRY.get(name)
    assert check_type is not None and check_type.family == "deterministic"
    json.dumps(check_type.params_schema())
