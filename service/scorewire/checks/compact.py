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
from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError
from scorewire.checks._common import JSONTooDeep, json_kind, loads_strict
from scorewire.checks.safe_regex import UnsafePatternError, compile_safe_regex
from scorewire.checks.schema_subset import SchemaSubsetError, compile_subset_schema
from scorewire.core.context import CheckContext
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import NoParams, ParamError, Params, SyncCheckFn, check_type
from scorewire.engine.spec import CheckSpec, CompiledCheck, compile_check

MAX_CHECKS = 10
"""Most checks in one compact list (lines or array items)."""
MAX_LENGTH = 8192
"""Largest length limit, in code points."""

FAMILY = "compact"


def _number_only(v: Any) -> Any:
    # Lax pydantic would turn True into 1 and "5" into 5; a bound must be a number.
    if isinstance(v, bool | str):
        raise PydanticCustomError(
            "number_type", "must be a number, not {kind}", {"kind": json_kind(v)}
        )
    return v


Number = Annotated[float, BeforeValidator(_number_only)]
WholeNumber = Annotated[int, BeforeValidator(_number_only)]


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else repr(x)


def _span(lo: float | None, hi: float | None) -> str:
    return f"{'' if lo is None else _fmt(lo)}..{'' if hi is None else _fmt(hi)}"


def _bounds(lo: float | None, hi: float | None) -> None:
    if lo is None and hi is None:
        raise ParamError("minimum", "give a minimum, a maximum or both")
    if lo is not None and hi is not None and lo > hi:
        raise ParamError("minimum", f"the minimum {_fmt(lo)} is above the maximum {_fmt(hi)}")


def _range_verdict(what: str, n: float, lo: float | None, hi: float | None) -> Score:
    if lo is not None and n < lo:
        return Score.of(False, f"{what} is {_fmt(n)}, below the minimum {_fmt(lo)}")
    if hi is not None and n > hi:
        return Score.of(False, f"{what} is {_fmt(n)}, above the maximum {_fmt(hi)}")
    return Score.of(True, f"{what} is {_fmt(n)}, within {_span(lo, hi)}")


# --- output_length ---------------------------------------------------------------------


class OutputLengthParams(Params):
    """Bounds on the answer's length in Unicode code points, inclusive, each 0–8192."""

    minimum: WholeNumber | None = None
    """Fewest code points (inclusive); none means 0."""
    maximum: WholeNumber | None = None
    """Most code points (inclusive); none means no upper bound."""


@check_type(
    "output_length",
    description="The answer's length in code points is within inclusive limits (0–8192).",
    family=FAMILY,
    params=OutputLengthParams,
)
def build_output_length(params: OutputLengthParams) -> SyncCheckFn:
    """Length counts Unicode code points, spaces and line breaks included."""
    lo, hi = params.minimum, params.maximum
    for name, v in (("minimum", lo), ("maximum", hi)):
        if v is not None and not 0 <= v <= MAX_LENGTH:
            raise ParamError(name, f"{name} {v} is out of range: length limits are 0–{MAX_LENGTH}")
    _bounds(lo, hi)

    def output_length(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        return _range_verdict("the length", len(output.text), lo, hi)

    return output_length


# --- number_range ----------------------------------------------------------------------


def parse_pointer(text: str) -> tuple[str, ...]:
    """A JSON pointer (`/scores/0`, `~1` for `/`, `~0` for `~`), or `@` for the root.

    Raises ValueError with a message for people.
    """
    if text == "@":
        return ()
    if not text.startswith("/"):
        raise ValueError("the path must be a JSON pointer starting with '/', or @ for the root")
    tokens = []
    for raw in text[1:].split("/"):
        i = raw.find("~")
        while i != -1:
            if raw[i + 1 : i + 2] not in ("0", "1"):
                raise ValueError("in a path write '~' as ~0 and '/' inside a name as ~1")
            i = raw.find("~", i + 2)
        tokens.append(raw.replace("~1", "/").replace("~0", "~"))
    return tuple(tokens)


_MISSING = object()


def _resolve(doc: Any, tokens: tuple[str, ...]) -> Any:
    for token in tokens:
        if isinstance(doc, dict):
            doc = doc.get(token, _MISSING)
        elif isinstance(doc, list):
            ok = token.isascii() and token.isdigit() and (token == "0" or token[0] != "0")
            if not ok or len(token) > 18 or int(token) >= len(doc):
                return _MISSING
            doc = doc[int(token)]
        else:
            return _MISSING
        if doc is _MISSING:
            return _MISSING
    return doc


class NumberRangeParams(Params):
    """Where a number sits in the JSON answer, and its inclusive bounds."""

    path: str
    """JSON pointer (`/score`, `/scores/0`; `~1` is `/`, `~0` is `~`), or `@` for the root."""
    minimum: Number | None = None
    """Smallest accepted value (inclusive)."""
    maximum: Number | None = None
    """Largest accepted value (inclusive)."""


@check_type(
    "number_range",
    description="The JSON answer holds a number at a JSON pointer within inclusive bounds.",
    family=FAMILY,
    params=NumberRangeParams,
)
def build_number_range(params: NumberRangeParams) -> SyncCheckFn:
    """The value must be an actual JSON number: a numeric string or a boolean fails."""
    try:
        tokens = parse_pointer(params.path)
    except ValueError as err:
        raise ParamError("path", str(err)) from None
    lo, hi = params.minimum, params.maximum
    for name, v in (("minimum", lo), ("maximum", hi)):
        if v is not None and not math.isfinite(v):
            raise ParamError(name, f"{name} must be a finite number")
    _bounds(lo, hi)
    where = params.path

    def number_range(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        try:
            doc = loads_strict(output.text)
        except JSONTooDeep:
            return Score.fail_with_error(
                ErrorCode.INVALID_OUTPUT, "the answer is JSON nested too deeply to read"
            )
        except ValueError:
            return Score.of(False, "the answer is not valid JSON")
        value = _resolve(doc, tokens)
        if value is _MISSING:
            return Score.of(False, f"the answer has no value at {where}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return Score.of(False, f"{where} is {json_kind(value)}, not a number")
        if not math.isfinite(value):
            return Score.of(False, f"{where} is not a finite number")
        return _range_verdict(where, value, lo, hi)

    return number_range


# --- json_valid, exact_text, contains_text ---------------------------------------------


@check_type(
    "json_valid",
    description="The answer is valid JSON (standard JSON: no NaN or Infinity).",
    family=FAMILY,
    params=NoParams,
)
def build_json_valid(params: NoParams) -> SyncCheckFn:
    """White space around the JSON is allowed; an empty answer is not JSON."""

    def json_valid(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        try:
            loads_strict(output.text)
        except JSONTooDeep:
            return Score.fail_with_error(
                ErrorCode.INVALID_OUTPUT, "the answer is JSON nested too deeply to read"
            )
        except ValueError as err:
            return Score.of(False, f"the answer is not valid JSON ({err})")
        return Score.of(True, "the answer is valid JSON")

    return json_valid


class TextParams(Params):
    """A piece of text, compared case- and white-space-sensitively."""

    value: str
    """The text."""


@check_type(
    "exact_text",
    description="The whole answer equals the text exactly (case and white space count).",
    family=FAMILY,
    params=TextParams,
)
def build_exact_text(params: TextParams) -> SyncCheckFn:
    """No stripping, no case folding: `exact:OK` fails `OK\\n` and `ok`."""
    want = params.value

    def exact_text(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if output.text == want:
            return Score.of(True, "the answer equals the text")
        return Score.of(False, "the answer differs from the text")

    return exact_text


@check_type(
    "contains_text",
    description="The answer contains the text (case sensitive).",
    family=FAMILY,
    params=TextParams,
)
def build_contains_text(params: TextParams) -> SyncCheckFn:
    """An empty text would pass every answer, so it is a load error."""
    needle = params.value
    if not needle:
        raise ParamError("value", "the text to look for is empty")

    def contains_text(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if needle in output.text:
            return Score.of(True, "the answer contains the text")
        return Score.of(False, "the answer does not contain the text")

    return contains_text


# --- safe_regex, json_schema_v1 --------------------------------------------------------


class SafeRegexParams(Params):
    """A pattern in the safe regular-expression subset (see `safe_regex`)."""

    pattern: str
    """Case-sensitive substring search; ^ and $ anchor the whole answer."""


@check_type(
    "safe_regex",
    description="The answer matches a pattern of the safe regular-expression subset (RE2).",
    family=FAMILY,
    params=SafeRegexParams,
)
def build_safe_regex(params: SafeRegexParams) -> SyncCheckFn:
    """Subset and limits are documented in `scorewire.checks.safe_regex`."""
    try:
        regex = compile_safe_regex(params.pattern)
    except UnsafePatternError as err:
        raise ParamError("pattern", err.message) from None
    search = regex.search

    def safe_regex(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if search(output.text):
            return Score.of(True, "the pattern matches")
        return Score.of(False, "the pattern does not match")

    return safe_regex


class SchemaV1Params(Params):
    """A schema in JSON Schema: RunLog subset v1 (see `schema_subset`)."""

    schema_: dict[str, Any] = Field(alias="schema")
    """The schema; one `type` per node, limits checked at load."""


@check_type(
    "json_schema_v1",
    description="The JSON answer conforms to a schema of JSON Schema: RunLog subset v1.",
    family=FAMILY,
    params=SchemaV1Params,
)
def build_json_schema_v1(params: SchemaV1Params) -> SyncCheckFn:
    """Dialect and limits are documented in `scorewire.checks.schema_subset`."""
    try:
        compiled = compile_subset_schema(params.schema_)
    except SchemaSubsetError as err:
        raise ParamError(
            join_path("schema", err.path) if err.path else "schema", err.message
        ) from None
    check_text = compiled.check_text

    def json_schema_v1(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        passed, reason = check_text(output.text)
        return Score.of(passed, reason)

    return json_schema_v1


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
    try:
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
