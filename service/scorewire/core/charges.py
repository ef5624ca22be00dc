"""What a check's raw parameters cost, and the rule that none is left unmetered.

A check type declares beside its handler, by the parameter a caller writes, what each
costly raw parameter costs a request's meter (`CheckType.costs`): one of the charges
here (regex patterns: count and characters; needles and phrases: count and characters;
JSON Schemas: size, keywords and the patterns inside them; language codes), or
`Uncosted` saying why it needs none. Which parameters are costly is decided mechanically
(`costly_params`), and `require_metering` refuses a type that leaves one undeclared.
The engine charges the declarations (`engine.metering`) before a request's checks compile.
The setting names are `Settings` fields, named by a refusal.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from scorewire.core.cost import RequestMeter
from scorewire.core.errors import join_path
from scorewire.core.registry import CheckType, Uncosted
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


# --- reasons several families give -----------------------------------------------------

KEY_PATH = Uncosted(
    "a path into the sample or the output (dotted keys or a JSON pointer), compiled once "
    "in time linear in its length"
)
JUDGE_TEXT = Uncosted(
    "shown to the judge in its prompts; a judge budget, when set, reserves every prompt "
    "byte as a token"
)
JUDGE_MODEL = Uncosted("a judge's backend:model name, parsed once")


# --- which parameters are costly -------------------------------------------------------


def costly_params(params: type[BaseModel]) -> list[str]:
    """The parameters of `params` a request can make as large as it likes, by the names a
    caller writes: text without a `max_length`, a list or mapping without one (or whose
    items are costly), any JSON value (`Any`), and a nested model with such a parameter.

    Numbers, booleans, literals and bounded text cost a request next to nothing; a Python
    callable or class never arrives in a request.
    """
    return [
        field.alias or name
        for name, field in params.model_fields.items()
        if _unbounded(field.annotation, _has_max_length(field.metadata))
    ]


_CONTAINERS = (list, tuple, set, frozenset, dict, Sequence, Mapping)


def _unbounded(tp: Any, bounded: bool) -> bool:
    """Whether a value of type `tp` can be any size; `bounded`: a max_length applies."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        return _unbounded(base, bounded or _has_max_length(meta))
    if origin is Union or origin is types.UnionType:
        return any(_unbounded(arg, bounded) for arg in get_args(tp))
    if tp is Any or tp is object:
        return True
    if tp is str or tp is bytes:
        return not bounded
    if origin is Literal:
        return False
    if (origin or tp) in _CONTAINERS:
        items = [a for a in get_args(tp) if a is not Ellipsis]
        return not bounded or not items or any(_unbounded(a, False) for a in items)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return bool(costly_params(tp))
    return False  # numbers, booleans, enums, None, callables, classes


def _has_max_length(metadata: Iterable[Any]) -> bool:
    # annotated_types' MaxLen and Len, pydantic's StringConstraints, and a Field(...)
    # inside Annotated (which keeps its constraints in its own metadata).
    for m in metadata:
        if getattr(m, "max_length", None) is not None:
            return True
        inner = getattr(m, "metadata", None)
        if isinstance(inner, list) and _has_max_length(inner):
            return True
    return False


def unmetered(check_type: CheckType) -> list[str]:
    """The costly parameters of `check_type` that declare neither a charge nor `Uncosted`."""
    return [p for p in costly_params(check_type.params) if p not in check_type.costs]


def require_metering(check_types: Iterable[CheckType]) -> None:
    """Refuse (ValueError) check types with a costly parameter that declares no cost.

    Run under test over every built-in type (`tests/checks/test_check_costs.py`): a
    parameter a request can make large says what it costs before it ships.
    """
    problems = [
        f"check type {t.name!r}: parameter {p!r} can be as large as a request makes it "
        "but declares no cost; give it a charge in costs=, or Uncosted(reason) saying "
        "why it needs none"
        for t in check_types
        for p in unmetered(t)
    ]
    if problems:
        raise ValueError("; ".join(problems))
