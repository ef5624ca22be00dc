"""What a check's raw parameters cost.

A check type declares beside its handler, by the parameter a caller writes, what each
costly raw parameter costs a request's meter (`CheckType.costs`): one of the charges
here (regex patterns: count and characters; needles and phrases: count and characters;
JSON Schemas: size, keywords and the patterns inside them; language codes). The engine
charges the declarations (`engine.cost`) before a request's checks compile. The setting
names are `Settings` fields, named by a refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scorewire.core.cost import RequestMeter
from scorewire.core.errors import join_path
from scorewire.core.values import json_length

PATTERNS = "max_patterns_per_request"
PATTERN_CHARS = "max_pattern_chars_per_request"
NEEDLES = "max_needles_per_request"
NEEDLE_CHARS = "max_needle_chars_per_request"
SCHEMA_BYTES = "max_schema_bytes_per_request"
SCHEMA_KEYWORDS = "max_schema_keywords_per_request"
LANGUAGES = "max_languages_per_request"

# --- the charges -----------------------------------------------------------------------


def charge_pattern(meter: RequestMeter, value: Any, field: str) -> None:
    """A regular expression: one pattern and its characters."""
    if isinstance(value, str):
        meter.charge(PATTERNS, 1, field, "regular expressions")
        meter.charge(PATTERN_CHARS, len(value), field, "pattern characters")


def charge_needles(meter: RequestMeter, value: Any, field: str) -> None:
    """Needles or phrases (a string, a list, or an object with `must_include`): their
    count and characters."""
    if isinstance(value, Mapping):
        value = value.get("must_include")
        field = join_path(field, "must_include")
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        meter.charge(NEEDLES, len(value), field, "needles")
        chars = sum(len(n) for n in value if isinstance(n, str))
        meter.charge(NEEDLE_CHARS, chars, field, "needle characters")


_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


def charge_schema(meter: RequestMeter, value: Any, field: str) -> None:
    """A JSON Schema: its compact JSON size, its keywords, and the patterns inside it."""
    if not isinstance(value, Mapping):
        return  # a pydantic model class (Python API) or a type error reported by validation
    left = meter.left(SCHEMA_BYTES)
    try:
        # Counted as it is encoded, up to what the request has left: a schema that
        # aliases one big part many times is refused without being written out.
        size = json_length(value, left)
    except (ValueError, RecursionError):
        size = 0  # a cycle (Python callers) or nesting validation reports
    meter.charge(SCHEMA_BYTES, size, field, "bytes of JSON Schema")
    _walk_schema(meter, value, field)


def _walk_schema(meter: RequestMeter, node: Any, field: str) -> None:
    # Iterative, so a deeply nested schema cannot exhaust the stack here.
    stack: list[tuple[Any, str]] = [(node, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, list):
            stack.extend((v, join_path(where, i)) for i, v in enumerate(item))
            continue
        if not isinstance(item, Mapping):
            continue
        meter.charge(SCHEMA_KEYWORDS, len(item), where, "JSON Schema keywords")
        for key, value in item.items():
            here = join_path(where, str(key))
            if key in _DATA_KEYWORDS:
                continue
            if key == "pattern":
                charge_pattern(meter, value, here)
            elif key == "patternProperties" and isinstance(value, Mapping):
                for p in value:
                    charge_pattern(meter, p, join_path(here, str(p)))
            if key in _NAME_MAPS and isinstance(value, Mapping):
                stack.extend((v, join_path(here, str(k))) for k, v in value.items())
            else:
                stack.append((value, here))


def charge_language(meter: RequestMeter, value: Any, field: str) -> None:
    """A language code: each distinct code once (the detector a request builds)."""
    if isinstance(value, str):
        meter.distinct(LANGUAGES, value.strip().lower(), field, "distinct language codes")
