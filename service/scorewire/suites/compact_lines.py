"""Compact checks (seed `002_…`): one check per line, or a JSON array of check objects.

Both forms compile to registered check types of the `compact` family, so a compact
check is an ordinary `CompiledCheck` to the engine. Every limit of the seed is enforced
at load time by the types' factories, so it holds for a suite that names these types
directly too.

Line form, one check per line (`parse_compact_lines`):

    contains:TEXT   exact:TEXT   json_valid   length:A..B   number:POINTER:A..B   regex:PATTERN

JSON-array form (`parse_compact_json`), one object per check, keyed by `type`:
`json_schema` (`schema`, JSON Schema: RunLog subset v1), `regex` (`pattern`, the safe
subset), `output_length` (`minimum`, `maximum`), `number_range` (`path`, `minimum`,
`maximum`), `json_valid`, `contains` (`value`) and `exact` (`value`). `regex` and
`json_schema` here mean the *subset* semantics, not the catalog's types of those names.

Choices where the seed is silent:

- At most 10 checks per list; blank lines are ignored and do not count, but line indexes
  in error paths (`compact[3]`) are positions in the list given, blank lines included.
  A `str` given to `parse_compact_lines` is split into lines first.
- The line form ignores white space around a line and around the text after the colon
  (`contains: Northstar` looks for `Northstar`); a line cannot hold a line break. Use the
  JSON form for multi-line or white-space-sensitive text.
- The same check twice in one list is a load error (results are named by the check).
- `exact` compares the whole answer verbatim, case- and white-space-sensitive (a trailing
  newline counts); an empty `exact:` requires an empty answer. `contains` needs non-empty
  text; both are case sensitive.
- `A..B` bounds are inclusive and either side may be left out (`length:..500`), not both;
  `output_length`/`number_range` likewise need at least one of `minimum`/`maximum`. A
  missing maximum means no upper bound.
- Checks reading JSON (`json_valid`, `number:`, `json_schema`) parse the answer text as
  standard JSON (NaN/Infinity are not JSON). An answer that is not JSON fails, as does
  a missing pointer target; an answer nested too deeply for the parser to read (hundreds
  of levels) is an error score for `json_valid` and `number:` (it cannot be scored),
  and a failure naming the nesting limit for `json_schema`.
- The name of a line check is the (stripped) line; of a JSON check, its object written
  as compact JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from scorewire.core.cost import current_meter
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.values import json_length, loads_strict
from scorewire.engine.metering import NAME_CHARS
from scorewire.engine.spec import CheckSpec, CompiledCheck, compile_check

MAX_CHECKS = 10
"""Most checks in one compact list (lines or array items)."""


# --- the line form ---------------------------------------------------------------------

_LINE_HELP = (
    "expected one of contains:TEXT, exact:TEXT, json_valid, length:A..B, "
    "number:POINTER:A..B, regex:PATTERN"
)
_NUMBER_CHARS = frozenset("0123456789.eE+-")


class _LineError(ValueError):
    pass


def _bound_text(text: str, whole: bool) -> float | None:
    text = text.strip()
    if not text:
        return None
    if whole:
        digits = text.removeprefix("-")
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 18:
            raise _LineError(f"{text[:40]!r} is not a whole number of code points")
        return int(text)
    try:
        if not set(text) <= _NUMBER_CHARS:
            raise ValueError
        value = float(text)
    except ValueError:
        raise _LineError(f"{text[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise _LineError(f"{text[:40]!r} is not a finite number")
    return value


def _range_text(text: str, whole: bool, example: str) -> dict[str, Any]:
    parts = text.split("..")
    if len(parts) != 2:
        raise _LineError(f"write the range as A..B, e.g. {example}")
    lo, hi = (_bound_text(p, whole) for p in parts)
    params: dict[str, Any] = {}
    if lo is not None:
        params["minimum"] = lo
    if hi is not None:
        params["maximum"] = hi
    return params


def _line_spec(line: str) -> CheckSpec:
    if "\n" in line or "\r" in line:
        raise _LineError("a compact line cannot hold a line break; use the JSON-array form")
    if line == "json_valid":
        return CheckSpec("json_valid", {}, name=line, params_path="")
    kind, colon, arg = line.partition(":")
    arg = arg.strip()
    if not colon:
        raise _LineError(f"unknown compact check {line[:40]!r}: {_LINE_HELP}")
    if kind == "contains":
        return CheckSpec("contains_text", {"value": arg}, name=line, params_path="")
    if kind == "exact":
        return CheckSpec("exact_text", {"value": arg}, name=line, params_path="")
    if kind == "regex":
        return CheckSpec("safe_regex", {"pattern": arg}, name=line, params_path="")
    if kind == "length":
        params = _range_text(arg, True, "length:10..500")
        return CheckSpec("output_length", params, name=line, params_path="")
    if kind == "number":
        pointer, colon, span = arg.rpartition(":")
        if not colon:
            raise _LineError("write number:POINTER:A..B, e.g. number:/score:0..10")
        params = {"path": pointer.strip(), **_range_text(span, False, "number:/score:0..10")}
        return CheckSpec("number_range", params, name=line, params_path="")
    if kind == "json_valid":
        raise _LineError("json_valid takes no argument")
    raise _LineError(f"unknown compact check {kind[:40]!r}: {_LINE_HELP}")


def _too_many(base: str, index: int, count: int) -> SpecError:
    return SpecError.at(
        join_path(base, index),
        f"{count} checks; the limit is {MAX_CHECKS} checks per list",
    )


def parse_compact_lines(lines: Sequence[str], base: str = "compact") -> list[CompiledCheck]:
    """Compile one check per line (`contains:TEXT`, `length:A..B`, …); see the module doc.

    Raises SpecError with one violation per bad line, each at `base[i]`.
    """
    if isinstance(lines, str):
        lines = lines.splitlines()
    entries: list[tuple[int, str]] = []
    violations: list[FieldViolation] = []
    for i, raw in enumerate(lines):
        if not isinstance(raw, str):
            violations.append(FieldViolation(join_path(base, i), "a compact line must be text"))
        elif raw.strip():
            entries.append((i, raw.strip()))
    if len(entries) > MAX_CHECKS:
        raise _too_many(base, entries[MAX_CHECKS][0], len(entries))
    compiled: list[CompiledCheck] = []
    seen: dict[str, str] = {}
    for i, line in entries:
        path = join_path(base, i)
        if line in seen:
            violations.append(FieldViolation(path, f"duplicate check: same as {seen[line]}"))
            continue
        seen[line] = path
        try:
            compiled.append(compile_check(_line_spec(line), path))
        except _LineError as err:
            violations.append(FieldViolation(path, str(err)))
        except SpecError as err:
            # The line is one field: report every problem at the line itself.
            violations.extend(FieldViolation(path, v.description) for v in err.violations)
    if violations:
        raise SpecError(violations)
    return compiled


# --- the JSON-array form ---------------------------------------------------------------

_JSON_TYPES: dict[str, tuple[str, frozenset[str]]] = {
    "json_schema": ("json_schema_v1", frozenset({"schema"})),
    "regex": ("safe_regex", frozenset({"pattern"})),
    "output_length": ("output_length", frozenset({"minimum", "maximum"})),
    "number_range": ("number_range", frozenset({"path", "minimum", "maximum"})),
    "json_valid": ("json_valid", frozenset()),
    "contains": ("contains_text", frozenset({"value"})),
    "exact": ("exact_text", frozenset({"value"})),
}


def _item_spec(item: Any, path: str) -> CheckSpec:
    if not isinstance(item, dict):
        raise SpecError.at(path, 'each check must be an object such as {"type": "json_valid"}')
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in _JSON_TYPES:
        got = "is missing" if "type" not in item else f"{str(kind)[:40]!r} is not supported"
        raise SpecError.at(
            join_path(path, "type"), f"type {got}: use one of {', '.join(_JSON_TYPES)}"
        )
    registered, keys = _JSON_TYPES[kind]
    accepted = ", ".join(sorted(keys)) or "no other key"
    bad = [
        FieldViolation(
            join_path(path, str(k)), f"unknown key {str(k)[:40]!r} for {kind}; accepted: {accepted}"
        )
        for k in item
        if k != "type" and k not in keys
    ]
    if bad:
        raise SpecError(bad)
    meter = current_meter()
    try:
        if meter is not None:
            # The name is the item written out: measured first, since an item that
            # aliases a big part many times would be far longer than any name may be.
            length = json_length(item, meter.limits.get(NAME_CHARS))
            meter.at_most(NAME_CHARS, length, join_path(path, "name"), "the check name's length")
        name = json.dumps(item, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        raise SpecError.at(path, "the check is not plain JSON") from None
    params = {k: v for k, v in item.items() if k != "type"}
    return CheckSpec(registered, params, name=name, params_path="")


def parse_compact_json(doc: str | list[Any], base: str = "compact") -> list[CompiledCheck]:
    """Compile the JSON-array form: a JSON text or an already-parsed list of objects.

    Raises SpecError with every violation found, at `base[i]` and the key inside it.
    """
    if isinstance(doc, str):
        try:
            doc = loads_strict(doc)
        except ValueError as err:
            raise SpecError.at(base, f"not valid JSON: {err}") from None
    if not isinstance(doc, list):
        raise SpecError.at(base, "compact checks in JSON must be an array of check objects")
    if len(doc) > MAX_CHECKS:
        raise _too_many(base, MAX_CHECKS, len(doc))
    compiled: list[CompiledCheck] = []
    violations: list[FieldViolation] = []
    seen: dict[str, str] = {}
    for i, item in enumerate(doc):
        path = join_path(base, i)
        try:
            spec = _item_spec(item, path)
            if spec.name in seen:
                raise SpecError.at(path, f"duplicate check: same as {seen[spec.name]}")
            seen[spec.name] = path
            compiled.append(compile_check(spec, path))
        except SpecError as err:
            violations.extend(err.violations)
    if violations:
        raise SpecError(violations)
    return compiled


def compact_specs(raw: object, base: str = "compact") -> list[tuple[CheckSpec, str]]:
    """The specs of compact checks with their paths, for measuring before compiling.

    Lines or items that do not parse are left out: compiling reports them.
    """
    out: list[tuple[CheckSpec, str]] = []
    if isinstance(raw, str):
        raw = raw.splitlines()
    if not isinstance(raw, list):
        return out
    for i, item in enumerate(raw):
        path = join_path(base, i)
        try:
            if isinstance(item, str):
                if item.strip():
                    out.append((_line_spec(item.strip()), path))
            else:
                out.append((_item_spec(item, path), path))
        except (_LineError, SpecError):
            continue
    return out
