"""The fast validity test answers exactly as the full validator for the schemas it takes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from scorewire.schema.fast import compile_fast

SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite" / "tests"
ORDER = {
    "type": "object",
    "properties": {
        "order_id": {"type": "integer", "minimum": 1},
        "status": {"enum": ["pending", "shipped"]},
        "items": {"type": "array", "items": {"type": "object", "required": ["sku"]}},
    },
    "required": ["order_id", "status"],
    "additionalProperties": False,
}


def _suite_cases() -> list[tuple[str, Any, Any, bool]]:
    out = []
    for path in sorted((SUITE / "draft2020-12").rglob("*.json")):
        for group in json.loads(path.read_text()):
            for case in group["tests"]:
                name = f"{path.name}: {group['description']}: {case['description']}"
                out.append((name, group["schema"], case["data"], case["valid"]))
    return out


def test_every_accepted_suite_schema_agrees_with_jsonschema() -> None:
    # Every official 2020-12 case whose schema the fast test takes: same verdict as
    # jsonschema itself, valid and invalid alike.
    taken = 0
    for name, schema, data, _ in _suite_cases():
        test = compile_fast(schema)
        if test is None:
            continue
        taken += 1
        assert test(data) == Draft202012Validator(schema).is_valid(data), name
    assert taken > 100  # the fast path covers a real share of the suite


@pytest.mark.parametrize(
    ("instance", "valid"),
    [
        ({"order_id": 1, "status": "pending"}, True),
        ({"order_id": 1.0, "status": "pending"}, True),  # 1.0 is an integer in 2020-12
        ({"order_id": True, "status": "pending"}, False),  # true is not an integer
        ({"order_id": 0, "status": "pending"}, False),  # under minimum
        ({"order_id": 1}, False),  # required status missing
        ({"order_id": 1, "status": "lost"}, False),  # not in enum
        ({"order_id": 1, "status": "pending", "x": 1}, False),  # additionalProperties false
        ({"order_id": 1, "status": "pending", "items": [{}]}, False),  # an item lacks sku
        ({"order_id": 2**64 + 1, "status": "shipped"}, True),  # big integers stay exact
        ("not an object", False),
    ],
)
def test_order_schema_verdicts_match_jsonschema(instance: Any, valid: bool) -> None:
    test = compile_fast(ORDER)
    assert test is not None
    assert test(instance) is valid
    assert Draft202012Validator(ORDER).is_valid(instance) is valid


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/a", "$defs": {"a": {}}},  # references
        {"anyOf": [{"type": "string"}]},  # combinators
        {"type": "string", "pattern": "^a"},  # patterns run on RE2 in the full validator
        {"type": "number", "multipleOf": 0.1},  # exact arithmetic in the full validator
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"},  # other drafts
        {"type": "object", "x-vendor": 1},  # a keyword it does not know
        {"enum": [[1, 2]]},  # non-scalar enum values
    ],
)
def test_schemas_it_does_not_answer_for_get_none(schema: dict[str, Any]) -> None:
    # Each of these is left to jsonschema alone.
    assert compile_fast(schema) is None
