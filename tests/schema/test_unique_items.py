"""`uniqueItems` by hashing a canonical form: the official test suite's cases, and more.

The draft 2020-12 cases are those of the vendored suite (`tests/data/json-schema-test-suite`,
which test_json_schema_suite.py runs whole); `data/uniqueItems.draft4.json` is copied
unchanged from json-schema-org/JSON-Schema-Test-Suite (commit
44401e0c046704b476ec9d2e2fccdaee618f259d, MIT licence), `tests/draft4/uniqueItems.json`
(draft 4 has no `$schema` in its cases, so it is added).
"""

import json
from pathlib import Path

import pytest
from scorewire.schema.full import compile_schema

DATA = Path(__file__).parent / "data"
SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite" / "tests"
DRAFT4 = "http://json-schema.org/draft-04/schema#"


def _cases() -> list[tuple[str, dict, object, bool]]:
    out = []
    files = (
        (SUITE / "draft2020-12" / "uniqueItems.json", None),
        (DATA / "uniqueItems.draft4.json", DRAFT4),
    )
    for path, draft in files:
        name = f"{path.parent.name}/{path.name}"
        for group in json.loads(path.read_text(encoding="utf-8")):
            schema = dict(group["schema"])
            if draft is not None:
                schema.setdefault("$schema", draft)
            for t in group["tests"]:
                desc = f"{name}: {group['description']}: {t['description']}"
                out.append((desc, schema, t["data"], t["valid"]))
    return out


CASES = _cases()


@pytest.mark.parametrize(("desc", "schema", "data", "valid"), CASES, ids=[c[0] for c in CASES])
def test_official_unique_items_cases(desc: str, schema: dict, data: object, valid: bool) -> None:
    # Each case of the official suite: the verdict matches the suite's `valid`.
    errors, _ = compile_schema(schema).first_errors(data)
    assert (not errors) == valid, (desc, errors)


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([1, 1.0], False),  # 1 == 1.0 in JSON Schema
        ([True, 1], True),  # true is not 1
        ([False, 0], True),  # false is not 0
        ([[True], [1]], True),  # nor inside arrays
        ([{"a": True}, {"a": 1}], True),  # nor inside objects
        ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),  # objects compare order-free
        ([{"a": [1, {"b": 2.0}]}, {"a": [1.0, {"b": 2}]}], False),  # numbers nest too
        ([[1, 2], [2, 1]], True),  # arrays are ordered
        ([None, None], False),
        ([None, 0, "", False, [], {}], True),  # six kinds of "nothing", all different
        (["1", 1], True),  # a string is not a number
        ([2**53 + 1, float(2**53)], True),  # exact comparison, not via float
    ],
)
def test_json_schema_equality(items: list, unique: bool) -> None:
    # JSON Schema's equality, not Python's (True == 1) nor a naive JSON string compare.
    errors, _ = compile_schema({"uniqueItems": True}).first_errors(items)
    assert (not errors) == unique, errors


def test_large_float_and_int_compare_exactly() -> None:
    # 1e30 as a float is not exactly 10**30, and Python's == agrees; so must we.
    expected_equal = 10**30 == 1e30
    errors, _ = compile_schema({"uniqueItems": True}).first_errors([10**30, 1e30])
    assert bool(errors) == expected_equal


def test_many_distinct_objects_are_unique_and_one_duplicate_is_found() -> None:
    # Objects are not sortable, which sent jsonschema to its pairwise loop.
    items = [{"id": i, "tags": [i % 7, str(i)]} for i in range(20_000)]
    schema = compile_schema({"uniqueItems": True})
    assert schema.first_errors(items) == ([], False)
    errors, _ = schema.first_errors([*items, {"tags": [3, "10"], "id": 10}])
    assert len(errors) == 1 and "non-unique" in errors[0]
