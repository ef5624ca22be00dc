"""A fast validity test for the plain schemas most suites use, beside the full validator.

jsonschema walks a schema through `descend`/`evolve` for every keyword of every
instance (~270 µs for a small order object here); most schemas in suites are plain
`type`/`properties`/`required`/`items`/`enum` trees. `compile_fast` turns such a schema
into nested closures answering one question, "is this instance valid?", in a few
microseconds. Its answer is exactly the full validator's for the keywords it accepts;
a schema using anything else (a `$ref`, a combinator, a pattern, `multipleOf`, a
`$schema` other than 2020-12, any keyword it does not know) gets None and is validated
by jsonschema alone. Failures are always re-validated by the full validator, which
writes their reasons, so only "valid" is ever answered here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scorewire.core.values import json_equal

Test = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {"title", "description", "$comment", "default", "examples", "format", "deprecated"}
    | {"readOnly", "writeOnly"}
)
"""Keywords that never make an instance invalid (`format` is an annotation by default)."""
_DIALECTS = frozenset({"https://json-schema.org/draft/2020-12/schema"})
_NUMBER_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")


_SIZED: dict[str, type[Any]] = {"Length": str, "Items": list, "Properties": dict}
"""What each count keyword (`minLength`, `maxItems`, ...) applies to."""


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPES: dict[str, Test] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": _is_number,
    "integer": _is_integer,
}


def _scalar(x: Any) -> bool:
    return x is None or isinstance(x, bool | int | float | str)


def compile_fast(schema: Any) -> Test | None:
    """The validity test of a root schema, or None when it uses anything unsupported."""
    if isinstance(schema, dict) and "$schema" in schema:
        if schema["$schema"] not in _DIALECTS:
            return None
        schema = {k: v for k, v in schema.items() if k != "$schema"}
    try:
        return _node(schema, 0)
    except _Unsupported:
        return None


class _Unsupported(Exception):
    """The schema uses something `compile_fast` does not answer for."""


def _node(schema: Any, depth: int) -> Test:
    if schema is True:
        return lambda x: True
    if schema is False:
        return lambda x: False
    if not isinstance(schema, dict) or depth > 32:
        raise _Unsupported
    tests: list[Test] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        tests.append(_keyword(key, value, schema, depth))
    if not tests:
        return lambda x: True
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda x: first(x) and second(x)
    every = tuple(tests)

    def all_of(x: Any) -> bool:
        for t in every:  # noqa: SIM110 - a loop: all() over a generator costs twice this
            if not t(x):
                return False
        return True

    return all_of


def _keyword(key: str, value: Any, schema: dict[str, Any], depth: int) -> Test:
    if key == "type":
        return _type(value)
    if key == "properties":
        return _properties(value, depth)
    if key == "required":
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            raise _Unsupported
        names = frozenset(value)
        return lambda x: not isinstance(x, dict) or names.issubset(x.keys())
    if key == "additionalProperties":
        return _additional(value, schema)
    if key == "items":
        item = _node(value, depth + 1)

        def items(x: Any) -> bool:
            if isinstance(x, list):
                for v in x:
                    if not item(v):
                        return False
            return True

        return items
    if key in ("enum", "const"):
        return _enum(value if key == "enum" else [value])
    if key in _NUMBER_BOUNDS:
        return _bound(key, value)
    if key in _COUNTS:
        return _count(key, value)
    raise _Unsupported


def _type(value: Any) -> Test:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(n in _TYPES for n in names):
        raise _Unsupported
    tests = [_TYPES[n] for n in names]
    if len(tests) == 1:
        return tests[0]
    return lambda x: any(t(x) for t in tests)


def _properties(value: Any, depth: int) -> Test:
    if not isinstance(value, dict):
        raise _Unsupported
    subs = tuple((name, _node(sub, depth + 1)) for name, sub in value.items())

    def properties(x: Any) -> bool:
        if isinstance(x, dict):
            for name, test in subs:
                if name in x and not test(x[name]):
                    return False
        return True

    return properties


def _additional(value: Any, schema: dict[str, Any]) -> Test:
    if value is True:
        return lambda x: True
    props = schema.get("properties", {})
    if value is not False or "patternProperties" in schema or not isinstance(props, dict):
        raise _Unsupported
    allowed = frozenset(props)
    return lambda x: not isinstance(x, dict) or allowed.issuperset(x)


def _enum(values: Any) -> Test:
    # Scalars only: comparing a scalar never recurses into the instance, whatever its depth.
    if not isinstance(values, list) or not all(_scalar(v) for v in values):
        raise _Unsupported
    options = tuple(values)
    if all(type(v) is str for v in options):
        # Strings equal only strings: a set lookup answers as json_equal would.
        strings = frozenset(options)
        return lambda x: isinstance(x, str) and x in strings
    return lambda x: any(json_equal(x, v) for v in options)


def _bound(key: str, value: Any) -> Test:
    if not _is_number(value):
        raise _Unsupported
    if key == "minimum":
        return lambda x: not _is_number(x) or x >= value
    if key == "maximum":
        return lambda x: not _is_number(x) or x <= value
    if key == "exclusiveMinimum":
        return lambda x: not _is_number(x) or x > value
    return lambda x: not _is_number(x) or x < value


def _count(key: str, value: Any) -> Test:
    if not _is_integer(value):
        raise _Unsupported
    kind = _SIZED[key[3:]]
    if key.startswith("min"):
        return lambda x: not isinstance(x, kind) or len(x) >= value
    return lambda x: not isinstance(x, kind) or len(x) <= value
