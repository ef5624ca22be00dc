"""JSON Schema: RunLog subset v1 — a small schema dialect, compiled once, with hard limits.

A schema in the subset is checked completely before a run and compiled into a tree of
closures; evaluating an answer walks that tree once. Full JSON Schema is the catalog's
`json_schema` check; this is the bounded dialect of compact checks (seed `002_…`).

The dialect (where the seed is silent the choice is written here):

- Every schema node is a JSON object with exactly one `type`, a string among object,
  array, string, number, integer, boolean, null.
- Keywords, each only on the types it applies to:
  object: `properties` (name -> schema), `required` (unique names), `additionalProperties`
  (a boolean; default true); array: `items` (one schema), `minItems`, `maxItems`;
  string: `minLength`, `maxLength` (code points); number and integer: `minimum`,
  `maximum` (inclusive); every scalar type: `const`, `enum` (non-empty list), whose
  values must be scalars of the node's type.
- Rejected before a run, each with its own message: `$ref` and `$defs`/`definitions`
  (references), `pattern`/`patternProperties` (patterns), `format`, `allOf`/`anyOf`/
  `oneOf`/`not`/`if`/`then`/`else` (combined schemas), and every other keyword
  (annotations such as `title` and `$schema` too: the subset lists what it supports).
- `integer` accepts numbers with no fractional part (`2.0` as well as `2`), as JSON
  Schema does; `true`/`false` are never numbers. Whole-number keyword values may be
  written `2.0`.
- Limits on a schema: 4 KiB = 4096 bytes, measured as UTF-8 of compact JSON
  (`json.dumps(schema, separators=(",", ":"), ensure_ascii=False)`); nodes at most 8
  levels deep (the root is level 1; `properties` values and `items` are one level
  below their parent); at most 100 nodes; at most 32 properties, 32 required names and
  32 enum values per node; `minimum`/`maximum` finite and within ±1e15; length limits
  0–8192; array limits 0–512; a lower bound above its upper bound is an error.
- Limits on an answer: at most 32 nesting levels (a top-level array or object is level
  1; scalars add none) and at most 512 values (every array, object and scalar counts,
  the root included; object keys do not). A bigger or deeper answer fails, with a
  reason naming the limit.
- A failing answer's reason shows at most three failing paths with their requirements
  (JSON pointers, `@` for the root), then how many more there were.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from scorewire.core.values import (
    JSONTooDeep,
    format_number,
    is_finite,
    is_whole,
    json_kind,
    loads_strict,
)

MAX_SCHEMA_BYTES = 4096
"""Largest schema, in bytes of UTF-8 compact JSON."""
MAX_SCHEMA_DEPTH = 8
"""Deepest schema node (the root is level 1)."""
MAX_SCHEMA_NODES = 100
"""Most schema nodes (objects with a `type`)."""
MAX_PER_NODE = 32
"""Most properties, required names or enum values in one node."""
MAX_CANDIDATE_DEPTH = 32
"""Deepest nesting of arrays/objects accepted in an answer."""
MAX_CANDIDATE_VALUES = 512
"""Most JSON values accepted in an answer."""
MAX_ABS_BOUND = 1e15
"""Largest magnitude of `minimum`/`maximum`."""
MAX_LENGTH_LIMIT = 8192
"""Largest `minLength`/`maxLength`."""
MAX_ITEMS_LIMIT = 512
"""Largest `minItems`/`maxItems`."""
MAX_SHOWN_FAILURES = 3
"""Most failing paths spelled out in a reason."""

TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_SCALAR_KEYWORDS = frozenset({"const", "enum"})
_KEYWORDS_BY_TYPE: dict[str, frozenset[str]] = {
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "string": frozenset({"minLength", "maxLength"}) | _SCALAR_KEYWORDS,
    "number": frozenset({"minimum", "maximum"}) | _SCALAR_KEYWORDS,
    "integer": frozenset({"minimum", "maximum"}) | _SCALAR_KEYWORDS,
    "boolean": _SCALAR_KEYWORDS,
    "null": _SCALAR_KEYWORDS,
}
_SUPPORTED = frozenset({"type"}).union(*_KEYWORDS_BY_TYPE.values())
_REJECTED = {
    "$ref": "references ($ref) are not supported",
    "$defs": "references ($defs) are not supported",
    "definitions": "references (definitions) are not supported",
    "pattern": "patterns are not supported",
    "patternProperties": "patterns (patternProperties) are not supported",
    "format": "formats are not supported",
    **{
        k: f"combined schemas ({k}) are not supported"
        for k in ("allOf", "anyOf", "oneOf", "not", "if", "then", "else")
    },
}
_ARTICLE = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean",
    "null": "null",
}


class SchemaSubsetError(ValueError):
    """A schema outside RunLog subset v1 or over one of its limits."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        """Dotted location inside the schema (`properties.score.minimum`), "" for the root."""
        self.message = message


def escape_pointer_token(token: str) -> str:
    """Escape one JSON-pointer token (`~` -> `~0`, `/` -> `~1`)."""
    return token.replace("~", "~0").replace("/", "~1")


def _num(x: float) -> str:
    return format_number(x) if isinstance(x, int) else json.dumps(x)


# --- evaluation ----------------------------------------------------------------------


class _Problems:
    """Failing paths found so far: the first few spelled out, the rest counted."""

    __slots__ = ("count", "shown")

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.count = 0

    def add(self, path: str, requirement: str) -> None:
        self.count += 1
        if len(self.shown) < MAX_SHOWN_FAILURES:
            self.shown.append(f"{path or '@'}: {requirement}")

    def reason(self) -> str:
        more = self.count - len(self.shown)
        tail = f"; and {more} more" if more else ""
        return "does not match the schema: " + "; ".join(self.shown) + tail


Validate = Callable[[Any, str, _Problems], None]


def _candidate_limits(doc: Any) -> str | None:
    """Why `doc` is too deep or too big for evaluation, or None."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    values = 0
    while stack:
        value, depth = stack.pop()
        values += 1
        if values > MAX_CANDIDATE_VALUES:
            return (
                f"the answer holds more than {MAX_CANDIDATE_VALUES} values; the limit is "
                f"{MAX_CANDIDATE_VALUES} values"
            )
        if isinstance(value, dict | list):
            if depth + 1 > MAX_CANDIDATE_DEPTH:
                return (
                    f"the answer nests more than {MAX_CANDIDATE_DEPTH} levels deep; the limit "
                    f"is {MAX_CANDIDATE_DEPTH} candidate nesting levels"
                )
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return None


class SubsetSchema:
    """A compiled subset schema: `check_text` / `check_value` answer (passed, reason)."""

    __slots__ = ("_validate", "schema")

    def __init__(self, schema: dict[str, Any], validate: Validate) -> None:
        self.schema = schema
        """The schema as given."""
        self._validate = validate

    def check_value(self, value: Any) -> tuple[bool, str]:
        """Validate an already-parsed JSON value."""
        too_big = _candidate_limits(value)
        if too_big is not None:
            return False, too_big
        problems = _Problems()
        self._validate(value, "", problems)
        if problems.count:
            return False, problems.reason()
        return True, "matches the schema"

    def check_text(self, text: str) -> tuple[bool, str]:
        """Parse `text` as JSON and validate it; text that is not JSON fails."""
        try:
            value = loads_strict(text)
        except JSONTooDeep:
            return False, (
                f"the answer nests more than {MAX_CANDIDATE_DEPTH} levels deep; the limit "
                f"is {MAX_CANDIDATE_DEPTH} candidate nesting levels"
            )
        except ValueError as err:
            return False, f"the answer is not valid JSON ({err})"
        return self.check_value(value)


# --- compilation ---------------------------------------------------------------------


def _where(path: list[str], key: str | None = None) -> str:
    return ".".join([*path, key] if key is not None else path)


def _whole(node: dict[str, Any], key: str, path: list[str], limit: int, what: str) -> int | None:
    if key not in node:
        return None
    v = node[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not is_whole(v):
        raise SchemaSubsetError(_where(path, key), f"{key} must be a whole number")
    n = int(v)
    if not 0 <= n <= limit:
        raise SchemaSubsetError(
            _where(path, key), f"{key} {n} is out of range: {what} limits are 0–{limit}"
        )
    return n


def _bound(node: dict[str, Any], key: str, path: list[str]) -> float | None:
    if key not in node:
        return None
    v = node[key]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise SchemaSubsetError(_where(path, key), f"{key} must be a number")
    if not is_finite(v) or abs(v) > MAX_ABS_BOUND:
        raise SchemaSubsetError(
            _where(path, key),
            f"{key} {v} is out of range: numeric bounds are finite and within ±1e15",
        )
    return v


def _ordered(lo: float | None, hi: float | None, names: str, path: list[str]) -> None:
    if lo is not None and hi is not None and lo > hi:
        raise SchemaSubsetError(_where(path), f"{names}: the minimum is above the maximum")


def _fits_type(value: Any, type_: str) -> bool:
    if type_ == "string":
        return isinstance(value, str)
    if type_ == "boolean":
        return isinstance(value, bool)
    if type_ == "null":
        return value is None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if not is_finite(value):
        return False
    return type_ == "number" or is_whole(value)


class _Compiler:
    def __init__(self) -> None:
        self.nodes = 0

    def node(self, node: Any, path: list[str], depth: int) -> Validate:
        if not isinstance(node, dict):
            raise SchemaSubsetError(_where(path), "a schema must be a JSON object")
        self.nodes += 1
        if self.nodes > MAX_SCHEMA_NODES:
            raise SchemaSubsetError(
                _where(path),
                f"the schema has more than {MAX_SCHEMA_NODES} nodes; the limit is "
                f"{MAX_SCHEMA_NODES} nodes",
            )
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaSubsetError(
                _where(path),
                f"schema nodes nest {depth} levels deep; the limit is {MAX_SCHEMA_DEPTH} "
                "nesting levels",
            )
        for key in node:
            if not isinstance(key, str):
                raise SchemaSubsetError(_where(path), "keywords must be strings")
            if key in _REJECTED:
                raise SchemaSubsetError(_where(path, key), _REJECTED[key])
            if key not in _SUPPORTED:
                raise SchemaSubsetError(
                    _where(path, key),
                    f"unknown keyword {key!r}: RunLog subset v1 supports only "
                    + ", ".join(sorted(_SUPPORTED)),
                )
        type_ = node.get("type")
        if "type" not in node:
            raise SchemaSubsetError(
                _where(path), "every schema node needs exactly one type: " + ", ".join(TYPES)
            )
        if not isinstance(type_, str):
            raise SchemaSubsetError(
                _where(path, "type"), "exactly one type per node (a string): " + ", ".join(TYPES)
            )
        if type_ not in _KEYWORDS_BY_TYPE:
            raise SchemaSubsetError(
                _where(path, "type"), f"unknown type {type_!r}: use one of " + ", ".join(TYPES)
            )
        for key in node:
            if key != "type" and key not in _KEYWORDS_BY_TYPE[type_]:
                raise SchemaSubsetError(_where(path, key), f"{key} does not apply to type {type_}")
        if type_ == "object":
            return self.object(node, path, depth)
        if type_ == "array":
            return self.array(node, path, depth)
        return self.scalar(node, type_, path)

    def object(self, node: dict[str, Any], path: list[str], depth: int) -> Validate:
        props = node.get("properties", {})
        if not isinstance(props, dict):
            raise SchemaSubsetError(_where(path, "properties"), "properties must be an object")
        if len(props) > MAX_PER_NODE:
            raise SchemaSubsetError(
                _where(path, "properties"),
                f"{len(props)} properties; the limit is {MAX_PER_NODE} properties per node",
            )
        if not all(isinstance(name, str) for name in props):
            raise SchemaSubsetError(_where(path, "properties"), "property names must be strings")
        compiled = [
            (
                name,
                escape_pointer_token(name),
                self.node(sub, [*path, "properties", name], depth + 1),
            )
            for name, sub in props.items()
        ]
        required = node.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise SchemaSubsetError(_where(path, "required"), "required must be a list of names")
        if len(required) > MAX_PER_NODE:
            raise SchemaSubsetError(
                _where(path, "required"),
                f"{len(required)} required fields; the limit is {MAX_PER_NODE} required "
                "fields per node",
            )
        if len(set(required)) != len(required):
            raise SchemaSubsetError(_where(path, "required"), "required names must be unique")
        extra = node.get("additionalProperties", True)
        if not isinstance(extra, bool):
            raise SchemaSubsetError(
                _where(path, "additionalProperties"),
                "additionalProperties must be true or false (schemas are not supported)",
            )
        needed = [(name, escape_pointer_token(name)) for name in required]
        known = frozenset(props)

        def validate(value: Any, at: str, out: _Problems) -> None:
            if not isinstance(value, dict):
                out.add(at, f"expected an object, got {json_kind(value)}")
                return
            for name, token in needed:
                if name not in value:
                    out.add(f"{at}/{token}", "required property is missing")
            for name, token, sub in compiled:
                if name in value:
                    sub(value[name], f"{at}/{token}", out)
            if not extra:
                for name in value:
                    if name not in known:
                        out.add(
                            f"{at}/{escape_pointer_token(name)}",
                            "property not allowed (additionalProperties is false)",
                        )

        return validate

    def array(self, node: dict[str, Any], path: list[str], depth: int) -> Validate:
        lo = _whole(node, "minItems", path, MAX_ITEMS_LIMIT, "array")
        hi = _whole(node, "maxItems", path, MAX_ITEMS_LIMIT, "array")
        _ordered(lo, hi, "minItems/maxItems", path)
        if "items" in node and isinstance(node["items"], list):
            raise SchemaSubsetError(
                _where(path, "items"), "items must be one schema (tuple forms are not supported)"
            )
        items = self.node(node["items"], [*path, "items"], depth + 1) if "items" in node else None

        def validate(value: Any, at: str, out: _Problems) -> None:
            if not isinstance(value, list):
                out.add(at, f"expected an array, got {json_kind(value)}")
                return
            n = len(value)
            if lo is not None and n < lo:
                out.add(at, f"must have at least {lo} items (has {n})")
            if hi is not None and n > hi:
                out.add(at, f"must have at most {hi} items (has {n})")
            if items is not None:
                for i, item in enumerate(value):
                    items(item, f"{at}/{i}", out)

        return validate

    def scalar(self, node: dict[str, Any], type_: str, path: list[str]) -> Validate:
        allowed = self.allowed_values(node, type_, path)
        want = _ARTICLE[type_]
        if type_ == "string":
            lo = _whole(node, "minLength", path, MAX_LENGTH_LIMIT, "length")
            hi = _whole(node, "maxLength", path, MAX_LENGTH_LIMIT, "length")
            _ordered(lo, hi, "minLength/maxLength", path)
            return _string_validator(lo, hi, allowed)
        low = _bound(node, "minimum", path)
        high = _bound(node, "maximum", path)
        _ordered(low, high, "minimum/maximum", path)
        if type_ in ("number", "integer"):
            return _number_validator(type_, want, low, high, allowed)

        def validate(value: Any, at: str, out: _Problems) -> None:
            if not _fits_type(value, type_):
                out.add(at, f"expected {want}, got {json_kind(value)}")
            elif allowed is not None and value not in allowed[0]:
                out.add(at, allowed[1])

        return validate

    @staticmethod
    def allowed_values(
        node: dict[str, Any], type_: str, path: list[str]
    ) -> tuple[list[Any], str] | None:
        """const/enum as (values, requirement text), checked against the node's type."""
        if "const" in node and "enum" in node:
            raise SchemaSubsetError(_where(path), "use const or enum, not both")
        if "const" in node:
            values, key = [node["const"]], "const"
        elif "enum" in node:
            values, key = node["enum"], "enum"
            if not isinstance(values, list) or not values:
                raise SchemaSubsetError(_where(path, key), "enum must be a non-empty list")
            if len(values) > MAX_PER_NODE:
                raise SchemaSubsetError(
                    _where(path, key),
                    f"{len(values)} enum values; the limit is {MAX_PER_NODE} enum values per node",
                )
        else:
            return None
        for v in values:
            if isinstance(v, dict | list):
                raise SchemaSubsetError(_where(path, key), f"{key} values must be scalars")
            if not _fits_type(v, type_):
                raise SchemaSubsetError(
                    _where(path, key),
                    f"{key} value {json.dumps(v)[:40]} is not {_ARTICLE[type_]}",
                )
        shown = json.dumps(values[0] if key == "const" else values, ensure_ascii=False)
        if len(shown) > 80:
            shown = f"one of {len(values)} allowed values" if key == "enum" else "the const"
        text = f"must equal {shown}" if key == "const" else f"must be one of {shown}"
        return values, text


def _string_validator(
    lo: int | None, hi: int | None, allowed: tuple[list[Any], str] | None
) -> Validate:
    def validate(value: Any, at: str, out: _Problems) -> None:
        if not isinstance(value, str):
            out.add(at, f"expected a string, got {json_kind(value)}")
            return
        n = len(value)
        if lo is not None and n < lo:
            out.add(at, f"must have at least {lo} characters (has {n})")
        if hi is not None and n > hi:
            out.add(at, f"must have at most {hi} characters (has {n})")
        if allowed is not None and value not in allowed[0]:
            out.add(at, allowed[1])

    return validate


def _number_validator(
    type_: str,
    want: str,
    lo: float | None,
    hi: float | None,
    allowed: tuple[list[Any], str] | None,
) -> Validate:
    def validate(value: Any, at: str, out: _Problems) -> None:
        if not _fits_type(value, type_):
            got = json_kind(value)
            if got == "a number":
                got = "a number with a fraction" if is_finite(value) else "a huge number"
            out.add(at, f"expected {want}, got {got}")
            return
        if lo is not None and value < lo:
            out.add(at, f"must be at least {_num(lo)} (is {_num(value)})")
        if hi is not None and value > hi:
            out.add(at, f"must be at most {_num(hi)} (is {_num(value)})")
        if allowed is not None and value not in allowed[0]:
            out.add(at, allowed[1])

    return validate


def compile_subset_schema(schema: Any) -> SubsetSchema:
    """Check `schema` against RunLog subset v1 and its limits, and compile it once.

    Raises SchemaSubsetError naming the keyword or limit at fault.
    """
    try:
        text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise SchemaSubsetError("", "the schema nests too deeply") from None
    except (TypeError, ValueError) as err:
        raise SchemaSubsetError("", f"the schema is not plain JSON ({err})") from None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SCHEMA_BYTES:
        raise SchemaSubsetError(
            "",
            f"the schema is {size} bytes as compact JSON; the limit is 4 KiB "
            f"({MAX_SCHEMA_BYTES} bytes)",
        )
    validate = _Compiler().node(schema, [], 1)
    return SubsetSchema(schema, validate)
