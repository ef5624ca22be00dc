"""Helpers shared by the check families: references, JSON paths, JSON parsing, results.

Everything here is split into a load-time half (parse a path, bind a literal) and a
per-sample half that does as little as possible.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import orjson
from scorewire.core.model import ErrorCode, Measurement, Output, Sample, Score
from scorewire.core.registry import ParamError, ThresholdRule

JSON = Any

# --- paths -----------------------------------------------------------------------------

PathPart = tuple[str, int | None]
"""One step of a path: the key as text, and its value as a list index when it is one."""


class JsonPath:
    """A compiled path into a JSON value: dotted keys (`answer.items.0`) or a JSON pointer.

    A path starting with `/` is an RFC 6901 JSON pointer (`/answer/items/0`, `~1` for `/`
    and `~0` for `~` in keys); anything else is dotted keys. A part made of digits indexes
    a list and names a key in an object, so `items.0` and `{"0": ...}` both work.
    """

    __slots__ = ("parts", "text")

    parts: tuple[PathPart, ...]
    """The steps, in order; empty for the JSON pointer "" (the whole value)."""
    text: str
    """The path as the user wrote it, for messages."""

    def __init__(self, text: str, parts: tuple[PathPart, ...]) -> None:
        self.text = text
        self.parts = parts

    def lookup(self, value: JSON) -> tuple[bool, JSON, str]:
        """(found, value, why-not). `why-not` names the step that failed, for messages."""
        for key, index in self.parts:
            if isinstance(value, dict):
                if key not in value:
                    return False, None, f"no key {key!r}"
                value = value[key]
            elif isinstance(value, list):
                if index is None:
                    return False, None, f"{key!r} is not a list index"
                if index >= len(value):
                    return False, None, f"index {index} is past the end of a list of {len(value)}"
                value = value[index]
            else:
                return False, None, f"cannot step into {json_kind(value)} with {key!r}"
        return True, value, ""

    def __repr__(self) -> str:
        return f"JsonPath({self.text!r})"


def compile_path(text: str, field: str) -> JsonPath:
    """Parse a dotted path or JSON pointer once, at load time; ParamError at `field`."""
    if not isinstance(text, str):
        raise ParamError(field, "a path must be a string")
    if text.startswith("/"):
        raw = [p.replace("~1", "/").replace("~0", "~") for p in text[1:].split("/")]
        if any("~" in p.replace("~1", "").replace("~0", "") for p in text[1:].split("/")):
            raise ParamError(field, "a JSON pointer may escape only '~0' and '~1'")
    else:
        if not text:
            raise ParamError(field, "a path must not be empty")
        raw = text.split(".")
        if any(p == "" for p in raw):
            raise ParamError(field, f"empty key in path {text!r}")
    parts = tuple((p, int(p) if p.isascii() and p.isdigit() else None) for p in raw)
    return JsonPath(text, parts)


# --- references ------------------------------------------------------------------------


class Reference:
    """Where a check's reference comes from: a literal, else the sample's expected (or a path).

    A missing or null reference is an error score (`MISSING_REFERENCE`) whose message
    names where it looked. Build it once per spec; call `resolve` per sample.
    """

    __slots__ = ("has_literal", "literal", "path")

    def __init__(self, literal: JSON, path: JsonPath | None) -> None:
        self.literal = literal
        self.has_literal = literal is not None
        self.path = path

    @classmethod
    def from_params(
        cls, expected: JSON, path: str | None, *, path_field: str = "path"
    ) -> Reference:
        """Bind `expected:` and `path:`; both at once is a load error (path reads the sample)."""
        if expected is not None and path is not None:
            raise ParamError(
                path_field,
                "path reads the sample's expected value; it cannot be combined with a literal "
                "expected",
            )
        return cls(expected, compile_path(path, path_field) if path is not None else None)

    def resolve(self, sample: Sample) -> JSON | Score:
        """The reference for `sample`, or an error Score saying where it looked."""
        if self.has_literal:
            return self.literal
        value = sample.expected
        if value is None:
            return Score.fail_with_error(
                ErrorCode.MISSING_REFERENCE,
                f"no reference: the check sets no expected value and sample {sample.id!r} has none",
            )
        if self.path is None:
            return value
        found, got, why = self.path.lookup(value)
        if not found:
            return Score.fail_with_error(
                ErrorCode.MISSING_REFERENCE,
                f"no reference: sample {sample.id!r} has no expected value at path "
                f"{self.path.text!r} ({why})",
            )
        if got is None:
            return Score.fail_with_error(
                ErrorCode.MISSING_REFERENCE,
                f"no reference: sample {sample.id!r} expected value at path "
                f"{self.path.text!r} is null",
            )
        return got


# --- JSON ------------------------------------------------------------------------------


class JSONTooDeep(ValueError):
    """A JSON text nested too deeply for the parser's recursion limit."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_int(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:  # beyond Python's digit limit: still a JSON number
        return float(digits)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)


def loads_strict(text: str) -> Any:
    """Parse standard JSON: NaN/Infinity are rejected (ValueError), very deep text is
    JSONTooDeep (a ValueError), never a RecursionError."""
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise JSONTooDeep("the JSON is nested too deeply to parse") from None


_LONG_DIGITS = re.compile(r"[0-9]{19}")
"""Nineteen digits in a row: an integer orjson may not hold exactly (it keeps 64 bits)."""
_DIGITS = b"0123456789"


def _may_hold_long_digits(text: str) -> bool:
    """Whether `text` may have nineteen digits in a row: it has nineteen digits at all
    and then `_LONG_DIGITS` finds a run. Counting the digits of the UTF-8 bytes is several
    times cheaper than the search on the short texts requests carry (a byte below 0x80
    is an ASCII character, so only the digits themselves are dropped)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) - len(data.translate(None, _DIGITS)) < 19:
        return False
    return _LONG_DIGITS.search(text) is not None


def loads_fast(text: str) -> Any:
    """What `loads_strict` returns for `text`, parsed by orjson when that is the same.

    orjson is about twice as fast on the small objects requests carry. It holds integers
    only within 64 bits (beyond, it gives a float), so a text with a run of 19 digits goes
    to the standard parser, as does anything orjson refuses (lone surrogates, nesting
    past its limit), which then parses or raises exactly as `loads_strict`.
    """
    got = _orjson_or_miss(text)
    return got if got is not _MISS else loads_strict(text)


def is_json(text: str) -> bool:
    """Whether `loads_strict` accepts `text`, decided at `loads_fast`'s cost (orjson first,
    the standard parser only where `loads_fast` would use it)."""
    if _orjson_or_miss(text) is not _MISS:
        return True
    try:
        loads_strict(text)
    except ValueError:  # JSONTooDeep is a ValueError too
        return False
    return True


_MISS = object()
"""What `_orjson_or_miss` returns when the standard parser must decide."""


def _orjson_or_miss(text: str) -> Any:
    """orjson's value of `text` when it is the standard parser's, else `_MISS`: a text
    that may hold a run of 19 digits, or one orjson refuses (the standard parser then
    decides, and words the error)."""
    if _may_hold_long_digits(text):
        return _MISS
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _MISS


_JSON_START = frozenset('"{[ntfNI-0123456789')
"""Every character the standard decoder may start a value with (N, I: NaN, Infinity)."""


def _not_a_value(text: str) -> str | None:
    """The decoder's own error for text that cannot start a JSON value, without raising.

    Prose outputs fail at their first character; building, raising and catching the
    decoder's exception cost more than the rest of a json_schema check on them.
    """
    if text and text[0] in _JSON_START:
        return None  # the common case, without copying the text to strip it
    idx = len(text) - len(text.lstrip(" \t\n\r"))
    if idx < len(text) and text[idx] in _JSON_START:
        return None
    line = text.count("\n", 0, idx) + 1
    column = idx - text.rfind("\n", 0, idx)
    return f"Expecting value: line {line} column {column} (char {idx})"


def parse_json(text: str) -> tuple[bool, JSON, str]:
    """(ok, value, error): strict JSON (no NaN/Infinity); `error` says why it is not JSON.

    Text nested too deeply to parse raises RecursionError, which the engine scores as an
    unreadable output (an error), not as "not JSON" (a fail).
    """
    early = _not_a_value(text)
    if early is not None:
        return False, None, early
    got = _orjson_or_miss(text)
    if got is not _MISS:
        return True, got, ""
    try:
        return True, _DECODER.decode(text), ""
    except ValueError as err:
        return False, None, str(err)


def _json_pieces(value: Any, separators: tuple[str, str]) -> Iterator[str]:
    """`json.dumps(value, ensure_ascii=False, separators=separators)` piece by piece, made
    lazily by the pure-Python encoder (not one-shot), so a reader can stop early. What is
    not JSON is written as its `str` and keys that cannot be JSON are left out; like
    `json.dumps`, a value that contains itself is a ValueError and one nested past the
    interpreter's recursion limit a RecursionError."""
    encoder = json.JSONEncoder(
        ensure_ascii=False, separators=separators, default=str, skipkeys=True
    )
    return encoder.iterencode(value)


def json_length(
    value: Any, limit: int | None = None, separators: tuple[str, str] = (",", ":")
) -> int:
    """Characters of `json.dumps(value, ensure_ascii=False, separators=separators)`,
    counted as the encoder makes them, so a value that aliases one big part many times is
    not written out: past `limit` it stops and returns the count so far (more than
    `limit`). See `_json_pieces` for what is not JSON."""
    total = 0
    for piece in _json_pieces(value, separators):
        total += len(piece)
        if limit is not None and total > limit:
            break
    return total


def json_head(value: Any, limit: int, separators: tuple[str, str] = (", ", ": ")) -> str:
    """The start of `value` written as JSON: at least its first `limit` characters when
    it has that many, never the whole of a big value."""
    pieces: list[str] = []
    total = 0
    for piece in _json_pieces(value, separators):
        pieces.append(piece)
        total += len(piece)
        if total > limit:
            break
    return "".join(pieces)


def json_kind(value: Any) -> str:
    """The JSON type of a parsed value, with its article (`an object`, `a string`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def output_json(output: Output) -> tuple[bool, JSON, str]:
    """The output as JSON: `output.value` when set, else `output.text` parsed strictly.

    The parse is kept on the output, so the checks of one case that read its text as
    JSON (exact, json_schema, json_path...) parse it once; it is keyed on the text object,
    so assigning a new text parses again.
    """
    if output.value is not None:
        return True, output.value, ""
    text = output.text
    memo = output.parsed_text
    if memo is not None and memo[0] is text:
        return memo[1]
    got = parse_json(text)
    output.parsed_text = (text, got)
    return got


def json_equal(a: JSON, b: JSON) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1 and "1" is not 1; objects ignore order."""
    kind = type(a)
    if kind is type(b):
        # Values of one exact JSON type (what parsers give) compare without the general
        # rule's isinstance chain; mixed types and subclasses take the general rule.
        if kind is str or kind is int or kind is float or kind is bool or a is None:
            return bool(a == b)
        if kind is dict:
            assert isinstance(a, dict) and isinstance(b, dict)
            if len(a) != len(b):
                return False
            for k, v in a.items():  # noqa: SIM110 - a loop; all() over a generator is slower
                if k not in b or not json_equal(v, b[k]):
                    return False
            return True
        if kind is list:
            assert isinstance(a, list) and isinstance(b, list)
            if len(a) != len(b):
                return False
            for x, y in zip(a, b, strict=True):  # noqa: SIM110 - as above
                if not json_equal(x, y):
                    return False
            return True
    return _json_equal_any(a, b)


def _json_equal_any(a: JSON, b: JSON) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return a is None and b is None


def as_number(value: JSON) -> int | float | None:
    """A finite number from a JSON number or a numeric string (`" 3.5 "`), else None.

    Integers stay Python ints of any size (a JSON integer beyond a double's range is still
    a number, compared exactly); so do numeric strings written as integers (`"42"`).
    Booleans are not numbers; `float()`'s extras (underscores, `nan`, `inf`) are refused.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip()
        if not text or "_" in text:
            return None
        digits = text[1:] if text[0] in "+-" else text
        if digits.isascii() and digits.isdigit():
            try:
                return int(text)
            except ValueError:  # beyond Python's digit limit: read as a float below
                pass
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def is_finite(value: int | float) -> bool:
    """Whether a JSON number is finite: an int of any size is (no float conversion)."""
    return isinstance(value, int) or math.isfinite(value)


def is_whole(value: int | float) -> bool:
    """Whether a JSON number is a whole number (`3`, `3.0`), without float conversion."""
    return isinstance(value, int) or value.is_integer()


def format_number(value: int | float, limit: int = 40) -> str:
    """A number for a reason: ints in digits (long ones cut in the middle), floats by `g`."""
    if isinstance(value, int):
        text = str(value)  # JSON ints are parsed only up to Python's digit limit
        if len(text) > limit:
            keep = (limit - 1) // 2
            text = f"{text[:keep]}…{text[-keep:]} ({len(text.lstrip('-'))} digits)"
        return text
    return f"{value:g}"


_EXACT_FLOAT_INT = 2**53


def isclose(a: int | float, b: int | float, *, rel_tol: float, abs_tol: float) -> bool:
    """`math.isclose`, exact for integers a double cannot hold.

    Floats and integers within ±2^53 use `math.isclose` itself; beyond that the same
    rule (`|a-b| <= max(rel_tol*max(|a|,|b|), abs_tol)`) is evaluated in exact fractions,
    so 2^53+1 is not "close" to 2^53 at zero tolerance and a 400-digit integer never
    overflows.
    """
    if all(isinstance(x, float) or -_EXACT_FLOAT_INT <= x <= _EXACT_FLOAT_INT for x in (a, b)):
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    fa, fb = Fraction(a), Fraction(b)
    diff = abs(fa - fb)
    return diff <= max(Fraction(rel_tol) * max(abs(fa), abs(fb)), Fraction(abs_tol))


def difference(a: int | float, b: int | float) -> int | float:
    """`a - b` exactly when either is an int too large for a double, else as Python does."""
    try:
        return a - b
    except OverflowError:
        return int(Fraction(a) - Fraction(b))


# --- results ---------------------------------------------------------------------------


def preview(value: JSON, limit: int = 60) -> str:
    """A short repr of a value for reasons: long text is cut with an ellipsis (a big
    value is never written out whole: only its start)."""
    text = value if isinstance(value, str) else json_head(value, limit)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text) if isinstance(value, str) else text


def _returned_phrase(value: float, passed: bool, threshold: float) -> str:
    return f" (threshold {threshold:g})"


NUMBER_THRESHOLD = ThresholdRule(0.5, _returned_phrase)
"""The threshold rule of user functions (custom and `python` checks): a number they
return passes at 0.5 or above unless the spec sets `threshold`."""


def coerce_result(result: object, name: str) -> Score:
    """Turn what a user function returned into a Score.

    A Score is kept; a bool is a pass/fail (value 1/0); a number in 0..1 is a
    Measurement, which the engine passes at the spec's threshold (`NUMBER_THRESHOLD`).
    Anything else (None, a string, a number outside 0..1, NaN) is an error score with
    `CHECK_FAILED`, never a pass.
    """
    if isinstance(result, Score):
        return result
    if isinstance(result, bool):
        return Score(float(result), result, f"{name} returned {result}")
    if isinstance(result, int | float):
        value = float(result)
        if not 0.0 <= value <= 1.0:  # also false for NaN
            return Score.fail_with_error(
                ErrorCode.CHECK_FAILED, f"{name} returned {result!r}, which is not in 0..1"
            )
        return Measurement(value, f"{name} returned {value:.4g}")
    return Score.fail_with_error(
        ErrorCode.CHECK_FAILED,
        f"{name} returned a {type(result).__name__}; expected a Score, a bool or a number in 0..1",
    )


def positional_arity(fn: Callable[..., Any]) -> int | None:
    """How many positional arguments `fn` takes (None when it takes *args or is opaque)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    count = 0
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            count += 1
    return count
