"""A JSON number of any size is a number (issue 14, defect 2).

Integers beyond a double's range used to turn number checks into CHECK_FAILED error
scores (`OverflowError: int too large to convert to float`). Each row is a check that
reads a number, an output holding a huge or 2^53-adjacent integer, and the verdict it
must reach: a plain pass or fail with a reason, never an error.
"""

from __future__ import annotations

from typing import Any

import pytest
from scorewire.api import score

BIG = 3 * 10**400  # 401 digits: no double holds it
BIG_TEXT = str(BIG)
JSON_BIG = '{"x": ' + BIG_TEXT + "}"

CASES: list[tuple[str, dict[str, Any] | str, str, bool]] = [
    # compact number: and number_range compare the integer exactly against the bounds
    ("number: above a small maximum", "number:/x:0..10", JSON_BIG, False),
    ("number: within open-ended bounds", "number:/x:1..", JSON_BIG, True),
    (
        "number_range above a double maximum",
        {"type": "number_range", "path": "/x", "minimum": 0, "maximum": 1e300},
        JSON_BIG,
        False,
    ),
    (
        "number_range: 2^53+1 is above a maximum of 2^53 given as a double",
        {"type": "number_range", "path": "/x", "maximum": float(2**53)},
        '{"x": 9007199254740993}',
        False,
    ),
    # the schema subset's numeric keywords
    (
        "subset integer above its maximum",
        {
            "type": "json_schema_v1",
            "schema": {"type": "object", "properties": {"x": {"type": "integer", "maximum": 10}}},
        },
        JSON_BIG,
        False,
    ),
    (
        "subset number above its minimum",
        {
            "type": "json_schema_v1",
            "schema": {"type": "object", "properties": {"x": {"type": "number", "minimum": 10}}},
        },
        JSON_BIG,
        True,
    ),
    # numeric_tolerance with output_path, exact beyond 2^53
    (
        "numeric_tolerance far from a small reference",
        {"type": "numeric_tolerance", "expected": 5, "output_path": "x"},
        JSON_BIG,
        False,
    ),
    (
        "numeric_tolerance equal huge integers",
        {"type": "numeric_tolerance", "expected": BIG, "output_path": "x"},
        JSON_BIG,
        True,
    ),
    (
        "numeric_tolerance: 2^53 and 2^53+1 differ at zero tolerance",
        {"type": "numeric_tolerance", "expected": 2**53 + 1, "rel_tol": 0, "output_path": "x"},
        '{"x": 9007199254740992}',
        False,
    ),
    (
        "numeric_tolerance: a numeric string beyond 2^53 is read exactly",
        {"type": "numeric_tolerance", "expected": "9007199254740993", "rel_tol": 0},
        "9007199254740992",
        False,
    ),
    # json_schema's multipleOf in exact arithmetic
    (
        "multipleOf 3 of 3e400",
        {"type": "json_schema", "schema": {"properties": {"x": {"multipleOf": 3}}}},
        JSON_BIG,
        True,
    ),
    (
        "multipleOf 0.5 of a huge integer",
        {"type": "json_schema", "schema": {"properties": {"x": {"multipleOf": 0.5}}}},
        JSON_BIG,
        True,
    ),
    (
        "multipleOf 0.7 of a huge integer",
        {"type": "json_schema", "schema": {"properties": {"x": {"multipleOf": 0.7}}}},
        JSON_BIG,
        False,
    ),
    (
        "multipleOf 7 of 2^53+1 (a double would round it to 2^53)",
        {"type": "json_schema", "schema": {"multipleOf": 7}},
        str(2**53 + 1),
        (2**53 + 1) % 7 == 0,
    ),
    # as people write decimals: 0.0075 is a multiple of 0.0001 (the official suite's case)
    (
        "multipleOf of decimals",
        {"type": "json_schema", "schema": {"multipleOf": 0.0001}},
        "0.0075",
        True,
    ),
    (
        "multipleOf whose float quotient is infinite",
        {"type": "json_schema", "schema": {"type": "integer", "multipleOf": 0.123456789}},
        "1e308",
        False,
    ),
    (
        "json_schema maximum on a huge integer",
        {"type": "json_schema", "schema": {"properties": {"x": {"maximum": 1e308}}}},
        JSON_BIG,
        False,
    ),
]


@pytest.mark.parametrize(
    ("check", "text", "passed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_json_number_of_any_size_is_a_number(
    check: dict[str, Any] | str, text: str, passed: bool
) -> None:
    if isinstance(check, str):
        (got,) = score(text, compact=[check])
    else:
        (got,) = score(text, [check])
    assert got.error is None, got.error
    assert got.passed is passed, got.reason
    assert got.value == (1.0 if passed else 0.0)


def test_reasons_shorten_huge_integers() -> None:
    # a 401-digit number is shown cut, with its digit count, not in full
    (got,) = score(JSON_BIG, compact=["number:/x:0..10"])
    assert "401 digits" in got.reason and BIG_TEXT not in got.reason
