"""The `compact` check family (seed `002_…`): the types that one-line compact checks name.

`contains_text`, `exact_text`, `json_valid`, `output_length`, `number_range`,
`safe_regex` (the seed's safe regular-expression subset) and `json_schema_v1` (its JSON
Schema subset). Every limit of the seed is enforced at load time by the factories, so it
holds for a suite that names these types directly too. The line and JSON-array forms
that compile to these types are a suite format: `scorewire.suites.compact_lines`.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import scorewire.checks.output_form
import scorewire.checks.reference  # noqa: F401 - registers the types the aliases name
from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError
from scorewire.core.charges import KEY_PATH, charge_needles, charge_pattern, charge_schema
from scorewire.core.context import CheckContext
from scorewire.core.errors import join_path
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import (
    NoParams,
    ParamError,
    Params,
    SyncCheckFn,
    Uncosted,
    alias_type,
    check_type,
)
from scorewire.core.values import (
    JSONTooDeep,
    format_number,
    is_finite,
    json_kind,
    loads_strict,
)
from scorewire.regex.safe_subset import UnsafePatternError, compile_safe_regex
from scorewire.schema.subset import SchemaSubsetError, compile_subset_schema

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
    if isinstance(x, int):
        return format_number(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e16 else repr(x)


def _span(lo: float | None, hi: float | None) -> str:
    return f"{'' if lo is None else _fmt(lo)}..{'' if hi is None else _fmt(hi)}"


def _bounds(lo: float | None, hi: float | None) -> None:
    if lo is None and hi is None:
        raise ParamError("minimum", "give a minimum, a maximum or both")
    if lo is not None and hi is not None and lo > hi:
        raise ParamError("minimum", f"the minimum {_fmt(lo)} is above the maximum {_fmt(hi)}")


def _range_verdict(what: str, n: float, lo: float | None, hi: float | None) -> Score:
    if lo is not None and n < lo:
        return Score(0.0, False, f"{what} is {_fmt(n)}, below the minimum {_fmt(lo)}")
    if hi is not None and n > hi:
        return Score(0.0, False, f"{what} is {_fmt(n)}, above the maximum {_fmt(hi)}")
    return Score(1.0, True, f"{what} is {_fmt(n)}, within {_span(lo, hi)}")


# --- output_length ---------------------------------------------------------------------


class OutputLengthParams(Params):
    """Bounds on the answer's length in Unicode code points, inclusive, each 0–8192."""

    minimum: WholeNumber | None = None
    """Fewest code points (inclusive); none means 0."""
    maximum: WholeNumber | None = None
    """Most code points (inclusive); none means no upper bound."""


def _check_length_bounds(params: OutputLengthParams) -> None:
    lo, hi = params.minimum, params.maximum
    for name, v in (("minimum", lo), ("maximum", hi)):
        if v is not None and not 0 <= v <= MAX_LENGTH:
            raise ParamError(name, f"{name} {v} is out of range: length limits are 0–{MAX_LENGTH}")
    _bounds(lo, hi)


alias_type(
    "output_length",
    of="length",
    params=OutputLengthParams,
    adapt=lambda p: {"min_chars": p.minimum, "max_chars": p.maximum},
    validate=_check_length_bounds,
    description="The compact spelling of `length` (`length:A..B`): code points within "
    "inclusive limits, each 0–8192.",
)


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
    costs={"path": KEY_PATH},
)
def build_number_range(params: NumberRangeParams) -> SyncCheckFn:
    """The value must be an actual JSON number: a numeric string or a boolean fails.

    An integer of any size is compared exactly with the bounds (Python compares ints with
    floats exactly), so a 400-digit integer is simply above a maximum of 10.
    """
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
            return Score(0.0, False, "the answer is not valid JSON")
        value = _resolve(doc, tokens)
        if value is _MISSING:
            return Score(0.0, False, f"the answer has no value at {where}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return Score(0.0, False, f"{where} is {json_kind(value)}, not a number")
        if not is_finite(value):  # an int of any size is finite and compared exactly
            return Score(0.0, False, f"{where} is not a finite number")
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
            return Score(0.0, False, f"the answer is not valid JSON ({err})")
        return Score(1.0, True, "the answer is valid JSON")

    return json_valid


class TextParams(Params):
    """A piece of text, compared case- and white-space-sensitively."""

    value: str
    """The text to compare with, verbatim (case and white space count)."""


def _nonempty(params: TextParams) -> None:
    # An empty text would pass every answer, so it is a load error.
    if not params.value:
        raise ParamError("value", "the text to look for is empty")


alias_type(
    "exact_text",
    of="exact",
    params=TextParams,
    adapt=lambda p: {"expected": p.value, "case_sensitive": True, "strip": False},
    costs={"value": Uncosted("compared with each output, in time linear in its length")},
    description="The compact spelling of `exact` (`exact:OK`): the whole answer, verbatim "
    "(no stripping, no case folding).",
)
alias_type(
    "contains_text",
    of="contains",
    params=TextParams,
    adapt=lambda p: {"needles": [p.value], "case_sensitive": True},
    validate=_nonempty,
    costs={"value": charge_needles},
    description="The compact spelling of `contains` (`contains:Northstar`): one text, "
    "case sensitive.",
)


# --- safe_regex, json_schema_v1 --------------------------------------------------------


class SafeRegexParams(Params):
    """A pattern in the safe regular-expression subset (see `scorewire.regex.safe_subset`)."""

    pattern: str
    """Case-sensitive substring search; ^ and $ anchor the whole answer."""


@check_type(
    "safe_regex",
    description="The answer matches a pattern of seed 002's small safe subset (what `regex:` "
    "lines take); `regex` takes full Python syntax.",
    family=FAMILY,
    params=SafeRegexParams,
    costs={"pattern": charge_pattern},
)
def build_safe_regex(params: SafeRegexParams) -> SyncCheckFn:
    """Subset and limits are documented in `scorewire.regex.safe_subset`."""
    try:
        regex = compile_safe_regex(params.pattern)
    except UnsafePatternError as err:
        raise ParamError("pattern", err.message) from None
    search = regex.search

    def safe_regex(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if search(output.text):
            return Score(1.0, True, "the pattern matches")
        return Score(0.0, False, "the pattern does not match")

    return safe_regex


class SchemaV1Params(Params):
    """A schema in JSON Schema: RunLog subset v1 (see `scorewire.schema.subset`)."""

    schema_: dict[str, Any] = Field(alias="schema")
    """The schema; one `type` per node, limits checked at load."""


@check_type(
    "json_schema_v1",
    description="The JSON answer conforms to a schema of seed 002's small subset v1 (compact "
    "checks); `json_schema` takes full JSON Schema.",
    family=FAMILY,
    params=SchemaV1Params,
    costs={"schema": charge_schema},
)
def build_json_schema_v1(params: SchemaV1Params) -> SyncCheckFn:
    """Dialect and limits are documented in `scorewire.schema.subset`."""
    try:
        compiled = compile_subset_schema(params.schema_)
    except SchemaSubsetError as err:
        raise ParamError(
            join_path("schema", err.path) if err.path else "schema", err.message
        ) from None
    check_text = compiled.check_text

    def json_schema_v1(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        passed, reason = check_text(output.text)
        return Score(float(passed), passed, reason)

    return json_schema_v1
